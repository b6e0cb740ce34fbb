package render_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/render"
	"github.com/tabpilot/tabpilot/render/readabilitysuite"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/extract")

const rulesURL = "https://example.com/docs/guide/intro.html?x=1"

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goldenResult is what a golden file holds: the extraction without Content
// as JSON, then the content.
func goldenResult(ex *render.Extraction) string {
	meta := *ex
	meta.Content = ""
	j, _ := json.MarshalIndent(meta, "", "  ")
	return string(j) + "\n---\n" + ex.Content + "\n"
}

// TestExtractGolden extracts every testdata/extract/*.html in every format and
// compares with testdata/extract/NAME.FORMAT.golden (-update rewrites them).
func TestExtractGolden(t *testing.T) {
	pages, err := filepath.Glob("testdata/extract/*.html")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no test pages: %v", err)
	}
	for _, page := range pages {
		src := readFile(t, page)
		for _, format := range []string{render.FormatMarkdown, render.FormatText, render.FormatHTML} {
			name := strings.TrimSuffix(filepath.Base(page), ".html") + "." + format
			t.Run(name, func(t *testing.T) {
				ex, err := render.Extract(src, rulesURL, format)
				if err != nil {
					t.Fatal(err)
				}
				got := goldenResult(ex)
				golden := filepath.Join("testdata/extract", name+".golden")
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				if want := readFile(t, golden); got != want {
					t.Errorf("%s differs from %s (run with -update after checking):\n--- got\n%s\n--- want\n%s", name, golden, got, want)
				}
			})
		}
	}
}

func TestExtractMarkdownRules(t *testing.T) {
	ex, err := render.Extract(readFile(t, "testdata/extract/rules.html"), rulesURL, "")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Format != render.FormatMarkdown || ex.Source != render.SourceReadability || ex.Empty {
		t.Errorf("format %q source %q empty %v, want markdown from readability", ex.Format, ex.Source, ex.Empty)
	}
	want := map[string]string{
		"Title": ex.Title, "Byline": ex.Byline, "Excerpt": ex.Excerpt, "SiteName": ex.SiteName, "Lang": ex.Lang, "Dir": ex.Dir,
	}
	for k, v := range map[string]string{
		"Title": "Building the widget | Example Docs", "Byline": "Ada Lovelace", "Excerpt": "How to build, test and ship the widget.",
		"SiteName": "Example Docs", "Lang": "en-GB", "Dir": "ltr",
	} {
		if want[k] != v {
			t.Errorf("%s = %q, want %q", k, want[k], v)
		}
	}
	md := ex.Content
	for _, s := range []string{
		"## Install\n",
		"### Sizes\n",
		"- Go 1.26 or later\n",
		"1. Fetch the sources.\n2. Build the binary.\n",
		"| File       | Size  |\n|------------|-------|\n| widget     | 12 MB |\n| widget.sig | 1 KB  |\n",
		"```sh\ngo build ./cmd/widget\ngo test ./...\n```",
		"`cgo`",
		"**ideas**",
		"[installation notes](https://example.com/docs/guide/install.html)",
		"[FAQ](https://example.com/docs/faq)",
		"[glossary](https://example.com/docs/guide/#glossary)",
		"[upstream project](https://other.example.org/x)",
		"![Diagram of the widget pipeline](https://example.com/docs/guide/img/diagram.png)",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
	if !strings.Contains(md, " has more, and the chat has answers.") {
		t.Errorf("markdown lacks the text of the javascript: link")
	}
	for _, s := range []string{"SECRET", "alert(", "color:", "document.write", "Copyright Example", "](/", "About", "avaScript:"} {
		if strings.Contains(md, s) {
			t.Errorf("markdown contains %q:\n%s", s, md)
		}
	}
}

func TestExtractFormats(t *testing.T) {
	src := readFile(t, "testdata/extract/rules.html")
	text, err := render.Extract(src, rulesURL, render.FormatText)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.Content, "Install\n\nYou need three things") || strings.ContainsAny(text.Content, "<>#*") {
		t.Errorf("text is not plain block text:\n%s", text.Content)
	}
	h, err := render.Extract(src, rulesURL, render.FormatHTML)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`<h2>Install</h2>`, `href="https://example.com/docs/faq"`, `<table>`} {
		if !strings.Contains(h.Content, s) {
			t.Errorf("html lacks %q", s)
		}
	}
	if strings.Contains(h.Content, "data-tabpilot") || strings.Contains(h.Content, "SECRET") {
		t.Errorf("html leaks internal marks or hidden text:\n%s", h.Content)
	}
	for _, f := range []string{"pdf", "Markdown", "md", " text"} {
		if _, err := render.Extract(src, rulesURL, f); !errors.Is(err, render.ErrBadFormat) {
			t.Errorf("format %q: error = %v, want ErrBadFormat", f, err)
		}
	}
}

func TestExtractFallbacks(t *testing.T) {
	ex, err := render.Extract(readFile(t, "testdata/extract/fallback-main.html"), "https://example.com/g/index.html", "")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Source != "main" || ex.Empty || ex.Title != "Gallery" || ex.Lang != "fr" || ex.Dir != "rtl" {
		t.Errorf("got source %q empty %v title %q lang %q dir %q, want main, false, Gallery, fr, rtl", ex.Source, ex.Empty, ex.Title, ex.Lang, ex.Dir)
	}
	if want := "# Gallery\n\n![A lighthouse at dusk](https://example.com/g/photos/one.jpg) ![The harbour](https://example.com/g/photos/two.jpg)"; ex.Content != want {
		t.Errorf("content = %q, want %q", ex.Content, want)
	}

	ex, err = render.Extract(readFile(t, "testdata/extract/fallback-role.html"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Source != "[role=main]" || ex.Content != "# Chart\n\n![Sales by month](chart.svg)" {
		t.Errorf("got source %q content %q, want [role=main] and the image with its relative URL (no page URL)", ex.Source, ex.Content)
	}

	for _, format := range []string{render.FormatMarkdown, render.FormatText, render.FormatHTML} {
		ex, err = render.Extract(readFile(t, "testdata/extract/empty.html"), "https://example.com/", format)
		if err != nil {
			t.Fatal(err)
		}
		if !ex.Empty || ex.Content != "" || ex.Source != "" || ex.Title != "Nothing here" {
			t.Errorf("%s: got empty %v content %q source %q title %q, want an empty extraction titled \"Nothing here\"", format, ex.Empty, ex.Content, ex.Source, ex.Title)
		}
	}

	ex, err = render.Extract("", "", "")
	if err != nil || !ex.Empty {
		t.Errorf("empty input: %+v, %v; want Empty", ex, err)
	}
}

// TestExtractRealPages checks a few of Readability's test pages: the title,
// the first heading after the title heading, and the first words of the
// markdown (the title heading: the page's h1, else the title).
func TestExtractRealPages(t *testing.T) {
	cases := []struct {
		page, title, byline, heading, start string
		dir                                 string
	}{
		{"mozilla-1", "Firefox — Customize and make it your own — The most flexible browser on the Web", "",
			"## Designed to be redesigned", "# Firefox — Customize and make it your own — The most flexible browser on the Web\n\nIt’s easier than ever to personalize Firefox", "ltr"},
		{"rtl-1", "RTL Test", "", "", "# Lorem\n\nLorem ipsum dolor sit amet.", "rtl"}, // its h1, not the title
		{"nytimes-1", "United States to Lift Sudan Sanctions", "Jeffrey Gettleman", "",
			"# United States to Lift Sudan Sanctions\n\nPhoto\n\n![](https://static01.nyt.com/images/2017/01/14/world/13SUDAN-1/13SUDAN-1-master768.jpg)", ""},
		// Medium's sections are h1s, its subsections h2s: they stay so.
		{"lazy-image-1", "Node.js and CPU profiling on production (in real-time without downtime)", "Vincent Vallet",
			"# Why CPU monitoring is important?", "# Node.js and CPU profiling on production (in real-time without downtime)\n\n[![Vincent Vallet](https://miro.medium.com/", ""},
		{"wikipedia", "Mozilla - Wikipedia", "", "## Contents", "# Mozilla\n\nMozilla", "ltr"}, // its h1, not "Mozilla - Wikipedia"
	}
	for _, c := range cases {
		t.Run(c.page, func(t *testing.T) {
			src := readFile(t, filepath.Join(*suiteDir, c.page, "source.html"))
			ex, err := render.Extract(src, readabilitysuite.PageURL, render.FormatMarkdown)
			if err != nil {
				t.Fatal(err)
			}
			if ex.Title != c.title || ex.Byline != c.byline || ex.Dir != c.dir || ex.Source != render.SourceReadability {
				t.Errorf("title %q byline %q dir %q source %q; want %q %q %q readability", ex.Title, ex.Byline, ex.Dir, ex.Source, c.title, c.byline, c.dir)
			}
			if !strings.HasPrefix(ex.Content, c.start) {
				t.Errorf("content starts %q, want %q", head(ex.Content, 200), c.start)
			}
			if c.heading != "" {
				if got := firstHeading(ex.Content); got != c.heading {
					t.Errorf("first heading %q, want %q", got, c.heading)
				}
			}
		})
	}
}

// firstHeading is the first heading line after the first line.
func firstHeading(md string) string {
	for _, line := range strings.Split(md, "\n")[1:] {
		if strings.HasPrefix(line, "#") {
			return line
		}
	}
	return ""
}

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// TestExtractLeavesOutClosedDialogs: a closed <dialog> is not rendered, so
// its text is not the page's; an open one is.
func TestExtractLeavesOutClosedDialogs(t *testing.T) {
	page := `<!doctype html><html><head><title>Inbox</title></head><body><article><h1>Inbox</h1>
<p>Lunch tomorrow at noon? The usual place, unless it rains, in which case we meet at the office.</p>
<dialog><form><h2>New message</h2><label>To <input></label></form></dialog>
<dialog open><p>Saved as a draft.</p></dialog></article></body></html>`
	for _, format := range []string{"markdown", "text"} {
		x, err := render.Extract(page, "http://127.0.0.1/inbox", format)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(x.Content, "New message") || !strings.Contains(x.Content, "Lunch tomorrow") || !strings.Contains(x.Content, "Saved as a draft") {
			t.Errorf("%s:\n%s", format, x.Content)
		}
	}
}
