package observe

import (
	"slices"
	"strconv"
	"strings"
)

// DefaultMaxTokens is the token budget of Trim when none is given.
const DefaultMaxTokens = 6000

// fullPathReserve is the room, in bytes, Trim keeps for the path of the
// full observation, which the tab writes after Trim.
const fullPathReserve = 100

// Tokens estimates the tokens of s as its length in bytes divided by four,
// rounded up.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// Text renders the observation for models and the CLI: a header line with
// the title, URL, viewport and scroll position, then one line per element,
// number first:
//
//	page "Sign in" http://127.0.0.1:8080/login viewport=1280x657 scroll=0,0/1280x900
//	[1] h1 "Sign in"
//	[2] textbox "Email": "me@example.com" required
//	[3] button "Buy" (Apples) disabled
//	[4] "Some static text"
//	… 12 more elements left out; full observation: /tmp/tabpilot-obs-1.json
//
// The header gives the viewport and scroll position (x,y/width x height of
// the document) only when the document is larger than the viewport or
// scrolled. Roles are ARIA roles ("focusable" for an element with no role
// that takes the focus); headings are h1 to h6 and static text has no role.
// After the name come the context in parentheses (for elements that share a
// role and name), ": " and the value when there is one (an empty text field
// shows none), the states, url= for a link without a name, and @fN
// for an element of a child frame, where a line "frames: f1=NAME …" after
// the header names the frames. The last line appears when Omitted is not
// zero.
func (o *Observation) Text() string {
	var b strings.Builder
	b.Grow(64 + len(o.Elements)*40)
	writeHeader(&b, o)
	labels, no := frameNumbers(o.Elements)
	writeFrames(&b, labels)
	for i := range o.Elements {
		writeLine(&b, &o.Elements[i], no[o.Elements[i].Frame])
	}
	if len(o.Elements) == 0 {
		b.WriteString("(no elements)\n")
	}
	writeFooter(&b, o.Omitted, o.FullPath)
	return b.String()
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
	b.WriteByte('\n')
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

func writeLine(b *strings.Builder, el *Element, frame int) {
	var num [24]byte
	b.WriteByte('[')
	b.Write(strconv.AppendInt(num[:0], int64(el.ID), 10))
	b.WriteByte(']')
	switch {
	case el.Role == "text":
	case el.Role == "heading" && el.Level >= 1 && el.Level <= 9:
		b.WriteString(" h")
		b.WriteByte(byte('0' + el.Level))
	default:
		b.WriteByte(' ')
		b.WriteString(el.Role)
	}
	if el.Name != "" || el.Role == "text" || el.Value != "" {
		b.WriteByte(' ')
		writeQuoted(b, el.Name)
	}
	if el.Context != "" {
		b.WriteString(" (")
		b.WriteString(el.Context)
		b.WriteByte(')')
	}
	if el.Value != "" {
		b.WriteString(": ")
		writeQuoted(b, el.Value)
	}
	for _, s := range el.States {
		b.WriteByte(' ')
		b.WriteString(s)
	}
	if el.URL != "" {
		b.WriteString(" url=")
		b.WriteString(el.URL)
	}
	if frame > 0 {
		b.WriteString(" @f")
		b.WriteString(strconv.Itoa(frame))
	}
	b.WriteByte('\n')
}

// frameNumbers numbers the frames of els from 1 in order of appearance.
func frameNumbers(els []Element) (labels []string, no map[string]int) {
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
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var esc string
		switch {
		case c == '"':
			esc = `\"`
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
	b.WriteByte('"')
}

// regionTier orders regions for Trim: dialogs, then main, then the rest,
// then navigation, footers and sidebars.
func regionTier(region string) int {
	switch region {
	case RegionDialog:
		return 0
	case RegionMain:
		return 1
	case RegionNavigation, RegionContentInfo, RegionComplementary:
		return 3
	}
	return 2
}

// Trim cuts o to a budget of maxTokens (counted by Tokens on Text(); 0 or
// less means DefaultMaxTokens). It keeps elements in the order of
// regionTier (dialog, main, the rest, then navigation, footer and sidebar
// elements), in document order within a tier, stopping at the first that
// does not fit; the kept ones stay in document order. It keeps room for the
// last line and a FullPath of about 100 bytes. It returns a copy of o with
// the kept elements (o is not changed) and the number left out, which it
// adds to the copy's Omitted.
func Trim(o *Observation, maxTokens int) (*Observation, int) {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	budget := maxTokens * 4
	cp := *o
	var b strings.Builder
	writeHeader(&b, o)
	// Frame numbers of the full list: the kept ones can only be smaller.
	labels, no := frameNumbers(o.Elements)
	writeFrames(&b, labels)
	used := b.Len()
	lens := make([]int, len(o.Elements))
	b.Grow(len(o.Elements) * 40)
	for i := range o.Elements {
		before := b.Len()
		writeLine(&b, &o.Elements[i], no[o.Elements[i].Frame])
		lens[i] = b.Len() - before
	}
	writeFooter(&b, o.Omitted, o.FullPath)
	if b.Len() <= budget {
		cp.Elements = slices.Clone(o.Elements)
		return &cp, 0
	}
	var foot strings.Builder
	writeFooter(&foot, o.Omitted+len(o.Elements), "")
	used += foot.Len() + len("; full observation: ") + fullPathReserve

	order := make([]int, len(o.Elements))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return regionTier(o.Elements[x].Region) - regionTier(o.Elements[y].Region)
	})
	keep := make([]bool, len(o.Elements))
	n := 0
	for _, i := range order {
		if used+lens[i] > budget {
			break
		}
		used += lens[i]
		keep[i] = true
		n++
	}
	cp.Elements = make([]Element, 0, n)
	for i, k := range keep {
		if k {
			cp.Elements = append(cp.Elements, o.Elements[i])
		}
	}
	omitted := len(o.Elements) - n
	cp.Omitted = o.Omitted + omitted
	cp.FullPath = ""
	return &cp, omitted
}
