package main

import (
	"bytes"
	"embed"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed pages/*.html
var pageFiles embed.FS

// page is one page of the suite.
type page struct {
	name  string // the column of the tables
	path  string // served at this path on 127.0.0.1
	about string // one line for the report
}

// allPages lists every page of the suite, in the order a session visits
// them and of the table columns: from the smallest to the largest, so that
// what a tool keeps from one page weighs least on the memory of the next.
func allPages() []page {
	real := func(name string) page {
		return page{name, "/real/" + name, "a saved real page (" + name + "/source.html)"}
	}
	return []page{
		{"login", "/login", "a sign-in form: 10 controls"},
		{"frames", "/frames", "3 open shadow roots (one nested), a same-origin and a cross-site iframe (localhost in a page of 127.0.0.1: a process of its own)"},
		real("medium-1"),
		{"news", "/news", "a news article: 162 links, 4 share buttons, a cookie banner fixed at the bottom"},
		real("nytimes-1"),
		real("wikipedia"),
		{"gen5000", "/gen5000", "generated: 1,250 table rows of a link, a button, a checkbox and a text field"},
	}
}

// counterName is the accessible name of the button that every page gets:
// the click figure clicks it by its element number and reads back how
// often it was clicked.
const counterName = "Bench counter"

// counterButton is injected right after <body>. It is fixed at the top
// right, above everything, so that it is visible and not covered on every
// page without scrolling.
const counterButton = `<button id="tpbench-counter" type="button" style="position:fixed;top:6px;right:6px;z-index:2147483647;font:14px sans-serif;padding:4px 8px" onclick="this.dataset.n=(+this.dataset.n||0)+1">` + counterName + `</button>`

// counterJS reads the click count back; every tool evaluates it after its
// click and the suite looks for "clicks=N" in the answer.
const counterJS = `'clicks=' + (document.getElementById('tpbench-counter').dataset.n || 0)`

var bodyTag = regexp.MustCompile(`(?i)<body[^>]*>`)

// injectCounter puts the counter button right after the <body> tag (or at
// the start when there is none).
func injectCounter(html []byte) []byte {
	loc := bodyTag.FindIndex(html)
	if loc == nil {
		return append([]byte(counterButton), html...)
	}
	var b bytes.Buffer
	b.Grow(len(html) + len(counterButton))
	b.Write(html[:loc[1]])
	b.WriteString(counterButton)
	b.Write(html[loc[1]:])
	return b.Bytes()
}

// server serves the pages on two loopback listeners: main on 127.0.0.1
// and the same handler reached as "localhost" for the cross-site frame
// (a different site, so Chromium puts it in a process of its own).
type server struct {
	ln       net.Listener
	base     string // http://127.0.0.1:PORT
	xorigin  string // http://localhost:PORT
	pagesDir string
	srv      *http.Server
}

func startServer(pagesDir string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s := &server{ln: ln, pagesDir: pagesDir,
		base:    fmt.Sprintf("http://127.0.0.1:%d", port),
		xorigin: fmt.Sprintf("http://localhost:%d", port)}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *server) Close() { s.srv.Close() }

func (s *server) url(p page) string { return s.base + p.path }

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	html := func(b []byte) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(b)
	}
	embedded := func(name string) []byte {
		b, err := pageFiles.ReadFile("pages/" + name)
		if err != nil {
			panic(err) // embedded at build time
		}
		return b
	}
	switch p := r.URL.Path; {
	case p == "/favicon.ico":
		w.Header().Set("Content-Type", "image/x-icon")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(favicon)
	case p == "/login":
		html(injectCounter(embedded("login.html")))
	case p == "/news":
		html(injectCounter(newsPage()))
	case p == "/gen5000":
		html(injectCounter(genPage(1250)))
	case p == "/frames":
		html(injectCounter(bytes.ReplaceAll(embedded("frames.html"), []byte("{{XORIGIN}}"), []byte(s.xorigin))))
	case p == "/frames/inner":
		html(embedded("frame-inner.html"))
	case p == "/frames/xorigin":
		html(embedded("frame-xorigin.html"))
	case strings.HasPrefix(p, "/real/"):
		name := strings.TrimPrefix(p, "/real/")
		if strings.ContainsAny(name, "/.") {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join(s.pagesDir, name, "source.html"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		html(injectCounter(b))
	default:
		// Pages link to paths that do not exist, and the real pages load
		// assets relative to them: answer fast.
		http.NotFound(w, r)
	}
}

// favicon is a 1x1 transparent PNG, so that no tool logs a missing icon.
var favicon = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// words make the generated text read like text.
var words = strings.Fields(`city council budget transit housing plan vote river bridge school
	market energy report health water climate court policy season league museum festival
	harbor election study data science library park street district mayor region farmers`)

func phrase(i, n int) string {
	var b strings.Builder
	for k := range n {
		if k > 0 {
			b.WriteByte(' ')
		}
		w := words[(i*7+k*13)%len(words)]
		if k == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}

// newsPage is a news article: a header with 14 section links, a trending
// bar of 8, a byline, 14 paragraphs with 3 links each, 6 tags, 4 share
// buttons, 30 related stories, a footer of 60 links and a cookie banner
// (3 buttons and a link) fixed at the bottom: 162 links and 7 buttons.
func newsPage() []byte {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Council approves river bridge plan · The Bench Herald</title>
<style>body{font:17px/1.5 Georgia,serif;margin:0}header,footer{font:14px sans-serif;background:#222;color:#eee;padding:8px 16px}
header a,footer a{color:#ddd;margin-right:10px}article{max-width:720px;margin:24px auto}aside{max-width:720px;margin:24px auto;font:15px sans-serif}
footer div{display:inline-block;vertical-align:top;width:18%}footer a{display:block}
#cookies{position:fixed;left:0;right:0;bottom:0;background:#fff;border-top:2px solid #333;padding:12px 16px;font:14px sans-serif;box-shadow:0 -2px 8px #0003}</style>
</head><body><header><strong>The Bench Herald</strong> <nav>`)
	for i := range 14 {
		fmt.Fprintf(&b, `<a href="/news/section/%d">%s</a>`, i, phrase(i, 1))
	}
	b.WriteString(`</nav><div>Trending: `)
	for i := range 8 {
		fmt.Fprintf(&b, `<a href="/news/trending/%d">%s</a>`, i, phrase(i+20, 2))
	}
	b.WriteString(`</div></header><article><h1>Council approves river bridge plan after a long night</h1>
<p>By <a href="/news/author/ada">Ada Lovelace</a> · <time>March 3</time></p>`)
	for i := range 14 {
		fmt.Fprintf(&b, `<p>%s, said the %s. <a href="/news/story/%d/a">%s</a> %s and %s. The %s <a href="/news/story/%d/b">%s</a> while %s <a href="/news/story/%d/c">%s</a>.</p>`,
			phrase(i, 12), phrase(i+1, 2), i, phrase(i+2, 3), phrase(i+3, 9), phrase(i+4, 6), phrase(i+5, 4), i, phrase(i+6, 2), phrase(i+7, 10), i, phrase(i+8, 3))
	}
	b.WriteString(`<p>Tags: `)
	for i := range 6 {
		fmt.Fprintf(&b, `<a href="/news/tag/%d">%s</a> `, i, phrase(i+30, 1))
	}
	b.WriteString(`</p><p>`)
	for _, s := range []string{"Share on Mastodon", "Share by email", "Copy link", "Print"} {
		fmt.Fprintf(&b, `<button type="button">%s</button> `, s)
	}
	b.WriteString(`</p></article><aside><h2>Related</h2><ul>`)
	for i := range 30 {
		fmt.Fprintf(&b, `<li><a href="/news/related/%d">%s</a></li>`, i, phrase(i+40, 6))
	}
	b.WriteString(`</ul></aside><footer>`)
	for c := range 5 {
		fmt.Fprintf(&b, `<div><h3>%s</h3>`, phrase(c+50, 1))
		for i := range 12 {
			fmt.Fprintf(&b, `<a href="/news/footer/%d/%d">%s</a>`, c, i, phrase(c*12+i+60, 2))
		}
		b.WriteString(`</div>`)
	}
	b.WriteString(`</footer>
<div id="cookies" role="dialog" aria-label="Cookie consent"><p>We use cookies to measure our audience and show you relevant ads. Read our <a href="/news/privacy">privacy policy</a>.</p>
<button type="button" onclick="cookies.remove()">Accept all</button> <button type="button" onclick="cookies.remove()">Reject all</button> <button type="button">Manage settings</button></div>
</body></html>`)
	return []byte(b.String())
}

// genPage is a table of rows, each with a link, a button, a checkbox and
// a text field: 4*rows interactive elements.
func genPage(rows int) []byte {
	var b strings.Builder
	b.Grow(rows * 300)
	fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Inventory (%d rows) · Bench</title>
<style>body{font:14px sans-serif;margin:16px}td{padding:2px 8px}</style></head><body><h1>Inventory</h1><table><thead><tr><th>Item</th><th>Action</th><th>Select</th><th>Note</th></tr></thead><tbody>`, rows)
	for i := range rows {
		fmt.Fprintf(&b, `<tr><td><a href="/gen/item/%d">Item %d %s</a></td><td><button type="button">Edit %d</button></td><td><input type="checkbox" aria-label="Select item %d"></td><td><input type="text" aria-label="Note for item %d"></td></tr>`,
			i, i, words[i%len(words)], i, i, i)
	}
	b.WriteString(`</tbody></table></body></html>`)
	return []byte(b.String())
}
