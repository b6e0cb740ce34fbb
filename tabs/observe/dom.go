package observe

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
)

// Item is one entry of the in-page walker's output (tabs/js/observe.js,
// which documents the fields): an element a person acts on, a heading,
// a dialog, a landmark, a list, a run of text, an iframe's place, or a
// possible closed shadow host.
type Item struct {
	Kind      string    `json:"k"`
	Node      int       `json:"n"`
	Role      string    `json:"r,omitempty"`
	Name      string    `json:"a,omitempty"`
	Value     string    `json:"v,omitempty"`
	States    []string  `json:"s,omitempty"`
	Level     int       `json:"lv,omitempty"`
	URL       string    `json:"u,omitempty"`
	Count     int       `json:"c,omitempty"`
	Region    string    `json:"g,omitempty"`
	Landmark  string    `json:"lm,omitempty"`
	Heading   string    `json:"hd,omitempty"`
	Container string    `json:"ct,omitempty"`
	Box       []float64 `json:"b,omitempty"`
	Origin    []float64 `json:"fo,omitempty"`
	Hidden    int       `json:"hid,omitempty"`
	// Inside is 1 for a shadow host inside an element a person acts on.
	Inside int `json:"ii,omitempty"`
	// Anchor is 1 for the element last acted on.
	Anchor int `json:"an,omitempty"`
	// Options are the options of a <select> shown as a combobox.
	Options []string `json:"o,omitempty"`
	// Group is the list item or table row the item is in (an id unique
	// within its frame's walk), 0 for none.
	Group int `json:"cg,omitempty"`
	// Frame is the number of the same-origin frame the walker walked the
	// item in, in line (0: the walk's document), and Inline, on an iframe
	// item, the number of the frame it shows when walked in line. Package
	// tabs splits a walk into its frames by them.
	Frame  int `json:"fr,omitempty"`
	Inline int `json:"fi,omitempty"`
	// Type is an input's type where it sets the format (date, email,
	// password…).
	Type string `json:"ty,omitempty"`
	// ValueLength is the length of a value longer than the walker sends
	// (Value is then its start), in UTF-16 code units.
	ValueLength int `json:"vl,omitempty"`
	// RowKey is what the element's list item, row or article shows
	// without the element's own text (tabs/js/rowkey.js).
	RowKey string `json:"rk,omitempty"`
	// LabelKey is the element's own label as rowkey.js's labelKey gives
	// it.
	LabelKey string `json:"lk,omitempty"`
	// ShowBox is 1 when the element's box is part of the observation (a
	// canvas, an image, an image map's area, a control with nothing
	// inside, or every element with Options.Boxes).
	ShowBox int `json:"sb,omitempty"`
	// ScrollPosition is where a scroll container stands: "0%/2931px
	// below" (or "… right" for one that scrolls sideways).
	ScrollPosition string `json:"sp,omitempty"`
}

// The kinds of Item.
const (
	KindElement  = "e"
	KindHeading  = "h"
	KindDialog   = "d"
	KindText     = "t"
	KindLandmark = "l"
	KindList     = "L"
	KindFrame    = "f"
	KindHost     = "s"
	KindMedia    = "m"
	KindImage    = "i"
)

// Walk is the walker's output for one document: its URL and title, its
// viewport and scroll position (CSS pixels), and its items in flat-tree
// order. NodeItems are the indexes of the items whose nodes the walker
// serialized at once (iframes and possible shadow hosts).
type Walk struct {
	URL       string  `json:"u"`
	Title     string  `json:"t"`
	VW        float64 `json:"vw"`
	VH        float64 `json:"vh"`
	SX        float64 `json:"sx"`
	SY        float64 `json:"sy"`
	SW        float64 `json:"sw"`
	SH        float64 `json:"sh"`
	Items     []Item  `json:"items"`
	NodeItems []int   `json:"ni,omitempty"`
}

// DOMFrame is one frame's walk, with where the frame is.
type DOMFrame struct {
	FrameID cdp.FrameID `json:"frameId"`
	// Session is the CDP session id of an out-of-process iframe's target,
	// empty for frames of the top target.
	Session string `json:"session,omitempty"`
	// URL and Name describe a child frame; empty for the top frame.
	URL  string `json:"url,omitempty"`
	Name string `json:"name,omitempty"`
	// Title is a child frame's title or accessible name, from its iframe
	// element (the walker's iframe item gives it when empty).
	Title string `json:"title,omitempty"`
	// Parent is the parent frame's id and Owner the backend node id of the
	// <iframe> element in it (DOM.getFrameOwner). A frame is placed where
	// the parent's iframe item with that backend node id is; a frame whose
	// iframe was not found comes after everything else.
	Parent cdp.FrameID       `json:"parent,omitempty"`
	Owner  cdp.BackendNodeID `json:"owner,omitempty"`
	Walk   *Walk             `json:"walk"`
	// Backend maps item node indexes to backend node ids (from the
	// walker's deep-serialized nodes), for the items whose ids are known.
	Backend map[int]cdp.BackendNodeID `json:"backend,omitempty"`
}

// DOMInput is everything BuildDOM needs, gathered by package tabs: the
// top frame first.
type DOMInput struct {
	URL      string     `json:"url"`
	Title    string     `json:"title"`
	Viewport Size       `json:"viewport"`
	Scroll   Scroll     `json:"scroll"`
	Frames   []DOMFrame `json:"frames"`
}

// needsNumber reports whether elements of the role get a number: text,
// landmarks, alerts and lists are for reading and have none.
func needsNumber(role string) bool {
	switch role {
	case "text", "list", "alert", "img":
		return false
	}
	_, landmark := landmarkLabel(role)
	return !landmark
}

// BuildDOM turns the walks of a page's frames into an observation, as
// Build does for accessibility trees: elements in flat-tree order, the
// elements of a child frame where its iframe is (offset by the iframe's
// position), hidden frames (whose iframe the walk did not meet) left out,
// frames whose iframe is unknown (Owner 0) last. By default it keeps the elements a
// person acts on; IncludeAll adds headings, landmarks, dialogs, alerts,
// lists and text. Elements whose backend node id is known (DOMFrame.Backend)
// are numbered by num (nil: a fresh Numbering) in document order, before the
// ViewportOnly and Query filters; the others have ID 0 (text, landmarks and
// lists always: they are for reading), and Trim leaves out those that need
// a number. Elements that share a role and name get a context (see
// disambiguate).
func BuildDOM(in *DOMInput, num *Numbering, opts Options) *Observation {
	if num == nil {
		num = NewNumbering()
	}
	o := &Observation{URL: in.URL, Title: in.Title, Viewport: in.Viewport, Scroll: in.Scroll, Elements: []Element{}}
	if len(in.Frames) == 0 {
		return o
	}
	d := &domBuilder{in: in, opts: opts, num: num, visited: make([]bool, len(in.Frames))}
	d.labels = make([]string, len(in.Frames))
	// A frame is labelled by its iframe's title or accessible name first.
	type owner struct {
		frame cdp.FrameID
		node  cdp.BackendNodeID
	}
	titles := map[owner]string{}
	for _, f := range in.Frames {
		if f.Walk == nil {
			continue
		}
		for _, it := range f.Walk.Items {
			if it.Kind == KindFrame && it.Name != "" {
				if be := f.Backend[it.Node]; be != 0 {
					titles[owner{f.FrameID, be}] = it.Name
				}
			}
		}
	}
	used := map[string]int{}
	for i := 1; i < len(in.Frames); i++ {
		f := &in.Frames[i]
		name := f.Title
		if name == "" {
			name = titles[owner{f.Parent, f.Owner}]
		}
		if name == "" {
			name = f.Name
		}
		d.labels[i] = frameLabel(name, f.URL, used)
	}
	d.frame(0, 0, 0, Rect{X: 0, Y: 0, Width: float64(in.Viewport.Width), Height: float64(in.Viewport.Height)})
	// Frames whose iframe is unknown come last; those whose iframe was
	// not walked are hidden (display: none, or in a hidden subtree).
	for i := 1; i < len(in.Frames); i++ {
		if !d.visited[i] && in.Frames[i].Walk != nil && in.Frames[i].Owner == 0 {
			d.frame(i, 0, 0, Rect{Width: float64(in.Viewport.Width), Height: float64(in.Viewport.Height)})
		}
	}
	disambiguate(d.els, func(i int, name string) [3]string { return d.cands[i] })
	o.Elements = filterElements(d.els, opts, in.Viewport)
	return o
}

type domBuilder struct {
	in      *DOMInput
	opts    Options
	num     *Numbering
	visited []bool
	labels  []string
	els     []Element
	cands   [][3]string
}

// frame adds the items of frame fi, whose viewport's origin is at (ox, oy)
// in the top viewport and which shows clip of it.
func (d *domBuilder) frame(fi int, ox, oy float64, clip Rect) {
	d.visited[fi] = true
	f := &d.in.Frames[fi]
	w := f.Walk
	if w == nil {
		return
	}
	// The part of the top viewport this frame shows.
	view := intersect(clip, Rect{X: ox, Y: oy, Width: w.VW, Height: w.VH})
	for ii := range w.Items {
		it := &w.Items[ii]
		switch it.Kind {
		case KindHost, KindMedia:
			continue
		case KindFrame:
			if it.Hidden != 0 {
				d.skipChildren(fi, it)
				continue
			}
			be := f.Backend[it.Node]
			for ci := range d.in.Frames {
				c := &d.in.Frames[ci]
				if ci == 0 || d.visited[ci] || c.Parent != f.FrameID || c.Owner == 0 || c.Owner != be {
					continue
				}
				cx, cy := ox, oy
				if len(it.Origin) == 2 {
					cx += it.Origin[0]
					cy += it.Origin[1]
				}
				d.frame(ci, cx, cy, view)
			}
			continue
		}
		if !d.opts.IncludeAll && it.Kind != KindElement && !(it.Kind == KindDialog && slices.Contains(it.States, "modal")) {
			continue
		}
		role := it.Role
		if it.Kind == KindText {
			role = "text"
		}
		if role == "" {
			continue
		}
		el := Element{Role: role, Level: it.Level, Count: it.Count, States: it.States, Region: it.Region,
			frame: int32(fi), node: int32(it.Node), anchor: it.Anchor != 0}
		if it.Group != 0 {
			el.group = int32(fi)<<24 | int32(it.Group&0xffffff)
		}
		for _, op := range it.Options {
			el.Options = append(el.Options, clean(op, maxOption))
		}
		if fi > 0 {
			el.Frame = d.labels[fi]
		}
		switch it.Kind {
		case KindText:
			el.Name = clean(it.Name, maxText)
		default:
			el.Name = clean(it.Name, maxName)
		}
		if hasValue(role) || it.Type == "color" {
			el.Value, el.ValueLength = fieldValue(it.Value, it.ValueLength)
		}
		el.Type = it.Type
		el.ScrollPosition = it.ScrollPosition
		if role == "link" {
			el.href = it.URL
			if el.Name == "" || slices.Contains(el.States, "icon") {
				el.URL = linkURL(it.URL, d.in.URL)
			}
		}
		if len(it.Box) == 4 {
			b := Rect{X: it.Box[0] + ox, Y: it.Box[1] + oy, Width: it.Box[2], Height: it.Box[3]}
			// Outside its frame's viewport it is not on the screen.
			el.box, el.hasBox = intersect(b, view), true
			if it.ShowBox != 0 || d.opts.Boxes {
				// The whole box, where it is: a part outside the viewport
				// is reached by scrolling.
				el.Bounds = &Rect{X: b.X, Y: b.Y, Width: b.Width, Height: b.Height}
			}
		}
		if needsNumber(role) && it.Kind != KindText {
			if be, ok := f.Backend[it.Node]; ok && be != 0 {
				el.Ref = Ref{FrameID: f.FrameID, BackendNodeID: be, Session: f.Session, Row: it.RowKey}
				el.ID = d.num.ID(el.Ref)
				d.num.Show(el.ID, el.Name, it.LabelKey)
			}
		}
		lm := it.Landmark
		ct := it.Container
		if ct == "" && it.RowKey != "" && it.RowKey[0] != '=' {
			// A row made of divs: what it shows tells its elements apart.
			first, _, _ := strings.Cut(it.RowKey, " | ")
			ct = clean(first, 64)
		}
		d.els = append(d.els, el)
		d.cands = append(d.cands, [3]string{ct, it.Heading, lm})
	}
}

// fieldValue returns a field's value as the field holds it (white space
// kept), cut to maxFieldValue characters with "…", and the length of the
// whole value when it was cut (0 otherwise).
func fieldValue(v string, sent int) (string, int) {
	n := utf8.RuneCountInString(v)
	if n <= maxFieldValue && sent == 0 {
		return v, 0
	}
	if sent == 0 {
		sent = n
	}
	if n > maxFieldValue {
		i := 0
		for k := range v {
			if i == maxFieldValue {
				v = v[:k]
				break
			}
			i++
		}
	}
	return v + "…", sent
}

// frameLabel is the label of a child frame: its title or name, else its
// short URL.
// Frames are told apart by their labels, so a label already in use gets
// " #2", " #3"… in the order the frames come.
func frameLabel(name, url string, used map[string]int) string {
	l := name
	if l == "" {
		l = shortURL(url, "")
	}
	l = clean(l, maxFrame)
	used[l]++
	if n := used[l]; n > 1 {
		l += " #" + strconv.Itoa(n)
	}
	return l
}

// skipChildren marks the child frames of a hidden iframe, and theirs, as
// visited, so that they are not shown.
func (d *domBuilder) skipChildren(fi int, it *Item) {
	f := &d.in.Frames[fi]
	be := f.Backend[it.Node]
	var mark func(ci int)
	mark = func(ci int) {
		d.visited[ci] = true
		for gi := range d.in.Frames {
			if gi != 0 && !d.visited[gi] && d.in.Frames[gi].Parent == d.in.Frames[ci].FrameID {
				mark(gi)
			}
		}
	}
	for ci := range d.in.Frames {
		c := &d.in.Frames[ci]
		if ci != 0 && !d.visited[ci] && c.Parent == f.FrameID && c.Owner != 0 && c.Owner == be {
			mark(ci)
		}
	}
}

// intersect returns the intersection of two rectangles (zero size when
// they do not meet).
func intersect(a, b Rect) Rect {
	x0, y0 := max(a.X, b.X), max(a.Y, b.Y)
	x1, y1 := min(a.X+a.Width, b.X+b.Width), min(a.Y+a.Height, b.Y+b.Height)
	if x1 <= x0 || y1 <= y0 {
		return Rect{X: x0, Y: y0}
	}
	return Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
}

// filterElements applies ViewportOnly (with the boxes of the elements)
// and Query.
func filterElements(els []Element, opts Options, vp Size) []Element {
	q := strings.ToLower(strings.TrimSpace(opts.Query))
	if q == "" && !opts.ViewportOnly {
		return els
	}
	out := els[:0]
	for _, el := range els {
		marker := isMarker(el.Role)
		if opts.ViewportOnly && !marker && (!el.hasBox || el.box.Width <= 0 || el.box.Height <= 0) {
			continue
		}
		if q != "" && (marker || !containsFold(el.Name, q) && !containsFold(el.Value, q) && !containsFold(el.Context, q)) {
			continue
		}
		out = append(out, el)
	}
	// A landmark or list with nothing kept after it says nothing.
	kept := out[:0]
	for i, el := range out {
		if isMarker(el.Role) && (i+1 == len(out) || isMarker(out[i+1].Role)) {
			continue
		}
		kept = append(kept, el)
	}
	return kept
}

// isMarker reports whether role is rendered as a marker of structure
// (a landmark, an alert or a list) rather than as an element.
func isMarker(role string) bool {
	return role != "text" && role != "img" && !needsNumber(role)
}

// Want names an element of a DOM observation whose backend node id the tab
// should fetch: the index of its frame in DOMInput.Frames and its node
// index.
type Want struct {
	Frame, Node int
}

// PickDOM returns the elements of in that need a number to be shown within
// the budget of opts.MaxTokens (see Trim): BuildDOM's elements, filtered,
// trimmed with every number taken as wide as the widest it could be. The
// tab fetches their backend node ids and builds the observation again.
func PickDOM(in *DOMInput, num *Numbering, opts Options) []Want {
	// A copy of the numbering's state is not needed: elements without a
	// backend node id get a placeholder number here.
	o := BuildDOM(in, NewNumbering(), opts)
	width := 1
	for n := num.base + num.Len() + len(o.Elements); n >= 10; n /= 10 {
		width++
	}
	placeholder := 1
	for range width {
		placeholder *= 10
	}
	placeholder--
	for i := range o.Elements {
		if needsNumber(o.Elements[i].Role) {
			o.Elements[i].ID = placeholder
		}
	}
	tr, _ := TrimWith(o, TrimOptions{MaxTokens: opts.MaxTokens})
	var out []Want
	for _, el := range tr.Elements {
		if needsNumber(el.Role) {
			out = append(out, Want{Frame: int(el.frame), Node: int(el.node)})
		}
	}
	return out
}
