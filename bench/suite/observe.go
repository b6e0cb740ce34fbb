package main

import (
	"regexp"
	"strconv"
	"strings"
)

// observation is what one observe returned, as the suite reads it.
type observation struct {
	bytes   int    // the size of what the model (or the program) gets
	listed  int    // the interactive elements it lists
	omitted int    // the elements it says it left out (tabpilot's budget)
	counter string // the reference of the counter button, for the click
}

// interactiveRoles are the roles counted as interactive elements in the
// outputs of the tools that print ARIA roles (the roles a person acts on;
// "option" is left out: the census counts a <select>, not its options).
var interactiveRoles = map[string]bool{"link": true, "button": true, "textbox": true, "searchbox": true,
	"combobox": true, "listbox": true, "checkbox": true, "radio": true, "switch": true, "slider": true,
	"spinbutton": true, "menuitem": true, "menuitemcheckbox": true, "menuitemradio": true, "tab": true,
	"treeitem": true}

var (
	// tabpilot: "12 textbox …", "5,9 \"Cart\"", "10 \"Pears\" | 11 [Buy]".
	tpLead    = regexp.MustCompile(`^(-|\d+(?:,\d+)*) `)
	tpSep     = regexp.MustCompile(` \| (\d+(?:,\d+)*) `)
	tpCounter = regexp.MustCompile(`(?:^| \| )(\d+) \[` + regexp.QuoteMeta(counterName) + `\]`)
	tpOmitted = regexp.MustCompile(`(?m)^… (\d+) more elements left out`)
	// agent-browser and Playwright MCP: `- role "name" [… ref=e12 …]`.
	yamlLine = regexp.MustCompile(`^\s*- ([a-z]+)\b.*?\bref=([\w-]+)`)
	// chrome-devtools-mcp: `uid=1_12 role "name" …`.
	uidLine = regexp.MustCompile(`^\s*uid=(\S+) ([a-z]+)\b`)
)

// parseTabpilot reads tabpilot's text rendering: every element number
// counts (the default observation lists interactive elements only), and
// the last line says how many the budget left out.
func parseTabpilot(text string) observation {
	o := observation{bytes: len(text)}
	for line := range strings.SplitSeq(text, "\n") {
		m := tpLead.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] != "-" {
			o.listed += strings.Count(m[1], ",") + 1
		}
		for _, s := range tpSep.FindAllStringSubmatch(line, -1) {
			o.listed += strings.Count(s[1], ",") + 1
		}
		if o.counter == "" {
			if c := tpCounter.FindStringSubmatch(line); c != nil {
				o.counter = c[1]
			}
		}
	}
	if m := tpOmitted.FindStringSubmatch(text); m != nil {
		o.omitted, _ = strconv.Atoi(m[1])
	}
	return o
}

// parseRoleLines reads the outputs that print one node a line with its
// role and a reference (agent-browser, Playwright MCP: ref=…;
// chrome-devtools-mcp: uid=…).
func parseRoleLines(text string, cdt bool) observation {
	o := observation{bytes: len(text)}
	quoted := `"` + counterName + `"`
	for line := range strings.SplitSeq(text, "\n") {
		var role, ref string
		if cdt {
			m := uidLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			ref, role = m[1], m[2]
		} else {
			m := yamlLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			role, ref = m[1], m[2]
		}
		if !interactiveRoles[role] {
			continue
		}
		o.listed++
		if o.counter == "" && role == "button" && strings.Contains(line, quoted) {
			o.counter = ref
		}
	}
	return o
}

var clicksRe = regexp.MustCompile(`clicks=(\d+)`)

// clicksIn finds "clicks=N" in an evaluate's output, or -1.
func clicksIn(out string) int {
	m := clicksRe.FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
