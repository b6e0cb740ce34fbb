package observe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
)

// domPages are the recorded walks (testdata/dom/NAME.json, written by
// `go test ./tabs -run TestObserveGolden -record`) with golden renderings.
var domPages = []string{"wikipedia", "nytimes-1", "yahoo-1", "medium-1", "cnn", "mozilla-1", "ars-1", "gitlab-blog", "rtl-1",
	"links-in-tables", "frames", "shadow", "clickables", "structure", "diff", "widgets", "shop", "login"}

func loadDOM(tb testing.TB, name string) *DOMInput {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "dom", name+".json"))
	if err != nil {
		tb.Fatalf("reading recording (run `go test ./tabs -run TestObserveGolden -record` to make it): %v", err)
	}
	var in DOMInput
	if err := jsonv2.Unmarshal(b, &in); err != nil {
		tb.Fatalf("decoding %s.json: %v", name, err)
	}
	return &in
}

// TestDOMGolden renders every recorded walk (default, includeAll, and
// includeAll within the default budget) against golden files.
func TestDOMGolden(t *testing.T) {
	for _, name := range domPages {
		t.Run(name, func(t *testing.T) {
			in := loadDOM(t, name)
			def := BuildDOM(in, nil, Options{})
			checkGolden(t, filepath.Join("dom", name+".golden"), []byte(def.Text()))
			all := BuildDOM(in, nil, Options{IncludeAll: true})
			tr, _ := Trim(all, 0)
			checkGolden(t, filepath.Join("dom", name+".all.golden"), []byte(tr.Text()))
			for _, el := range def.Elements {
				if el.ID == 0 || el.Ref.BackendNodeID == 0 {
					t.Fatalf("unnumbered element %+v", el)
				}
			}
		})
	}
}

// frameInput is a page with a same-process frame, an out-of-process one
// (placed by their iframes), a hidden one and one whose iframe is unknown.
func frameInput() *DOMInput {
	top := &Walk{URL: "http://t/", Title: "Top", VW: 800, VH: 600, Items: []Item{
		{Kind: KindElement, Node: 0, Role: "link", Name: "Top link", URL: "http://t/a", Box: []float64{10, 10, 50, 10}},
		{Kind: KindFrame, Node: 1, Origin: []float64{100, 300}, Box: []float64{95, 295, 310, 210}},
		{Kind: KindFrame, Node: 2, Hidden: 1},
		{Kind: KindElement, Node: 3, Role: "button", Name: "Pay", Box: []float64{10, 50, 50, 20}},
		{Kind: KindFrame, Node: 4, Origin: []float64{0, 100}, Box: []float64{0, 100, 300, 100}},
	}}
	oop := &Walk{URL: "http://o/", VW: 300, VH: 200, Items: []Item{
		{Kind: KindElement, Node: 0, Role: "textbox", Name: "Card", Box: []float64{5, 5, 100, 20}},
		{Kind: KindElement, Node: 1, Role: "button", Name: "Pay", Box: []float64{5, 250, 50, 20}},
	}}
	hidden := &Walk{URL: "http://t/h", VW: 0, VH: 0, Items: []Item{{Kind: KindElement, Node: 0, Role: "button", Name: "Hidden"}}}
	same := &Walk{URL: "http://t/s", VW: 300, VH: 100, Items: []Item{{Kind: KindElement, Node: 0, Role: "button", Name: "Pay", Box: []float64{1, 1, 10, 10}}}}
	lost := &Walk{URL: "http://t/l", VW: 100, VH: 100, Items: []Item{{Kind: KindElement, Node: 0, Role: "button", Name: "Lost"}}}
	return &DOMInput{URL: "http://t/", Title: "Top", Viewport: Size{800, 600}, Frames: []DOMFrame{
		{FrameID: "T", Walk: top, Backend: map[int]cdp.BackendNodeID{0: 10, 1: 11, 2: 12, 3: 13, 4: 14}},
		{FrameID: "O", Session: "S1", URL: "http://o/", Name: "pay", Parent: "T", Owner: 11, Walk: oop, Backend: map[int]cdp.BackendNodeID{0: 5, 1: 6}},
		{FrameID: "H", URL: "http://t/h", Parent: "T", Owner: 12, Walk: hidden, Backend: map[int]cdp.BackendNodeID{0: 7}},
		{FrameID: "S", URL: "http://t/s", Parent: "T", Owner: 14, Walk: same, Backend: map[int]cdp.BackendNodeID{0: 8}},
		{FrameID: "L", URL: "http://t/l", Parent: "T", Walk: lost, Backend: map[int]cdp.BackendNodeID{0: 9}},
	}}
}

func TestBuildDOMFrames(t *testing.T) {
	o := BuildDOM(frameInput(), nil, Options{})
	var got []string
	for _, el := range o.Elements {
		got = append(got, el.Name+"@"+el.Frame)
	}
	want := []string{"Top link@", "Card@pay", "Pay@pay", "Pay@", "Pay@t/s", "Lost@t/l"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %q, want %q", got, want)
	}
	card := o.Elements[1]
	if card.Ref != (Ref{FrameID: "O", BackendNodeID: 5, Session: "S1"}) || card.ID != 2 {
		t.Errorf("card %+v", card)
	}
	// Boxes: offset by the iframe's origin, clipped to the frame's view.
	if b, ok := card.Box(); !ok || b != (Rect{X: 105, Y: 305, Width: 100, Height: 20}) {
		t.Errorf("card box %+v %v", b, ok)
	}
	if b, _ := o.Elements[2].Box(); b.Width != 0 {
		t.Errorf("a button below its frame's view has box %+v", b)
	}
	// ViewportOnly: the frame's button below its view is out.
	vp := BuildDOM(frameInput(), nil, Options{ViewportOnly: true})
	var names []string
	for _, el := range vp.Elements {
		names = append(names, el.Name+"@"+el.Frame)
	}
	if !slices.Equal(names, []string{"Top link@", "Card@pay", "Pay@", "Pay@t/s"}) {
		t.Errorf("viewportOnly %q", names)
	}
	text := o.Text()
	if !strings.Contains(text, "frames: f1=pay f2=t/s f3=t/l\n") || !strings.Contains(text, "\n3 [Pay] @f1\n") {
		t.Errorf("text:\n%s", text)
	}
	// Every Pay has no context to tell it apart (no candidates): none.
	for _, el := range o.Elements {
		if el.Context != "" {
			t.Errorf("context %q", el.Context)
		}
	}
}

func TestBuildDOMNumbersAndPick(t *testing.T) {
	in := frameInput()
	num := NewNumbering()
	a := BuildDOM(in, num, Options{})
	b := BuildDOM(in, num, Options{IncludeAll: true, Query: "pay"})
	for _, el := range b.Elements {
		if el.Name != "Pay" {
			t.Errorf("query pay kept %q", el.Name)
		}
		if x := slices.IndexFunc(a.Elements, func(e Element) bool { return e.Ref == el.Ref }); x < 0 || a.Elements[x].ID != el.ID {
			t.Errorf("%+v changed number", el)
		}
	}
	// Without backend ids an element has no number, and Trim leaves it
	// out; PickDOM names the ones to fetch within the budget.
	in.Frames[0].Backend = map[int]cdp.BackendNodeID{1: 11, 2: 12, 4: 14}
	c := BuildDOM(in, NewNumbering(), Options{})
	if c.Elements[0].ID != 0 {
		t.Errorf("element without a backend id numbered: %+v", c.Elements[0])
	}
	tr, om := Trim(c, 0)
	if om != 2 || len(tr.Elements) != 4 {
		t.Errorf("trim of unnumbered: kept %d, omitted %d", len(tr.Elements), om)
	}
	picks := PickDOM(in, NewNumbering(), Options{})
	if len(picks) != 6 || picks[0] != (Want{Frame: 0, Node: 0}) {
		t.Errorf("picks %+v", picks)
	}
	// A page of 400 buttons within 300 tokens: the first ones of main.
	var items []Item
	backend := map[int]cdp.BackendNodeID{}
	for i := range 400 {
		items = append(items, Item{Kind: KindElement, Node: i, Role: "button", Name: "Button", Container: strings.Repeat("x", i%7)})
	}
	big := &DOMInput{URL: "u", Title: "t", Frames: []DOMFrame{{FrameID: "F", Walk: &Walk{Items: items}, Backend: backend}}}
	small := PickDOM(big, NewNumbering(), Options{MaxTokens: 300})
	if len(small) < 20 || len(small) > 60 || small[0].Node != 0 || small[len(small)-1].Node != len(small)-1 {
		t.Errorf("%d picks within 300 tokens: %+v", len(small), small)
	}
	for _, p := range small {
		backend[p.Node] = cdp.BackendNodeID(1000 + p.Node)
	}
	o := BuildDOM(big, NewNumbering(), Options{})
	tr, om = Trim(o, 300)
	if len(tr.Elements) != len(small) || om != 400-len(small) || Tokens(tr.Text()) > 300 {
		t.Errorf("trim after picking: kept %d of %d picked, omitted %d, %d tokens", len(tr.Elements), len(small), om, Tokens(tr.Text()))
	}
}

func TestBuildDOMStructure(t *testing.T) {
	w := &Walk{URL: "http://t/", Title: "S", VW: 800, VH: 600, Items: []Item{
		{Kind: KindLandmark, Role: "navigation", Name: "Primary"},
		{Kind: KindElement, Node: 0, Role: "link", Name: "Home", URL: "http://t/", Region: "navigation", Landmark: "Primary", Box: []float64{0, 0, 10, 10}},
		{Kind: KindLandmark, Role: "main"},
		{Kind: KindHeading, Node: 1, Role: "heading", Name: "Title", Level: 1, Region: "main", Box: []float64{0, 20, 100, 30}},
		{Kind: KindList, Role: "list", Count: 2, Region: "main"},
		{Kind: KindText, Node: 2, Name: "  Some   text  ", Region: "main", Box: []float64{0, 900, 100, 10}},
		{Kind: KindElement, Node: 3, Role: "button", Name: "Remove", Container: "Apples", Heading: "Fruit", Region: "main", Box: []float64{0, 60, 10, 10}},
		{Kind: KindElement, Node: 4, Role: "button", Name: "Remove", Container: "Pears", Heading: "Fruit", Region: "main", Box: []float64{0, 80, 10, 10}},
		{Kind: KindLandmark, Role: "contentinfo"},
		{Kind: KindDialog, Node: 5, Role: "dialog", Name: "Cookies", States: []string{"modal"}, Region: "main"},
	}}
	in := &DOMInput{URL: "http://t/", Title: "S", Viewport: Size{800, 600}, Frames: []DOMFrame{{FrameID: "T", Walk: w,
		Backend: map[int]cdp.BackendNodeID{0: 1, 1: 2, 3: 4, 4: 5, 5: 6}}}}
	all := BuildDOM(in, nil, Options{IncludeAll: true})
	want := `page "S" http://t/
[nav "Primary"]
1 "Home"
[main]
2 h1 "Title"
[list 2]
"Some text"
3 [Remove] (Apples)
4 [Remove] (Pears)
[footer]
5 dialog "Cookies" modal
`
	if got := all.Text(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// The default keeps the elements, and a modal dialog, named.
	def := BuildDOM(in, nil, Options{})
	if len(def.Elements) != 4 || def.Elements[3].Role != "dialog" || def.Elements[3].Name != "Cookies" {
		t.Errorf("default:\n%s", def.Text())
	}
	// ViewportOnly drops the text below the fold, and the markers left
	// with nothing after them.
	vp := BuildDOM(in, nil, Options{IncludeAll: true, ViewportOnly: true})
	if strings.Contains(vp.Text(), "Some text") || strings.Contains(vp.Text(), "[footer]") || !strings.Contains(vp.Text(), "[list 2]") {
		t.Errorf("viewportOnly:\n%s", vp.Text())
	}
}

func TestDiff(t *testing.T) {
	prev := &Observation{URL: "u", Title: "t", Elements: []Element{
		{ID: 1, Role: "button", Name: "Add", States: []string{"focused"}},
		{ID: 2, Role: "textbox", Name: "Qty", Value: "1"},
		{ID: 3, Role: "button", Name: "Old"},
		{Role: "text", Name: "0 items"},
		{Role: "text", Name: "same"},
	}}
	cur := &Observation{URL: "u", Title: "t", Elements: []Element{
		{ID: 1, Role: "button", Name: "Add"},
		{ID: 2, Role: "textbox", Name: "Qty", Value: "2"},
		{Role: "text", Name: "1 items"},
		{Role: "text", Name: "same"},
		{ID: 4, Role: "button", Name: "New"},
	}}
	d := Diff(prev, cur)
	want := `page "t" u
since last: 2 added, 1 changed, 2 removed, 2 unchanged
~ 2 textbox "Qty": "2" was: "1"
+ "1 items"
+ 4 [New]
- 3 [Old]
- "0 items"
`
	if got := d.Text(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if len(prev.Elements) != 5 || cur.Elements[4].Change != "" {
		t.Error("Diff changed its inputs")
	}
	same := Diff(cur, cur)
	if len(same.Elements) != 0 || same.Unchanged != 5 || !strings.Contains(same.Text(), "(no changes)") {
		t.Errorf("no change:\n%s", same.Text())
	}
}

// TestTrimAnchor: the neighbourhood of the element last acted on comes
// before main, which comes before navigation.
func TestTrimAnchor(t *testing.T) {
	var els []Element
	for i := range 100 {
		el := Element{ID: i + 1, Role: "button", Name: "Main button", Region: RegionMain}
		if i < 30 {
			el.Region, el.Name = RegionNavigation, "Nav button"
		}
		els = append(els, el)
	}
	o := &Observation{URL: "u", Title: "t", Elements: els}
	tr, om := TrimWith(o, TrimOptions{MaxTokens: 150})
	if om == 0 || tr.Elements[0].Region != RegionMain {
		t.Fatalf("without anchor: first kept %+v", tr.Elements[0])
	}
	els[10].Ref = Ref{BackendNodeID: 77}
	tr, _ = TrimWith(o, TrimOptions{MaxTokens: 150, Anchor: Ref{BackendNodeID: 77}})
	if !slices.ContainsFunc(tr.Elements, func(e Element) bool { return e.ID == 11 }) || tr.Elements[0].Region != RegionNavigation {
		t.Errorf("with the anchor at 11: kept %d..%d", tr.Elements[0].ID, tr.Elements[len(tr.Elements)-1].ID)
	}
	// The focused element is the anchor when none is given.
	els[20].States = []string{"focused"}
	els[10].Ref = Ref{}
	tr, _ = TrimWith(o, TrimOptions{MaxTokens: 150})
	if !slices.ContainsFunc(tr.Elements, func(e Element) bool { return e.ID == 21 }) || tr.Elements[0].Region != RegionNavigation {
		t.Errorf("with focus at 21: kept %d..%d", tr.Elements[0].ID, tr.Elements[len(tr.Elements)-1].ID)
	}
	// Nearest first: every kept one is nearer the focus than every one
	// left out of the window around it.
	kept := map[int]bool{}
	far := 0
	for _, el := range tr.Elements {
		kept[el.ID] = true
		far = max(far, abs(el.ID-21))
	}
	for id := 21 - far; id <= 21+far && id <= 41; id++ {
		if id >= 1 && !kept[id] && abs(id-21) < far {
			t.Errorf("left out %d, nearer the focus than a kept one at distance %d", id, far)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
