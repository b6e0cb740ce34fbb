package observe

import (
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
)

// frameIndex is one frame's AX nodes, indexed.
type frameIndex struct {
	f     *Frame
	label string
	roles []string
	// dense[id] is 1 + the index of the node whose id is the decimal id
	// (Chrome's ids are small numbers); byID is the fallback when an id is
	// not a small number.
	dense   []int32
	byID    map[accessibility.NodeID]int
	visited []bool
}

// index fills roles and the id index of fx.f.Nodes.
func (fx *frameIndex) index() {
	nodes := fx.f.Nodes
	fx.roles = make([]string, len(nodes))
	fx.visited = make([]bool, len(nodes))
	limit := 4*len(nodes) + 1024
	dense := make([]int32, 0, len(nodes)+1)
	for i, n := range nodes {
		if n == nil {
			continue
		}
		fx.roles[i] = roleOf(n)
		if dense == nil {
			continue
		}
		id, ok := smallID(n.NodeID, limit)
		if !ok {
			dense = nil
			continue
		}
		if id >= len(dense) {
			dense = append(dense, make([]int32, id+1-len(dense))...)
		}
		dense[id] = int32(i + 1)
	}
	if dense != nil {
		fx.dense = dense
		return
	}
	fx.byID = make(map[accessibility.NodeID]int, len(nodes))
	for i, n := range nodes {
		if n != nil {
			fx.byID[n.NodeID] = i
		}
	}
}

// smallID parses a decimal node id below limit.
func smallID(id accessibility.NodeID, limit int) (int, bool) {
	if len(id) == 0 || len(id) > 9 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, v < limit
}

// lookup returns the index of the node with the id.
func (fx *frameIndex) lookup(id accessibility.NodeID) (int, bool) {
	if fx.dense != nil {
		v, ok := smallID(id, len(fx.dense))
		if !ok || fx.dense[v] == 0 {
			return 0, false
		}
		return int(fx.dense[v]) - 1, true
	}
	i, ok := fx.byID[id]
	return i, ok
}

type frameOwner struct {
	parent cdp.FrameID
	owner  cdp.BackendNodeID
}

// meta is what Build keeps about a candidate element beside the Element.
type meta struct {
	// container is the nearest listitem, row or article ancestor.
	containerFrame, containerIdx int
	heading                      string // the last heading in scope before it
	landmark                     string // its nearest landmark, as a word
	raw                          string // the uncut text of a text element
	url                          string // a link's target
	parent                       accessibility.NodeID
	frame                        int
}

type walkState struct {
	region         string
	landmark       string
	containerFrame int
	containerIdx   int
	// skipText: the nearest kept ancestor's name covers its text.
	skipText   bool
	parentName string
	noOptions  bool
}

type builder struct {
	in     *Input
	opts   Options
	num    *Numbering
	frames []frameIndex
	owned  map[frameOwner][]int
	els    []Element
	meta   []meta
	// heading is the last heading seen in the current scope.
	heading string
	// lastText is the index of a text element that the next text node of
	// the same parent joins, -1 when another element came between.
	lastText int
}

// Build turns the AX trees of in (Accessibility.getFullAXTree, one per
// frame) into an observation. By default it keeps
// the interactive elements: the roles a person acts on (link, button,
// textbox, searchbox, combobox, listbox, option, checkbox, radio, switch,
// slider, spinbutton, menuitem*, tab, treeitem) and any other focusable
// node (role "focusable" when it has no role, named by its text; a
// focusable contenteditable is a "textbox"). IncludeAll adds headings,
// landmarks, dialogs, alerts and static text. Ignored nodes, nodes whose
// "hidden" property is true, iframe nodes and the options of a collapsed
// <select> are never elements.
//
// It keeps every element that opts select (by role, ViewportOnly, Query);
// it applies no token budget (see Trim). Elements are in document order,
// the elements of a child frame where its iframe is (when Frame.Owner is
// known). num numbers them; Build numbers every element the role rules
// keep before the ViewportOnly and Query filters, so numbers do not depend
// on those filters. A nil num uses a fresh Numbering.
//
// Input.Frames[0] is the top frame; an Input without frames gives an
// observation without elements.
func Build(in *Input, num *Numbering, opts Options) *Observation {
	if num == nil {
		num = NewNumbering()
	}
	o := &Observation{URL: in.URL, Title: in.Title, Viewport: in.Viewport, Scroll: in.Scroll, Elements: []Element{}}
	if len(in.Frames) == 0 {
		return o
	}
	b := &builder{in: in, opts: opts, num: num, lastText: -1, owned: map[frameOwner][]int{}}
	b.frames = make([]frameIndex, len(in.Frames))
	capacity := 0
	used := map[string]int{}
	for i := range in.Frames {
		f := &in.Frames[i]
		fx := frameIndex{f: f}
		fx.index()
		capacity += candidateCap(f.Nodes, fx.roles, opts.IncludeAll)
		if i > 0 {
			fx.label = frameLabel(f.Name, f.URL, used)
			if f.Owner != 0 {
				k := frameOwner{f.Parent, f.Owner}
				b.owned[k] = append(b.owned[k], i)
			}
		}
		b.frames[i] = fx
	}
	b.els = make([]Element, 0, capacity)
	b.meta = make([]meta, 0, capacity)
	if o.Title == "" {
		if r := b.root(0); r >= 0 {
			o.Title = clean(valueString(in.Frames[0].Nodes[r].Name), maxName)
		}
	}
	b.walkFrame(0, walkState{containerIdx: -1})
	// Frames whose iframe was not found: after everything else.
	for i := 1; i < len(b.frames); i++ {
		if r := b.root(i); r >= 0 && !b.frames[i].visited[r] {
			b.walkFrame(i, walkState{containerIdx: -1})
		}
	}
	b.disambiguate()
	o.Elements = b.filter()
	return o
}

// root returns the index of frame fi's root node, or -1.
func (b *builder) root(fi int) int {
	nodes := b.frames[fi].f.Nodes
	for i, n := range nodes {
		if n != nil && n.ParentID == "" {
			return i
		}
	}
	if len(nodes) > 0 {
		return 0
	}
	return -1
}

func (b *builder) walkFrame(fi int, st walkState) {
	r := b.root(fi)
	if r < 0 {
		return
	}
	saved := b.heading
	b.heading = ""
	b.lastText = -1
	b.walk(fi, r, st)
	b.heading = saved
	b.lastText = -1
}

func (b *builder) walkChildren(fi int, n *accessibility.Node, st walkState) {
	fx := &b.frames[fi]
	for _, c := range n.ChildIDs {
		if j, ok := fx.lookup(c); ok {
			b.walk(fi, j, st)
		}
	}
}

func (b *builder) walk(fi, idx int, st walkState) {
	fx := &b.frames[fi]
	if fx.visited[idx] {
		return
	}
	fx.visited[idx] = true
	n := fx.f.Nodes[idx]
	if n == nil {
		return
	}
	role := fx.roles[idx]
	if n.Ignored {
		b.walkChildren(fi, n, st)
		return
	}
	switch role {
	case "InlineTextBox", "ListMarker":
		return
	case "Iframe":
		for _, c := range b.owned[frameOwner{fx.f.FrameID, n.BackendDOMNodeID}] {
			b.walkFrame(c, st)
		}
		return
	case "StaticText":
		if b.opts.IncludeAll && !st.skipText && n.BackendDOMNodeID != 0 {
			b.text(fi, n, st)
		}
		return
	}
	p := readProps(n)
	if p.hidden {
		return
	}
	name := clean(valueString(n.Name), maxName)
	kept := false
	switch {
	case role == "RootWebArea":
	case isInteractive(role):
		if role == "option" && st.noOptions {
			break
		}
		kept = true
	case p.focusable && (p.editable == "richtext" || p.editable == "plaintext") && (role == "generic" || role == "none" || role == ""):
		role, kept = "textbox", true
	case p.focusable && !noFocusFallback(role):
		if role == "generic" || role == "none" || role == "" {
			role = "focusable"
		}
		kept = true
	}
	if kept {
		if name == "" {
			name = clean(valueString(n.Description), maxName)
		}
		if name == "" && role != "link" && !hasValue(role) {
			name = b.descText(fi, idx)
		}
		el := Element{Role: role, Name: name, States: p.states(role)}
		if hasValue(role) {
			v := valueString(n.Value)
			if role == "slider" && p.valuetext != "" {
				v = p.valuetext
			}
			el.Value = clean(v, maxValue)
		}
		if role == "link" && name == "" {
			el.URL = linkURL(p.url, b.in.URL)
		}
		if role == "combobox" && p.expanded != "true" {
			el.Options = b.optionNames(fi, idx)
		}
		if i := b.add(fi, n, el, st); i >= 0 {
			b.meta[i].url = p.url
		}
		st.skipText = true
		st.parentName = name
		if role == "combobox" && p.expanded != "true" {
			st.noOptions = true
		}
		b.walkChildren(fi, n, st)
		return
	}
	switch role {
	case "listitem", "row", "article":
		st.containerFrame, st.containerIdx = fi, idx
	case "LabelText":
		// A label's text is the name of its control.
		st.skipText = true
	case "heading":
		// As a context, the heading's first text: "History", not
		// "History[edit]" with the text of the links in it.
		if b.heading = b.firstText(fi, idx, ""); b.heading == "" {
			b.heading = clean(name, maxContext)
		}
		if b.opts.IncludeAll {
			b.add(fi, n, Element{Role: role, Name: name, Level: p.level}, st)
		}
		st.skipText = true
		st.parentName = name
		b.walkChildren(fi, n, st)
		return
	case "dialog", "alertdialog":
		st.region = RegionDialog
		st.landmark = name
		if st.landmark == "" {
			st.landmark = "dialog"
		}
		if b.opts.IncludeAll {
			b.add(fi, n, Element{Role: role, Name: name, States: p.states(role)}, st)
		}
		st.skipText, st.parentName = false, name
		b.scoped(fi, n, st)
		return
	case "alert":
		if b.opts.IncludeAll {
			b.add(fi, n, Element{Role: role, Name: name}, st)
		}
		st.skipText, st.parentName = false, name
	}
	if word, ok := landmarkLabel(role); ok && (role != "region" || name != "") {
		switch role {
		case RegionMain, RegionNavigation, RegionBanner, RegionContentInfo, RegionComplementary:
			if st.region != RegionDialog {
				st.region = role
			}
		}
		st.landmark = name
		if st.landmark == "" {
			st.landmark = word
		}
		if b.opts.IncludeAll {
			b.add(fi, n, Element{Role: role, Name: name}, st)
		}
		st.skipText, st.parentName = false, name
		b.scoped(fi, n, st)
		return
	}
	b.walkChildren(fi, n, st)
}

// scoped walks n's children in a new heading scope.
func (b *builder) scoped(fi int, n *accessibility.Node, st walkState) {
	saved := b.heading
	b.heading = ""
	b.walkChildren(fi, n, st)
	b.heading = saved
}

// add appends a candidate element and numbers it.
// It returns the element's index, or -1 for a node without a DOM node.
func (b *builder) add(fi int, n *accessibility.Node, el Element, st walkState) int {
	if n.BackendDOMNodeID == 0 {
		return -1 // no DOM node to act on
	}
	fx := &b.frames[fi]
	el.Ref = Ref{FrameID: fx.f.FrameID, BackendNodeID: n.BackendDOMNodeID, Session: fx.f.Session}
	el.Frame = fx.label
	el.Region = st.region
	el.ID = b.num.ID(el.Ref)
	if st.containerIdx >= 0 && b.frames[st.containerFrame].roles[st.containerIdx] != "article" {
		el.group = int32(st.containerFrame)<<24 | int32(st.containerIdx+1)
	}
	b.els = append(b.els, el)
	b.meta = append(b.meta, meta{containerFrame: st.containerFrame, containerIdx: st.containerIdx,
		heading: b.heading, landmark: st.landmark, parent: n.ParentID, frame: fi})
	b.lastText = -1
	return len(b.els) - 1
}

// text adds a StaticText node, or joins it to the previous text element
// when they are siblings with nothing kept between them.
func (b *builder) text(fi int, n *accessibility.Node, st walkState) {
	raw := valueString(n.Name)
	t := clean(raw, maxText)
	if t == st.parentName && t != "" {
		return
	}
	if i := b.lastText; i >= 0 && b.meta[i].parent == n.ParentID && b.meta[i].frame == fi {
		m := &b.meta[i]
		if len(m.raw) < maxText*4 {
			m.raw += raw
			b.els[i].Name = clean(m.raw, maxText)
		}
		return
	}
	if !hasWord(t) {
		return // empty, or punctuation between links
	}
	if i := b.add(fi, n, Element{Role: "text", Name: t}, st); i >= 0 {
		b.meta[i].raw = raw
		b.lastText = i
	}
}

// optionNames returns the names of the options under node idx (those of
// a collapsed <select>).
func (b *builder) optionNames(fi, idx int) []string {
	var out []string
	fx := &b.frames[fi]
	var rec func(idx, depth int)
	rec = func(idx, depth int) {
		n := fx.f.Nodes[idx]
		if n == nil || depth > 8 {
			return
		}
		if fx.roles[idx] == "option" || fx.roles[idx] == "MenuListOption" {
			out = append(out, clean(valueString(n.Name), maxOption))
			return
		}
		for _, c := range n.ChildIDs {
			if j, ok := fx.lookup(c); ok {
				rec(j, depth+1)
			}
		}
	}
	rec(idx, 0)
	return out
}

// descText returns the text under node idx, for naming an element without
// a name.
func (b *builder) descText(fi, idx int) string {
	var sb strings.Builder
	fx := &b.frames[fi]
	var rec func(idx, depth int)
	rec = func(idx, depth int) {
		n := fx.f.Nodes[idx]
		if n == nil || sb.Len() > maxName*4 || depth > 64 {
			return
		}
		if fx.roles[idx] == "StaticText" {
			sb.WriteString(valueString(n.Name))
			sb.WriteByte(' ')
			return
		}
		for _, c := range n.ChildIDs {
			if j, ok := fx.lookup(c); ok {
				rec(j, depth+1)
			}
		}
	}
	rec(idx, 0)
	return clean(sb.String(), maxName)
}

// containerText names a listitem, row or article: its name, else its first
// text that is not except.
func (b *builder) containerText(fi, idx int, except string) string {
	if idx < 0 {
		return ""
	}
	fx := &b.frames[fi]
	n := fx.f.Nodes[idx]
	if name := clean(valueString(n.Name), maxContext); name != "" && name != except {
		return name
	}
	return b.firstText(fi, idx, except)
}

// firstText returns the first text under node idx that is not except.
func (b *builder) firstText(fi, idx int, except string) string {
	fx := &b.frames[fi]
	found := ""
	var rec func(idx, depth int) bool
	rec = func(idx, depth int) bool {
		n := fx.f.Nodes[idx]
		if n == nil || depth > 32 {
			return false
		}
		if fx.roles[idx] == "StaticText" {
			if t := clean(valueString(n.Name), maxContext); t != "" && t != except {
				found = t
				return true
			}
			return false
		}
		for _, c := range n.ChildIDs {
			if j, ok := fx.lookup(c); ok && rec(j, depth+1) {
				return true
			}
		}
		return false
	}
	rec(idx, 0)
	return found
}

// filter applies ViewportOnly and Query.
func (b *builder) filter() []Element {
	q := strings.ToLower(strings.TrimSpace(b.opts.Query))
	vw, vh := float64(b.in.Viewport.Width), float64(b.in.Viewport.Height)
	if q == "" && !(b.opts.ViewportOnly && b.in.Boxes != nil) {
		return b.els
	}
	out := b.els[:0] // in place: b.els is Build's own
	for _, el := range b.els {
		if b.opts.ViewportOnly && b.in.Boxes != nil {
			r, ok := b.in.Boxes[el.Ref]
			if !ok || r.Width <= 0 || r.Height <= 0 || r.X >= vw || r.Y >= vh || r.X+r.Width <= 0 || r.Y+r.Height <= 0 {
				continue
			}
		}
		if q != "" && !containsFold(el.Name, q) && !containsFold(el.Value, q) && !containsFold(el.Context, q) {
			continue
		}
		out = append(out, el)
	}
	return out
}
