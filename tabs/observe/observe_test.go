package observe

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp/jsonv2"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// goldenPages are the recordings with golden renderings.
var goldenPages = []string{"wikipedia", "nytimes-1", "yahoo-1", "rtl-1", "rtl", "login", "shop", "landmarks", "widgets", "frames"}

func checkGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden (run with -update to make it): %v", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d (run with -update if intended):\n got: %s\nwant: %s", file, i+1, g, w)
			}
		}
	}
}

func TestGolden(t *testing.T) {
	for _, name := range goldenPages {
		t.Run(name, func(t *testing.T) {
			in := loadRecording(t, name).input()
			o := Build(in, nil, Options{})
			checkGolden(t, name+".golden", []byte(o.Text()))
			all := Build(in, nil, Options{IncludeAll: true})
			tr, _ := Trim(all, 0)
			checkGolden(t, name+".all.golden", []byte(tr.Text()))
		})
	}
}

// TestGoldenJSON pins the wire shape of an observation.
func TestGoldenJSON(t *testing.T) {
	o := Build(loadRecording(t, "widgets").input(), nil, Options{})
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "widgets.obs.json.golden", append(b, '\n'))
}

// TestSizes logs the size of every rendering next to the same elements
// in the form of `agent-browser snapshot -i`, and requires the element
// lines to be smaller, and for the real pages the whole text too (ours
// also has a header line).
func TestSizes(t *testing.T) {
	real := map[string]bool{"wikipedia": true, "nytimes-1": true, "yahoo-1": true}
	for _, name := range goldenPages {
		in := loadRecording(t, name).input()
		for _, all := range []bool{false, true} {
			o := Build(in, nil, Options{IncludeAll: all})
			s := o.Text()
			other := agentBrowserStyle(o)
			t.Logf("%-10s includeAll=%-5v elements=%4d bytes=%6d tokens=%5d  agent-browser -i: bytes=%6d tokens=%5d",
				name, all, len(o.Elements), len(s), Tokens(s), len(other), Tokens(other))
			lines := 0
			for _, l := range strings.SplitAfter(s, "\n") {
				if strings.HasPrefix(l, "[") {
					lines += len(l)
				}
			}
			if len(o.Elements) > 0 && lines >= len(other) {
				t.Errorf("%s includeAll=%v: element lines %d bytes, not smaller than agent-browser's %d", name, all, lines, len(other))
			}
			if real[name] && len(s) >= len(other) {
				t.Errorf("%s includeAll=%v: %d bytes, not smaller than agent-browser's %d", name, all, len(s), len(other))
			}
		}
	}
}

// agentBrowserStyle renders o's elements as `agent-browser snapshot -i`
// prints them (vercel-labs/agent-browser src/snapshot.ts: one
// `- role "name" [ref=eN]` line per element, ` [nth=K]` on the second and
// later elements of the same role and name, then Playwright's
// `[checked]`-style states; no header).
func agentBrowserStyle(o *Observation) string {
	var b strings.Builder
	seen := map[string]int{}
	for i, el := range o.Elements {
		fmt.Fprintf(&b, "- %s", el.Role)
		if el.Name != "" {
			fmt.Fprintf(&b, " \"%s\"", el.Name)
		}
		fmt.Fprintf(&b, " [ref=e%d]", i+1)
		k := el.Role + "\x00" + el.Name
		if n := seen[k]; n > 0 {
			fmt.Fprintf(&b, " [nth=%d]", n)
		}
		seen[k]++
		if el.Level > 0 {
			fmt.Fprintf(&b, " [level=%d]", el.Level)
		}
		for _, s := range el.States {
			fmt.Fprintf(&b, " [%s]", s)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// find returns the elements of o with the role and name.
func find(o *Observation, role, name string) []Element {
	var out []Element
	for _, el := range o.Elements {
		if el.Role == role && el.Name == name {
			out = append(out, el)
		}
	}
	return out
}

func one(t *testing.T, o *Observation, role, name string) Element {
	t.Helper()
	els := find(o, role, name)
	if len(els) != 1 {
		t.Fatalf("want one %s %q, got %d", role, name, len(els))
	}
	return els[0]
}

func TestLogin(t *testing.T) {
	o := Build(loadRecording(t, "login").input(), nil, Options{})
	type row struct {
		ID                 int
		Role, Name, Value  string
		States             string
		Region, Frame, Ctx string
	}
	var got []row
	for _, el := range o.Elements {
		got = append(got, row{el.ID, el.Role, el.Name, el.Value, strings.Join(el.States, ","), el.Region, el.Frame, el.Context})
	}
	want := []row{
		{1, "textbox", "Email", "", "required", "main", "", ""},
		{2, "textbox", "Password", "", "required", "main", "", ""},
		{3, "checkbox", "Remember me", "", "checked", "main", "", ""},
		{4, "button", "Sign in", "", "", "main", "", ""},
		{5, "link", "Forgot your password?", "", "", "main", "", ""},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("login elements:\n got %+v\nwant %+v", got, want)
	}
	if o.Title != "Sign in - Example" || !strings.HasSuffix(o.URL, "/pages/login.html") {
		t.Errorf("title %q url %q", o.Title, o.URL)
	}
	for _, el := range o.Elements {
		if el.Ref.BackendNodeID == 0 || el.Ref.FrameID == "" || el.Ref.Session != "" {
			t.Errorf("%s %q: bad ref %+v", el.Role, el.Name, el.Ref)
		}
	}
	lines := strings.Split(strings.TrimSpace(o.Text()), "\n")
	if len(lines) != 6 || lines[1] != `1 textbox "Email" required` || lines[4] != `4 [Sign in]` || lines[5] != `5 "Forgot your password?"` {
		t.Errorf("text:\n%s", o.Text())
	}
	all := Build(loadRecording(t, "login").input(), nil, Options{IncludeAll: true})
	if h := one(t, all, "heading", "Sign in"); h.Level != 1 {
		t.Errorf("heading level %d", h.Level)
	}
	one(t, all, "form", "Sign in")
	one(t, all, "main", "")
	// Label text is the name of its field: not repeated as text.
	if els := find(all, "text", "Email"); len(els) != 0 {
		t.Errorf("label text kept: %+v", els)
	}
}

func TestDuplicatesGetContexts(t *testing.T) {
	o := Build(loadRecording(t, "shop").input(), nil, Options{})
	var ctxs []string
	for _, el := range find(o, "button", "Buy") {
		ctxs = append(ctxs, el.Context)
	}
	want := []string{"Apples, 1 kg", "Pears, 1 kg", "Cherries", "Hammer", "Saw", "Gloves", "Boots"}
	if !slices.Equal(ctxs, want) {
		t.Errorf("Buy contexts %q, want %q", ctxs, want)
	}
	var carts []string
	for _, el := range find(o, "link", "Cart") {
		carts = append(carts, el.Context)
	}
	// Links to the same URL are the same choice: no context.
	if !slices.Equal(carts, []string{"", ""}) {
		t.Errorf("Cart contexts %q", carts)
	}
	if el := one(t, o, "link", "Home"); el.Context != "" {
		t.Errorf("unique link got a context %q", el.Context)
	}
	if !strings.Contains(o.Text(), `3 [Buy] (Apples, 1 kg)`+"\n") || !strings.Contains(o.Text(), "\n2,14 \"Cart\"\n") {
		t.Errorf("text:\n%s", o.Text())
	}

	// The same in Arabic, right to left.
	rtl := Build(loadRecording(t, "rtl").input(), nil, Options{})
	var rc []string
	for _, el := range find(rtl, "button", "اقرأ المزيد") {
		rc = append(rc, el.Context)
	}
	if !slices.Equal(rc, []string{"مقال أول", "مقال ثان"}) {
		t.Errorf("rtl contexts %q", rc)
	}
	one(t, rtl, "link", "עברית")
	one(t, rtl, "searchbox", "بحث")
}

func TestWidgets(t *testing.T) {
	o := Build(loadRecording(t, "widgets").input(), nil, Options{})
	check := func(role, name, value string, states ...string) Element {
		t.Helper()
		el := one(t, o, role, name)
		if el.Value != value || !slices.Equal(el.States, states) {
			t.Errorf("%s %q: value %q states %q, want %q %q", role, name, el.Value, el.States, value, states)
		}
		return el
	}
	check("focusable", "Open the settings panel", "")
	check("focusable", "Close dialog", "")
	check("button", "Custom button", "")
	check("textbox", "Editor", "Some rich text")
	check("checkbox", "Unchecked box", "")
	check("checkbox", "Mixed box", "", "mixed")
	check("switch", "Dark mode", "", "checked")
	check("button", "Bold", "", "pressed")
	check("slider", "Volume", "7")
	check("spinbutton", "Count", "3")
	check("combobox", "Country", "Germany", "collapsed")
	check("listbox", "Colours", "", "multiselectable")
	check("option", "Red", "", "selected")
	check("option", "Green", "")
	check("radio", "Radio A", "", "checked")
	check("tab", "Tab one", "", "selected")
	check("button", "Actions", "", "collapsed", "haspopup")
	check("treeitem", "Root", "", "expanded")
	check("menuitemcheckbox", "Wrap", "", "checked")
	check("textbox", "Readonly field", "fixed", "readonly")
	check("textbox", "Invalid field", "bad", "invalid")
	check("textbox", "Focused field", "", "focused")
	check("button", "Disabled", "", "disabled")
	// The options of a collapsed <select> are not elements.
	for _, n := range []string{"France", "Italy"} {
		if len(find(o, "option", n)) != 0 {
			t.Errorf("option %q of a collapsed select kept", n)
		}
	}
	// A span with a click handler but no focus cannot be found.
	for _, el := range o.Elements {
		if strings.Contains(el.Name, "Not focusable") || el.Role == "Iframe" || el.Role == "RootWebArea" {
			t.Errorf("kept %s %q", el.Role, el.Name)
		}
	}
	long := one(t, o, "textbox", "Long value")
	if n := utf8.RuneCountInString(long.Value); n != 101 || !strings.HasSuffix(long.Value, "…") {
		t.Errorf("long value: %d runes %q", n, long.Value)
	}
	var cut Element
	for _, el := range find(o, "link", "") {
		if el.URL != "/x" {
			t.Errorf("nameless link url %q", el.URL)
		}
	}
	for _, el := range o.Elements {
		if strings.HasPrefix(el.Name, "This is a link with a very long name") {
			cut = el
		}
	}
	if n := utf8.RuneCountInString(cut.Name); n > 101 || !strings.HasSuffix(cut.Name, "…") {
		t.Errorf("long name: %d runes %q", n, cut.Name)
	}
	if !strings.Contains(o.Text(), "30 link url=/x\n") {
		t.Errorf("text:\n%s", o.Text())
	}
}

func TestLandmarksAndHidden(t *testing.T) {
	in := loadRecording(t, "landmarks").input()
	all := Build(in, nil, Options{IncludeAll: true})
	for _, el := range all.Elements {
		if strings.Contains(el.Name, "idden") || el.Name == "Invisible" {
			t.Errorf("hidden element kept: %s %q", el.Role, el.Name)
		}
	}
	levels := map[string]int{"The main title": 1, "Section two": 2, "Comments": 3, "Related": 2}
	for name, level := range levels {
		if h := one(t, all, "heading", name); h.Level != level {
			t.Errorf("heading %q level %d, want %d", name, h.Level, level)
		}
	}
	one(t, all, "navigation", "Primary")
	one(t, all, "region", "Comments")
	one(t, all, "banner", "")
	one(t, all, "contentinfo", "")
	one(t, all, "complementary", "")
	if d := one(t, all, "dialog", "Cookies"); !slices.Equal(d.States, []string{"modal"}) {
		t.Errorf("dialog states %q", d.States)
	}
	one(t, all, "text", "Whitespace is collapsed here.")
	// Text inside a link is the link's name, not text of its own.
	if len(find(all, "text", "link in the middle")) != 0 {
		t.Error("link text repeated as static text")
	}
	regions := map[string]string{"News": RegionNavigation, "Logo": RegionBanner, "Far away link": RegionMain,
		"Related one": RegionComplementary, "Privacy": RegionContentInfo}
	for name, r := range regions {
		if el := one(t, all, "link", name); el.Region != r {
			t.Errorf("link %q region %q, want %q", name, el.Region, r)
		}
	}
	if el := one(t, all, "button", "Accept"); el.Region != RegionDialog {
		t.Errorf("dialog button region %q", el.Region)
	}

	// Default: interactive only.
	def := Build(in, nil, Options{})
	for _, el := range def.Elements {
		if isStructural(el.Role) {
			t.Errorf("structure without IncludeAll: %s %q", el.Role, el.Name)
		}
	}
	if len(def.Elements) != 15 {
		t.Errorf("%d default elements:\n%s", len(def.Elements), def.Text())
	}

	// ViewportOnly: the link below the 1600px spacer is out.
	vp := Build(in, nil, Options{ViewportOnly: true})
	if len(find(vp, "link", "Far away link")) != 0 || len(find(vp, "link", "Privacy")) != 0 {
		t.Errorf("below the fold kept:\n%s", vp.Text())
	}
	one(t, vp, "link", "News")
	one(t, vp, "button", "Post")
	// Numbers do not depend on the filter.
	if a, b := one(t, vp, "button", "Post").ID, one(t, def, "button", "Post").ID; a != b {
		t.Errorf("Post is %d with ViewportOnly, %d without", a, b)
	}
}

func TestQuery(t *testing.T) {
	in := loadRecording(t, "shop").input()
	o := Build(in, nil, Options{Query: "APPLES"})
	if len(o.Elements) != 1 || o.Elements[0].Name != "Buy" || o.Elements[0].Context != "Apples, 1 kg" {
		t.Errorf("query by context:\n%s", o.Text())
	}
	o = Build(in, nil, Options{Query: "cart"})
	if len(o.Elements) != 2 {
		t.Errorf("query cart:\n%s", o.Text())
	}
	o = Build(in, nil, Options{Query: "€50", IncludeAll: true})
	if len(o.Elements) != 1 || o.Elements[0].Role != "text" {
		t.Errorf("query text:\n%s", o.Text())
	}
	o = Build(loadRecording(t, "widgets").input(), nil, Options{Query: "germ"})
	if len(o.Elements) != 1 || o.Elements[0].Name != "Country" {
		t.Errorf("query value:\n%s", o.Text())
	}
	o = Build(in, nil, Options{Query: "no such thing"})
	if len(o.Elements) != 0 || !strings.Contains(o.Text(), "(no elements)") {
		t.Errorf("empty query result:\n%s", o.Text())
	}
}

func TestFrames(t *testing.T) {
	o := Build(loadRecording(t, "frames").input(), nil, Options{})
	var order []string
	for _, el := range o.Elements {
		order = append(order, el.Name+"@"+el.Frame)
	}
	want := []string{"Top link@", "Inner link@sameorigin", "Place order@sameorigin", "After same-origin frame@",
		"Card number@localhost:8000/pages/card.html", "Pay@localhost:8000/pages/card.html", "Place order@"}
	if !slices.Equal(order, want) {
		t.Fatalf("order %q\nwant %q", order, want)
	}
	pay := one(t, o, "button", "Pay")
	if pay.Ref.Session == "" || pay.Ref.FrameID == o.Elements[0].Ref.FrameID {
		t.Errorf("OOPIF ref %+v", pay.Ref)
	}
	if inner := one(t, o, "link", "Inner link"); inner.Ref.Session != "" || inner.Ref.FrameID == o.Elements[0].Ref.FrameID {
		t.Errorf("same-process frame ref %+v", inner.Ref)
	}
	if !strings.Contains(o.Text(), "frames: f1=sameorigin f2=localhost:8000/pages/card.html\n") ||
		!strings.Contains(o.Text(), `6 [Pay] @f2`+"\n") {
		t.Errorf("text:\n%s", o.Text())
	}

	// Without owners, child frames come after the top frame.
	in := loadRecording(t, "frames").input()
	for i := range in.Frames {
		in.Frames[i].Owner = 0
	}
	o = Build(in, nil, Options{})
	if o.Elements[2].Name != "Place order" || o.Elements[2].Frame != "" || o.Elements[3].Frame != "sameorigin" {
		t.Errorf("frames without owners:\n%s", o.Text())
	}
}

func TestRealPages(t *testing.T) {
	wiki := Build(loadRecording(t, "wikipedia").input(), nil, Options{})
	links := 0
	for _, el := range wiki.Elements {
		if el.Role == "link" {
			links++
		}
		if el.ID <= 0 || el.Ref.BackendNodeID == 0 {
			t.Fatalf("bad element %+v", el)
		}
	}
	if links < 500 {
		t.Errorf("wikipedia: %d links", links)
	}
	one(t, wiki, "searchbox", "Search")
	all := Build(loadRecording(t, "wikipedia").input(), nil, Options{IncludeAll: true})
	if h := one(t, all, "heading", "Mozilla"); h.Level != 1 || h.Region != RegionMain {
		t.Errorf("wikipedia h1 %+v", h)
	}
	// Every "edit" link is told apart by its section heading.
	edits := find(wiki, "link", "edit")
	seen := map[string]bool{}
	for _, el := range edits {
		if el.Context == "" || seen[el.Context] {
			t.Errorf("edit link context %q", el.Context)
		}
		seen[el.Context] = true
	}
	if len(edits) < 20 {
		t.Errorf("%d edit links", len(edits))
	}

	nyt := Build(loadRecording(t, "nytimes-1").input(), nil, Options{})
	if len(find(nyt, "link", "Skip to content")) != 1 || len(nyt.Elements) < 100 {
		t.Errorf("nytimes: %d elements", len(nyt.Elements))
	}
	yahoo := Build(loadRecording(t, "yahoo-1").input(), nil, Options{})
	one(t, yahoo, "link", "Sign in")
	if len(Build(loadRecording(t, "rtl-1").input(), nil, Options{}).Elements) != 0 {
		t.Error("rtl-1 has no interactive elements")
	}
	if h := one(t, Build(loadRecording(t, "rtl-1").input(), nil, Options{IncludeAll: true}), "heading", "Lorem"); h.Level != 1 {
		t.Errorf("rtl-1 heading %+v", h)
	}
}

func TestTrim(t *testing.T) {
	full := Build(loadRecording(t, "wikipedia").input(), nil, Options{IncludeAll: true})
	n := len(full.Elements)
	tr, omitted := Trim(full, 0)
	if len(full.Elements) != n {
		t.Fatal("Trim changed its input")
	}
	text := tr.Text()
	if Tokens(text) > DefaultMaxTokens || omitted == 0 || tr.Omitted != omitted || len(tr.Elements)+omitted != n {
		t.Fatalf("trim: %d tokens, kept %d, omitted %d of %d", Tokens(text), len(tr.Elements), omitted, n)
	}
	if !strings.HasSuffix(text, fmt.Sprintf("… %d more elements left out\n", omitted)) {
		t.Errorf("last line: %q", text[strings.LastIndex(text[:len(text)-1], "\n")+1:])
	}
	tr.FullPath = "/tmp/tabpilot-observe-123.json"
	text = tr.Text()
	if !strings.HasSuffix(text, fmt.Sprintf("… %d more elements left out; full observation: /tmp/tabpilot-observe-123.json\n", omitted)) {
		t.Errorf("last line with path: %q", text[strings.LastIndex(text[:len(text)-1], "\n")+1:])
	}
	if Tokens(text) > DefaultMaxTokens {
		t.Errorf("with the path: %d tokens", Tokens(text))
	}
	checkTrimOrder(t, full, tr)

	// A small budget on the landmarks page: the dialog and main first,
	// navigation, sidebar and footer last.
	lm := Build(loadRecording(t, "landmarks").input(), nil, Options{})
	small, om := Trim(lm, 80)
	if om == 0 || Tokens(small.Text()) > 80 {
		t.Fatalf("small trim: omitted %d, %d tokens", om, Tokens(small.Text()))
	}
	checkTrimOrder(t, lm, small)
	if len(find(small, "button", "Accept")) != 1 || len(find(small, "link", "Privacy")) != 0 {
		t.Errorf("small trim:\n%s", small.Text())
	}

	// Within budget: everything, nothing omitted.
	login := Build(loadRecording(t, "login").input(), nil, Options{})
	same, om := Trim(login, 1000)
	if om != 0 || same.Omitted != 0 || len(same.Elements) != len(login.Elements) || same.Text() != login.Text() {
		t.Errorf("trim within budget: omitted %d", om)
	}
	same.Elements[0].Name = "changed"
	if login.Elements[0].Name == "changed" {
		t.Error("Trim returned the input's elements, not a copy")
	}
}

// checkTrimOrder checks that tr keeps a prefix of full's elements in the
// order (tier, document order), listed in document order.
func checkTrimOrder(t *testing.T, full, tr *Observation) {
	t.Helper()
	kept := map[int]bool{}
	last := -1
	for _, el := range tr.Elements {
		kept[el.ID] = true
		if el.ID <= last {
			t.Fatalf("kept elements out of document order at %d", el.ID)
		}
		last = el.ID
	}
	// A kept element never comes after an omitted one in priority order.
	seenOmitted := false
	for tier := 0; tier <= 3; tier++ {
		for _, el := range full.Elements {
			if regionTier(el.Region) != tier {
				continue
			}
			if !kept[el.ID] {
				seenOmitted = true
			} else if seenOmitted {
				t.Fatalf("element %d (%s %q, region %q) kept after an omitted one of higher priority", el.ID, el.Role, el.Name, el.Region)
			}
		}
	}
}

func TestNumbering(t *testing.T) {
	in := loadRecording(t, "shop").input()
	num := NewNumbering()
	a := Build(in, num, Options{})
	b := Build(in, num, Options{})
	if a.Text() != b.Text() {
		t.Fatal("two builds of the same tree differ")
	}
	for _, el := range a.Elements {
		if r, ok := num.Lookup(el.ID); !ok || r != el.Ref {
			t.Fatalf("Lookup(%d) = %+v %v, want %+v", el.ID, r, ok, el.Ref)
		}
	}
	// IncludeAll adds new numbers after the old ones, and keeps the old.
	c := Build(in, num, Options{IncludeAll: true})
	maxA := a.Elements[len(a.Elements)-1].ID
	for _, el := range c.Elements {
		if isStructural(el.Role) && el.ID <= maxA {
			t.Errorf("new element %s %q got old number %d", el.Role, el.Name, el.ID)
		}
	}
	for _, el := range a.Elements {
		found := false
		for _, e2 := range c.Elements {
			if e2.Ref == el.Ref {
				found = e2.ID == el.ID
			}
		}
		if !found {
			t.Errorf("%s %q lost its number %d", el.Role, el.Name, el.ID)
		}
	}
	// A node that goes away and a new one that comes: the others keep
	// their numbers, the new one gets a new number.
	mod := loadRecording(t, "shop").input()
	nodes := mod.Frames[0].Nodes
	var firstBuy, home *accessibility.Node
	for _, n := range nodes {
		if valueString(n.Name) == "Buy" && valueString(n.Role) == "button" && firstBuy == nil {
			firstBuy = n
		}
		if valueString(n.Name) == "Home" && valueString(n.Role) == "link" {
			home = n
		}
	}
	oldRef := Ref{FrameID: mod.Frames[0].FrameID, BackendNodeID: firstBuy.BackendDOMNodeID}
	firstBuy.BackendDOMNodeID = 99999 // a new node in its place
	d := Build(mod, num, Options{})
	if one(t, d, "link", "Home").ID != one(t, a, "link", "Home").ID || home == nil {
		t.Error("Home changed number")
	}
	var nb Element
	for _, el := range d.Elements {
		if el.Ref.BackendNodeID == 99999 {
			nb = el
		}
		if el.Ref == oldRef {
			t.Error("the replaced node is still there")
		}
	}
	if nb.ID != num.Len() || nb.ID <= maxA {
		t.Errorf("new node got %d, want the newest number %d", nb.ID, num.Len())
	}
	if r, ok := num.Lookup(one(t, a, "link", "Home").ID); !ok || r != one(t, d, "link", "Home").Ref {
		t.Error("Lookup of an old number")
	}

	// Reset: old numbers fail, new ones continue above them.
	top := num.Len()
	num.Reset()
	if _, ok := num.Lookup(1); ok {
		t.Error("Lookup(1) after Reset succeeded")
	}
	if _, ok := num.Lookup(top); ok {
		t.Errorf("Lookup(%d) after Reset succeeded", top)
	}
	e := Build(in, num, Options{})
	if e.Elements[0].ID != top+1 {
		t.Errorf("first number after Reset %d, want %d", e.Elements[0].ID, top+1)
	}
	if r, ok := num.Lookup(top + 1); !ok || r != e.Elements[0].Ref {
		t.Errorf("Lookup after Reset: %+v %v", r, ok)
	}
	if _, ok := num.Lookup(0); ok {
		t.Error("Lookup(0) succeeded")
	}
	var zero Numbering
	if zero.ID(Ref{BackendNodeID: 5}) != 1 || zero.ID(Ref{BackendNodeID: 6}) != 2 || zero.ID(Ref{BackendNodeID: 5}) != 1 {
		t.Error("zero Numbering")
	}
}

func TestTextFormat(t *testing.T) {
	o := &Observation{URL: "http://x/", Title: `A "quoted" title`, Viewport: Size{800, 600}, Scroll: Scroll{0, 10, 800, 2000},
		Elements: []Element{
			{ID: 1, Role: "button", Name: `say "hi" \ now`, States: []string{"disabled", "pressed"}},
			{ID: 2, Role: "heading", Name: "Head", Level: 2},
			{ID: 3, Role: "text", Name: "plain text"},
			{ID: 4, Role: "textbox", Name: "Notes", Value: "line1\nline2"},
			{ID: 5, Role: "link", Name: "Buy", Context: "Apples", Frame: "my frame"},
			{ID: 6, Role: "main"},
			{ID: 7, Role: "link", Name: "Cart", href: "http://x/cart"},
			{ID: 8, Role: "link", URL: "/x"},
			{Role: "navigation", Name: "Primary"},
			{Role: "list", Count: 3},
			{ID: 9, Role: "link", Name: "Cart", href: "http://x/cart"},
			{ID: 10, Role: "link", Name: "Cart", href: "http://x/other"},
			{Role: "button", Name: "Unnumbered"},
		}, Omitted: 3}
	want := `page "A \"quoted\" title" http://x/ viewport=800x600 scroll=0,10/800x2000 scrollable 1%/1390px below
frames: f1="my frame"
1 [say "hi" \\ now] disabled pressed
2 h2 "Head"
"plain text"
4 textbox "Notes": "line1\nline2"
5 "Buy" (Apples) @f1
[main]
7,9 "Cart"
8 link url=/x
[nav "Primary"]
[list 3]
10 "Cart"
- [Unnumbered]
… 3 more elements left out
`
	if got := o.Text(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	d := &Observation{URL: "http://x/", Title: "T", Since: "last", Unchanged: 4,
		Elements: []Element{
			{ID: 3, Role: "button", Name: "Add", Change: "added"},
			{ID: 4, Role: "textbox", Name: "Qty", Value: "2", Change: "changed", Was: `: "1"`},
			{ID: 5, Role: "checkbox", Name: "Gift", States: []string{"checked"}, Change: "changed", Was: "[]"},
		},
		Removed: []Element{{ID: 1, Role: "button", Name: "Old"}}}
	want = `page "T" http://x/
since last: 1 added, 2 changed, 1 removed, 4 unchanged
+ 3 [Add]
~ 4 textbox "Qty": "2" was: "1"
~ 5 checkbox "Gift" checked was []
- 1 [Old]
`
	if got := d.Text(); got != want {
		t.Errorf("diff got:\n%s\nwant:\n%s", got, want)
	}
}

func TestClean(t *testing.T) {
	long := strings.Repeat("é", 150)
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"  lead  trail  ", "lead trail"},
		{"a\n\t b\u00a0\u00a0c", "a b c"},
		{"abcdefghij", "abcdefghij"},
		{"abcdefghijk", "abcdefghij…"},
		{"abcdefghij   ", "abcdefghij"},
		{"abcde fghij klm", "abcde fghi…"},
		{"abcde fghij", "abcde fghi…"},
		{"abcde fghij   ", "abcde fghi…"},
		{"abcde fghij k", "abcde fghi…"},
		{long, strings.Repeat("é", 10) + "…"},
	} {
		if got := clean(c.in, 10); got != c.want {
			t.Errorf("clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if Tokens("") != 0 || Tokens("abcd") != 1 || Tokens("abcde") != 2 {
		t.Error("Tokens")
	}
}

func TestEmptyInput(t *testing.T) {
	o := Build(&Input{URL: "about:blank"}, nil, Options{IncludeAll: true})
	if o.Elements == nil || len(o.Elements) != 0 {
		t.Errorf("%+v", o)
	}
	b, _ := json.Marshal(o)
	if !strings.Contains(string(b), `"elements":[]`) {
		t.Errorf("json %s", b)
	}
}

func TestRawString(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{``, ""},
		{`null`, ""},
		{`7`, "7"},
		{`true`, "true"},
		{`"plain"`, "plain"},
		{`"a\"b\\c\/d\n\t"`, "a\"b\\c/d\n\t"},
		{`"caf\u00e9 \u05e2"`, "café ע"},
		{`"\ud83d\ude00!"`, "😀!"},
	} {
		if got := rawString([]byte(c.raw)); got != c.want {
			t.Errorf("rawString(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
}

// FuzzUnquote checks the fast JSON string decoder against the JSON package.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"x"`, `"a\"b"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\/\b\f\r"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var want string
		if err := jsonv2.Unmarshal([]byte(raw), &want); err != nil {
			return
		}
		if got := rawString([]byte(raw)); got != want {
			t.Errorf("rawString(%s) = %q, want %q", raw, got, want)
		}
	})
}
