package observe

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// abPages are the pages with both a recorded walk (testdata/dom) and what
// the real `agent-browser snapshot -i` (npm agent-browser 0.27.0, Debian's
// Chromium) printed for the same page (testdata/agent-browser, written by
// the tabs benchmark with TABPILOT_AGENT_BROWSER_OUT).
var abPages = []string{"wikipedia", "nytimes-1", "yahoo-1", "cnn", "medium-1", "mozilla-1", "links-in-tables"}

// TestAgentBrowserSize checks the rendering of each page against
// agent-browser's: at most 60% of its size, and listing every interactive
// element it lists.
func TestAgentBrowserSize(t *testing.T) {
	for _, name := range abPages {
		t.Run(name, func(t *testing.T) {
			ab, err := os.ReadFile(filepath.Join("testdata", "agent-browser", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			o := BuildDOM(loadDOM(t, name), nil, Options{})
			text := o.Text()
			ratio := float64(len(text)) / float64(len(ab))
			t.Logf("%-16s ours %6d bytes, agent-browser %6d bytes: %.0f%%", name, len(text), len(ab), ratio*100)
			if ratio > 0.6 {
				t.Errorf("%d bytes, %.0f%% of agent-browser's %d", len(text), ratio*100, len(ab))
			}
			if missing := abMissing(string(ab), o); len(missing) > 0 {
				t.Errorf("%d elements agent-browser lists are missing: %q", len(missing), missing)
			}
		})
	}
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
// some image alternatives that ours keep, and the other way round); a
// nameless one matches a nameless element of its role first; an option
// matches the options of a collapsed <select>; and a role can differ (a
// clickable div it calls a button). The tabs benchmark has the same
// function.
func abMissing(snap string, o *Observation) []string {
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
