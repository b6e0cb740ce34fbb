package record

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tabpilot/tabpilot/tabs/act"
)

// Script writes steps as the body of a `run` script: a header, then for
// each step a `// step N` comment and one statement (`await tab.click(…);`),
// with a FIXME comment above a step whose locator did not verify and the
// step's notes below it. Steps of another tab than main (the first
// step's, when main is "") are written commented out, since a run drives
// one tab. It is deterministic: the same steps give the same text.
func Script(steps []Step, main string) string {
	if main == "" && len(steps) > 0 {
		main = steps[0].Tab
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// Recorded by tabpilot: %d step(s) on tab %s.\n", len(steps), JSString(main))
	b.WriteString("// Replay: tabpilot replay FILE.js [--tab NAME]. One statement per step; edit freely.\n")
	for i, s := range steps {
		fmt.Fprintf(&b, "// step %d\n", i+1)
		stmt := Statement(s)
		for _, l := range []*Locator{s.Loc, s.ToLoc} {
			if l != nil && !l.Verified {
				b.WriteString("// FIXME: no unique locator")
				if l.Why != "" && l.Why != "no unique locator" {
					b.WriteString(" (" + oneLine(l.Why) + ")")
				}
				if l.Role != "" || l.Name != "" {
					fmt.Fprintf(&b, " for %s %s", l.Role, JSString(l.Name))
				}
				b.WriteString("; best candidate below")
				if len(l.Tried) > 1 {
					b.WriteString(" (tried: " + oneLine(strings.Join(l.Tried[1:], ", ")) + ")")
				}
				b.WriteString("\n")
			}
		}
		if s.Tab != main {
			fmt.Fprintf(&b, "// on tab %s, which this script does not drive:\n// %s\n", JSString(s.Tab), stmt)
		} else {
			b.WriteString(stmt + "\n")
		}
		for _, n := range s.Notes {
			b.WriteString("// " + oneLine(n) + "\n")
		}
	}
	return b.String()
}

// Statement is the one JavaScript statement of a step.
func Statement(s Step) string {
	target := func(raw string, l *Locator) string {
		if l != nil {
			return JSString(l.Selector)
		}
		if n, ok := number(raw); ok {
			return strconv.Itoa(n)
		}
		return JSString(raw)
	}
	args := []string{}
	switch s.Action {
	case "open", "goto":
		return "await tab.goto(" + joinArgs(s.Args) + ");"
	case "back", "forward", "reload", "dismissDialog":
		return "await tab." + s.Action + "();"
	case "acceptDialog", "waitForUrl":
		return "await tab." + s.Action + "(" + joinArgs(s.Args) + ");"
	case "scroll":
		if s.Target != "" {
			return "await tab.scroll(" + joinArgs(s.Args) + ", {selector: " + target(s.Target, s.Loc) + "});"
		}
		return "await tab.scroll(" + joinArgs(s.Args) + ");"
	case "press":
		if s.Target != "" {
			return "await tab.press(" + joinArgs(s.Args) + ", {selector: " + target(s.Target, s.Loc) + "});"
		}
		return "await tab.press(" + joinArgs(s.Args) + ");"
	case "drag":
		from, to := target(s.Target, s.Loc), target(s.To, s.ToLoc)
		if s.Target == "" && len(s.Args) > 0 {
			from, args = JSValue(s.Args[0]), nil
		}
		rest := s.Args
		if s.Target == "" && len(rest) > 0 {
			rest = rest[1:]
		}
		if s.To == "" && len(rest) > 0 {
			to, rest = JSValue(rest[0]), rest[1:]
		}
		args = append(args, from, to)
		for _, a := range rest {
			args = append(args, JSValue(a))
		}
		return "await tab.drag(" + strings.Join(args, ", ") + ");"
	}
	args = append(args, target(s.Target, s.Loc))
	for _, a := range s.Args {
		args = append(args, JSValue(a))
	}
	return "await tab." + s.Action + "(" + strings.Join(args, ", ") + ");"
}

func joinArgs(xs []any) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = JSValue(x)
	}
	return strings.Join(out, ", ")
}

// JSValue writes a step argument as a JavaScript literal: strings quoted
// (JSString), numbers as Go prints them, string slices as arguments
// spread out (for select and uploadFile), points as {x, y}, maps as
// object literals with sorted keys.
func JSValue(v any) string {
	switch x := v.(type) {
	case string:
		return JSString(x)
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = JSString(s)
		}
		return strings.Join(out, ", ")
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case act.Point:
		return fmt.Sprintf("{x: %s, y: %s}", JSValue(x.X), JSValue(x.Y))
	case *act.Point:
		return JSValue(*x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + JSValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case nil:
		return "null"
	}
	return JSString(fmt.Sprint(v))
}

// JSString quotes s as a JavaScript string literal a person can read:
// single quotes when s has double quotes and no single ones (aria
// selectors: 'aria/Sign in[role="button"]'), else double quotes; a
// backslash, the quote, control characters, U+2028 and U+2029 escaped.
func JSString(s string) string {
	q := byte('"')
	if strings.Contains(s, `"`) && !strings.Contains(s, "'") {
		q = '\''
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// oneLine keeps a comment on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
