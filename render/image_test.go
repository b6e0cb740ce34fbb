package render_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tabpilot/tabpilot/render"
)

// noisyRGBA is a w x h image of seeded random pixels (the worst case for JPEG)
// over a few solid bands, like a busy page.
func noisyRGBA(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 8 {
		v := r.Uint64()
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = byte(v), byte(v>>8), byte(v>>16), 255
		if i+7 < len(img.Pix) {
			img.Pix[i+4], img.Pix[i+5], img.Pix[i+6], img.Pix[i+7] = byte(v>>24), byte(v>>32), byte(v>>40), 255
		}
	}
	return img
}

func encodePNG(tb testing.TB, img image.Image) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// A 1365x20000 noisy full-page capture, made once (about 80 MB of PNG).
var tallNoisyPNG = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, noisyRGBA(1365, 20000, 1)); err != nil {
		panic(err)
	}
	return buf.Bytes()
})

func decodeJPEG(tb testing.TB, data []byte) image.Image {
	tb.Helper()
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("model copy is not a JPEG: %v", err)
	}
	return img
}

func checkFits(t *testing.T, im *render.Image, maxW, maxH, maxBytes int) {
	t.Helper()
	if im.MimeType != "image/jpeg" {
		t.Errorf("MimeType = %q, want image/jpeg", im.MimeType)
	}
	if im.Width > maxW || im.Height > maxH || im.Width < 1 || im.Height < 1 {
		t.Errorf("size %dx%d, want within %dx%d", im.Width, im.Height, maxW, maxH)
	}
	if len(im.Data) > maxBytes {
		t.Errorf("%d bytes, want <= %d", len(im.Data), maxBytes)
	}
	got := decodeJPEG(t, im.Data).Bounds()
	if got.Dx() != im.Width || got.Dy() != im.Height {
		t.Errorf("JPEG is %dx%d, Image says %dx%d", got.Dx(), got.Dy(), im.Width, im.Height)
	}
}

func TestModelImageTallNoisyPage(t *testing.T) {
	src := tallNoisyPNG()
	im, err := render.ModelImage(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFits(t, im, 1024, 1024, 150<<10)
	if im.SrcWidth != 1365 || im.SrcHeight != 20000 {
		t.Errorf("source %dx%d, want 1365x20000", im.SrcWidth, im.SrcHeight)
	}
	// Fitting 20000 px into 1024 keeps the aspect: 1365*1024/20000 = 69.9.
	if im.Height != 1024 || im.Width != 70 {
		t.Errorf("size %dx%d, want 70x1024", im.Width, im.Height)
	}
	if math.Abs(im.Scale-70.0/1365) > 1e-9 {
		t.Errorf("Scale = %v, want %v", im.Scale, 70.0/1365)
	}
	t.Logf("1365x20000 noisy PNG (%d bytes) -> %dx%d q%d, %d bytes", len(src), im.Width, im.Height, im.Quality, len(im.Data))
}

// A noisy capture that already fits the box is too big for 150 KiB even at
// quality 30, so it must be shrunk.
func TestModelImageNoisyNeedsShrink(t *testing.T) {
	src := encodePNG(t, noisyRGBA(1024, 700, 2))
	im, err := render.ModelImage(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFits(t, im, 1024, 1024, 150<<10)
	if im.Quality != render.MinQuality {
		t.Errorf("Quality = %d, want %d (quality is lowered before size)", im.Quality, render.MinQuality)
	}
	if im.Width >= 1024 {
		t.Errorf("width %d, want < 1024: noise at 1024x700 q30 does not fit 150 KiB", im.Width)
	}
	// Aspect kept within a pixel.
	if want := float64(im.Width) * 700 / 1024; math.Abs(float64(im.Height)-want) > 1.5 {
		t.Errorf("size %dx%d, aspect lost (want height ~%.1f)", im.Width, im.Height, want)
	}
	t.Logf("1024x700 noise -> %dx%d q%d %d bytes", im.Width, im.Height, im.Quality, len(im.Data))
}

func TestModelImageLowersQualityFirst(t *testing.T) {
	// A smooth gradient at 1024x1024 fits at q70 (no change), and with a
	// budget between its q30 and q70 sizes it drops quality, not size.
	img := image.NewRGBA(image.Rect(0, 0, 1024, 1024))
	rnd := rand.New(rand.NewPCG(3, 4))
	for y := range 1024 {
		for x := range 1024 {
			n := uint8(rnd.IntN(24))
			img.Set(x, y, color.RGBA{uint8(x / 4), uint8(y / 4), 128 + n, 255})
		}
	}
	src := encodePNG(t, img)
	at := func(q int) int {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
			t.Fatal(err)
		}
		return b.Len()
	}
	budget := (at(70) + at(50)) / 2
	im, err := render.ModelImage(src, &render.ImageOptions{MaxBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	checkFits(t, im, 1024, 1024, budget)
	if im.Width != 1024 || im.Height != 1024 {
		t.Errorf("size %dx%d, want 1024x1024 (only the quality should drop)", im.Width, im.Height)
	}
	if im.Quality != 60 && im.Quality != 50 {
		t.Errorf("Quality = %d, want 60 or 50", im.Quality)
	}
}

func TestModelImageTransparentPNG(t *testing.T) {
	// A 300x200 element capture: transparent, with an opaque red square in
	// the middle and a half-transparent black band at the top.
	img := image.NewNRGBA(image.Rect(0, 0, 300, 200))
	for y := 80; y < 120; y++ {
		for x := 130; x < 170; x++ {
			img.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 255})
		}
	}
	for y := 0; y < 20; y++ {
		for x := 0; x < 300; x++ {
			img.SetNRGBA(x, y, color.NRGBA{0, 0, 0, 128})
		}
	}
	im, err := render.ModelImage(encodePNG(t, img), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFits(t, im, 1024, 1024, 150<<10)
	if im.Width != 300 || im.Height != 200 || im.Scale != 1 || im.Quality != 70 {
		t.Errorf("got %dx%d scale %v q%d, want 300x200 scale 1 q70", im.Width, im.Height, im.Scale, im.Quality)
	}
	out := decodeJPEG(t, im.Data)
	gray := func(x, y int) (int, int, int) {
		r, g, b, _ := out.At(x, y).RGBA()
		return int(r >> 8), int(g >> 8), int(b >> 8)
	}
	if r, g, b := gray(10, 190); r < 245 || g < 245 || b < 245 {
		t.Errorf("transparent corner = %d,%d,%d, want white", r, g, b)
	}
	if r, g, b := gray(150, 100); r < 200 || g > 60 || b > 60 {
		t.Errorf("centre = %d,%d,%d, want red", r, g, b)
	}
	if r, g, b := gray(150, 10); r < 100 || r > 155 || g < 100 || g > 155 || b < 100 || b > 155 {
		t.Errorf("half-transparent black on white = %d,%d,%d, want mid grey", r, g, b)
	}
}

func TestModelImageTinyNotUpscaled(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 12, 7))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	im, err := render.ModelImage(encodePNG(t, img), nil)
	if err != nil {
		t.Fatal(err)
	}
	if im.Width != 12 || im.Height != 7 || im.SrcWidth != 12 || im.SrcHeight != 7 || im.Scale != 1 {
		t.Errorf("got %dx%d from %dx%d scale %v, want 12x7 unscaled", im.Width, im.Height, im.SrcWidth, im.SrcHeight, im.Scale)
	}
	if im.Quality != 70 {
		t.Errorf("Quality = %d, want 70", im.Quality)
	}
}

func TestModelImageWideAndOptions(t *testing.T) {
	src := encodePNG(t, noisyRGBA(2000, 1000, 5))
	im, err := render.ModelImage(src, &render.ImageOptions{MaxWidth: 400, MaxHeight: 400, MaxBytes: 1 << 20, Quality: 90})
	if err != nil {
		t.Fatal(err)
	}
	if im.Width != 400 || im.Height != 200 || im.Quality != 90 || im.Scale != 0.2 {
		t.Errorf("got %dx%d q%d scale %v, want 400x200 q90 scale 0.2", im.Width, im.Height, im.Quality, im.Scale)
	}
}

func TestModelImageJPEGInput(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, noisyRGBA(1600, 900, 6), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	im, err := render.ModelImage(buf.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFits(t, im, 1024, 1024, 150<<10)
	if im.SrcWidth != 1600 || im.SrcHeight != 900 {
		t.Errorf("source %dx%d, want 1600x900", im.SrcWidth, im.SrcHeight)
	}
}

func TestModelImageErrors(t *testing.T) {
	for _, src := range [][]byte{nil, []byte("not an image"), []byte("\x89PNG\r\n\x1a\ntruncated")} {
		if _, err := render.ModelImage(src, nil); !errors.Is(err, render.ErrBadImage) {
			t.Errorf("ModelImage(%q) error = %v, want ErrBadImage", src, err)
		}
	}
	src := encodePNG(t, noisyRGBA(64, 64, 7))
	if _, err := render.ModelImage(src, &render.ImageOptions{MaxBytes: 100}); !errors.Is(err, render.ErrTooSmall) {
		t.Errorf("MaxBytes 100: error = %v, want ErrTooSmall", err)
	}
}

// BenchmarkModelImage: decode, downscale and encode a capture for a model.
func BenchmarkModelImage(b *testing.B) {
	cases := []struct {
		name string
		src  func() []byte
	}{
		{"viewport-1365x768-noise", func() []byte { return encodePNG(b, noisyRGBA(1365, 768, 8)) }},
		{"fullpage-1365x20000-noise", tallNoisyPNG},
	}
	for _, c := range cases {
		src := c.src()
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var im *render.Image
			for b.Loop() {
				var err error
				if im, err = render.ModelImage(src, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(im.Data)), "out-bytes")
			b.ReportMetric(float64(len(src)), "in-bytes")
		})
	}
}

func TestFitScale(t *testing.T) {
	cases := []struct {
		w, h, dpr float64
		opts      *render.ImageOptions
		want      float64
	}{
		{1365, 768, 1, nil, 1024.25 / 1365},
		{1365, 20000, 1, nil, 1024.25 / 20000},
		{800, 600, 1, nil, 1},
		{800, 600, 0, nil, 1},
		{1365, 768, 2, nil, 1024.25 / 2730},
		{1000, 1000, 1, &render.ImageOptions{MaxWidth: 500, MaxHeight: 250}, 250.25 / 1000},
	}
	for _, c := range cases {
		got := render.FitScale(c.w, c.h, c.dpr, c.opts)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("FitScale(%v, %v, %v) = %v, want %v", c.w, c.h, c.dpr, got, c.want)
		}
		// Rounded down (Chromium 148) or to the nearest pixel (156),
		// the image is the box's size on its limiting side.
		mw, mh := 1024.0, 1024.0
		if c.opts != nil {
			mw, mh = float64(c.opts.MaxWidth), float64(c.opts.MaxHeight)
		}
		for _, rnd := range []func(float64) float64{math.Floor, math.Round} {
			ow, oh := rnd(c.w*max(c.dpr, 1)*got), rnd(c.h*max(c.dpr, 1)*got)
			if ow > mw || oh > mh || (got < 1 && ow != mw && oh != mh) {
				t.Errorf("FitScale(%v, %v, %v) gives %vx%v px, not the %vx%v box", c.w, c.h, c.dpr, ow, oh, mw, mh)
			}
		}
	}
}

func TestScaledImage(t *testing.T) {
	var small bytes.Buffer
	if err := jpeg.Encode(&small, noisyRGBA(200, 100, 14), &jpeg.Options{Quality: 70}); err != nil {
		t.Fatal(err)
	}
	im, err := render.ScaledImage(small.Bytes(), 400, 200, 70, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(im.Data, small.Bytes()) || im.Width != 200 || im.Height != 100 || im.SrcWidth != 400 || im.Scale != 0.5 || im.Quality != 70 {
		t.Errorf("fitting JPEG: got %dx%d from %dx%d scale %v q%d (same bytes %v); want it adopted as is",
			im.Width, im.Height, im.SrcWidth, im.SrcHeight, im.Scale, im.Quality, bytes.Equal(im.Data, small.Bytes()))
	}

	var big bytes.Buffer
	if err := jpeg.Encode(&big, noisyRGBA(1100, 500, 15), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	im, err = render.ScaledImage(big.Bytes(), 2200, 1000, 90, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFits(t, im, 1024, 1024, 150<<10)
	if im.SrcWidth != 2200 || math.Abs(im.Scale-float64(im.Width)/2200) > 1e-12 {
		t.Errorf("over-size JPEG: source %dx%d scale %v, want 2200 wide and scale Width/2200", im.SrcWidth, im.SrcHeight, im.Scale)
	}

	if _, err := render.ScaledImage(encodePNG(t, noisyRGBA(10, 10, 16)), 10, 10, 70, nil); !errors.Is(err, render.ErrBadImage) {
		t.Errorf("PNG input: error = %v, want ErrBadImage", err)
	}
}
