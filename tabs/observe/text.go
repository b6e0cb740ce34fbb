package observe

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultMaxTokens is the token budget of Trim when none is given.
const DefaultMaxTokens = 6000

// fullPathReserve is the room, in bytes, Trim keeps for the path of the
// full observation, which the tab writes after Trim.
const fullPathReserve = 100

// anchorWindow is how many elements before and after the anchor (the
// element last acted on, else the focused one) Trim keeps with the
// dialogs, before the main landmark.
const anchorWindow = 20

// Tokens estimates the tokens of s as its length in bytes divided by four,
// rounded up.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// Text renders the observation for models and the CLI: a header line with
// the title, URL, viewport and scroll position, then the elements in
// document order, number first, as small as it can be while staying plain:
//
//	page "Sign in" http://127.0.0.1:8080/login viewport=1280x657 scroll=0,0/1280x900
//	[main]
//	1 h1 "Sign in"
//	2 textbox "Email": "me@example.com" required
//	3 [Buy] (Apples) disabled
//	4 "Forgot your password?"
//	5,9 "Cart"
//	10 "Pears" | 11 [Buy]
//	12 combobox "Size": "M" options "S","M","L"
//	"Some static text"
//	… 12 more elements left out; full observation: /tmp/tabpilot-obs-1.json
//
// The header gives the viewport and scroll position (x,y/width x height of
// the document) only when the document is larger than the viewport or
// scrolled. An element is its number, its ARIA role, its quoted name, the
// context in parentheses (for elements that share a role and name: their
// list item or row, heading or landmark), ": " and the value when there is
// one, its states, and for a collapsed <select> its options. Two roles
// have no word: a link is its quoted name (line 5), a button its name in
// brackets, as it reads on the screen (line 4). Links with one name and one
// target are one line, their numbers joined by commas (line 6). The
// elements of one list item or table row share a line, joined by " | "
// (line 7), up to maxPerLine; there an element needs no context when
// another on the line has none. Headings are h1 to h6; "clickable" is an
// element with a click handler or a pointer cursor and no role, "focusable"
// one that only takes the focus; a link without a name shows url= and its
// target. Text (line 9), landmarks ([main], [nav "Primary"]), alerts and
// lists ([list 5], of five items) have no number: they are for reading.
// An element of a child frame ends with @fN, and a line "frames: f1=NAME …"
// after the header names the frames. An element without a number (one the
// budget left out, in the full observation of a page too large to number)
// shows "-". The last line appears when Omitted is not zero.
//
// A diff (Since "last") has a second line counting the changes, then the
// added elements (+), the changed ones (~, with "was" and what differed)
// and the removed ones (-).
func (o *Observation) Text() string { return o.render(nil, nil) }

// render renders the elements keep marks (all when nil), and when cost is
// not nil, records in cost[i] the bytes element i took (its separator, its
// rendering, the newline that ends its line).
func (o *Observation) render(keep []bool, cost []int) string {
	var b strings.Builder
	b.Grow(64 + len(o.Elements)*28)
	writeHeader(&b, o)
	labels, no := frameNumbers(o.Elements, o.Removed)
	writeFrames(&b, labels)
	if o.Since != "" {
		writeDiffHeader(&b, o)
	}
	extra, skip := mergeLinks(o.Elements, keep)
	shown := make([]int, 0, len(o.Elements))
	for i := range o.Elements {
		if (keep == nil || keep[i]) && (skip == nil || !skip[i]) {
			shown = append(shown, i)
		}
	}
	for start := 0; start < len(shown); {
		end := start + 1
		for end < len(shown) && end-start < maxPerLine && sameLine(&o.Elements[shown[end-1]], &o.Elements[shown[end]]) {
			end++
		}
		// On a line with an element that needs no context, the others
		// need none either: that element tells the line apart.
		plain := false
		if end-start > 1 {
			for _, i := range shown[start:end] {
				if el := &o.Elements[i]; el.Context == "" && el.Name != "" {
					plain = true
				}
			}
		}
		for k, i := range shown[start:end] {
			before := b.Len()
			el := &o.Elements[i]
			if k > 0 {
				b.WriteString(" | ")
			}
			switch el.Change {
			case "added":
				b.WriteString("+ ")
			case "changed":
				b.WriteString("~ ")
			}
			var more []int
			if extra != nil {
				more = extra[i]
			}
			writeLine(&b, el, no[el.Frame], more, plain)
			if k == end-start-1 {
				b.WriteByte('\n')
			}
			if cost != nil {
				cost[i] = b.Len() - before
			}
		}
		start = end
	}
	for i := range o.Removed {
		b.WriteString("- ")
		writeLine(&b, &o.Removed[i], no[o.Removed[i].Frame], nil, false)
		b.WriteByte('\n')
	}
	if len(shown) == 0 && len(o.Removed) == 0 {
		if o.Since != "" {
			b.WriteString("(no changes)\n")
		} else {
			b.WriteString("(no elements)\n")
		}
	}
	for _, n := range o.Notes {
		b.WriteString("note: ")
		b.WriteString(n)
		b.WriteByte('\n')
	}
	writeFooter(&b, o.Omitted, o.FullPath)
	return b.String()
}

// maxPerLine caps the elements of a shared line.
const maxPerLine = 8

// sameLine reports whether b goes on a's line: both are in one list item
// or table row of one frame, neither is a marker, a change or a long text.
func sameLine(a, b *Element) bool {
	return a.group != 0 && a.group == b.group && a.Frame == b.Frame && !isMarker(a.Role) && !isMarker(b.Role) &&
		a.Change == "" && b.Change == "" && !longText(a) && !longText(b)
}

func longText(el *Element) bool { return el.Role == "text" && len(el.Name) > 80 }

// isMergeable reports whether el's line can merge with other links to the
// same target.
func isMergeable(el *Element) bool {
	return el.Role == "link" && el.ID > 0 && el.Name != "" && el.href != "" && el.Context == "" &&
		len(el.States) == 0 && el.Change == ""
}

// mergeLinks finds the links (among those keep marks, all when nil) that
// share a name, a target and a frame: extra[i] holds, for the first of
// each set, the numbers of the others, which skip marks. It returns nils
// when there are none.
func mergeLinks(els []Element, keep []bool) (extra [][]int, skip []bool) {
	type key struct{ name, href, frame string }
	var first map[key]int
	for i := range els {
		el := &els[i]
		if (keep != nil && !keep[i]) || !isMergeable(el) {
			continue
		}
		if first == nil {
			first = map[key]int{}
		}
		k := key{el.Name, el.href, el.Frame}
		j, ok := first[k]
		if !ok {
			first[k] = i
			continue
		}
		if extra == nil {
			extra, skip = make([][]int, len(els)), make([]bool, len(els))
		}
		extra[j] = append(extra[j], el.ID)
		skip[i] = true
	}
	return extra, skip
}

func writeHeader(b *strings.Builder, o *Observation) {
	b.WriteString("page ")
	writeQuoted(b, o.Title)
	b.WriteByte(' ')
	b.WriteString(o.URL)
	if o.Scroll == (Scroll{Width: o.Viewport.Width, Height: o.Viewport.Height}) || o.Scroll == (Scroll{}) {
		// Nothing to scroll: the viewport says nothing useful.
		b.WriteByte('\n')
		return
	}
	b.WriteString(" viewport=")
	b.WriteString(strconv.Itoa(o.Viewport.Width))
	b.WriteByte('x')
	b.WriteString(strconv.Itoa(o.Viewport.Height))
	b.WriteString(" scroll=")
	b.WriteString(strconv.Itoa(o.Scroll.X))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(o.Scroll.Y))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(o.Scroll.Width))
	b.WriteByte('x')
	b.WriteString(strconv.Itoa(o.Scroll.Height))
	if p := o.PageScroll(); p != "" {
		b.WriteString(" scrollable ")
		b.WriteString(p)
	}
	b.WriteByte('\n')
}

// PageScroll says where the page stands when it scrolls: "0%/2931px
// below" (the share scrolled down and the CSS pixels left below; "… right"
// for a page that scrolls only sideways), "" when it does not scroll.
func (o *Observation) PageScroll() string {
	where := func(at, size, view int, dir string) string {
		r := size - view
		pct := 0
		if r > 0 {
			pct = (100*max(0, at) + r/2) / r
		}
		return strconv.Itoa(min(100, pct)) + "%/" + strconv.Itoa(max(0, r-at)) + "px " + dir
	}
	switch {
	case o.Scroll.Height > o.Viewport.Height+1:
		return where(o.Scroll.Y, o.Scroll.Height, o.Viewport.Height, "below")
	case o.Scroll.Width > o.Viewport.Width+1:
		return where(o.Scroll.X, o.Scroll.Width, o.Viewport.Width, "right")
	}
	return ""
}

func writeDiffHeader(b *strings.Builder, o *Observation) {
	added, changed := 0, 0
	for i := range o.Elements {
		switch o.Elements[i].Change {
		case "added":
			added++
		case "changed":
			changed++
		}
	}
	b.WriteString("since ")
	b.WriteString(o.Since)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(added))
	b.WriteString(" added, ")
	b.WriteString(strconv.Itoa(changed))
	b.WriteString(" changed, ")
	b.WriteString(strconv.Itoa(len(o.Removed)))
	b.WriteString(" removed, ")
	b.WriteString(strconv.Itoa(o.Unchanged))
	b.WriteString(" unchanged\n")
}

func writeFooter(b *strings.Builder, omitted int, path string) {
	if omitted <= 0 {
		return
	}
	b.WriteString("… ")
	b.WriteString(strconv.Itoa(omitted))
	b.WriteString(" more elements left out")
	if path != "" {
		b.WriteString("; full observation: ")
		b.WriteString(path)
	}
	b.WriteByte('\n')
}

// writeLine writes el's rendering (without a newline); extra are the
// numbers of links merged into it; noContext leaves out its context.
func writeLine(b *strings.Builder, el *Element, frame int, extra []int, noContext bool) {
	var num [24]byte
	if el.Role == "text" {
		writeQuoted(b, el.Name)
		writeFrame(b, frame)
		return
	}
	if el.Role == "img" && el.ID == 0 {
		b.WriteString("img ")
		writeQuoted(b, el.Name)
		writeBox(b, el.Bounds)
		writeFrame(b, frame)
		return
	}
	if isMarker(el.Role) {
		b.WriteByte('[')
		switch el.Role {
		case "list":
			b.WriteString("list ")
			b.WriteString(strconv.Itoa(el.Count))
		case "alert":
			b.WriteString("alert")
		default:
			w, _ := landmarkLabel(el.Role)
			b.WriteString(w)
		}
		if el.Name != "" {
			b.WriteByte(' ')
			writeQuoted(b, el.Name)
		}
		b.WriteByte(']')
		writeFrame(b, frame)
		return
	}
	if el.ID > 0 {
		b.Write(strconv.AppendInt(num[:0], int64(el.ID), 10))
	} else {
		b.WriteByte('-')
	}
	for _, id := range extra {
		b.WriteByte(',')
		b.Write(strconv.AppendInt(num[:0], int64(id), 10))
	}
	named := el.Name != "" || el.Value != ""
	bracketed := el.Role == "button" && el.Name != ""
	switch {
	case bracketed:
		b.WriteByte(' ')
		writeBracketed(b, el.Name)
	case el.Role == "link" && named:
	case el.Role == "heading" && el.Level >= 1 && el.Level <= 9:
		b.WriteString(" h")
		b.WriteByte(byte('0' + el.Level))
	default:
		b.WriteByte(' ')
		b.WriteString(el.Role)
	}
	if named && !bracketed {
		b.WriteByte(' ')
		writeQuoted(b, el.Name)
	}
	if el.Context != "" && !noContext {
		b.WriteString(" (")
		b.WriteString(el.Context)
		b.WriteByte(')')
	}
	if el.Value != "" {
		b.WriteString(": ")
		writeQuoted(b, el.Value)
		if el.ValueLength > 0 {
			fmt.Fprintf(b, " (cut: %d characters; tab.value(%d) reads all)", el.ValueLength, el.ID)
		}
	}
	for _, s := range el.States {
		b.WriteByte(' ')
		b.WriteString(s)
	}
	if el.Type != "" {
		b.WriteString(" type=")
		b.WriteString(el.Type)
	}
	if el.ScrollPosition != "" {
		b.WriteByte(' ')
		b.WriteString(el.ScrollPosition)
	}
	writeBox(b, el.Bounds)
	if el.URL != "" {
		b.WriteString(" url=")
		b.WriteString(el.URL)
	}
	if len(el.Options) > 0 {
		b.WriteString(" options ")
		for i, op := range el.Options {
			if i > 0 {
				b.WriteByte(',')
			}
			writeQuoted(b, op)
		}
	}
	writeFrame(b, frame)
	if el.Was != "" {
		b.WriteString(" was")
		if el.Was[0] != ':' {
			b.WriteByte(' ')
		}
		b.WriteString(el.Was)
	}
}

// writeBox writes " box=X,Y,WxH" (CSS pixels) for an element with a Box.
func writeBox(b *strings.Builder, r *Rect) {
	if r == nil {
		return
	}
	fmt.Fprintf(b, " box=%d,%d,%dx%d", int(math.Round(r.X)), int(math.Round(r.Y)), int(math.Round(r.Width)), int(math.Round(r.Height)))
}

func writeFrame(b *strings.Builder, frame int) {
	if frame > 0 {
		b.WriteString(" @f")
		b.WriteString(strconv.Itoa(frame))
	}
}

// frameNumbers numbers the frames of the element lists from 1 in order of
// appearance.
func frameNumbers(lists ...[]Element) (labels []string, no map[string]int) {
	for _, els := range lists {
		for i := range els {
			f := els[i].Frame
			if f == "" {
				continue
			}
			if no == nil {
				no = map[string]int{}
			}
			if _, ok := no[f]; !ok {
				labels = append(labels, f)
				no[f] = len(labels)
			}
		}
	}
	return labels, no
}

// writeFrames writes the legend of the frame numbers, if any.
func writeFrames(b *strings.Builder, labels []string) {
	if len(labels) == 0 {
		return
	}
	b.WriteString("frames:")
	for i, l := range labels {
		b.WriteString(" f")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteByte('=')
		if strings.ContainsAny(l, " \"") {
			writeQuoted(b, l)
		} else {
			b.WriteString(l)
		}
	}
	b.WriteByte('\n')
}

// writeQuoted writes s in double quotes, escaping quotes, backslashes and
// control characters.
func writeQuoted(b *strings.Builder, s string) {
	writeDelimited(b, s, '"', '"')
}

// writeBracketed writes a button's name in brackets, as a button reads
// ("[Sign in]"), escaping "]", backslashes and control characters.
func writeBracketed(b *strings.Builder, s string) {
	writeDelimited(b, s, '[', ']')
}

func writeDelimited(b *strings.Builder, s string, open, close byte) {
	b.WriteByte(open)
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var esc string
		switch {
		case c == close:
			esc = string([]byte{'\\', close})
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '\t':
			esc = `\t`
		case c < 0x20 || c == 0x7f:
			esc = " "
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(esc)
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte(close)
}
