// Package pdf owns printing a page to PDF: the paper formats, the parsing
// of margins with units, the validation of a print request, the
// Page.printToPDF call with its stream, and writing the file.
//
// It is a leaf below package tabs: it imports errcode and cdproto only,
// never chromedp nor a package of tabs, and holds no state. It must not
// resolve paths against a caller's working directory, wait for a page to
// settle, or pick the tab: the caller does that and hands it a page
// session.
package pdf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/page"

	"github.com/tabpilot/tabpilot/errcode"
)

// Options are the options of a print. The zero value prints Letter,
// portrait, without backgrounds, with Chromium's 1 cm margins.
type Options struct {
	// Format is a paper size: Letter, Legal, Tabloid, A3, A4 or A5
	// (case-insensitive). Default Letter.
	Format string `json:"format,omitempty"`
	// Width and Height are the paper size in inches, both or neither;
	// they win over Format.
	Width  float64 `json:"width,omitempty"`
	Height float64 `json:"height,omitempty"`
	// Landscape swaps the paper's width and height.
	Landscape bool `json:"landscape,omitempty"`
	// PrintBackground prints background colours and images.
	PrintBackground bool `json:"printBackground,omitempty"`
	// Margins are the page margins (see ParseLength). An empty one is
	// Chromium's default, 1 cm.
	Margins Margins `json:"margins,omitzero"`
	// Scale scales the rendering, 0.1 to 2. 0 means 1.
	Scale float64 `json:"scale,omitempty"`
	// PageRanges are the one-based pages to print, "1-5, 8, 11-13".
	// Empty: all.
	PageRanges string `json:"pageRanges,omitempty"`
	// HeaderTemplate and FooterTemplate are HTML printed at the top and
	// bottom of each page; either turns the header and footer on. The
	// classes date, title, url, pageNumber and totalPages get the print's
	// values (<span class="pageNumber"></span>). Leave room for them with
	// the margins.
	HeaderTemplate string `json:"headerTemplate,omitempty"`
	FooterTemplate string `json:"footerTemplate,omitempty"`
	// PreferCSSPageSize uses the page's CSS @page size over the paper's.
	PreferCSSPageSize bool `json:"preferCSSPageSize,omitempty"`
}

// Margins are page margins as lengths with units (ParseLength).
type Margins struct {
	Top    string `json:"top,omitempty"`
	Right  string `json:"right,omitempty"`
	Bottom string `json:"bottom,omitempty"`
	Left   string `json:"left,omitempty"`
}

// paper are the formats' sizes in inches, portrait (ISO sizes from their
// millimetres).
var paper = map[string][2]float64{
	"letter":  {8.5, 11},
	"legal":   {8.5, 14},
	"tabloid": {11, 17},
	"a3":      {297 / 25.4, 420 / 25.4},
	"a4":      {210 / 25.4, 297 / 25.4},
	"a5":      {148 / 25.4, 210 / 25.4},
}

// Formats returns the paper formats' names.
func Formats() []string { return []string{"Letter", "Legal", "Tabloid", "A3", "A4", "A5"} }

// PaperSize returns the paper size of a format in inches, portrait, and
// whether it is one of Formats (case-insensitive).
func PaperSize(format string) (width, height float64, ok bool) {
	s, ok := paper[strings.ToLower(strings.TrimSpace(format))]
	return s[0], s[1], ok
}

// units are inches per unit of a length.
var units = map[string]float64{"in": 1, "cm": 1 / 2.54, "mm": 1 / 25.4, "px": 1.0 / 96, "pt": 1.0 / 72}

var lengthRE = regexp.MustCompile(`^([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)$`)

// ParseLength returns a length in inches. It takes a number and a unit,
// "in", "cm", "mm", "px" (CSS pixels, 96 per inch) or "pt" (72 per inch),
// as in "1cm", "0.5in", "10 mm" or "20px"; a plain number is inches. It
// fails on a negative or malformed length, or another unit.
func ParseLength(s string) (float64, error) {
	m := lengthRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("length %q is not a number with a unit (in, cm, mm, px, pt)", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("length %q: %w", s, err)
	}
	u := strings.ToLower(m[2])
	if u == "" {
		u = "in"
	}
	per, ok := units[u]
	if !ok {
		return 0, fmt.Errorf("length %q: unknown unit %q (in, cm, mm, px, pt)", s, m[2])
	}
	return v * per, nil
}

// pageRangesRE is the shape of Chromium's page ranges: "3", "1-5", "4-"
// and "-2", separated by commas.
var pageRangesRE = regexp.MustCompile(`^\s*(\d+|\d+\s*-\s*\d*|-\s*\d+)(\s*,\s*(\d+|\d+\s*-\s*\d*|-\s*\d+))*\s*$`)

// params validates o and returns the Page.printToPDF parameters.
func (o Options) params() (page.PrintToPDFParams, error) {
	var p page.PrintToPDFParams
	w, h := 8.5, 11.0
	if o.Format != "" {
		var ok bool
		if w, h, ok = PaperSize(o.Format); !ok {
			return p, badRequest("Use one of "+strings.Join(Formats(), ", ")+", or width and height in inches.", "unknown paper format %q", o.Format)
		}
	}
	if (o.Width != 0) != (o.Height != 0) {
		return p, badRequest("", "give both the paper width and height (inches), or neither")
	}
	if o.Width != 0 {
		if bad(o.Width, 1, 200) || bad(o.Height, 1, 200) {
			return p, badRequest("", "paper %gx%g in: width and height are 1 to 200 inches", o.Width, o.Height)
		}
		w, h = o.Width, o.Height
	}
	p.PaperWidth, p.PaperHeight = w, h
	if o.Scale != 0 {
		if bad(o.Scale, 0.1, 2) {
			return p, badRequest("", "scale %g: 0.1 to 2", o.Scale)
		}
		p.Scale = o.Scale
	}
	if o.PageRanges != "" && !pageRangesRE.MatchString(o.PageRanges) {
		return p, badRequest("Give one-based pages and ranges, e.g. 1-5, 8, 11-13.", "page ranges %q", o.PageRanges)
	}
	p.PageRanges = strings.TrimSpace(o.PageRanges)
	for _, m := range []struct {
		name string
		v    string
		dst  **float64
	}{{"top", o.Margins.Top, &p.MarginTop}, {"right", o.Margins.Right, &p.MarginRight}, {"bottom", o.Margins.Bottom, &p.MarginBottom}, {"left", o.Margins.Left, &p.MarginLeft}} {
		if strings.TrimSpace(m.v) == "" {
			continue
		}
		in, err := ParseLength(m.v)
		if err != nil {
			return p, badRequest("", "margin %s: %v", m.name, err)
		}
		*m.dst = new(in)
	}
	if o.Landscape {
		w, h = h, w
	}
	if l, r := val(p.MarginLeft), val(p.MarginRight); l+r >= w {
		return p, badRequest("", "the left and right margins (%.2f in) leave no room on %.2f in wide paper", l+r, w)
	}
	if t, b := val(p.MarginTop), val(p.MarginBottom); t+b >= h {
		return p, badRequest("", "the top and bottom margins (%.2f in) leave no room on %.2f in high paper", t+b, h)
	}
	if o.Landscape {
		p.Landscape = new(true)
	}
	if o.PrintBackground {
		p.PrintBackground = new(true)
	}
	if o.PreferCSSPageSize {
		p.PreferCSSPageSize = new(true)
	}
	if o.HeaderTemplate != "" || o.FooterTemplate != "" {
		p.DisplayHeaderFooter = new(true)
		// An empty template prints Chromium's default (the date and title,
		// or the URL and page numbers); a blank span prints nothing.
		p.HeaderTemplate, p.FooterTemplate = o.HeaderTemplate, o.FooterTemplate
		if p.HeaderTemplate == "" {
			p.HeaderTemplate = "<span></span>"
		}
		if p.FooterTemplate == "" {
			p.FooterTemplate = "<span></span>"
		}
	}
	p.TransferMode = page.PrintToPDFTransferModeReturnAsStream
	return p, nil
}

// Validate checks o and returns an *Error with errcode.BadRequest that
// names the first field out of range, or nil.
func (o Options) Validate() error {
	_, err := o.params()
	return err
}

func bad(v, lo, hi float64) bool { return math.IsNaN(v) || v < lo || v > hi }

// val returns *p, or Chromium's default margin (1 cm) for nil.
func val(p *float64) float64 {
	if p == nil {
		return 1 / 2.54
	}
	return *p
}

// chunk is the most bytes one IO.read asks for.
const chunk = 1 << 20

// Print prints the page of session s to a PDF and returns its bytes: the
// document as Chromium lays it out for print media (Page.printToPDF with
// transferMode ReturnAsStream), read in chunks of up to 1 MiB with IO.read
// until its end, then IO.close. Errors: an *Error with errcode.BadRequest
// for invalid options, or page ranges past the document's end; the wrapped
// error of the failed call otherwise (the stream is closed on a failed
// read).
func Print(ctx context.Context, s cdp.Session, o Options) ([]byte, error) {
	p, err := o.params()
	if err != nil {
		return nil, err
	}
	res, err := cdp.Call(ctx, s, page.PrintToPDF, p)
	if err != nil {
		var pe *cdproto.Error
		if errors.As(err, &pe) && p.PageRanges != "" && strings.Contains(strings.ToLower(pe.Message), "range") {
			return nil, &Error{Code: errcode.BadRequest, Msg: "pdf: page ranges " + strconv.Quote(p.PageRanges) + ": " + pe.Message, Err: err,
				Hint: "The ranges are one-based and within the document's pages."}
		}
		return nil, fmt.Errorf("pdf: %s: %w", page.CommandPrintToPDF, err)
	}
	if res.Stream == "" {
		return res.Data, nil // a browser that ignored the transfer mode
	}
	var out []byte
	for {
		r, err := cdp.Call(ctx, s, io.Read, io.ReadParams{Handle: res.Stream, Size: chunk})
		if err != nil {
			_, _ = cdp.Call(context.WithoutCancel(ctx), s, io.Close, io.CloseParams{Handle: res.Stream})
			return nil, fmt.Errorf("pdf: %s: %w", io.CommandRead, err)
		}
		out = append(out, r.Data...)
		if r.EOF {
			break
		}
	}
	if _, err := cdp.Call(ctx, s, io.Close, io.CloseParams{Handle: res.Stream}); err != nil {
		return nil, fmt.Errorf("pdf: %s: %w", io.CommandClose, err)
	}
	return out, nil
}

// WriteFile writes a PDF to path, as tabs saves screenshots: missing
// directories are created (0755) and the file is written 0644 (it is the
// user's output), through a temporary file in the same directory renamed
// over path, so that no reader sees half a PDF. A relative path is the
// process's: the caller resolves it against its client's working
// directory first. It fails on data that does not start with "%PDF-".
func WriteFile(path string, data []byte) error {
	if !strings.HasPrefix(string(data[:min(len(data), 5)]), "%PDF-") {
		return fmt.Errorf("pdf: write %s: the data is not a PDF", path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("pdf: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tabpilot-pdf-*")
	if err != nil {
		return fmt.Errorf("pdf: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("pdf: %w", err)
	}
	return nil
}
