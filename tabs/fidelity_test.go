package tabs_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// TestObserveWhatAPersonActsOn checks the observation of testdata/observe/
// fidelity.html: icon-only and role-less controls, the controls of
// delegating listeners, hidden file inputs behind labels, field values as
// the field holds them, input types, clipped elements, boxes, frame
// labels and a modal dialog.
func TestObserveWhatAPersonActsOn(t *testing.T) {
	t.Parallel()
	s := obsServer(t)
	tab := obsOpen(t, s.URL+"/o/fidelity.html")
	o := obsObserve(t, tab, tabs.ObserveOptions{})
	has := func(el observe.Element, state string) bool { return slices.Contains(el.States, state) }

	// Icon-only and role-less controls, named from what there is.
	for _, name := range []string{"menu toggle burger", "trash", "star", "send"} {
		if el := obsOne(t, o, "clickable", name); !has(el, "icon") {
			t.Errorf("%q is not marked icon: %v", name, el.States)
		}
	}
	// The controls of a delegating listener, one each.
	for _, name := range []string{"Reply", "Forward", "1", "2", "3"} {
		obsOne(t, o, "clickable", name)
	}
	for _, c := range []struct{ name, title string }{{"Reply", "mail Reply"}, {"star", "mail star"}, {"2", "day 2"}} {
		if _, err := obsClick(t, tab, obsOne(t, o, "clickable", c.name).ID); err != nil {
			t.Fatalf("click %s: %v", c.name, err)
		}
		var title string
		obsEval(t, tab, "document.title", &title)
		if title != c.title {
			t.Errorf("click %s: title %q, want %q", c.name, title, c.title)
		}
	}
	// Hidden file inputs: their label, or the dropzone wrapping one.
	for _, name := range []string{"Choose a photo", "Drop files here"} {
		if el := obsOne(t, o, "button", name); !has(el, "upload") {
			t.Errorf("%q is not marked upload: %v", name, el.States)
		}
	}
	// Values as the field holds them, a textarea marked multiline.
	notes := obsOne(t, o, "textbox", "Notes")
	if !strings.HasPrefix(notes.Value, "line one\n  indented line two\nxxx") || !strings.HasSuffix(notes.Value, "\nEND") ||
		len(notes.Value) != 1333 || notes.ValueLength != 0 || !has(notes, "multiline") {
		t.Errorf("Notes: %d chars %q…, length %d, states %v", len(notes.Value), notes.Value[:min(40, len(notes.Value))], notes.ValueLength, notes.States)
	}
	if v := obsOne(t, o, "textbox", "Name").Value; v != "  two  spaces  " {
		t.Errorf("Name value %q", v)
	}
	if !strings.Contains(o.Text(), `textbox "Notes": "line one\n  indented line two\nxxx`) {
		t.Errorf("text rendering of Notes:\n%s", o.Text())
	}
	// Input types that set the format.
	for name, typ := range map[string]string{"Birthday": "date", "Alarm": "time", "Email": "email", "Secret": "password"} {
		if el := obsOne(t, o, "textbox", name); el.Type != typ {
			t.Errorf("%s: type %q, want %q", name, el.Type, typ)
		}
	}
	if el := obsOne(t, o, "spinbutton", "Qty"); el.Type != "number" {
		t.Errorf("Qty: type %q", el.Type)
	}
	// Clipped away: not offered.
	for _, name := range []string{"Clipped zero", "Clipped away"} {
		if len(obsFind(o, "button", name)) != 0 {
			t.Errorf("%q is offered:\n%s", name, o.Text())
		}
	}
	// A canvas and an image map's area carry their boxes.
	cv := obsOne(t, o, "canvas", "")
	if cv.Bounds == nil || cv.Bounds.Width != 300 || cv.Bounds.Height != 150 {
		t.Errorf("canvas box %+v", cv.Bounds)
	}
	if b := obsOne(t, o, "link", "North").Bounds; b == nil || b.Width != 50 || b.Height != 50 {
		t.Errorf("area box %+v", b)
	}
	// A frame is labelled by its title.
	if f := obsOne(t, o, "button", "Gift wrap").Frame; f != "Checkout extras" {
		t.Errorf("frame label %q", f)
	}
	// A modal dialog is named in the default observation.
	if d := obsOne(t, o, "dialog", "Cookie consent"); !has(d, "modal") || d.ID == 0 {
		t.Errorf("dialog %+v", d)
	}
	// Informative images are there to read with includeAll.
	all := obsObserve(t, tab, tabs.ObserveOptions{IncludeAll: true})
	if len(obsFind(all, "img", "Blue mug")) != 1 || !strings.Contains(all.Text(), `img "Blue mug"`) {
		t.Errorf("no img \"Blue mug\" in:\n%s", all.Text())
	}
}
