package render_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	_ "image/jpeg"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/tabpilot/tabpilot/render"
)

var captureOut = flag.String("capture.out", "", "write one output image of each capture benchmark to this folder, to compare legibility")

// busyPage is a deterministic, busy page: a header, a grid of 120 cards with
// gradients, text of several sizes, a table, inline SVG charts and a form.
// It is about 1365 x 9000 CSS px at a 1365 px wide viewport.
func busyPage() string {
	r := rand.New(rand.NewPCG(42, 7))
	words := strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
		incididunt ut labore et dolore magna aliqua browser screenshot model legible capture scale quality
		render pixel chromium headless protocol page element viewport benchmark widget order invoice`)
	text := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Busy dashboard</title><style>
body{margin:0;font-family:sans-serif;background:#f4f5f7;color:#222}
header{background:linear-gradient(90deg,#1d3557,#457b9d);color:#fff;padding:16px 24px;display:flex;gap:24px;align-items:center}
header a{color:#fff;font-size:14px}
.grid{display:grid;grid-template-columns:repeat(4,1fr);gap:16px;padding:24px}
.card{background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.2);padding:12px;font-size:13px}
.card h3{margin:0 0 6px;font-size:16px}
.tag{display:inline-block;padding:2px 6px;border-radius:4px;color:#fff;font-size:11px;margin-right:4px}
table{border-collapse:collapse;font-size:12px;width:100%}td,th{border:1px solid #ccc;padding:2px 4px}
form{padding:24px;background:#fff;margin:24px}input,button{font-size:14px;margin:4px}
</style></head><body><header><b style="font-size:22px">Busy dashboard</b>`)
	for i := range 8 {
		fmt.Fprintf(&b, `<a href="#s%d">Section %d</a>`, i, i)
	}
	b.WriteString(`<input placeholder="Search orders"></header><div class="grid">`)
	for i := range 120 {
		h1, h2 := r.IntN(360), r.IntN(360)
		fmt.Fprintf(&b, `<div class="card" id="s%d"><h3>Order #%05d: %s</h3>`, i%8, 10000+r.IntN(90000), text(3))
		fmt.Fprintf(&b, `<div style="height:40px;border-radius:4px;background:linear-gradient(135deg,hsl(%d,70%%,60%%),hsl(%d,70%%,40%%))"></div>`, h1, h2)
		for range 3 {
			fmt.Fprintf(&b, `<span class="tag" style="background:hsl(%d,60%%,45%%)">%s</span>`, r.IntN(360), words[r.IntN(len(words))])
		}
		fmt.Fprintf(&b, `<p>%s</p>`, text(30+r.IntN(30)))
		b.WriteString(`<svg width="100%" height="50" viewBox="0 0 200 50"><polyline fill="none" stroke="#e63946" stroke-width="2" points="`)
		for x := 0; x <= 200; x += 10 {
			fmt.Fprintf(&b, "%d,%d ", x, 5+r.IntN(40))
		}
		b.WriteString(`"/></svg><table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>`)
		for range 3 {
			fmt.Fprintf(&b, `<tr><td>%s</td><td>%d</td><td>$%d.%02d</td></tr>`, text(2), 1+r.IntN(9), r.IntN(500), r.IntN(100))
		}
		b.WriteString(`</table></div>`)
	}
	b.WriteString(`</div><form><label>Email <input type="email" value="ada@example.com"></label><button>Save</button></form></body></html>`)
	return b.String()
}

type captureMode struct {
	name     string
	fullPage bool
}

// BenchmarkCapture compares two ways to get the model's copy of a screenshot
// from a real headless Chromium, on the busy page:
//
//   - png+imaging: Page.captureScreenshot as PNG at full resolution, then
//     render.ModelImage (decode, downscale, JPEG q70 within 150 KiB);
//   - jpeg-scaled: Page.captureScreenshot as JPEG quality 70 with clip.scale
//     chosen so the image fits 1024x1024 (Chromium renders at that scale),
//     falling back to ModelImage only if it is over 150 KiB.
//
// Reported: ns/op (wall time per screenshot, capture included), capture-ms/op
// (of which in Page.captureScreenshot), out-bytes,
// out-w and out-h of the model copy, and capture-bytes (the bytes CDP
// returned). With -capture.out DIR, one output of each is written there.
func BenchmarkCapture(b *testing.B) {
	ctx := newTab(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(busyPage()))
	}))
	defer srv.Close()
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1365, 768),
		chromedp.Navigate(srv.URL),
	); err != nil {
		b.Fatal(err)
	}
	cw, ch, err := contentSize(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("busy page: %.0f x %.0f CSS px", cw, ch)

	for _, m := range []captureMode{{"viewport", false}, {"fullpage", true}} {
		w, h := 1365.0, 768.0
		if m.fullPage {
			w, h = cw, ch
		}
		b.Run(m.name+"/png+imaging", func(b *testing.B) {
			b.ReportAllocs()
			var im *render.Image
			var captured int
			var inCapture time.Duration
			for b.Loop() {
				p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, FromSurface: ptr(true)}
				if m.fullPage {
					p.CaptureBeyondViewport = ptr(true)
					p.Clip = &page.Viewport{Width: w, Height: h, Scale: 1}
				}
				start := time.Now()
				data, err := capture(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				inCapture += time.Since(start)
				captured = len(data)
				if im, err = render.ModelImage(data, nil); err != nil {
					b.Fatal(err)
				}
			}
			report(b, im, captured, inCapture)
			saveSample(b, m.name+"-png-imaging.jpg", im.Data)
		})
		b.Run(m.name+"/jpeg-scaled", func(b *testing.B) {
			b.ReportAllocs()
			scale := render.FitScale(w, h, 1, nil)
			var im *render.Image
			var captured int
			var inCapture time.Duration
			for b.Loop() {
				p := page.CaptureScreenshotParams{
					Format:      page.CaptureScreenshotFormatJpeg,
					Quality:     ptr(int64(70)),
					FromSurface: ptr(true),
					Clip:        &page.Viewport{Width: w, Height: h, Scale: scale},
				}
				if m.fullPage {
					p.CaptureBeyondViewport = ptr(true)
				}
				start := time.Now()
				data, err := capture(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				inCapture += time.Since(start)
				captured = len(data)
				im, err = render.ScaledImage(data, int(w), int(h), 70, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, im, captured, inCapture)
			saveSample(b, m.name+"-jpeg-scaled.jpg", im.Data)
		})
	}
}

func report(b *testing.B, im *render.Image, captured int, inCapture time.Duration) {
	b.ReportMetric(float64(inCapture.Milliseconds())/float64(b.N), "capture-ms/op")
	b.ReportMetric(float64(len(im.Data)), "out-bytes")
	b.ReportMetric(float64(im.Width), "out-w")
	b.ReportMetric(float64(im.Height), "out-h")
	b.ReportMetric(float64(captured), "capture-bytes")
}

func saveSample(b *testing.B, name string, data []byte) {
	if *captureOut == "" {
		return
	}
	if err := os.MkdirAll(*captureOut, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*captureOut, name), data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// TestCaptureScaledFits checks, on the real browser, the premise of the
// jpeg-scaled path: a capture with clip.scale comes back at the scaled size,
// and ModelImage of the full-resolution PNG fits the box and the budget.
func TestCaptureScaledFits(t *testing.T) {
	ctx := newTab(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(busyPage()))
	}))
	defer srv.Close()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(1365, 768), chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	cw, ch, err := contentSize(tctx)
	if err != nil {
		t.Fatal(err)
	}
	if cw != 1365 || ch < 5000 {
		t.Fatalf("busy page is %.0fx%.0f CSS px, want 1365 wide and over 5000 tall", cw, ch)
	}
	scale := render.FitScale(cw, ch, 1, nil)
	data, err := capture(tctx, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatJpeg, Quality: ptr(int64(70)), FromSurface: ptr(true),
		CaptureBeyondViewport: ptr(true), Clip: &page.Viewport{Width: cw, Height: ch, Scale: scale},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || format != "jpeg" {
		t.Fatalf("scaled capture: %v, format %q", err, format)
	}
	if wantW := int(math.Round(cw * scale)); abs(cfg.Width-wantW) > 1 || cfg.Height > 1024 || cfg.Height < 1023 {
		t.Errorf("scaled capture is %dx%d, want about %dx1024 and at most 1024 high", cfg.Width, cfg.Height, wantW)
	}
	im, err := render.ScaledImage(data, int(cw), int(ch), 70, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(im.Data, data) || im.SrcHeight != int(ch) || im.Height != cfg.Height {
		t.Errorf("ScaledImage re-encoded a capture that fits (%d bytes -> %d), or lost its size", len(data), len(im.Data))
	}

	png, err := capture(tctx, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, FromSurface: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	im, err = render.ModelImage(png, nil)
	if err != nil {
		t.Fatal(err)
	}
	if im.SrcWidth != 1365 || im.SrcHeight != 768 || im.Width != 1024 || im.Height != 576 || len(im.Data) > 150<<10 {
		t.Errorf("viewport model copy: %dx%d from %dx%d, %d bytes; want 1024x576 from 1365x768 within 150 KiB",
			im.Width, im.Height, im.SrcWidth, im.SrcHeight, len(im.Data))
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
