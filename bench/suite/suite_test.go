package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseTabpilot(t *testing.T) {
	text := `page "Sign in" http://127.0.0.1:8080/login
[main]
1 [Bench counter]
2 textbox "Email": "me@example.com" required
5,9 "Cart"
10 "Pears" | 11 [Buy] | 12 checkbox "Pick"
"Some static text"
- "Unnumbered"
… 7 more elements left out; full observation: /tmp/tabpilot-observe-1.json
`
	o := parseTabpilot(text)
	if o.listed != 7 || o.omitted != 7 || o.counter != "1" || o.bytes != len(text) {
		t.Errorf("got %+v, want 7 listed, 7 omitted, counter 1", o)
	}
	o = parseTabpilot("3 \"Home\" | 4 [Bench counter]\n")
	if o.counter != "4" || o.listed != 2 {
		t.Errorf("counter on a shared line: got %+v", o)
	}
}

func TestParseRoleLines(t *testing.T) {
	ab := `- button "Bench counter" [ref=e1]
- heading "Sign in" [level=1, ref=e2]
- textbox "Email" [required, ref=e10]
- combobox "Language" [expanded=false, ref=e8]: English
  - option "English" [selected, ref=e12]
- link "Forgot password?" [ref=e3]
`
	if o := parseRoleLines(ab, false); o.listed != 4 || o.counter != "e1" {
		t.Errorf("agent-browser: got %+v, want 4 listed, counter e1", o)
	}
	pw := "```yaml\n- generic [active] [ref=e1]:\n  - button \"Bench counter\" [ref=e2]\n  - link \"Forgot\" [ref=e14] [cursor=pointer]:\n    - /url: /forgot\n```"
	if o := parseRoleLines(pw, false); o.listed != 2 || o.counter != "e2" {
		t.Errorf("playwright: got %+v, want 2 listed, counter e2", o)
	}
	cdt := `uid=1_0 RootWebArea "Sign in" url="http://127.0.0.1/"
  uid=1_1 button "Bench counter"
  uid=1_5 "Email "
  uid=1_6 textbox "Email" required
  uid=1_11 option "English" selected
`
	if o := parseRoleLines(cdt, true); o.listed != 2 || o.counter != "1_1" {
		t.Errorf("chrome-devtools-mcp: got %+v, want 2 listed, counter 1_1", o)
	}
}

func TestClicksIn(t *testing.T) {
	for in, want := range map[string]int{`"clicks=3"`: 3, "### Result\n\"clicks=12\"": 12, "clicks=0\n": 0, "nothing": -1} {
		if got := clicksIn(in); got != want {
			t.Errorf("clicksIn(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestInjectCounter(t *testing.T) {
	got := string(injectCounter([]byte(`<html><BODY class="x"><p>hi</p></body></html>`)))
	if !strings.HasPrefix(got, `<html><BODY class="x"><button id="tpbench-counter"`) || !strings.HasSuffix(got, "</button><p>hi</p></body></html>") {
		t.Errorf("got %q", got)
	}
	if got := string(injectCounter([]byte("<p>x</p>"))); !strings.HasPrefix(got, "<button") {
		t.Errorf("no body: got %q", got)
	}
}

func TestWriteSection(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.md")
	head := "# Benchmarks\n\n## Observation\n\nold text\n"
	os.WriteFile(file, []byte(head), 0o644)
	if err := writeSection(file, sectionTitle+"\n\nfirst\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	if want := head + "\n" + sectionTitle + "\n\nfirst\n"; string(b) != want {
		t.Fatalf("append: got %q, want %q", b, want)
	}
	os.WriteFile(file, []byte(string(b)+"\n## Later\n\nkept\n"), 0o644)
	if err := writeSection(file, sectionTitle+"\n\nsecond\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(file)
	if want := head + "\n" + sectionTitle + "\n\nsecond\n## Later\n\nkept\n"; string(b) != want {
		t.Fatalf("replace: got %q, want %q", b, want)
	}
}

func TestStats(t *testing.T) {
	ds := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 1000 * time.Millisecond}
	if got := durMedian(ds); got != 25*time.Millisecond {
		t.Errorf("median = %v, want 25ms", got)
	}
	if got := durCell(ds); got != "25 (10–1000)" {
		t.Errorf("durCell = %q", got)
	}
	if got := thousands(9533305); got != "9,533,305" {
		t.Errorf("thousands = %q", got)
	}
	if got := ms(1500 * time.Microsecond); got != "1.5" {
		t.Errorf("ms = %q", got)
	}
}
