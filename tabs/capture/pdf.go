package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/cdproto"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
	"github.com/tabpilot/tabpilot/tabs/pdf"
)

// PDFOptions are the options of tab.pdf: the print's (package tabs/pdf)
// and where the file goes.
type PDFOptions struct {
	pdf.Options
	// Path is the file written. Empty: a new file in the screenshot
	// directory, else the temp directory. A relative path is the process's
	// working directory's: a client resolves it against its own first.
	Path string `json:"path,omitempty"`
}

// PDF is a page printed to a file.
type PDF struct {
	// Path is the absolute path of the file written.
	Path string `json:"path"`
	// Pages is the number of pages, counted in the file (0 if unknown).
	Pages int `json:"pages"`
	// Bytes is the file's size.
	Bytes int `json:"bytes"`
}

// Summary is the line of text of a result: "Printed 2 pages (A4) to
// /tmp/x.pdf, 31 KB".
func (p *PDF) Summary(o pdf.Options) string {
	paper := o.Format
	if paper == "" {
		paper = "Letter"
	}
	if o.Width != 0 {
		paper = fmt.Sprintf("%gx%g in", o.Width, o.Height)
	}
	if o.Landscape {
		paper += ", landscape"
	}
	pages := "the page"
	switch {
	case p.Pages == 1:
		pages = "1 page"
	case p.Pages > 1:
		pages = fmt.Sprintf("%d pages", p.Pages)
	}
	return fmt.Sprintf("Printed %s (%s) to %s, %d bytes", pages, paper, p.Path, p.Bytes)
}

// PDF prints the page to a PDF file (pdf.Print: Page.printToPDF, as the
// page lays out for print media) and writes it to o.Path (pdf.WriteFile:
// directories created, written whole or not at all). Errors: bad_request
// for invalid options or page ranges past the end, and for a headed
// browser, which cannot print to PDF; not_actionable while a JavaScript
// dialog is open; timeout.
func (t *Capturer) PDF(ctx context.Context, o PDFOptions) (*PDF, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	path, err := t.pdfPath(o.Path)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		data, err = pdf.Print(ctx, t.Target(), o.Options)
		return err
	})
	if err != nil {
		var pe *cdproto.Error
		if errors.As(err, &pe) && strings.Contains(strings.ToLower(pe.Message), "not implemented") {
			return nil, &pagecore.Error{Code: errcode.BadRequest, Msg: "pdf: this browser cannot print to PDF: " + pe.Message, Err: err,
				Hint: "Chromium prints to PDF only when headless: open the tab in the headless browser (no --app-path, --cdp-url)."}
		}
		if errcode.Of(err).Valid() {
			return nil, err
		}
		return nil, pagecore.EvalErr(err)
	}
	if err := pdf.WriteFile(path, data); err != nil {
		return nil, &pagecore.Error{Code: errcode.BadRequest, Msg: err.Error(), Err: err, Hint: "Give a path in a directory tabpilot can write."}
	}
	return &PDF{Path: path, Pages: countPages(data), Bytes: len(data)}, nil
}

// pdfPath returns the absolute path to write a PDF to.
func (t *Capturer) pdfPath(p string) (string, error) {
	if p == "" {
		dir := t.dir
		if dir == "" {
			dir = os.TempDir()
		}
		p = filepath.Join(dir, fmt.Sprintf("tabpilot-%s-%s.pdf", t.Name(), time.Now().Format("20060102-150405.000000")))
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", pagecore.Errorf(errcode.BadRequest, "pdf path %q: %v", p, err)
	}
	return abs, nil
}

// pageRE matches a page object's type, not the page tree's (/Pages).
var pageRE = regexp.MustCompile(`/Type\s*/Page\b`)

// countPages counts the page objects of a PDF as Chromium (Skia) writes
// it: uncompressed object dictionaries. 0 when there are none to see.
func countPages(data []byte) int {
	if !bytes.Contains(data, []byte("/Type")) {
		return 0
	}
	return len(pageRE.FindAllIndex(data, -1))
}
