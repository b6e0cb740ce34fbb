package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// others are the tools tabpilot is to beat.
var others = []string{"agent-browser", "playwright-mcp", "devtools-mcp"}

// check is one target: met, and the lines that say by how much.
type check struct {
	name    string
	met     bool
	skipped string // why it could not be judged
	notes   []string
}

func (r *report) toolName(key string) string {
	for _, t := range r.tools {
		if t.key == key {
			return t.name
		}
	}
	return key
}

func (r *report) durs(tool, page, fig string) []time.Duration {
	res := r.get(tool, page)
	if res == nil {
		return nil
	}
	switch fig {
	case "cold":
		return res.cold
	case "observe":
		return res.obs
	case "click":
		return res.click
	}
	return nil
}

// targets judges the targets on the figures of this run.
func (r *report) targets() []check {
	var out []check

	// 1. MCP and JSON-RPC observe and click within 1.5x of the floor.
	c := check{name: "tabpilot MCP and JSON-RPC observe and click within 1.5× of the floor on every page", met: true}
	worst, worstAt := 0.0, ""
	for _, tk := range []string{"tp-mcp", "tp-rpc"} {
		for _, fig := range []string{"observe", "click"} {
			for _, p := range r.pages {
				d, f := r.durs(tk, p.name, fig), r.durs("floor", p.name, fig)
				if len(d) == 0 || len(f) == 0 {
					c.skipped = "a tool or the floor has no figure for every page"
					continue
				}
				ratio := float64(durMedian(d)) / float64(durMedian(f))
				at := fmt.Sprintf("%s %s on %s: ×%.2f (%s ms vs %s ms)", r.toolName(tk), fig, p.name, ratio, ms(durMedian(d)), ms(durMedian(f)))
				if ratio > worst {
					worst, worstAt = ratio, at
				}
				if ratio > 1.5 {
					c.met = false
					c.notes = append(c.notes, "missed: "+at)
				}
			}
		}
	}
	if worstAt != "" {
		c.notes = append([]string{"The largest ratio: " + worstAt}, c.notes...)
	}
	out = append(out, c)

	// 2. Faster than every other tool.
	c = check{name: "tabpilot MCP and JSON-RPC observe and click faster than every other tool on every page", met: true}
	judged := 0
	for _, tk := range []string{"tp-mcp", "tp-rpc"} {
		for _, fig := range []string{"observe", "click"} {
			for _, p := range r.pages {
				d := r.durs(tk, p.name, fig)
				if len(d) == 0 {
					continue
				}
				for _, o := range others {
					od := r.durs(o, p.name, fig)
					if len(od) == 0 {
						continue
					}
					judged++
					if durMedian(d) >= durMedian(od) {
						c.met = false
						c.notes = append(c.notes, fmt.Sprintf("missed: %s %s on %s: %s ms, %s %s ms (×%.2f)", r.toolName(tk), fig, p.name,
							ms(durMedian(d)), r.toolName(o), ms(durMedian(od)), float64(durMedian(d))/float64(durMedian(od))))
					}
				}
			}
		}
	}
	if judged == 0 {
		c.skipped = "no other tool ran"
	}
	out = append(out, c)

	// 3. CLI cold start within 1.3x of the floor's.
	c = check{name: "tabpilot CLI cold start (open + observe) within 1.3× of the floor's", met: true}
	var ratios []string
	for _, p := range r.pages {
		d, f := r.durs("tp-cli", p.name, "cold"), r.durs("floor", p.name, "cold")
		if len(d) == 0 || len(f) == 0 {
			continue // cold starts are on the first page only
		}
		ratio := float64(durMedian(d)) / float64(durMedian(f))
		ratios = append(ratios, fmt.Sprintf("%s ×%.2f (%s vs %s ms)", p.name, ratio, ms(durMedian(d)), ms(durMedian(f))))
		if ratio > 1.3 {
			c.met = false
		}
	}
	if len(ratios) > 0 {
		c.notes = append(c.notes, strings.Join(ratios, "; "))
	} else {
		c.skipped = "the CLI or the floor has no cold start"
	}
	out = append(out, c)

	// 4. CLI warm observe and click under 30 ms on the login page.
	c = check{name: "tabpilot CLI warm observe and click under 30 ms on the login page (a new process per call)", met: true}
	for _, fig := range []string{"observe", "click"} {
		d := r.durs("tp-cli", "login", fig)
		if len(d) == 0 {
			c.skipped = "no CLI figures on the login page"
			continue
		}
		m := durMedian(d)
		c.notes = append(c.notes, fmt.Sprintf("%s %s ms (%s–%s)", fig, ms(m), ms(slices.Min(d)), ms(slices.Max(d))))
		if m >= 30*time.Millisecond {
			c.met = false
		}
	}
	out = append(out, c)

	// 5. The daemon's memory.
	c = check{name: "tabpilot daemon under 30 MB RSS on the login page and under 150 MB on the 5,000-element page", met: true}
	for _, lim := range []struct {
		page string
		mb   float64
	}{{"login", 30}, {"gen5000", 150}} {
		res := r.get("tp-cli", lim.page)
		if res == nil || len(res.toolRSS) == 0 {
			c.skipped = "no CLI figures on login and gen5000"
			continue
		}
		m, hi := mb(median(res.toolRSS)), mb(slices.Max(res.toolRSS))
		c.notes = append(c.notes, fmt.Sprintf("%s: %.1f MB (max %.1f; PSS %.1f)", lim.page, m, hi, mb(median(res.toolPSS))))
		if m >= lim.mb {
			c.met = false
		}
	}
	out = append(out, c)

	// 6. The smallest observation, listing every interactive element.
	c = check{name: "tabpilot's observation smaller than every other tool's on every page, while listing every interactive element", met: true}
	judged = 0
	for _, p := range r.pages {
		res := r.get("tp-rpc", p.name)
		if res == nil || len(res.obsBytes) == 0 {
			res = r.get("tp-mcp", p.name)
		}
		if res == nil || len(res.obsBytes) == 0 {
			continue
		}
		tb := median(res.obsBytes)
		smallest, by := 0, ""
		for _, o := range others {
			or := r.get(o, p.name)
			if or == nil || len(or.obsBytes) == 0 {
				continue
			}
			judged++
			if ob := median(or.obsBytes); smallest == 0 || ob < smallest {
				smallest, by = ob, r.toolName(o)
			}
		}
		note := fmt.Sprintf("%s: %s bytes", p.name, thousands(tb))
		if smallest > 0 {
			note += fmt.Sprintf(" vs %s's %s (×%.2f)", by, thousands(smallest), float64(tb)/float64(smallest))
			if tb >= smallest {
				c.met = false
				note += " — larger"
			}
		}
		listed, omitted, want := median(res.listed), median(res.omitted), r.info[p.name].trueCount
		note += fmt.Sprintf("; lists %d of %d", listed, want)
		if listed < want {
			c.met = false
			if omitted > 0 {
				note += fmt.Sprintf(" in the text (the budget put %d more in the full observation's file", omitted)
				if res.full != nil {
					note += fmt.Sprintf("; with no budget: %d listed in %s bytes", res.full.listed, thousands(res.full.bytes))
				}
				note += ")"
			} else {
				note += " — missing some"
			}
		}
		c.notes = append(c.notes, note)
	}
	if judged == 0 && c.skipped == "" {
		c.skipped = "no other tool ran"
	}
	out = append(out, c)
	return out
}

func (r *report) writeTargets(b *strings.Builder) {
	b.WriteString("### Targets (issue 10), judged on this run\n\n")
	for _, c := range r.targets() {
		verdict := "met"
		switch {
		case c.skipped != "" && len(c.notes) == 0:
			verdict = "not judged (" + c.skipped + ")"
		case !c.met:
			verdict = "**missed**"
		case c.skipped != "":
			verdict = "met where judged (" + c.skipped + ")"
		}
		fmt.Fprintf(b, "- %s: %s.", c.name, verdict)
		if len(c.notes) > 0 {
			b.WriteString(" " + strings.Join(c.notes, "; ") + ".")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
