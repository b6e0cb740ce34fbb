package render

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// textOf is the text under n, spaces collapsed.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		if n.Type == html.ElementNode && droppedTags[n.DataAtom] {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func isAtom(a atom.Atom) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.DataAtom == a }
}

func hasAncestor(n *html.Node, a atom.Atom) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.DataAtom == a {
			return true
		}
	}
	return false
}

// isHidden reports whether an element is hidden by its own markup.
func isHidden(n *html.Node) bool {
	if hasAttr(n, "hidden") {
		return true
	}
	if v := strings.TrimSpace(strings.ToLower(attr(n, "aria-hidden"))); v == "true" {
		return true
	}
	if n.DataAtom == atom.Input && strings.EqualFold(attr(n, "type"), "hidden") {
		return true
	}
	if n.DataAtom == atom.Dialog && !hasAttr(n, "open") {
		return true // a closed <dialog> is not rendered
	}
	if s := attr(n, "style"); s != "" && (rxDisplayNone.MatchString(s) || rxVisibilityHidden.MatchString(s)) {
		return true
	}
	return false
}

// insideDropped reports whether text node t sits in a script, style or other
// dropped element below root (the fallbacks are cleaned first, but
// Readability's output is checked before cleaning).
func insideDropped(t, root *html.Node) bool {
	for p := t.Parent; p != nil && p != root.Parent; p = p.Parent {
		if p.Type == html.ElementNode && droppedTags[p.DataAtom] {
			return true
		}
	}
	return false
}

func documentTitle(doc *html.Node) string {
	t := findFirst(doc, isAtom(atom.Title))
	if t == nil {
		return ""
	}
	var b strings.Builder
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func htmlAttr(doc *html.Node, key string) string {
	h := findFirst(doc, isAtom(atom.Html))
	if h == nil {
		return ""
	}
	return strings.TrimSpace(attr(h, key))
}

// findFirst returns the first node under n (n included), in document order,
// for which match is true.
func findFirst(n *html.Node, match func(*html.Node) bool) *html.Node {
	if match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findFirst(c, match); f != nil {
			return f
		}
	}
	return nil
}

func walkElements(n *html.Node, fn func(*html.Node)) {
	if n.Type == html.ElementNode {
		fn(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walkElements(c, fn)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}
