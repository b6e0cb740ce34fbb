package capture

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/render"
	"github.com/tabpilot/tabpilot/tabs/act"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// ScreenshotOptions are the options of tab.screenshot.
type ScreenshotOptions struct {
	// Selector (or element number) captures one element.
	Target *act.Target
	// FullPage captures the whole scrollable page.
	FullPage bool
	// Save writes the full-resolution PNG there (relative to the working
	// directory).
	Save string
	// Marks draws each observed element's number at its box for the
	// capture (set-of-marks).
	Marks bool
}

// Screenshot is a captured screenshot: the model's copy and where the
// full-resolution image went.
type Screenshot struct {
	// ID numbers the tab's screenshots, from 1.
	ID int `json:"id"`
	// Data is the model's copy (JPEG), at most 1024x1024 and 150 KiB.
	Data     []byte `json:"-"`
	MimeType string `json:"mimeType"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Bytes    int    `json:"bytes"`
	// Dest is the file written: the full-resolution PNG (save or the
	// screenshot directory) or else the model's copy in a private temp file.
	Dest string `json:"dest"`
	// FullResolution is true when Dest is the full-resolution PNG.
	FullResolution bool `json:"fullResolution,omitempty"`
	// Scale is image pixels per CSS pixel of the model's copy.
	Scale float64 `json:"scale"`
	// ClipX, ClipY are the page coordinates (CSS px) of the image's origin.
	ClipX float64 `json:"-"`
	ClipY float64 `json:"-"`
	// NavSeq is the tab's navigation count when it was taken.
	NavSeq int `json:"-"`
	// ScrollX, ScrollY are the document's scroll offsets when it was taken.
	ScrollX float64 `json:"-"`
	ScrollY float64 `json:"-"`
	// Full is true for a full-page capture.
	Full bool `json:"-"`
	// Marks counts the element numbers drawn on it.
	Marks int `json:"marks,omitempty"`
}

// Summary is the line of text that goes with the image: its size, its
// scale, and where it was saved.
func (s *Screenshot) Summary() string {
	text := fmt.Sprintf("Screenshot %d: %dx%d %s, %d bytes, %.3g image px per CSS px (divide image coordinates by it for CSS pixels); saved to %s",
		s.ID, s.Width, s.Height, s.MimeType, s.Bytes, s.Scale, s.Dest)
	if s.FullResolution {
		text += " (full-resolution PNG)"
	}
	return text
}

// Base64 returns the model's copy as standard base64.
func (s *Screenshot) Base64() string { return base64.StdEncoding.EncodeToString(s.Data) }

// Screenshot captures the viewport, the full page or one element
// (Page.captureScreenshot, PNG, with captureBeyondViewport for full pages)
// and makes the model's copy with render.ModelImage. It writes the
// full-resolution PNG to o.Save when set, else to a timestamped file in the
// screenshot directory when there is one (render.SaveScreenshot), else the
// model's copy to a private temp file (render.WriteTemp). Errors:
// element_not_found, not_actionable, timeout.
func (t *Capturer) Screenshot(ctx context.Context, o ScreenshotOptions) (*Screenshot, error) {
	var info PageInfo
	if err := t.EvalJSON(ctx, PageInfoJS, &info); err != nil {
		return nil, err
	}
	p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}
	clipX, clipY := info.SX, info.SY
	cssW := info.VW
	switch {
	case o.Target != nil:
		r, err := t.PageBox(ctx, *o.Target)
		if err != nil {
			return nil, err
		}
		p.Clip = &page.Viewport{X: r.X, Y: r.Y, Width: r.W, Height: r.H, Scale: 1}
		p.CaptureBeyondViewport = new(true)
		clipX, clipY, cssW = r.X, r.Y, r.W
	case o.FullPage:
		h := math.Min(info.SH, 32000)
		p.Clip = &page.Viewport{X: 0, Y: 0, Width: math.Max(info.SW, info.VW), Height: math.Max(h, 1), Scale: 1}
		p.CaptureBeyondViewport = new(true)
		clipX, clipY, cssW = 0, 0, p.Clip.Width
	}
	if p.Clip == nil {
		p.Clip = &page.Viewport{X: info.SX, Y: info.SY, Width: math.Max(info.VW, 1), Height: math.Max(info.VH, 1), Scale: 1}
	}
	marks := 0
	if o.Marks {
		n, remove, err := t.drawMarks(ctx)
		if err != nil {
			return nil, err
		}
		defer remove()
		marks = n
	}
	full := o.Save != "" || t.dir != ""
	dpr := t.scale()
	if dpr <= 0 {
		dpr = 1
	}
	if !full {
		// Only the model's copy is wanted: Chromium renders it at its final
		// size as JPEG (measured 2-6x faster than PNG plus a Go downscale).
		p.Format, p.Quality = page.CaptureScreenshotFormatJpeg, new(int64(render.DefaultQuality))
		p.Clip.Scale = render.FitScale(p.Clip.Width, p.Clip.Height, dpr, nil)
	}
	var res page.CaptureScreenshotResult
	err := t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.Target(), page.CaptureScreenshot, p)
		return err
	})
	if err != nil {
		return nil, pagecore.EvalErr(err)
	}
	var img *render.Image
	if full {
		img, err = render.ModelImage(res.Data, nil)
	} else {
		img, err = render.ScaledImage(res.Data, int(math.Round(p.Clip.Width*dpr)), int(math.Round(p.Clip.Height*dpr)), render.DefaultQuality, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	shot := &Screenshot{Data: img.Data, MimeType: img.MimeType, Width: img.Width, Height: img.Height, Bytes: len(img.Data),
		ClipX: clipX, ClipY: clipY, NavSeq: t.NavSeq(), ScrollX: info.SX, ScrollY: info.SY, Full: o.FullPage, Marks: marks}
	// Image pixels per CSS pixel of the model's copy.
	shot.Scale = float64(img.Width) / math.Max(cssW, 1)
	if full {
		dest, err := render.SaveScreenshot(res.Data, &render.SaveOptions{Path: o.Save, Dir: t.dir})
		if err != nil {
			if o.Save != "" {
				return nil, pagecore.Errorf(errcode.BadRequest, "save screenshot to %q: %v", o.Save, err)
			}
			return nil, fmt.Errorf("save screenshot: %w", err)
		}
		shot.Dest, shot.FullResolution = dest, true
	} else {
		dest, err := render.WriteTemp(img, "")
		if err != nil {
			return nil, fmt.Errorf("save screenshot: %w", err)
		}
		shot.Dest = dest
	}
	t.mu.Lock()
	t.shots++
	shot.ID = t.shots
	t.lastShot = shot
	t.mu.Unlock()
	return shot, nil
}

// Extract returns the readable content of the rendered page: the DOM with
// open shadow roots flattened (Runtime.evaluate), through render.Extract
// (Readability, then the fallbacks main article, article, main,
// [role=main], body) as markdown, text or html. A nil result means nothing
// had content. The session's secrets are masked ("••••") in the page's HTML
// before it is converted. Errors: bad_request for an unknown format.
func (t *Capturer) Extract(ctx context.Context, format string) (*render.Extraction, error) {
	switch format {
	case "":
		format = "markdown"
	case "markdown", "text", "html":
	default:
		return nil, pagecore.Errorf(errcode.BadRequest, "unknown extract format %q: use markdown, text or html", format)
	}
	var html string
	if err := t.EvalJSON(ctx, js.Flatten, &html); err != nil {
		return nil, err
	}
	// The secrets are masked in the page's HTML, before the conversion
	// re-escapes them in forms Redact would not know.
	html = t.Secrets().Redact(html)
	u := t.URL(ctx)
	ex, err := render.Extract(html, u, format)
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	return ex, nil
}

type PageInfo struct {
	URL   string  `json:"url"`
	Title string  `json:"title"`
	VW    float64 `json:"vw"`
	VH    float64 `json:"vh"`
	SX    float64 `json:"sx"`
	SY    float64 `json:"sy"`
	SW    float64 `json:"sw"`
	SH    float64 `json:"sh"`
}

const PageInfoJS = `({url: location.href, title: document.title, vw: innerWidth, vh: innerHeight,
 sx: scrollX, sy: scrollY, sw: document.documentElement.scrollWidth, sh: document.documentElement.scrollHeight})`

// ClickAt clicks at a point (Input.dispatchMouseEvent). Without shot, x
// and y are viewport CSS pixels; with shot (a screenshot's ID, or -1 for
// the latest), they are pixels of that screenshot's model image, mapped
// back through its scale and origin. Errors: bad_request for a point
// outside the viewport or an unknown screenshot; stale_element when the
// page navigated since that screenshot.
func (t *Capturer) ClickAt(ctx context.Context, x, y float64, shot int) (*act.ClickAtResult, error) {
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	if shot != 0 {
		t.mu.Lock()
		s := t.lastShot
		t.mu.Unlock()
		if s == nil || (shot > 0 && s.ID != shot) {
			return nil, pagecore.Errorf(errcode.BadRequest, "clickAt: screenshot %d is not the tab's latest; take a screenshot and use its coordinates", shot)
		}
		if s.NavSeq != t.NavSeq() {
			return nil, &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("clickAt: the page navigated since screenshot %d; take a new one", s.ID), Err: pagecore.ErrStale}
		}
		var sc struct{ X, Y float64 }
		if err := t.EvalJSON(ctx, `({X: scrollX, Y: scrollY})`, &sc); err != nil {
			return nil, err
		}
		if !s.Full && (math.Abs(sc.X-s.ScrollX) > 1 || math.Abs(sc.Y-s.ScrollY) > 1) {
			return nil, &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("clickAt: the page scrolled since screenshot %d; take a new one", s.ID), Err: pagecore.ErrStale}
		}
		scale := s.Scale
		if scale <= 0 {
			scale = 1
		}
		x, y = s.ClipX+x/scale-sc.X, s.ClipY+y/scale-sc.Y
	}
	return t.ClickPoint(ctx, x, y)
}
