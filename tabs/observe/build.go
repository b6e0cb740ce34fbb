package observe

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
)

// Caps on the lengths of rendered strings, in runes; longer ones are cut
// and end with "…".
const (
	maxName  = 100
	maxText  = 200
	maxValue = 100
	// maxFieldValue is the longest field value BuildDOM keeps whole, in
	// characters.
	maxFieldValue = 2000
	maxContext    = 32
	maxURL        = 80
	maxFrame      = 48
	maxOption     = 60
)

// Regions of the page an element can be in (Element.Region), from its
// nearest landmark or dialog ancestor.
const (
	RegionMain          = "main"
	RegionDialog        = "dialog"
	RegionBanner        = "banner"
	RegionNavigation    = "navigation"
	RegionContentInfo   = "contentinfo"
	RegionComplementary = "complementary"
)

// isInteractive reports whether role is one a person acts on (DESIGN.md
// section 4).
func isInteractive(role string) bool {
	switch role {
	case "link", "button", "textbox", "searchbox", "combobox", "listbox", "option", "checkbox",
		"radio", "switch", "slider", "spinbutton", "menuitem", "menuitemcheckbox", "menuitemradio",
		"tab", "treeitem":
		return true
	}
	return false
}

// noFocusFallback reports whether role stays structure even when focusable:
// pages often give such elements tabindex=-1 to move focus there.
func noFocusFallback(role string) bool {
	switch role {
	case "heading", "main", "navigation", "banner", "contentinfo", "complementary", "region",
		"form", "search", "dialog", "alertdialog", "alert", "article", "document", "list",
		"table", "group", "RootWebArea", "Iframe", "MenuListPopup":
		return true
	}
	return false
}

// hasValue reports whether role is one whose value Build reads.
func hasValue(role string) bool {
	switch role {
	case "textbox", "searchbox", "combobox", "spinbutton", "slider":
		return true
	}
	return false
}

// landmarkLabel returns the word used as a context for a landmark role
// kept by IncludeAll, and false for other roles.
func landmarkLabel(role string) (string, bool) {
	switch role {
	case "main", "region", "form", "search":
		return role, true
	case "navigation":
		return "nav", true
	case "banner":
		return "header", true
	case "contentinfo":
		return "footer", true
	case "complementary":
		return "aside", true
	}
	return "", false
}

// isStructural reports whether role is one of the roles only IncludeAll keeps.
func isStructural(role string) bool {
	switch role {
	case "heading", "text", "dialog", "alertdialog", "alert":
		return true
	}
	_, ok := landmarkLabel(role)
	return ok
}

// axProps holds the AX properties Build reads from a node.
type axProps struct {
	focusable, focused, disabled, hidden, required, readonly, multiselectable, modal bool
	// tristate or token values, "" when absent.
	checked, pressed, expanded, selected, invalid, hasPopup, editable string
	valuetext, url                                                    string
	level                                                             int
}

func readProps(n *accessibility.Node) axProps {
	var p axProps
	for _, pr := range n.Properties {
		if pr == nil || pr.Value == nil {
			continue
		}
		raw := pr.Value.Value
		isTrue := string(raw) == "true"
		switch pr.Name {
		case accessibility.PropertyNameFocusable:
			p.focusable = isTrue
		case accessibility.PropertyNameFocused:
			p.focused = isTrue
		case accessibility.PropertyNameDisabled:
			p.disabled = isTrue
		case accessibility.PropertyNameHidden:
			p.hidden = isTrue
		case accessibility.PropertyNameRequired:
			p.required = isTrue
		case accessibility.PropertyNameReadonly:
			p.readonly = isTrue
		case accessibility.PropertyNameMultiselectable:
			p.multiselectable = isTrue
		case accessibility.PropertyNameModal:
			p.modal = isTrue
		case accessibility.PropertyNameChecked:
			p.checked = rawString(raw)
		case accessibility.PropertyNamePressed:
			p.pressed = rawString(raw)
		case accessibility.PropertyNameExpanded:
			p.expanded = rawString(raw)
		case accessibility.PropertyNameSelected:
			p.selected = rawString(raw)
		case accessibility.PropertyNameInvalid:
			p.invalid = rawString(raw)
		case accessibility.PropertyNameHasPopup:
			p.hasPopup = rawString(raw)
		case accessibility.PropertyNameEditable:
			p.editable = rawString(raw)
		case accessibility.PropertyNameValuetext:
			p.valuetext = rawString(raw)
		case accessibility.PropertyNameURL:
			p.url = rawString(raw)
		case accessibility.PropertyNameLevel:
			for _, c := range raw {
				if c < '0' || c > '9' {
					break
				}
				p.level = p.level*10 + int(c-'0')
			}
		}
	}
	return p
}

// states returns the short state words of an element, in a fixed order.
func (p *axProps) states(role string) []string {
	var s []string
	add := func(w string) { s = append(s, w) }
	if p.disabled {
		add("disabled")
	}
	switch p.checked {
	case "true":
		add("checked")
	case "mixed":
		add("mixed")
	}
	if p.selected == "true" {
		add("selected")
	}
	switch p.expanded {
	case "true":
		add("expanded")
	case "false":
		add("collapsed")
	}
	switch p.pressed {
	case "true":
		add("pressed")
	case "mixed":
		add("mixed")
	}
	if p.required {
		add("required")
	}
	if p.readonly {
		add("readonly")
	}
	if p.invalid != "" && p.invalid != "false" {
		add("invalid")
	}
	if p.focused {
		add("focused")
	}
	if p.multiselectable {
		add("multiselectable")
	}
	if p.hasPopup != "" && p.hasPopup != "false" && role != "combobox" {
		add("haspopup")
	}
	if p.modal {
		add("modal")
	}
	return s
}

// rawString returns a raw JSON value as a string: a JSON string unquoted,
// anything else (numbers, booleans) as written.
func rawString(raw jsonv2.Value) string {
	for len(raw) > 0 && isJSONSpace(raw[0]) {
		raw = raw[1:]
	}
	for len(raw) > 0 && isJSONSpace(raw[len(raw)-1]) {
		raw = raw[:len(raw)-1]
	}
	if len(raw) == 0 {
		return ""
	}
	if raw[0] != '"' {
		if string(raw) == "null" {
			return ""
		}
		return string(raw)
	}
	if len(raw) >= 2 && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		plain := true
		for _, c := range inner {
			if c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			return string(inner)
		}
	}
	if s, ok := unquote(raw); ok {
		return s
	}
	var s string
	if err := jsonv2.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// unquote decodes a JSON string with escapes, or returns false when it
// is not one it can decode (the caller then asks the JSON package).
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(in) {
			return "", false
		}
		switch in[i] {
		case '"', '\\', '/':
			out = append(out, in[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(in[i+1:])
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 < len(in) && in[i+1] == '\\' && in[i+2] == 'u' {
					if r2, ok := hex4(in[i+3:]); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
							i += 6
						}
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// roleOf returns a node's role. Common roles are matched on the raw JSON,
// so reading them allocates nothing.
func roleOf(n *accessibility.Node) string {
	if n.Role == nil {
		return ""
	}
	switch string(n.Role.Value) {
	case `"link"`:
		return "link"
	case `"button"`:
		return "button"
	case `"textbox"`:
		return "textbox"
	case `"searchbox"`:
		return "searchbox"
	case `"combobox"`:
		return "combobox"
	case `"listbox"`:
		return "listbox"
	case `"option"`:
		return "option"
	case `"checkbox"`:
		return "checkbox"
	case `"radio"`:
		return "radio"
	case `"switch"`:
		return "switch"
	case `"slider"`:
		return "slider"
	case `"spinbutton"`:
		return "spinbutton"
	case `"menuitem"`:
		return "menuitem"
	case `"menuitemcheckbox"`:
		return "menuitemcheckbox"
	case `"menuitemradio"`:
		return "menuitemradio"
	case `"tab"`:
		return "tab"
	case `"treeitem"`:
		return "treeitem"
	case `"heading"`:
		return "heading"
	case `"main"`:
		return "main"
	case `"navigation"`:
		return "navigation"
	case `"banner"`:
		return "banner"
	case `"contentinfo"`:
		return "contentinfo"
	case `"complementary"`:
		return "complementary"
	case `"region"`:
		return "region"
	case `"form"`:
		return "form"
	case `"search"`:
		return "search"
	case `"dialog"`:
		return "dialog"
	case `"alertdialog"`:
		return "alertdialog"
	case `"alert"`:
		return "alert"
	case `"article"`:
		return "article"
	case `"document"`:
		return "document"
	case `"list"`:
		return "list"
	case `"listitem"`:
		return "listitem"
	case `"table"`:
		return "table"
	case `"row"`:
		return "row"
	case `"cell"`:
		return "cell"
	case `"gridcell"`:
		return "gridcell"
	case `"columnheader"`:
		return "columnheader"
	case `"rowheader"`:
		return "rowheader"
	case `"rowgroup"`:
		return "rowgroup"
	case `"group"`:
		return "group"
	case `"generic"`:
		return "generic"
	case `"none"`:
		return "none"
	case `"paragraph"`:
		return "paragraph"
	case `"image"`:
		return "image"
	case `"img"`:
		return "img"
	case `"figure"`:
		return "figure"
	case `"caption"`:
		return "caption"
	case `"blockquote"`:
		return "blockquote"
	case `"code"`:
		return "code"
	case `"emphasis"`:
		return "emphasis"
	case `"strong"`:
		return "strong"
	case `"superscript"`:
		return "superscript"
	case `"subscript"`:
		return "subscript"
	case `"time"`:
		return "time"
	case `"note"`:
		return "note"
	case `"status"`:
		return "status"
	case `"menu"`:
		return "menu"
	case `"menubar"`:
		return "menubar"
	case `"tablist"`:
		return "tablist"
	case `"tabpanel"`:
		return "tabpanel"
	case `"tree"`:
		return "tree"
	case `"toolbar"`:
		return "toolbar"
	case `"separator"`:
		return "separator"
	case `"LabelText"`:
		return "LabelText"
	case `"LineBreak"`:
		return "LineBreak"
	case `"ListMarker"`:
		return "ListMarker"
	case `"StaticText"`:
		return "StaticText"
	case `"InlineTextBox"`:
		return "InlineTextBox"
	case `"RootWebArea"`:
		return "RootWebArea"
	case `"Iframe"`:
		return "Iframe"
	case `"MenuListPopup"`:
		return "MenuListPopup"
	case `"Abbr"`:
		return "Abbr"
	case `"Section"`:
		return "Section"
	}
	return rawString(n.Role.Value)
}

// candidateCap estimates how many elements the nodes can give, to size
// Build's slices once.
func candidateCap(nodes []*accessibility.Node, roles []string, includeAll bool) int {
	c := 0
	for i, n := range nodes {
		if n == nil || n.Ignored || n.BackendDOMNodeID == 0 {
			continue
		}
		switch roles[i] {
		case "InlineTextBox", "generic", "none", "LineBreak", "ListMarker", "listitem", "list",
			"paragraph", "row", "cell", "LabelText", "RootWebArea", "Iframe", "image", "table", "rowgroup",
			"superscript", "strong", "emphasis", "Abbr", "columnheader", "rowheader", "group", "note":
		case "StaticText", "heading":
			if includeAll {
				c++
			}
		default:
			c++
		}
	}
	return c
}

func valueString(v *accessibility.Value) string {
	if v == nil {
		return ""
	}
	return rawString(v.Value)
}

// clean collapses runs of white space to one space, trims the ends, and
// cuts the result to max runes, ending a cut string with "…".
func clean(s string, max int) string {
	// Fast path: nothing to change.
	ok := len(s) <= max
	if ok {
		prevSpace := true // a leading space needs work
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= 0x80 {
				ok = false // non-ASCII spaces (NBSP…) take the slow path
				break
			}
			sp := c == ' '
			if c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || (sp && prevSpace) {
				ok = false
				break
			}
			prevSpace = sp
		}
		if ok && (len(s) == 0 || s[len(s)-1] != ' ') {
			return s
		}
	}
	var b strings.Builder
	b.Grow(min(len(s), max*4+4))
	n := 0
	pending := false
	for _, r := range s {
		if isSpace(r) {
			pending = n > 0
			continue
		}
		if pending {
			if n >= max {
				return b.String() + "…" // more words follow
			}
			b.WriteByte(' ')
			n++
			pending = false
		}
		if n >= max {
			return strings.TrimRight(b.String(), " ") + "…"
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\f', '\v', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x200B, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// shortURL drops the scheme, and the origin when it is base's, and caps it.
func shortURL(raw, base string) string {
	if raw == "" {
		return ""
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		if b, err := url.Parse(base); err == nil && b.Scheme == u.Scheme && b.Host == u.Host {
			raw = u.RequestURI()
			if u.Fragment != "" {
				raw += "#" + u.Fragment
			}
		} else {
			raw = strings.TrimPrefix(strings.TrimPrefix(raw, u.Scheme+"://"), "www.")
		}
	}
	return clean(raw, maxURL)
}

// maxLinkURL caps the target shown for a link without a name.
const maxLinkURL = 48

// linkURL shortens the target of a link without a name to what tells it
// apart: the path, after the host when it is not base's, without the
// query (kept when the path is empty or "/"), at most maxLinkURL runes;
// "" for a javascript: URL, which says nothing.
func linkURL(raw, base string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return clean(raw, maxLinkURL)
	}
	if u.Scheme == "javascript" {
		return ""
	}
	if u.Host == "" {
		return clean(raw, maxLinkURL)
	}
	s := u.EscapedPath()
	if (s == "" || s == "/") && u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	if b, err := url.Parse(base); err != nil || b.Scheme != u.Scheme || b.Host != u.Host {
		s = strings.TrimPrefix(u.Host, "www.") + s
	} else if s == "" {
		s = "/"
	}
	return clean(s, maxLinkURL)
}

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
// frame) into an observation (DESIGN.md section 4). By default it keeps
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

// hasWord reports whether s has a letter or a digit.
func hasWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
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

// disambiguate gives elements that share a role, name and frame a context
// that tells them apart (see disambiguate).
func (b *builder) disambiguate() {
	for i := range b.els {
		b.els[i].href = b.meta[i].url
	}
	disambiguate(b.els, func(i int, name string) [3]string {
		m := &b.meta[i]
		return [3]string{
			b.containerText(m.containerFrame, m.containerIdx, name),
			m.heading,
			clean(m.landmark, maxContext),
		}
	})
}

// disambiguate gives elements that share a role, name and frame a context
// that tells them apart: the text of their list item or row, else the
// heading before them, else their landmark (the three candidates cands
// returns for element i, whose name is name). Each element takes the first
// of these that is set, differs from the name, and differs from the same
// candidate of at least one other element of the group; an element that no
// candidate tells apart gets none. Links to the same URL (Element.href) are
// the same choice and need no context.
func disambiguate(els []Element, cands func(i int, name string) [3]string) {
	type key struct{ role, name, frame string }
	groups := make(map[key][]int, len(els))
	for i := range els {
		el := &els[i]
		if isStructural(el.Role) || el.Role == "list" || (el.Role == "link" && el.Name == "") {
			continue // a link without a name shows its URL
		}
		k := key{el.Role, el.Name, el.Frame}
		groups[k] = append(groups[k], i)
	}
	const levels = 3
	var cs [][levels]string
	var need []bool
	for k, g := range groups {
		if len(g) < 2 {
			continue
		}
		need = need[:0]
		for range g {
			need = append(need, true)
		}
		if k.role == "link" {
			// Links to one URL are one choice. The largest set of
			// links to one URL needs no context; the others do.
			count := map[string]int{}
			for _, i := range g {
				count[els[i].href]++
			}
			if len(count) == 1 {
				continue
			}
			top, n := "", 1
			for _, i := range g { // in document order, so ties pick the first
				if c := count[els[i].href]; c > n {
					top, n = els[i].href, c
				}
			}
			if n > 1 {
				for x, i := range g {
					need[x] = els[i].href != top
				}
			}
		}
		cs = cs[:0]
		for _, i := range g {
			c := cands(i, k.name)
			for l := range c {
				c[l] = clean(c[l], maxContext)
				if c[l] == k.name {
					c[l] = ""
				}
			}
			cs = append(cs, c)
		}
		for x, i := range g {
			if !need[x] {
				continue
			}
			for l := 0; l < levels; l++ {
				c := cs[x][l]
				if c == "" {
					continue
				}
				differs := false
				for y := range cs {
					if cs[y][l] != c {
						differs = true
						break
					}
				}
				if differs {
					els[i].Context = c
					break
				}
			}
		}
	}
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

// containsFold reports whether s contains the lower-cased lq, ignoring case.
func containsFold(s, lq string) bool {
	if s == "" {
		return false
	}
	return strings.Contains(strings.ToLower(s), lq)
}
