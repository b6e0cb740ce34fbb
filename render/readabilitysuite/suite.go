// Package readabilitysuite scores an extractor against the test pages of
// Mozilla's Readability (shared/pages/readability/<name>/{source.html,
// expected.html, expected-metadata.json}), for the tests and benchmarks of
// render.Extract, on static HTML or on a page rendered by a browser.
//
// A page scores title, byline and excerpt as exact matches after folding
// whitespace (a null expected value counts as ""), and the word-level F1 of
// the extracted text against the text of expected.html, where words are the
// lower-cased runs of letters and digits counted as a multiset, and both texts
// come from go-readability's own innerText rendering.
package readabilitysuite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	rtext "codeberg.org/readeck/go-readability/v2/render"
	"github.com/tabpilot/tabpilot/render"
	"golang.org/x/net/html"
)

// PageURL is the URL the pages were captured under in Readability's suite;
// pass it to render.Extract for static HTML.
const PageURL = "http://fakehost/test/page.html"

// Metadata is expected-metadata.json; JSON null reads as "".
type Metadata struct {
	Title      string `json:"title"`
	Byline     string `json:"byline"`
	Dir        string `json:"dir"`
	Lang       string `json:"lang"`
	Excerpt    string `json:"excerpt"`
	SiteName   string `json:"siteName"`
	Readerable bool   `json:"readerable"`
}

// Page is one test page.
type Page struct {
	Name         string
	Dir          string // absolute folder of the page
	Source       []byte // source.html, the page as served
	Expected     Metadata
	ExpectedText string // the text of expected.html
}

// Load reads every page folder under dir (one with a source.html), sorted by
// name.
func Load(dir string) ([]Page, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("readability suite: %w", err)
	}
	var pages []Page
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		pd, err := filepath.Abs(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("readability suite: %w", err)
		}
		src, err := os.ReadFile(filepath.Join(pd, "source.html"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("readability suite: %w", err)
		}
		p := Page{Name: e.Name(), Dir: pd, Source: src}
		meta, err := os.ReadFile(filepath.Join(pd, "expected-metadata.json"))
		if err != nil {
			return nil, fmt.Errorf("readability suite: %w", err)
		}
		if err := json.Unmarshal(meta, &p.Expected); err != nil {
			return nil, fmt.Errorf("readability suite: %s: %w", e.Name(), err)
		}
		exp, err := os.ReadFile(filepath.Join(pd, "expected.html"))
		if err != nil {
			return nil, fmt.Errorf("readability suite: %w", err)
		}
		if p.ExpectedText, err = HTMLText(exp); err != nil {
			return nil, fmt.Errorf("readability suite: %s: %w", e.Name(), err)
		}
		pages = append(pages, p)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].Name < pages[j].Name })
	return pages, nil
}

// HTMLText is the text of an HTML document or fragment, rendered the way
// render.Extract renders the text format (go-readability's innerText).
func HTMLText(src []byte) (string, error) {
	doc, err := html.Parse(bytes.NewReader(src))
	if err != nil {
		return "", fmt.Errorf("parse html: %w", err)
	}
	return rtext.InnerText(doc), nil
}

// Words counts the words of s: lower-cased maximal runs of Unicode letters
// and digits.
func Words(s string) map[string]int {
	m := make(map[string]int)
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			m[strings.ToLower(s[start:i])]++
			start = -1
		}
	}
	if start >= 0 {
		m[strings.ToLower(s[start:])]++
	}
	return m
}

// WordF1 is the F1 of the words of got against the words of want, as
// multisets: 2PR/(P+R) with P = common/|got| and R = common/|want|. Two texts
// without words score 1; one empty side scores 0.
func WordF1(got, want string) float64 {
	g, w := Words(got), Words(want)
	var ng, nw, common int
	for k, c := range g {
		ng += c
		common += min(c, w[k])
	}
	for _, c := range w {
		nw += c
	}
	if ng == 0 && nw == 0 {
		return 1
	}
	if ng == 0 || nw == 0 || common == 0 {
		return 0
	}
	p := float64(common) / float64(ng)
	r := float64(common) / float64(nw)
	return 2 * p * r / (p + r)
}

// Fold folds runs of whitespace to one space and trims the ends.
func Fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// Result is the score of one page.
type Result struct {
	Page                         string
	Title, Byline, Excerpt       bool    // exact match after Fold: the scored fields
	SiteName, Lang, Dir          bool    // exact match after Fold: reported, not scored by the issue
	F1                           float64 // WordF1 of the text against the expected text
	Got                          Metadata
	Source                       string // render.Extraction.Source
	Empty                        bool
	GotWords, WantWords, Matched int
}

// Score scores an extraction made with render.FormatText against p.
func Score(p Page, ex *render.Extraction) Result {
	r := Result{Page: p.Name}
	if ex == nil {
		return r
	}
	r.Got = Metadata{Title: ex.Title, Byline: ex.Byline, Excerpt: ex.Excerpt, SiteName: ex.SiteName, Lang: ex.Lang, Dir: ex.Dir}
	r.Source, r.Empty = ex.Source, ex.Empty
	r.Title = Fold(ex.Title) == Fold(p.Expected.Title)
	r.Byline = Fold(ex.Byline) == Fold(p.Expected.Byline)
	r.Excerpt = Fold(ex.Excerpt) == Fold(p.Expected.Excerpt)
	r.SiteName = Fold(ex.SiteName) == Fold(p.Expected.SiteName)
	r.Lang = Fold(ex.Lang) == Fold(p.Expected.Lang)
	r.Dir = Fold(ex.Dir) == Fold(p.Expected.Dir)
	r.F1 = WordF1(ex.Content, p.ExpectedText)
	g, w := Words(ex.Content), Words(p.ExpectedText)
	for k, c := range g {
		r.GotWords += c
		r.Matched += min(c, w[k])
	}
	for _, c := range w {
		r.WantWords += c
	}
	return r
}

// Summary is the score of a run over many pages.
type Summary struct {
	Pages                                 int
	TitleShare, BylineShare, ExcerptShare float64 // fraction of pages, 0..1
	SiteNameShare, LangShare, DirShare    float64 // fraction of pages, 0..1
	MeanF1, MinF1                         float64
}

// Summarize averages results.
func Summarize(rs []Result) Summary {
	s := Summary{Pages: len(rs), MinF1: 1}
	if len(rs) == 0 {
		return Summary{}
	}
	var t, b, e, sn, l, d int
	for _, r := range rs {
		if r.SiteName {
			sn++
		}
		if r.Lang {
			l++
		}
		if r.Dir {
			d++
		}
		if r.Title {
			t++
		}
		if r.Byline {
			b++
		}
		if r.Excerpt {
			e++
		}
		s.MeanF1 += r.F1
		s.MinF1 = min(s.MinF1, r.F1)
	}
	n := float64(len(rs))
	s.TitleShare, s.BylineShare, s.ExcerptShare = float64(t)/n, float64(b)/n, float64(e)/n
	s.SiteNameShare, s.LangShare, s.DirShare = float64(sn)/n, float64(l)/n, float64(d)/n
	s.MeanF1 /= n
	return s
}

// WriteTable writes a markdown table of summaries, one row per label, e.g.
// "static HTML" and "live page".
func WriteTable(w io.Writer, labels []string, sums []Summary) error {
	var b strings.Builder
	b.WriteString("| run | pages | title | byline | excerpt | mean F1 | min F1 | site name | lang | dir |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for i, s := range sums {
		fmt.Fprintf(&b, "| %s | %d | %.1f%% | %.1f%% | %.1f%% | %.4f | %.3f | %.1f%% | %.1f%% | %.1f%% |\n", labels[i], s.Pages,
			100*s.TitleShare, 100*s.BylineShare, 100*s.ExcerptShare, s.MeanF1, s.MinF1,
			100*s.SiteNameShare, 100*s.LangShare, 100*s.DirShare)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteShortfalls writes a markdown list of the pages of rs that miss a
// metadata field or score below minF1, with what was expected and got.
func WriteShortfalls(w io.Writer, pages []Page, rs []Result, minF1 float64) error {
	byName := make(map[string]Page, len(pages))
	for _, p := range pages {
		byName[p.Name] = p
	}
	var b strings.Builder
	for _, r := range rs {
		p := byName[r.Page]
		var why []string
		if !r.Title {
			why = append(why, fmt.Sprintf("title %q, want %q", r.Got.Title, p.Expected.Title))
		}
		if !r.Byline {
			why = append(why, fmt.Sprintf("byline %q, want %q", r.Got.Byline, p.Expected.Byline))
		}
		if !r.Excerpt {
			g, w := diffAt(Fold(r.Got.Excerpt), Fold(p.Expected.Excerpt), 40)
			why = append(why, fmt.Sprintf("excerpt %q, want %q", g, w))
		}
		if r.F1 < minF1 {
			why = append(why, fmt.Sprintf("F1 %.3f (%d words, %d expected, %d matched, source %s)",
				r.F1, r.GotWords, r.WantWords, r.Matched, r.Source))
		}
		if len(why) > 0 {
			fmt.Fprintf(&b, "- `%s`: %s\n", r.Page, strings.Join(why, "; "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// diffAt returns a and b cut to about n runes around their first difference.
func diffAt(a, b string, n int) (string, string) {
	ra, rb := []rune(a), []rune(b)
	i := 0
	for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
		i++
	}
	cut := func(r []rune) string {
		from, to := max(0, i-n/2), min(len(r), i+n/2)
		s := string(r[from:to])
		if from > 0 {
			s = "…" + s
		}
		if to < len(r) {
			s += "…"
		}
		return s
	}
	return cut(ra), cut(rb)
}
