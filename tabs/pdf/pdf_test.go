package pdf_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs/pdf"
)

var (
	server  *httptest.Server
	browser context.Context // the package's one headless browser
)

const sentence = "The quick brown fox prints itself to a portable document."

func TestMain(m *testing.M) {
	mux := http.NewServeMux()
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Short</title><body style="background:#fc0"><p>%s</p></body>`, sentence)
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><title>Long</title><body>`)
		for i := 1; i <= 120; i++ {
			fmt.Fprintf(&b, "<p>Paragraph %d of a long page.</p>", i)
		}
		_, _ = w.Write([]byte(b.String()))
	})
	server = httptest.NewServer(mux) // listens on 127.0.0.1
	opts := append([]chromedp.ExecAllocatorOption(nil), chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts, chromedp.NoSandbox, chromedp.DisableGPU)
	for _, f := range testenv.BrowserArgs {
		name, val, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, val))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	code := 1
	if err := chromedp.Do(bctx); err != nil {
		fmt.Fprintln(os.Stderr, "starting the browser:", err)
	} else {
		browser = bctx
		code = m.Run()
	}
	bcancel()
	acancel()
	server.Close()
	if code == 0 {
		if left := testenv.ChromiumChildren(os.Getpid()); len(left) > 0 {
			fmt.Fprintln(os.Stderr, "Chromium processes left:", left)
			code = 1
		}
	}
	os.Exit(code)
}

// load opens a fresh tab on the path and returns its context (bounded by
// a minute) and page session; the tab closes with the test.
func load(t *testing.T, path string) (context.Context, cdp.Session) {
	t.Helper()
	tctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	ctx, c2 := context.WithTimeout(tctx, time.Minute)
	t.Cleanup(c2)
	if err := chromedp.Do(ctx, chromedp.Navigate(server.URL+path)); err != nil {
		t.Fatal(err)
	}
	return ctx, chromedp.FromContext(tctx).Target
}

// poppler returns the path of a poppler-utils program (pdftotext,
// pdfinfo). Without it the test is skipped, or fails under CI, whose
// .ci/run installs poppler-utils.
func poppler(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: .ci/run installs Debian's poppler-utils", name)
		}
		t.Skipf("%s is missing: apt-get install -y poppler-utils to read PDFs back", name)
	}
	return p
}

// printFile prints the page of s with o, writes it with WriteFile under
// the test's directory, and returns the file's path.
func printFile(t *testing.T, ctx context.Context, s cdp.Session, o pdf.Options) string {
	t.Helper()
	data, err := pdf.Print(ctx, s, o)
	if err != nil {
		t.Fatalf("Print(%+v): %v", o, err)
	}
	path := filepath.Join(t.TempDir(), "out", "page.pdf")
	if err := pdf.WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 || st.Size() != int64(len(data)) {
		t.Fatalf("the file: %v, %v", st, err)
	}
	return path
}

// text returns the text of a PDF (pdftotext -layout).
func text(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(poppler(t, "pdftotext"), "-layout", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", path, err)
	}
	return string(out)
}

// info returns the page count and the first page's size in points
// (pdfinfo).
func info(t *testing.T, path string) (pages int, w, h float64) {
	t.Helper()
	out, err := exec.Command(poppler(t, "pdfinfo"), path).Output()
	if err != nil {
		t.Fatalf("pdfinfo %s: %v", path, err)
	}
	if m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)`).FindSubmatch(out); m != nil {
		pages, _ = strconv.Atoi(string(m[1]))
	}
	if m := regexp.MustCompile(`(?m)^Page size:\s+([\d.]+) x ([\d.]+) pts`).FindSubmatch(out); m != nil {
		w, _ = strconv.ParseFloat(string(m[1]), 64)
		h, _ = strconv.ParseFloat(string(m[2]), 64)
	}
	return pages, w, h
}

// TestPrintText prints a page on A4 and on Letter and reads its sentence
// and its paper size back from the files.
func TestPrintText(t *testing.T) {
	t.Parallel()
	ctx, s := load(t, "/short")
	for _, c := range []struct {
		format string
		w, h   float64 // points
	}{{"a4", 595.28, 841.89}, {"Letter", 612, 792}, {"", 612, 792}} {
		path := printFile(t, ctx, s, pdf.Options{Format: c.format, PrintBackground: true, Margins: pdf.Margins{Top: "1cm", Right: "0.5in", Bottom: "10mm", Left: "48px"}})
		if got := strings.Join(strings.Fields(text(t, path)), " "); !strings.Contains(got, sentence) {
			t.Errorf("%s: the PDF's text is %q, want it to contain %q", c.format, got, sentence)
		}
		pages, w, h := info(t, path)
		// Chromium rounds the paper to its layout units: A4 prints 595.92x841.92.
		if pages != 1 || w < c.w-1 || w > c.w+1 || h < c.h-1 || h > c.h+1 {
			t.Errorf("%s: %d pages of %gx%g pt, want 1 of %gx%g", c.format, pages, w, h, c.w, c.h)
		}
	}
}

// TestLandscape prints a long page portrait and landscape: landscape
// paper is wider than high and takes more pages for the same text.
func TestLandscape(t *testing.T) {
	t.Parallel()
	ctx, s := load(t, "/long")
	pp, pw, ph := info(t, printFile(t, ctx, s, pdf.Options{Format: "A4"}))
	lp, lw, lh := info(t, printFile(t, ctx, s, pdf.Options{Format: "A4", Landscape: true}))
	if pw >= ph || lw <= lh || lw < ph-1 || lw > ph+1 {
		t.Errorf("portrait %gx%g pt, landscape %gx%g pt", pw, ph, lw, lh)
	}
	if pp < 2 || lp <= pp {
		t.Errorf("portrait %d pages, landscape %d: want more pages in landscape", pp, lp)
	}
	// Page ranges print only those pages.
	rp, _, _ := info(t, printFile(t, ctx, s, pdf.Options{Format: "A4", PageRanges: "1-2"}))
	if rp != 2 {
		t.Errorf("page ranges 1-2 printed %d pages", rp)
	}
	// A custom size in inches.
	_, cw, ch := info(t, printFile(t, ctx, s, pdf.Options{Width: 4, Height: 6}))
	if cw != 288 || ch != 432 {
		t.Errorf("a 4x6 in paper is %gx%g pt", cw, ch)
	}
}

// TestFooter prints a footer with page numbers on each page.
func TestFooter(t *testing.T) {
	t.Parallel()
	ctx, s := load(t, "/long")
	path := printFile(t, ctx, s, pdf.Options{Format: "A5", Margins: pdf.Margins{Bottom: "2cm"},
		FooterTemplate: `<div style="font-size:10px;width:100%;text-align:center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>`})
	pages, _, _ := info(t, path)
	got := text(t, path)
	for i := 1; i <= pages; i++ {
		if want := fmt.Sprintf("Page %d of %d", i, pages); !strings.Contains(got, want) {
			t.Errorf("no %q in the text of a %d page PDF", want, pages)
		}
	}
}

// TestPageRangesRefused checks that ranges past the end of the document
// are a bad request.
func TestPageRangesRefused(t *testing.T) {
	t.Parallel()
	ctx, s := load(t, "/short")
	_, err := pdf.Print(ctx, s, pdf.Options{PageRanges: "5-9"})
	if errcode.Of(err) != errcode.BadRequest {
		t.Fatalf("Print(5-9 of 1 page) = %v (%s), want bad_request", err, errcode.Of(err))
	}
	t.Log(err)
}

// TestValidate checks that each option out of range is a bad request
// that names it.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    pdf.Options
		want string
	}{
		{pdf.Options{Format: "B5"}, `unknown paper format "B5"`},
		{pdf.Options{Width: 5}, "both the paper width and height"},
		{pdf.Options{Width: 0.5, Height: 3}, "1 to 200 inches"},
		{pdf.Options{Scale: 3}, "scale 3"},
		{pdf.Options{PageRanges: "1-3; 5"}, `page ranges "1-3; 5"`},
		{pdf.Options{Margins: pdf.Margins{Top: "1furlong"}}, `margin top: length "1furlong": unknown unit`},
		{pdf.Options{Margins: pdf.Margins{Left: "-1cm"}}, `margin left: length "-1cm"`},
		{pdf.Options{Margins: pdf.Margins{Left: "4in", Right: "4.5in"}}, "leave no room on 8.50 in wide paper"},
		{pdf.Options{Landscape: true, Margins: pdf.Margins{Top: "4in", Bottom: "4.5in"}}, "leave no room on 8.50 in high paper"},
	} {
		err := c.o.Validate()
		if errcode.Of(err) != errcode.BadRequest || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want bad_request with %q", c.o, err, c.want)
		}
	}
	for _, o := range []pdf.Options{{}, {Format: "TABLOID", Landscape: true, Scale: 0.5, PageRanges: "1-5, 8, 11-13, 20-"}, {Margins: pdf.Margins{Top: "0", Bottom: "1.5"}}} {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", o, err)
		}
	}
	if err := pdf.WriteFile(filepath.Join(t.TempDir(), "x.pdf"), []byte("<html>")); err == nil {
		t.Error("WriteFile wrote HTML as a PDF")
	}
}
