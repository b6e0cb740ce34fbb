package render

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// SaveOptions says where SaveScreenshot writes the full-resolution PNG.
type SaveOptions struct {
	// Path is the explicit save path (the screenshot's `save` field). A
	// relative path is resolved against BaseDir. Missing directories are
	// created (0755); the file is written 0644, replacing any file there.
	Path string
	// BaseDir resolves a relative Path: the working directory of the caller
	// that asked (the CLI's, for a daemon). Empty means the process's.
	BaseDir string
	// Dir is the configured screenshot directory, used when Path is empty: the
	// file is Dir/screenshot-YYYYMMDD-HHMMSS.mmm.png (local time), with -2,
	// -3, ... added when that name is taken. Created (0755) when missing.
	Dir string
	// Now stamps the file name in Dir; nil means time.Now.
	Now func() time.Time
}

// SaveScreenshot persists a full-resolution screenshot as PNG: to
// opts.Path when set, else to a timestamped file in opts.Dir.
// It returns the absolute path written, or "" and no error when both are
// empty (the caller then writes the model copy with WriteTemp).
//
// src is PNG bytes as returned by CDP Page.captureScreenshot; other formats
// that decode (JPEG) are re-encoded as PNG. The file is written to a temp file
// in the same directory and renamed, so a reader never sees a partial PNG.
//
// Errors: ErrBadImage when src is not an image; otherwise the *fs.PathError of
// the failed step, wrapped.
func SaveScreenshot(src []byte, opts *SaveOptions) (string, error) {
	var o SaveOptions
	if opts != nil {
		o = *opts
	}
	if o.Path == "" && o.Dir == "" {
		return "", nil
	}
	data, err := asPNG(src)
	if err != nil {
		return "", fmt.Errorf("save screenshot: %w", err)
	}
	base := o.BaseDir
	if base == "" {
		if base, err = os.Getwd(); err != nil {
			return "", fmt.Errorf("save screenshot: working directory: %w", err)
		}
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(base, p)
	}

	if o.Path != "" {
		p := abs(o.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("save screenshot: %w", err)
		}
		if err := writeReplace(p, data, 0o644); err != nil {
			return "", fmt.Errorf("save screenshot: %w", err)
		}
		return p, nil
	}

	dir := abs(o.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("save screenshot: %w", err)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	stamp := now().Format("20060102-150405.000")
	for i := 1; ; i++ {
		name := "screenshot-" + stamp + ".png"
		if i > 1 {
			name = fmt.Sprintf("screenshot-%s-%d.png", stamp, i)
		}
		p := filepath.Join(dir, name)
		err := writeNew(p, data, 0o644)
		if errors.Is(err, fs.ErrExist) && i < 1000 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("save screenshot: %w", err)
		}
		return p, nil
	}
}

// WriteTemp writes the model copy of a screenshot to a new private (0600)
// file in dir (empty means os.TempDir()), named tabpilot-screenshot-*.jpg (or
// .png for a PNG), and returns its absolute path. The caller owns the file.
func WriteTemp(img *Image, dir string) (string, error) {
	if img == nil || len(img.Data) == 0 {
		return "", fmt.Errorf("write temp screenshot: empty image: %w", ErrBadImage)
	}
	ext := ".jpg"
	if img.MimeType == "image/png" {
		ext = ".png"
	}
	f, err := os.CreateTemp(dir, "tabpilot-screenshot-*"+ext) // CreateTemp makes 0600 files
	if err != nil {
		return "", fmt.Errorf("write temp screenshot: %w", err)
	}
	name := f.Name()
	_, err = f.Write(img.Data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("write temp screenshot: %w", err)
	}
	if p, err := filepath.Abs(name); err == nil {
		name = p
	}
	return name, nil
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// asPNG returns src when it is a PNG, else decodes it and encodes it as PNG.
func asPNG(src []byte) ([]byte, error) {
	if bytes.HasPrefix(src, pngMagic) {
		return src, nil
	}
	img, _, err := image.Decode(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("decode: %w: %v", ErrBadImage, err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// writeReplace writes data to path through a temp file in the same directory
// and a rename, then sets perm.
func writeReplace(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tabpilot-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// writeNew writes data to path through a temp file in the same directory and
// a hard link, so the file appears whole; it fails with fs.ErrExist when path
// exists.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tabpilot-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // not subject to the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	err = os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// No hard links on this file system: create the name exclusively instead.
	g, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = g.Write(data)
	if cerr := g.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}
