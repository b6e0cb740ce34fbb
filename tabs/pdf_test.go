package tabs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/pdf"
)

// TestPDF prints a page to A4 landscape with margins and reads the file
// back with pdftotext: the page's sentence is in it, and the page count
// is the file's (pdfinfo).
func TestPDF(t *testing.T) {
	for _, tool := range []string{"pdftotext", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s (poppler-utils) is not installed", tool)
		}
	}
	tab := open(t, "/next")
	path := filepath.Join(t.TempDir(), "out", "page.pdf")
	var res *tabs.PDF
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		if _, err := tb.Evaluate(ctx, `document.body.insertAdjacentHTML('beforeend', '<p>The quick brown fox prints to paper.</p><p style="break-before: page">Second sheet here.</p>')`, nil); err != nil {
			return err
		}
		var err error
		res, err = tb.PDF(ctx, tabs.PDFOptions{Path: path, Options: pdf.Options{Format: "A4", Landscape: true, PrintBackground: true,
			Margins: pdf.Margins{Top: "1cm", Bottom: "1cm", Left: "0.5in", Right: "10mm"}}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || res.Path != path || int64(res.Bytes) != st.Size() || res.Pages != 2 {
		t.Fatalf("result %+v, file %v %v", res, st, err)
	}
	out, err := exec.Command("pdftotext", "-layout", path, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "The quick brown fox prints to paper.") || !strings.Contains(string(out), "Second sheet here.") {
		t.Errorf("pdftotext: %q", out)
	}
	info, err := exec.Command("pdfinfo", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	// A4 landscape: 842 x 595 points.
	if !strings.Contains(string(info), "Pages:           2") || !strings.Contains(string(info), "841.92 x 595.92 pts (A4)") {
		t.Errorf("pdfinfo: %s", info)
	}
	if !strings.HasPrefix(res.Summary(pdf.Options{Format: "A4", Landscape: true}), "Printed 2 pages (A4, landscape) to "+path) {
		t.Errorf("summary %q", res.Summary(pdf.Options{Format: "A4"}))
	}

	err = run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.PDF(ctx, tabs.PDFOptions{Options: pdf.Options{Format: "B7"}})
		return err
	})
	if errcode.Of(err) != errcode.BadRequest {
		t.Errorf("format B7: %v", err)
	}
}
