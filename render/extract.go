package render

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	readability "codeberg.org/readeck/go-readability/v2"
	rtext "codeberg.org/readeck/go-readability/v2/render"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The formats of Extract.
const (
	FormatMarkdown = "markdown" // CommonMark with GFM tables and strikethrough (the default)
	FormatText     = "text"     // plain text, block-aware like innerText
	FormatHTML     = "html"     // the cleaned-up HTML of the content element
)

// SourceReadability is Extraction.Source when Readability found the content.
const SourceReadability = "readability"

// FallbackSelectors are the CSS selectors Extract tries, in order, when
// Readability finds nothing; the first element with content wins.
var FallbackSelectors = []string{"main article", "article", "main", "[role=main]", "body"}

// Extraction is the readable content of a page (the result of tab.extract).
type Extraction struct {
	Title    string // Readability's title: og/twitter/JSON-LD metadata, else <title> cleaned of the site part
	Byline   string // author, from metadata or the article's byline element; "" when unknown
	Excerpt  string // description metadata, else the first paragraph of the content
	SiteName string // og:site_name or JSON-LD publisher
	Lang     string // the lang attribute of <html>
	Dir      string // text direction ("ltr", "rtl") inherited by the content; "" when unset
	Format   string // "markdown", "text" or "html"
	Content  string // the content in Format, trimmed; "" when Empty
	Empty    bool   // nothing had content in Format (an image-only page has none as text): tab.extract returns null
	Source   string // "readability", or the fallback selector that matched ("main", "body", ...)
}

// Extract finds the main content of a rendered page and returns it as
// markdown, text or html, with its metadata.
//
// htmlSrc is the serialised DOM (document.documentElement.outerHTML after
// scripts ran, or a static page). pageURL is the document's URL: relative
// links and images are resolved against it (and a <base href> in the page),
// so the markdown carries absolute URLs; it may be empty.
//
// Readability (codeberg.org/readeck/go-readability/v2, a port of Mozilla's
// Readability.js 0.6) picks the content. When it finds none, the first of
// FallbackSelectors whose element has text or images is used. Scripts, styles,
// templates, <noscript>, and elements that are hidden (`hidden` attribute,
// aria-hidden="true", inline display:none or visibility:hidden) are dropped.
// Markdown keeps headings, lists, tables, links, code blocks and image alt
// text (html-to-markdown v2 with the table and strikethrough plugins); text is
// Readability's own innerText-like rendering. Headings keep the page's levels
// (Readability turns the content's h1s into h2s; they are h1s again), and
// markdown starts with the title as a "# " heading: the article's own h1
// when the content has one, moved first if it is not; else the page's first
// h1 when it matches Title (Readability drops an h1 that repeats the
// title); else Title.
//
// An empty format means markdown. Errors: ErrBadFormat for another format;
// a page with no content is not an error but an Extraction with Empty set.
func Extract(htmlSrc, pageURL, format string) (*Extraction, error) {
	if format == "" {
		format = FormatMarkdown
	}
	switch format {
	case FormatMarkdown, FormatText, FormatHTML:
	default:
		return nil, fmt.Errorf("extract %q: %w", format, ErrBadFormat)
	}
	doc, err := html.Parse(strings.NewReader(htmlSrc))
	if err != nil {
		return nil, fmt.Errorf("extract: parse html: %w", err)
	}
	pu := parsePageURL(pageURL)
	baseURL := documentBase(doc, pu)
	hasDir := markInheritedDir(doc)
	markH1s(doc)
	pageH1 := firstH1Text(doc)
	lang := htmlAttr(doc, "lang")

	ex := &Extraction{Format: format, Lang: lang}

	parser := readability.NewParser()
	parser.KeepClasses = true // clean keeps only code-language classes, for fenced code blocks
	article, rerr := parser.ParseAndMutate(doc, baseURL)
	var content *html.Node
	if rerr == nil {
		ex.Title = article.Title()
		ex.Byline = article.Byline()
		ex.SiteName = article.SiteName()
		ex.Excerpt = article.Excerpt() // metadata, else the content's first paragraph
		if l := article.Language(); l != "" {
			ex.Lang = l
		}
		if article.Node != nil && hasContent(article.Node) {
			content = article.Node
			ex.Source = SourceReadability
			if hasDir {
				ex.Dir = contentDir(content)
			}
		}
	}

	if content == nil {
		// Readability mutated doc: parse again for the fallbacks.
		doc, err = html.Parse(strings.NewReader(htmlSrc))
		if err != nil {
			return nil, fmt.Errorf("extract: parse html: %w", err)
		}
		if ex.Title == "" {
			ex.Title = documentTitle(doc)
		}
		for i, sel := range fallbackMatchers {
			n := sel(doc)
			if n == nil {
				continue
			}
			clean(n)
			if !hasContent(n) {
				continue
			}
			content = n
			ex.Source = FallbackSelectors[i]
			ex.Dir = inheritedDir(n)
			break
		}
	}
	if content == nil {
		ex.Empty = true
		return ex, nil
	}

	clean(content)
	absolutize(content, baseURL)
	restoreH1s(content)
	stripMarks(content)
	if format == FormatMarkdown {
		titleFirst(content, pageH1, ex.Title)
	}

	switch format {
	case FormatText:
		ex.Content = strings.TrimSpace(rtext.InnerText(content))
	case FormatHTML:
		var b bytes.Buffer
		if err := html.Render(&b, content); err != nil {
			return nil, fmt.Errorf("extract: render html: %w", err)
		}
		ex.Content = strings.TrimSpace(b.String())
	case FormatMarkdown:
		md, err := markdownConverter().ConvertNode(content)
		if err != nil {
			return nil, fmt.Errorf("extract: convert to markdown: %w", err)
		}
		ex.Content = strings.TrimSpace(string(md))
	}
	if ex.Content == "" {
		ex.Empty = true
	}
	return ex, nil
}

// markdownConverter is shared: ConvertNode keeps its state per call.
var markdownConverter = sync.OnceValue(func() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		// A link without a target (a dropped javascript: or an anchor-only <a>) is its text.
		commonmark.NewCommonmarkPlugin(commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip)),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
})

func parsePageURL(s string) *url.URL {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return nil
	}
	return u
}

// documentBase is the URL relative references resolve against: the first
// <base href> resolved against the page URL, else the page URL.
func documentBase(doc *html.Node, page *url.URL) *url.URL {
	b := findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.Base && hasAttr(n, "href") })
	if b == nil {
		return page
	}
	ref, err := url.Parse(strings.TrimSpace(attr(b, "href")))
	if err != nil {
		return page
	}
	if page != nil {
		return page.ResolveReference(ref)
	}
	if ref.IsAbs() {
		return ref
	}
	return nil
}

// dirMark carries, on every element, the dir inherited from its nearest
// ancestor-or-self with a dir attribute, through Readability's cloning and
// moving; stripMarks removes it from the output.
const dirMark = "data-tabpilot-dir"

// markInheritedDir sets dirMark on every element under an element with a
// dir attribute. It reports whether the document has any dir attribute.
func markInheritedDir(doc *html.Node) bool {
	found := false
	var walk func(n *html.Node, dir string)
	walk = func(n *html.Node, dir string) {
		if n.Type == html.ElementNode {
			if d := strings.TrimSpace(attr(n, "dir")); d != "" {
				dir = d
				found = true
			}
			if dir != "" {
				n.Attr = append(n.Attr, html.Attribute{Key: dirMark, Val: dir})
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, dir)
		}
	}
	walk(doc, "")
	return found
}

// contentDir is the dir Readability.js would report for its content: the one
// inherited by the top candidate. The content element is Readability's page
// div, whose children are the top candidate and its kept siblings, which
// share a parent; a dir set deeper inside the content does not count.
func contentDir(content *html.Node) string {
	if d := attr(content, dirMark); d != "" {
		return d
	}
	for c := content.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return attr(c, dirMark)
		}
	}
	return ""
}

func stripMarks(n *html.Node) {
	walkElements(n, func(n *html.Node) {
		for i := 0; i < len(n.Attr); i++ {
			if n.Attr[i].Key == dirMark || n.Attr[i].Key == h1Mark {
				n.Attr = append(n.Attr[:i], n.Attr[i+1:]...)
				i--
			}
		}
	})
}

// h1Mark marks the page's h1 elements, whose tag Readability changes to h2
// in its content (Readability.js _prepArticle); restoreH1s makes them h1s
// again, and stripMarks removes it from the output.
const h1Mark = "data-tabpilot-h1"

func markH1s(doc *html.Node) {
	walkElements(doc, func(n *html.Node) {
		if n.DataAtom == atom.H1 {
			n.Attr = append(n.Attr, html.Attribute{Key: h1Mark})
		}
	})
}

// restoreH1s gives the marked headings under n back their h1 tag.
func restoreH1s(n *html.Node) {
	walkElements(n, func(e *html.Node) {
		if hasAttr(e, h1Mark) && e.Data != "h1" {
			e.Data, e.DataAtom = "h1", atom.H1
		}
	})
}

// firstH1Text is the text of the first h1 of the page that is not hidden,
// spaces collapsed; "" when there is none.
func firstH1Text(doc *html.Node) string {
	h := findFirst(doc, func(n *html.Node) bool {
		if n.DataAtom != atom.H1 {
			return false
		}
		for p := n; p != nil; p = p.Parent {
			if p.Type == html.ElementNode && (isHidden(p) || droppedTags[p.DataAtom]) {
				return false
			}
		}
		return true
	})
	if h == nil {
		return ""
	}
	return textOf(h)
}

// similarTitle reports whether a heading's text and a title name the same
// thing: one contains the other, case and spaces aside ("The Guide" and
// "The Guide - Site").
func similarTitle(a, b string) bool {
	a = strings.ToLower(strings.Join(strings.Fields(a), " "))
	b = strings.ToLower(strings.Join(strings.Fields(b), " "))
	return a != "" && b != "" && (strings.Contains(a, b) || strings.Contains(b, a))
}

// titleFirst makes the content start with its title heading: the content's
// first h1 when it is the first thing with text; else an h1 of the content
// that repeats the page's first h1 or the title, moved first; else a new h1
// holding the page's first h1 when it matches the title (Readability
// dropped it from the content as a repeat of the title), or the title.
// Nothing is added when there is no title.
func titleFirst(content *html.Node, pageH1, title string) {
	first := findFirst(content, func(n *html.Node) bool {
		return (n.Type == html.TextNode && strings.TrimSpace(n.Data) != "") ||
			(n.DataAtom == atom.Img && (attr(n, "src") != "" || attr(n, "srcset") != ""))
	})
	if first != nil {
		for p := first.Parent; p != nil && p != content; p = p.Parent {
			if p.DataAtom == atom.H1 {
				return
			}
		}
	}
	var own *html.Node
	walkElements(content, func(n *html.Node) {
		if own == nil && n.DataAtom == atom.H1 {
			if t := textOf(n); t != "" && (t == pageH1 || similarTitle(t, title)) {
				own = n
			}
		}
	})
	if own != nil {
		own.Parent.RemoveChild(own)
		content.InsertBefore(own, content.FirstChild)
		return
	}
	heading := strings.Join(strings.Fields(title), " ")
	if pageH1 != "" && similarTitle(pageH1, title) {
		heading = pageH1
	}
	if heading == "" {
		return
	}
	h := &html.Node{Type: html.ElementNode, Data: "h1", DataAtom: atom.H1}
	h.AppendChild(&html.Node{Type: html.TextNode, Data: heading})
	content.InsertBefore(h, content.FirstChild)
}

// inheritedDir is the dir attribute of n or its nearest ancestor that has one.
func inheritedDir(n *html.Node) string {
	for ; n != nil; n = n.Parent {
		if n.Type == html.ElementNode {
			if d := strings.TrimSpace(attr(n, "dir")); d != "" {
				return d
			}
		}
	}
	return ""
}

// fallbackMatchers implement FallbackSelectors, in the same order.
var fallbackMatchers = []func(doc *html.Node) *html.Node{
	func(doc *html.Node) *html.Node { // main article
		return findFirst(doc, func(n *html.Node) bool {
			return n.DataAtom == atom.Article && hasAncestor(n, atom.Main)
		})
	},
	func(doc *html.Node) *html.Node { return findFirst(doc, isAtom(atom.Article)) },
	func(doc *html.Node) *html.Node { return findFirst(doc, isAtom(atom.Main)) },
	func(doc *html.Node) *html.Node {
		return findFirst(doc, func(n *html.Node) bool { return attr(n, "role") == "main" })
	},
	func(doc *html.Node) *html.Node { return findFirst(doc, isAtom(atom.Body)) },
}

var (
	rxDisplayNone      = regexp.MustCompile(`(?i)(^|;)\s*display\s*:\s*none\b`)
	rxVisibilityHidden = regexp.MustCompile(`(?i)(^|;)\s*visibility\s*:\s*hidden\b`)
)

// droppedTags never carry readable content.
var droppedTags = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Link: true, atom.Meta: true, atom.Head: true, atom.Title: true, atom.Base: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true,
}

// clean removes comments, droppedTags and hidden elements under n (n itself
// is kept), and every class but the code-language ones (language-go, lang-go)
// that the markdown converter turns into fenced-code info strings.
func clean(n *html.Node) {
	keepLanguageClasses(n)
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == html.CommentNode,
			c.Type == html.ElementNode && (droppedTags[c.DataAtom] || isHidden(c)):
			n.RemoveChild(c)
		case c.Type == html.ElementNode:
			clean(c)
		}
		c = next
	}
}

func keepLanguageClasses(n *html.Node) {
	for i := 0; i < len(n.Attr); i++ {
		if n.Attr[i].Key != "class" {
			continue
		}
		var keep []string
		for _, c := range strings.Fields(n.Attr[i].Val) {
			if strings.HasPrefix(c, "language-") || strings.HasPrefix(c, "lang-") {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			n.Attr = append(n.Attr[:i], n.Attr[i+1:]...)
			i--
			continue
		}
		n.Attr[i].Val = strings.Join(keep, " ")
	}
}

// hasContent reports whether n has non-space text or an image with a source.
func hasContent(n *html.Node) bool {
	return findFirst(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			return strings.TrimSpace(c.Data) != "" && !insideDropped(c, n)
		}
		return c.DataAtom == atom.Img && (attr(c, "src") != "" || attr(c, "srcset") != "")
	}) != nil
}

// absolutize resolves href, src, poster and srcset under n against base
// (when there is one), and drops javascript: hrefs.
func absolutize(n *html.Node, base *url.URL) {
	resolve := func(s string) string {
		s = strings.TrimSpace(s)
		if base == nil || s == "" || strings.HasPrefix(s, "data:") || strings.HasPrefix(s, "javascript:") {
			return s
		}
		ref, err := url.Parse(s)
		if err != nil {
			return s
		}
		return base.ResolveReference(ref).String()
	}
	walkElements(n, func(e *html.Node) {
		// A javascript: link does nothing outside the page: keep its text.
		e.Attr = slices.DeleteFunc(e.Attr, func(a html.Attribute) bool {
			return a.Key == "href" && strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:")
		})
		for i := range e.Attr {
			a := &e.Attr[i]
			switch a.Key {
			case "href", "src", "poster":
				a.Val = resolve(a.Val)
			case "srcset":
				parts := strings.Split(a.Val, ",")
				for j, p := range parts {
					f := strings.Fields(p)
					if len(f) > 0 {
						f[0] = resolve(f[0])
						parts[j] = strings.Join(f, " ")
					}
				}
				a.Val = strings.Join(parts, ", ")
			}
		}
	})
}
