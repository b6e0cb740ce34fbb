package render_test

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/render"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestSaveScreenshotExplicitPath(t *testing.T) {
	base := t.TempDir()
	src := encodePNG(t, noisyRGBA(40, 30, 9))
	got, err := render.SaveScreenshot(src, &render.SaveOptions{Path: "shots/a/b.png", BaseDir: base, Dir: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(base, "shots", "a", "b.png")
	if got != want {
		t.Fatalf("path = %q, want %q", got, want)
	}
	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, src) {
		t.Errorf("saved %d bytes, want the %d source bytes unchanged", len(data), len(src))
	}
	if m := mode(t, got); m != 0o644 {
		t.Errorf("mode %v, want 0644", m)
	}
	if _, err := os.Stat(filepath.Join(base, "ignored")); !os.IsNotExist(err) {
		t.Errorf("Dir was created although Path was given: %v", err)
	}
	// Saving again replaces the file, and leaves no temp file behind.
	src2 := encodePNG(t, noisyRGBA(20, 10, 10))
	if _, err := render.SaveScreenshot(src2, &render.SaveOptions{Path: want}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(want); !bytes.Equal(data, src2) {
		t.Errorf("second save did not replace the file")
	}
	entries, _ := os.ReadDir(filepath.Dir(want))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only b.png", len(entries))
	}
}

func TestSaveScreenshotDir(t *testing.T) {
	base := t.TempDir()
	at := time.Date(2025, 3, 4, 5, 6, 7, 8e6, time.Local)
	opts := &render.SaveOptions{Dir: "screens", BaseDir: base, Now: func() time.Time { return at }}
	src := encodePNG(t, noisyRGBA(10, 10, 11))
	first, err := render.SaveScreenshot(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "screens", "screenshot-20250304-050607.008.png"); first != want {
		t.Errorf("first = %q, want %q", first, want)
	}
	second, err := render.SaveScreenshot(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "screens", "screenshot-20250304-050607.008-2.png"); second != want {
		t.Errorf("second = %q, want %q", second, want)
	}
	for _, p := range []string{first, second} {
		if m := mode(t, p); m != 0o644 {
			t.Errorf("%s: mode %v, want 0644", p, m)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(base, "screens"))
	if len(entries) != 2 {
		t.Errorf("folder holds %d entries, want 2 (no temp files left)", len(entries))
	}
}

func TestSaveScreenshotNowhere(t *testing.T) {
	got, err := render.SaveScreenshot([]byte("anything"), &render.SaveOptions{BaseDir: t.TempDir()})
	if got != "" || err != nil {
		t.Errorf("= %q, %v; want \"\", nil", got, err)
	}
	if got, err := render.SaveScreenshot(nil, nil); got != "" || err != nil {
		t.Errorf("nil options: = %q, %v; want \"\", nil", got, err)
	}
}

func TestSaveScreenshotConvertsJPEG(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, noisyRGBA(33, 22, 12), nil); err != nil {
		t.Fatal(err)
	}
	p, err := render.SaveScreenshot(buf.Bytes(), &render.SaveOptions{Path: filepath.Join(t.TempDir(), "x.png")})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("saved file is not a PNG: %v", err)
	}
	if cfg.Width != 33 || cfg.Height != 22 {
		t.Errorf("PNG is %dx%d, want 33x22", cfg.Width, cfg.Height)
	}
	if _, err := render.SaveScreenshot([]byte("junk"), &render.SaveOptions{Path: filepath.Join(t.TempDir(), "y.png")}); !errors.Is(err, render.ErrBadImage) {
		t.Errorf("junk: error = %v, want ErrBadImage", err)
	}
}

func TestWriteTemp(t *testing.T) {
	dir := t.TempDir()
	im, err := render.ModelImage(encodePNG(t, noisyRGBA(50, 40, 13)), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := render.WriteTemp(im, dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p) != dir || filepath.Ext(p) != ".jpg" {
		t.Errorf("path %q, want a .jpg in %q", p, dir)
	}
	if m := mode(t, p); m != 0o600 {
		t.Errorf("mode %v, want 0600", m)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, im.Data) {
		t.Errorf("temp file holds %d bytes, want the image's %d", len(data), len(im.Data))
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width != 50 || cfg.Height != 40 {
		t.Errorf("temp file decodes as %v, %v; want a 50x40 image", cfg, err)
	}
	if _, err := render.WriteTemp(&render.Image{}, dir); !errors.Is(err, render.ErrBadImage) {
		t.Errorf("empty image: error = %v, want ErrBadImage", err)
	}
}
