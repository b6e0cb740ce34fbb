package observe

import (
	"strings"
	"testing"
)

// TestRedacted: a field whose value is (or holds) a secret shows it
// masked, in the elements, the removed ones and the text rendering, and
// the observation it came from is left as it was.
func TestRedacted(t *testing.T) {
	redact := strings.NewReplacer("s3cret-pw", "••••").Replace
	o := &Observation{URL: "http://127.0.0.1/?q=s3cret-pw", Title: "Welcome",
		Elements: []Element{
			{ID: 1, Role: "textbox", Name: "Shown", Value: "s3cret-pw"},
			{ID: 2, Role: "textbox", Name: "Note", Value: "pw is s3cret-pw!", ValueLength: 3000},
			{ID: 3, Role: "combobox", Name: "Pick", Options: []string{"a", "s3cret-pw"}},
			{ID: 4, Role: "button", Name: "Sign in"},
		},
		Removed: []Element{{ID: 9, Role: "textbox", Name: "Old", Value: "s3cret-pw"}},
		Notes:   []string{"typed s3cret-pw"}}
	r := o.Redacted(redact)
	if r.Elements[0].Value != "••••" || r.Elements[1].Value != "pw is ••••!" || r.Elements[1].ValueLength != 0 ||
		r.Elements[2].Options[1] != "••••" || r.Removed[0].Value != "••••" || r.URL != "http://127.0.0.1/?q=••••" || r.Notes[0] != "typed ••••" {
		t.Errorf("redacted: %+v", r)
	}
	if text := r.Text(); strings.Contains(text, "s3cret") || !strings.Contains(text, `"Shown" ••••`) && !strings.Contains(text, "••••") {
		t.Errorf("text rendering:\n%s", text)
	}
	if o.Elements[0].Value != "s3cret-pw" || o.Notes[0] != "typed s3cret-pw" || o.Elements[2].Options[1] != "s3cret-pw" {
		t.Errorf("the original changed: %+v", o)
	}
}
