package record

import (
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/tabs/act"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

func TestJSString(t *testing.T) {
	cases := map[string]string{
		`plain`:                       `"plain"`,
		`aria/Sign in[role="button"]`: `'aria/Sign in[role="button"]'`,
		`O'Neil`:                      `"O'Neil"`,
		`say "hi" it's`:               `"say \"hi\" it's"`,
		"two\nlines\ttab\r":           `"two\nlines\ttab\r"`,
		`back\slash`:                  `"back\\slash"`,
		"sep\u2028x\x00":              `"sep\u2028x\u0000"`,
		`'q' "d"`:                     `"'q' \"d\""`,
	}
	for in, want := range cases {
		if got := JSString(in); got != want {
			t.Errorf("JSString(%q) = %s, want %s", in, got, want)
		}
		// What the writer quotes, the reader unquotes.
		if back := firstString("tab.click(" + JSString(in) + ")"); back != in {
			t.Errorf("firstString(JSString(%q)) = %q", in, back)
		}
	}
}

func TestScript(t *testing.T) {
	steps := []Step{
		{Tab: "main", Action: "open", Args: []any{"http://127.0.0.1:1/login"}},
		{Tab: "main", Action: "fill", Target: "3", Loc: &Locator{Selector: `aria/Email[role="textbox"]`, Verified: true}, Args: []any{"a@b.c"}},
		{Tab: "main", Action: "type", Target: "#note", Args: []any{"line 1\nline \"2\""}},
		{Tab: "main", Action: "click", Target: "7", Loc: &Locator{Selector: `aria/Delete[role="button"]`, Why: "no unique locator", Role: "button", Name: "Delete", Tried: []string{`aria/Delete[role="button"]`, "text/Delete"}}},
		{Tab: "main", Action: "select", Target: "4", Loc: &Locator{Selector: `aria/Country[role="combobox"]`, Verified: true}, Args: []any{[]string{"France", "Japan"}}},
		{Tab: "main", Action: "press", Args: []any{"Enter"}},
		{Tab: "main", Action: "scroll", Args: []any{0.0, 400.0}},
		{Tab: "main", Action: "drag", Target: "5", To: "", Loc: &Locator{Selector: "#handle", Verified: true}, Args: []any{act.Point{X: 10, Y: 20}, map[string]any{"steps": 5}}},
		{Tab: "main", Action: "acceptDialog", Args: []any{"it's ok"}},
		{Tab: "main", Action: "dismissDialog"},
		{Tab: "main", Action: "waitFor", Target: "text/Done", Args: []any{map[string]any{"state": "hidden"}}},
		{Tab: "main", Action: "back"},
		{Tab: "main-popup-1", Action: "click", Target: "text/Close", Notes: []string{"closes\nthe popup"}},
	}
	got := Script(steps, "")
	want := `// Recorded by tabpilot: 13 step(s) on tab "main".
// Replay: tabpilot replay FILE.js [--tab NAME]. One statement per step; edit freely.
// step 1
await tab.goto("http://127.0.0.1:1/login");
// step 2
await tab.fill('aria/Email[role="textbox"]', "a@b.c");
// step 3
await tab.type("#note", 'line 1\nline "2"');
// step 4
// FIXME: no unique locator for button "Delete"; best candidate below (tried: text/Delete)
await tab.click('aria/Delete[role="button"]');
// step 5
await tab.select('aria/Country[role="combobox"]', "France", "Japan");
// step 6
await tab.press("Enter");
// step 7
await tab.scroll(0, 400);
// step 8
await tab.drag("#handle", {x: 10, y: 20}, {steps: 5});
// step 9
await tab.acceptDialog("it's ok");
// step 10
await tab.dismissDialog();
// step 11
await tab.waitFor("text/Done", {state: "hidden"});
// step 12
await tab.back();
// step 13
// on tab "main-popup-1", which this script does not drive:
// await tab.click("text/Close");
// closes the popup
`
	if got != want {
		t.Errorf("Script:\n%s\nwant:\n%s", got, want)
	}
	st := Steps(got)
	if len(st) != 13 {
		t.Fatalf("Steps: %d, want 13", len(st))
	}
	if s := st[3]; s.N != 4 || s.Line != 9 || s.Statement != `await tab.click('aria/Delete[role="button"]');` || s.Locator != `aria/Delete[role="button"]` {
		t.Errorf("step 4 = %+v", s)
	}
	if s := st[2]; s.Locator != "#note" {
		t.Errorf("step 3 locator = %q", s.Locator)
	}
	if s := StepAt(st, 11); s == nil || s.N != 4 {
		t.Errorf("StepAt(11) = %+v, want step 4", s)
	}
	if s := StepAt(st, 1); s != nil {
		t.Errorf("StepAt(1) = %+v, want none (the header)", s)
	}
	if n := LineOf(`element_not_found: no element matches "x" (line 11:7)`); n != 11 {
		t.Errorf("LineOf = %d", n)
	}
	if strings.Contains(got, "step 13\nawait") {
		t.Error("a step of another tab is not commented out")
	}
}

func TestNearest(t *testing.T) {
	els := []observe.Element{
		{ID: 1, Role: "textbox", Name: "Email"},
		{ID: 2, Role: "button", Name: "Log in"},
		{ID: 3, Role: "link", Name: "Sign up"},
		{ID: 4, Role: "button", Name: ""},
		{ID: 5, Role: "link", Name: "Forgot your password?"},
	}
	got := Nearest(`aria/Sign in[role="button"]`, els, 3)
	var s []string
	for _, c := range got {
		s = append(s, c.String())
	}
	if want := `2 button "Log in"; 3 link "Sign up"; 1 textbox "Email"`; strings.Join(s, "; ") != want {
		t.Errorf("Nearest = %s, want %s", strings.Join(s, "; "), want)
	}
	if name, role := Want(`tr:has-text("Bob") >> aria/Delete[role="button"]`); name != "Delete" || role != "button" {
		t.Errorf("Want = %q %q", name, role)
	}
	if name, _ := Want(`input[name="avatar"]`); name != "avatar" {
		t.Errorf("Want(css) = %q", name)
	}
}
