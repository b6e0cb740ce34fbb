package render_test

import (
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/render"
)

// headingsPara is long enough, with commas, for Readability to keep it.
const headingsPara = "<p>Tabpilot drives a real browser for agents, and this paragraph is long enough, with commas, and more commas, to be kept as content.</p>"

func TestExtractTitleHeadingAndLevels(t *testing.T) {
	// The markdown starts with the title as "# ": the article's own h1 (not
	// both it and the title), else the title; the page's h2 and h3 keep
	// their levels, and an h1 inside the content stays an h1.
	body := headingsPara + "<h2>Install</h2>" + headingsPara + "<h3>From source</h3>" + headingsPara + "<h2>Use</h2>" + headingsPara
	p := headingsPara
	cases := []struct {
		name, page, want string
	}{
		{"h1 repeating the title", // Readability drops it as a repeat of the title
			`<title>The Guide - Example Site</title><nav><a href="/">Home</a></nav><article><h1>The Guide</h1>` + body + `</article>`,
			"# The Guide\n\n" + p[3:20]},
		{"no h1",
			`<title>The Guide - Example Site</title><article>` + body + `</article>`,
			"# The Guide - Example Site\n\n" + p[3:20]},
		{"an h1 of its own", // Readability would make it an h2
			`<title>Example Site</title><article><h1>Release notes</h1>` + body + `</article>`,
			"# Release notes\n\n" + p[3:20]},
		{"the h1 after a date line",
			`<title>The Guide - Example Site</title><article><p>1 May 2026</p><h1>The Guide to it</h1>` + body + `</article>`,
			"# The Guide to it\n\n1 May 2026\n\n" + p[3:20]},
		{"a second h1 in the content",
			`<title>Notes</title><article><h1>Notes</h1>` + body + `<h1>Appendix</h1>` + headingsPara + `</article>`,
			"# Notes\n\n" + p[3:20]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex, err := render.Extract("<!doctype html><html><head>"+c.page+"</body></html>", "https://example.com/guide", "")
			if err != nil {
				t.Fatal(err)
			}
			md := ex.Content
			if !strings.HasPrefix(md, c.want) {
				t.Errorf("markdown does not start with %q:\n%s", c.want, md)
			}
			for _, h := range []string{"\n## Install\n", "\n### From source\n", "\n## Use\n"} {
				if !strings.Contains(md, h) {
					t.Errorf("markdown lacks %q:\n%s", h, md)
				}
			}
			titles := strings.Count("\n"+md, "\n# ")
			want := 1
			if c.name == "a second h1 in the content" {
				want = 2
				if !strings.Contains(md, "\n# Appendix\n") {
					t.Errorf("the content's second h1 is not an h1:\n%s", md)
				}
			}
			if titles != want {
				t.Errorf("%d level-1 headings, want %d:\n%s", titles, want, md)
			}
		})
	}
	// Text and html get no added title; html keeps the h1 an h1.
	page := `<!doctype html><html><head><title>Example Site</title></head><body><article><h1>Release notes</h1>` + body + `</article></body></html>`
	h, err := render.Extract(page, "", render.FormatHTML)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Content, "<h1>Release notes</h1>") || !strings.Contains(h.Content, "<h3>From source</h3>") || strings.Contains(h.Content, "data-tabpilot") {
		t.Errorf("html: %s", h.Content)
	}
	txt, err := render.Extract(`<!doctype html><html><head><title>The Guide</title></head><body><article>`+body+`</article></body></html>`, "", render.FormatText)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(txt.Content, "The Guide") {
		t.Errorf("text got a title added: %s", txt.Content)
	}
}
