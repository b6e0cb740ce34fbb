package tabs_test

// BenchmarkObserve measures tab.observe against the raw accessibility
// tree on the same pages, interleaved so both see the same machine load:
//
//	go test ./tabs -run '^$' -bench BenchmarkObserve -benchtime 5x
//
// For each page it reports the obsMedian observe latency (obs-ms), the obsMedian
// time of Accessibility.getFullAXTree over plain CDP on a twin tab, its
// result read as raw JSON (ax-ms), their ratio, the size of the default
// text rendering (bytes, tokens = bytes/4) and of the untrimmed obsOne
// (full-bytes), and the interactive elements found (elements, shown and
// left out). With TABPILOT_AGENT_BROWSER set to an agent-browser binary
// (npm package agent-browser) it also runs `agent-browser snapshot -i`
// on the page with Debian's Chromium and reports its size (ab-bytes), our
// untrimmed size over it (ratio-ab), and how many of the interactive
// elements it lists ours lacks (ab-missing).

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// obsBenchPages are the pages of BenchmarkObserve.
var obsBenchPages = []struct{ name, path string }{
	{"wikipedia", "/real/wikipedia/source.html"},
	{"nytimes-1", "/real/nytimes-1/source.html"},
	{"yahoo-1", "/real/yahoo-1/source.html"},
	{"cnn", "/real/cnn/source.html"},
	{"medium-1", "/real/medium-1/source.html"},
	{"mozilla-1", "/real/mozilla-1/source.html"},
	{"links-in-tables", "/real/links-in-tables/source.html"},
	{"gen5000", "/gen/5000"},
	{"huge18000", "/huge/6000"},
}

func BenchmarkObserve(b *testing.B) {
	s := obsServer(b)
	ab := os.Getenv("TABPILOT_AGENT_BROWSER")
	for _, p := range obsBenchPages {
		b.Run(p.name, func(b *testing.B) {
			obsTab := obsBenchTab(b, p.name+"-obs", s.URL+p.path)
			axTab := obsBenchTab(b, p.name+"-ax", s.URL+p.path)
			ctx := context.Background()
			var obsD, axD []time.Duration
			var obs *observe.Observation
			var axBytes int
			var err error
			for b.Loop() {
				// Direct calls, outside the supervisor's 30 s cap: the raw
				// tree of the huge page can take longer on a loaded machine.
				cctx, cancel := context.WithTimeout(ctx, 300*time.Second)
				t0 := time.Now()
				obs, err = obsTab.Observe(cctx, tabs.ObserveOptions{})
				if err != nil {
					b.Fatal(err)
				}
				obsD = append(obsD, time.Since(t0))
				if obs.FullPath != "" {
					os.Remove(obs.FullPath)
				}
				b.StopTimer()
				t0 = time.Now()
				var raw json.RawMessage
				err = axTab.Target().Call(cctx, "Accessibility.getFullAXTree", map[string]any{}, &raw)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				axD = append(axD, time.Since(t0))
				axBytes = len(raw)
				b.StartTimer()
			}
			full := obsBenchFull(b, obsTab)
			text := obs.Text()
			om, am := obsMedian(obsD), obsMedian(axD)
			b.ReportMetric(float64(om.Microseconds())/1000, "obs-ms")
			b.ReportMetric(float64(am.Microseconds())/1000, "ax-ms")
			b.ReportMetric(float64(om)/float64(am), "obs/ax")
			b.ReportMetric(float64(axBytes), "ax-bytes")
			b.ReportMetric(float64(len(text)), "bytes")
			b.ReportMetric(float64(observe.Tokens(text)), "tokens")
			b.ReportMetric(float64(len(full.Text())), "full-bytes")
			b.ReportMetric(float64(len(obs.Elements)+obs.Omitted), "elements")
			b.ReportMetric(float64(obs.Omitted), "omitted")
			if ab != "" {
				snap, err := agentBrowserSnapshot(ab, s.URL+p.path)
				if err != nil {
					b.Logf("agent-browser: %v", err)
					return
				}
				missing := abMissing(snap, full)
				b.ReportMetric(float64(len(snap)), "ab-bytes")
				b.ReportMetric(float64(len(full.Text()))/float64(max(1, len(snap))), "full/ab")
				b.ReportMetric(float64(len(missing)), "ab-missing")
				if len(missing) > 0 {
					b.Logf("elements agent-browser lists that we obsDo not: %q", missing[:min(len(missing), 10)])
				}
				if dir := os.Getenv("TABPILOT_AGENT_BROWSER_OUT"); dir != "" {
					_ = os.WriteFile(filepath.Join(dir, p.name+".txt"), []byte(snap), 0o644)
					_ = os.WriteFile(filepath.Join(dir, p.name+".tabpilot.txt"), []byte(full.Text()), 0o644)
				}
			}
		})
	}
}

func obsBenchTab(b *testing.B, name, url string) *tabs.Tab {
	b.Helper()
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: url, WaitUntil: "load", Timeout: 120 * time.Second}); err != nil {
		b.Fatalf("open %s: %v", url, err)
	}
	b.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	tab, err := sup.Tab(name)
	if err != nil {
		b.Fatal(err)
	}
	return tab
}

// obsBenchFull observes the tab with no budget.
func obsBenchFull(b *testing.B, tab *tabs.Tab) *observe.Observation {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	obs, err := tab.Observe(ctx, tabs.ObserveOptions{MaxTokens: 1 << 24})
	if err != nil {
		b.Fatal(err)
	}
	return obs
}

func obsMedian(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// agentBrowserSnapshot opens url with agent-browser (Debian's Chromium,
// the test launch flags, a session of its own) and returns what
// `agent-browser snapshot -i` prints.
func agentBrowserSnapshot(bin, url string) (string, error) {
	dir, err := os.MkdirTemp("", "tabpilot-ab-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	wrapper := filepath.Join(dir, "chromium")
	script := "#!/bin/sh\nexec /usr/bin/chromium --no-sandbox --disable-gpu --disable-quic " +
		"'--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1' " +
		"--disable-background-networking --disable-component-update --disable-sync --no-first-run \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		return "", err
	}
	env := append(os.Environ(), "HOME="+dir, "AGENT_BROWSER_SESSION=tabpilot-bench")
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		out, err := cmd.Output()
		return string(out), err
	}
	defer run("close")
	if _, err := run("--executable-path", wrapper, "open", url); err != nil {
		return "", err
	}
	return run("snapshot", "-i")
}

var abLine = regexp.MustCompile(`^\s*- (\w+)(?: "((?:[^"\\]|\\.)*)")?`)

// abInteractive are the roles whose agent-browser lines are interactive
// elements (its -i output also lists headings, cells and landmarks).
var abInteractive = map[string]bool{"link": true, "button": true, "textbox": true, "searchbox": true, "combobox": true,
	"listbox": true, "option": true, "checkbox": true, "radio": true, "switch": true, "slider": true, "spinbutton": true,
	"menuitem": true, "menuitemcheckbox": true, "menuitemradio": true, "tab": true, "treeitem": true}

// abMissing returns the interactive elements of an agent-browser snapshot
// (role and name) that the observation does not list, matched as a
// multiset: names compare without case and white space (its names keep
// the spaces of <wbr> and the case of text-transform; ours end with "…"
// when cut), or one contains the other (its accessible names leave out
// some image alternatives that ours keep, and the other way round), a
// nameless one matches any element of its role, an option
// matches the options of a collapsed <select>, and a role can differ (a
// clickable div it calls a button).
func abMissing(snap string, o *observe.Observation) []string {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), "")) }
	type ours struct {
		role, name string
		cut, used  bool
	}
	var list []*ours
	add := func(role, name string) {
		n := norm(name)
		cut := strings.HasSuffix(n, "…")
		list = append(list, &ours{role: role, name: strings.TrimSuffix(n, "…"), cut: cut})
	}
	for _, el := range o.Elements {
		add(el.Role, el.Name)
		for _, op := range el.Options {
			add("option", op)
		}
	}
	match := func(role, name string, anyRole bool) bool {
		for _, x := range list {
			if x.used || (!anyRole && x.role != role) {
				continue
			}
			if x.name == name || (x.cut && strings.HasPrefix(name, x.name)) || (name == "" && x.role == role && (anyRole || x.name == "")) ||
				(len(name) >= 8 && len(x.name) >= 8 && (strings.Contains(x.name, name) || strings.Contains(name, x.name))) {
				x.used = true
				return true
			}
		}
		return false
	}
	// Named ones first, so that a nameless one takes what they leave.
	var out []string
	for _, named := range []bool{true, false} {
		for _, line := range strings.Split(snap, "\n") {
			m := abLine.FindStringSubmatch(line)
			if m == nil || !abInteractive[m[1]] || (m[2] != "") != named {
				continue
			}
			name := norm(strings.ReplaceAll(m[2], `\"`, `"`))
			if !match(m[1], name, false) && !match(m[1], name, true) {
				out = append(out, m[1]+" "+m[2])
			}
		}
	}
	return out
}
