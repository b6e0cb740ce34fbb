package render

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	_ "image/png" // register the PNG decoder for image.Decode
	"math"

	"github.com/disintegration/imaging"
)

// Defaults of ImageOptions: the model's copy is a JPEG that fits 1024x1024
// and 150 KiB (the README's "The `run` action").
const (
	DefaultMaxWidth   = 1024
	DefaultMaxHeight  = 1024
	DefaultMaxBytes   = 150 << 10 // 150 KiB
	DefaultQuality    = 70
	MinQuality        = 30 // ModelImage lowers the quality down to this before it shrinks the image
	qualityStep       = 10
	minShrinkFactor   = 0.5  // never shrink by more than half in one step
	maxShrinkFactor   = 0.95 // and always by at least 5 %
	shrinkSafetyRatio = 0.9  // aim a little under the budget when estimating the next size
)

// ImageOptions bounds the copy of a screenshot made for a model. A nil
// *ImageOptions, or a zero field, means the default.
type ImageOptions struct {
	MaxWidth  int // px; default 1024
	MaxHeight int // px; default 1024
	MaxBytes  int // bytes of encoded JPEG; default 150 KiB (153600)
	Quality   int // starting JPEG quality, 1..100; default 70
}

func (o *ImageOptions) withDefaults() ImageOptions {
	var v ImageOptions
	if o != nil {
		v = *o
	}
	if v.MaxWidth <= 0 {
		v.MaxWidth = DefaultMaxWidth
	}
	if v.MaxHeight <= 0 {
		v.MaxHeight = DefaultMaxHeight
	}
	if v.MaxBytes <= 0 {
		v.MaxBytes = DefaultMaxBytes
	}
	if v.Quality <= 0 {
		v.Quality = DefaultQuality
	}
	v.Quality = min(v.Quality, 100)
	return v
}

// Image is an encoded image for a model.
type Image struct {
	Data      []byte  // the encoded image (JPEG)
	MimeType  string  // "image/jpeg"
	Width     int     // px of Data
	Height    int     // px of Data
	SrcWidth  int     // px of the source image
	SrcHeight int     // px of the source image
	Scale     float64 // image px per source px (Width/SrcWidth); 1 when not downscaled
	Quality   int     // the JPEG quality Data was encoded with
}

// ModelImage turns an encoded screenshot (PNG or JPEG bytes, as returned by
// CDP Page.captureScreenshot) into the copy for a model: a baseline JPEG that
// fits opts.MaxWidth x opts.MaxHeight px and opts.MaxBytes bytes.
//
// The image is downscaled (never upscaled) with a Catmull-Rom filter to fit the
// box, keeping its aspect ratio, flattened on white when it has transparency,
// and encoded at opts.Quality (default 70). While the JPEG is over MaxBytes the
// quality is lowered in steps of 10 down to MinQuality (30), then the image is
// shrunk (by the square root of the size ratio, 5 to 50 % a step) at quality 30
// until it fits. A source of 20,000 px or more on a side ends as a thin strip:
// the box wins over legibility.
//
// Errors: ErrBadImage when src does not decode; ErrTooSmall when even a 1x1
// JPEG is over MaxBytes.
func ModelImage(src []byte, opts *ImageOptions) (*Image, error) {
	o := opts.withDefaults()
	if len(src) == 0 {
		return nil, fmt.Errorf("model image: empty input: %w", ErrBadImage)
	}
	img, _, err := image.Decode(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("model image: decode: %w: %v", ErrBadImage, err)
	}
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy()
	if sw <= 0 || sh <= 0 {
		return nil, fmt.Errorf("model image: empty %dx%d image: %w", sw, sh, ErrBadImage)
	}

	w, h := fitBox(sw, sh, o.MaxWidth, o.MaxHeight)
	base := toOpaque(img, w, h)
	out, q, err := encodeToBudget(base, o)
	if err != nil {
		return nil, fmt.Errorf("model image %dx%d: %w", sw, sh, err)
	}
	ob := out.Bounds()
	return &Image{
		Data:      q.data,
		MimeType:  "image/jpeg",
		Width:     ob.Dx(),
		Height:    ob.Dy(),
		SrcWidth:  sw,
		SrcHeight: sh,
		Scale:     float64(ob.Dx()) / float64(sw),
		Quality:   q.quality,
	}, nil
}

// fitBox returns the size of a w x h image scaled down (never up) to fit
// maxW x maxH, keeping the aspect ratio; each side is at least 1 px.
func fitBox(w, h, maxW, maxH int) (int, int) {
	s := math.Min(1, math.Min(float64(maxW)/float64(w), float64(maxH)/float64(h)))
	if s >= 1 {
		return w, h
	}
	return max(1, int(math.Round(float64(w)*s))), max(1, int(math.Round(float64(h)*s)))
}

// toOpaque resizes img to w x h and flattens it on white. The result is an
// *image.RGBA whose alpha is 255 everywhere, the fast path of image/jpeg.
func toOpaque(img image.Image, w, h int) *image.RGBA {
	b := img.Bounds()
	var src image.Image = img
	if w != b.Dx() || h != b.Dy() {
		src = imaging.Resize(img, w, h, imaging.CatmullRom)
	}
	if isOpaque(src) {
		if rgba, ok := src.(*image.RGBA); ok {
			return rgba
		}
		if n, ok := src.(*image.NRGBA); ok {
			// With alpha 255 everywhere, NRGBA and RGBA pixels are the same bytes.
			return &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), src, src.Bounds().Min, draw.Over)
	return dst
}

func isOpaque(img image.Image) bool {
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

type encoded struct {
	data    []byte
	quality int
}

// encodeToBudget encodes img as JPEG at o.Quality, then lower qualities, then
// smaller sizes, until it fits o.MaxBytes. It returns the image that was
// encoded (img or a shrunk copy).
func encodeToBudget(img *image.RGBA, o ImageOptions) (*image.RGBA, encoded, error) {
	var buf bytes.Buffer
	enc := func(m *image.RGBA, q int) (int, error) {
		buf.Reset()
		if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: q}); err != nil {
			return 0, fmt.Errorf("encode jpeg q%d: %w", q, err)
		}
		return buf.Len(), nil
	}
	done := func(m *image.RGBA, q int) (*image.RGBA, encoded, error) {
		return m, encoded{data: bytes.Clone(buf.Bytes()), quality: q}, nil
	}

	q := o.Quality
	for {
		n, err := enc(img, q)
		if err != nil {
			return nil, encoded{}, err
		}
		if n <= o.MaxBytes {
			return done(img, q)
		}
		if q <= MinQuality {
			break
		}
		q = max(MinQuality, q-qualityStep)
	}

	// Still too big at the lowest quality: shrink, estimating the size from
	// the bytes-per-pixel of the last attempt.
	cur := img
	for {
		n := buf.Len()
		b := cur.Bounds()
		if b.Dx() == 1 && b.Dy() == 1 {
			return nil, encoded{}, fmt.Errorf("%d bytes at 1x1 px, budget %d: %w", n, o.MaxBytes, ErrTooSmall)
		}
		f := math.Sqrt(float64(o.MaxBytes) / float64(n) * shrinkSafetyRatio)
		f = math.Max(minShrinkFactor, math.Min(maxShrinkFactor, f))
		w := max(1, int(float64(b.Dx())*f))
		h := max(1, int(float64(b.Dy())*f))
		// Resize from the full-size base so errors do not accumulate.
		cur = toOpaque(img, w, h)
		m, err := enc(cur, q)
		if err != nil {
			return nil, encoded{}, err
		}
		if m <= o.MaxBytes {
			return done(cur, q)
		}
	}
}

// FitScale is the Page.captureScreenshot clip.scale that makes Chromium
// render a cssW x cssH CSS px region directly at the size of the model's copy:
// the largest scale, at most 1, at which cssW*dpr*scale x cssH*dpr*scale
// image px fits opts.MaxWidth x opts.MaxHeight, plus a quarter of a pixel
// on the limiting side. Chromium sizes the image from the scaled clip by
// rounding down (148) or to the nearest pixel (156): the quarter pixel
// makes both give the box's size, where half a pixel less gave 1023 px
// for 1024 in 148. A release that rounds up gets one pixel over, which
// ScaledImage then fits by resizing. dpr is the device pixel ratio (0
// means 1).
func FitScale(cssW, cssH, dpr float64, opts *ImageOptions) float64 {
	o := opts.withDefaults()
	if dpr <= 0 {
		dpr = 1
	}
	if cssW <= 0 || cssH <= 0 {
		return 1
	}
	s := math.Min((float64(o.MaxWidth)+0.25)/(cssW*dpr), (float64(o.MaxHeight)+0.25)/(cssH*dpr))
	return math.Min(1, s)
}

// ScaledImage adopts a JPEG that Chromium already rendered at FitScale
// (Page.captureScreenshot with format jpeg, quality q and clip.scale): when it
// fits the box and the byte budget of opts it is returned as is, without
// decoding or re-encoding; otherwise ModelImage makes it fit. srcW and srcH
// are the size of the captured region in image px at scale 1 (CSS px times
// the device pixel ratio), for SrcWidth, SrcHeight and Scale.
//
// Errors: those of ModelImage; ErrBadImage when data is not a JPEG.
func ScaledImage(data []byte, srcW, srcH, q int, opts *ImageOptions) (*Image, error) {
	o := opts.withDefaults()
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || format != "jpeg" {
		return nil, fmt.Errorf("scaled image: %w: format %q, %v", ErrBadImage, format, err)
	}
	if cfg.Width > o.MaxWidth || cfg.Height > o.MaxHeight || len(data) > o.MaxBytes {
		im, err := ModelImage(data, opts)
		if err != nil {
			return nil, fmt.Errorf("scaled image: %w", err)
		}
		if srcW > 0 && srcH > 0 {
			im.SrcWidth, im.SrcHeight = srcW, srcH
			im.Scale = float64(im.Width) / float64(srcW)
		}
		return im, nil
	}
	if srcW <= 0 || srcH <= 0 {
		srcW, srcH = cfg.Width, cfg.Height
	}
	return &Image{
		Data: data, MimeType: "image/jpeg",
		Width: cfg.Width, Height: cfg.Height,
		SrcWidth: srcW, SrcHeight: srcH,
		Scale:   float64(cfg.Width) / float64(srcW),
		Quality: q,
	}, nil
}
