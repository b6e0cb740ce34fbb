// Package observe owns observation: it reads a page and turns what it
// read into an observation, a short numbered list of the elements a person
// could act on (and, on request, the structure a reader needs), with its
// text rendering for models and the CLI (the README's "What an observation
// shows").
//
// Its CDP side is the Observer (observer.go, walk.go, listeners.go): it
// runs the in-page walker (tabs/js/observe.js, compiled once per document
// in the page core's isolated world) in every frame, the page's and its
// out-of-process iframes', finds the nodes with click-like listeners
// (DOMDebugger.getEventListeners), and keeps the Numbering that actions
// resolve element numbers with.
//
// Its transform is pure and does no I/O. BuildDOM takes the walks (one per
// frame, DOM flat tree with roles, names, states and contexts computed in
// the page), which is what tab.observe uses: it is several times cheaper
// than the accessibility tree and its cost does not depend on Chrome
// building that tree. Build takes Accessibility.getFullAXTree results, one
// per frame. Both number elements with a Numbering keyed by backend node
// id and frame, and render with Observation.Text; TrimWith cuts an
// observation to a token budget, main content first, and Diff compares
// two observations. The transform is tested from recorded JSON
// (testdata/*.json for Build, testdata/dom/*.json for BuildDOM) and golden
// files.
//
// It must not act on a page: it scrolls containers only to collect what
// virtualised lists render (and restores them), and it never moves the
// mouse, types or navigates. Input and element location are tabs/act's.
package observe

import (
	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
)

// Ref locates the DOM node behind an element: its backend node id within
// the frame (and, for out-of-process iframes, the CDP session) it lives in.
type Ref struct {
	FrameID       cdp.FrameID       `json:"frameId,omitempty"`
	BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
	// Session is the CDP session id of an out-of-process iframe's target,
	// empty for nodes of the top target.
	Session string `json:"session,omitempty"`
	// Row is what the element's list item, row or article showed when it
	// was numbered, without the element's own text (tabs/js/rowkey.js):
	// a node that a virtualised list recycled for another item is another
	// element, with another number.
	Row string `json:"-"`
}

// Element is one numbered element of an observation.
type Element struct {
	ID   int    `json:"id"`
	Role string `json:"role"`
	Name string `json:"name"`
	// Value is a field's value as the field holds it (white space kept),
	// up to 2000 characters; a longer one ends with "…" and ValueLength
	// gives its whole length (tab.value reads it all).
	Value       string `json:"value,omitempty"`
	ValueLength int    `json:"valueLength,omitempty"`
	// Type is an input's type where it sets the format: date, time,
	// datetime-local, month, week, number, range, color, email, password,
	// tel or url.
	Type string `json:"type,omitempty"`
	// ScrollPosition is where a scroll container (role "scrollable")
	// stands: "0%/2931px below", the share scrolled and what is left, in
	// CSS pixels (sideways: "… right").
	ScrollPosition string   `json:"scrollPosition,omitempty"`
	States         []string `json:"states,omitempty"`
	// Bounds is the element's border box in top-viewport CSS pixels (x, y,
	// width, height; y can be beyond the viewport: scrolling brings it in)
	// for a canvas, an image, an image map's area or a control with
	// nothing inside, for a click at a point; for every element with
	// Options.Boxes.
	Bounds *Rect `json:"box,omitempty"`
	// Level is a heading's level (includeAll only).
	Level int `json:"level,omitempty"`
	// Count is the number of items of a list (includeAll only).
	Count int `json:"count,omitempty"`
	// Options are the options of a collapsed <select>, which are not
	// elements of their own.
	Options []string `json:"options,omitempty"`
	// Context tells apart elements of the same role and name: the text of
	// their list item or row, the heading before them, or their landmark.
	Context string `json:"context,omitempty"`
	// URL is the target of a link that has no name (without the page's
	// origin when it is the same).
	URL string `json:"url,omitempty"`
	// Frame names the frame the element belongs to when it is not the top
	// one (its URL, or its name attribute).
	Frame string `json:"frame,omitempty"`
	// Region is where the element is: one of the Region constants (its
	// nearest main, navigation, banner, contentinfo or complementary
	// landmark, or dialog), or "" for none. Trim keeps dialog and main
	// elements first and navigation, contentinfo and complementary last.
	Region string `json:"-"`
	// Ref is the node behind the element; not part of the wire shape.
	Ref Ref `json:"-"`
	// Change says how the element changed in a diff (Diff): "added" or
	// "changed" (with Was, its old rendering), empty elsewhere.
	Change string `json:"change,omitempty"`
	Was    string `json:"was,omitempty"`

	// href is a link's target (for telling links apart and merging the
	// lines of links to one URL).
	href string
	// box is the element's box in top-viewport CSS pixels, when hasBox.
	box    Rect
	hasBox bool
	// frame and node locate the walker item of a DOM observation
	// (BuildDOM): the index of its frame and its node index.
	frame, node int32
	// anchor marks the element last acted on.
	anchor bool
	// group is the list item, table row or article the element is in (0
	// for none): Text puts the elements of one on one line.
	group int32
}

// Box returns the element's box in top-viewport CSS pixels, as the
// walker measured it (BuildDOM), and false when it has none (Build, or an
// element without a layout box). A box outside its frame's viewport has
// zero size.
func (e *Element) Box() (Rect, bool) { return e.box, e.hasBox }

// Size is a width and height in CSS pixels.
type Size struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Scroll is the document's scroll position and scrollable size, in CSS pixels.
type Scroll struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Observation is the result of tab.observe.
type Observation struct {
	URL      string    `json:"url"`
	Title    string    `json:"title"`
	Viewport Size      `json:"viewport"`
	Scroll   Scroll    `json:"scroll"`
	Elements []Element `json:"elements"`
	// Omitted counts the elements left out by the token budget.
	Omitted int `json:"omitted,omitempty"`
	// FullPath is a 0600 temp file holding the full observation when
	// elements were left out.
	FullPath string `json:"fullPath,omitempty"`
	// Since is "last" for a diff against the tab's previous observation
	// (Diff): Elements then holds the added and changed elements, Removed
	// the removed ones, and Unchanged counts the others.
	Since     string    `json:"since,omitempty"`
	Removed   []Element `json:"removed,omitempty"`
	Unchanged int       `json:"unchanged,omitempty"`
	// Scrolled reports observe({scroll: true}): how far the walk through
	// the page's scroll containers got.
	Scrolled *ScrollReport `json:"scrolled,omitempty"`
	// Notes are short remarks on the observation (for example that a
	// diff had no previous observation to compare with).
	Notes []string `json:"notes,omitempty"`
}

// ScrollReport says how far observe({scroll: true}) got: how many scroll
// containers (the page included) it scrolled, how many it scrolled to
// the end with nothing more loading, and how many elements only the
// scrolling found (those a virtualised or infinite list renders only
// while visible).
type ScrollReport struct {
	Containers int  `json:"containers"`
	Complete   int  `json:"complete"`
	Steps      int  `json:"steps"`
	Found      int  `json:"found"`
	TimedOut   bool `json:"timedOut,omitempty"`
}

// Frame is one frame's AX tree as returned by Accessibility.getFullAXTree
// (with its frameId parameter), top frame first.
type Frame struct {
	FrameID cdp.FrameID
	// Session is the CDP session id for an out-of-process iframe target.
	Session string
	// URL and Name describe the frame; empty for the top frame.
	URL  string
	Name string
	// Parent is the parent frame's id and Owner the backend node id of the
	// <iframe> element in it (DOM.getFrameOwner); both optional. When
	// known, the frame's elements are placed where its iframe is in the
	// parent's document order, else after the parent's elements.
	Parent cdp.FrameID
	Owner  cdp.BackendNodeID
	// Nodes is the frame's AX tree, in the order CDP returned it.
	Nodes []*accessibility.Node
}

// Rect is a box in CSS pixels relative to the top viewport.
type Rect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Input is everything Build needs, gathered over CDP by package tabs.
type Input struct {
	URL      string
	Title    string
	Viewport Size
	Scroll   Scroll
	Frames   []Frame
	// Boxes holds the layout box of nodes by Ref (optional; needed for
	// ViewportOnly). A node missing from Boxes is treated as not rendered
	// when Boxes is non-nil.
	Boxes map[Ref]Rect
}

// Options select what Build keeps.
type Options struct {
	// IncludeAll adds structure: headings (with level), landmarks, dialogs,
	// lists and trimmed static text.
	IncludeAll bool
	// ViewportOnly keeps the elements whose box intersects the viewport.
	ViewportOnly bool
	// Query keeps only elements whose name or value contains it,
	// case-insensitively.
	Query string
	// Boxes gives every element its Box (BuildDOM).
	Boxes bool
	// MaxTokens is the budget for the text rendering, counted as bytes/4;
	// 0 means 6000 (DefaultMaxTokens). Build ignores it: the caller cuts
	// Build's full observation with Trim(o, MaxTokens) and keeps the full
	// one for FullPath.
	MaxTokens int
}

// Redacted returns a copy of o with redact applied to every text it shows:
// the URL and title, the notes, and the names, values, contexts, URLs,
// frames and options of its elements (and of the removed ones of a diff).
// Observe applies it with the session's secrets (package secrets), so a
// field that holds a secret shows "••••" as its value. o is not changed.
func (o *Observation) Redacted(redact func(string) string) *Observation {
	cp := *o
	cp.URL, cp.Title = redact(o.URL), redact(o.Title)
	if o.Notes != nil {
		cp.Notes = make([]string, len(o.Notes))
		for i, n := range o.Notes {
			cp.Notes[i] = redact(n)
		}
	}
	cp.Elements = redactElements(o.Elements, redact)
	cp.Removed = redactElements(o.Removed, redact)
	return &cp
}

func redactElements(els []Element, redact func(string) string) []Element {
	if els == nil {
		return nil
	}
	out := make([]Element, len(els))
	for i, e := range els {
		e.Name, e.Context, e.URL, e.Frame = redact(e.Name), redact(e.Context), redact(e.URL), redact(e.Frame)
		if v := redact(e.Value); v != e.Value {
			e.Value, e.ValueLength = v, 0
		}
		if e.Options != nil {
			opts := make([]string, len(e.Options))
			for j, op := range e.Options {
				opts[j] = redact(op)
			}
			e.Options = opts
		}
		e.href = redact(e.href)
		out[i] = e
	}
	return out
}
