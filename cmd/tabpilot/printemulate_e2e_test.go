package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIPDFAndEmulate runs tabpilot pdf FILE and tabpilot emulate
// against a daemon: the PDF has the page's sentence, an emulated Pixel 7
// shows after a reload, emulate --list lists the presets, an unknown
// device fails with the list in its hint, and --reset gives the desktop
// back.
func TestCLIPDFAndEmulate(t *testing.T) {
	e, _ := browserEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>CLI print</title><p>Printed from the command line.</p><p id=ua>%s</p>`, r.Header.Get("User-Agent"))
	}))
	defer srv.Close()
	defer e.run("stop")
	mustRun(t, e, "open", srv.URL+"/")
	dir := t.TempDir()
	if out := mustRun(t, e, "pdf", filepath.Join(dir, "page.pdf"), "--format", "A4", "--landscape", "--margin", "1cm"); !strings.Contains(out, "Printed 1 page (A4, landscape) to "+filepath.Join(dir, "page.pdf")) {
		t.Errorf("pdf: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "page.pdf")); err != nil || !strings.HasPrefix(string(b), "%PDF-") {
		t.Fatalf("the PDF: %v", err)
	}
	if _, err := exec.LookPath("pdftotext"); err == nil {
		out, err := exec.Command("pdftotext", filepath.Join(dir, "page.pdf"), "-").Output()
		if err != nil || !strings.Contains(string(out), "Printed from the command line.") {
			t.Errorf("pdftotext: %q %v", out, err)
		}
	}
	if out := mustRun(t, e, "emulate", "--device", "Pixel 7", "--timezone", "America/New_York", "--touch"); !strings.Contains(out, "device Pixel 7") {
		t.Errorf("emulate: %q", out)
	}
	mustRun(t, e, "reload")
	js := `return await tab.evaluate(() => [navigator.userAgent === document.getElementById('ua').textContent, innerWidth, Intl.DateTimeFormat().resolvedOptions().timeZone].join(' '))`
	if out := mustRun(t, e, "run", "-e", js); strings.TrimSpace(out) != "true 412 America/New_York" {
		t.Errorf("the page as a Pixel 7: %q", out)
	}
	if out := mustRun(t, e, "emulate", "--list"); !strings.Contains(out, "iPhone 15: phone") || !strings.Contains(out, "Pixel 7: phone") {
		t.Errorf("emulate --list: %q", out)
	}
	if _, stderr, code := e.run("emulate", "--device", "Nokia 3310"); code == 0 || !strings.Contains(stderr, "bad_request") || !strings.Contains(stderr, "hint: Use one of: iPhone 15") {
		t.Errorf("unknown device: exit %d, %q", code, stderr)
	}
	if out := mustRun(t, e, "emulate", "--reset"); !strings.HasPrefix(out, "Emulation reset") {
		t.Errorf("emulate --reset: %q", out)
	}
	mustRun(t, e, "reload")
	if out := mustRun(t, e, "run", "-e", js); !strings.HasPrefix(out, "true 1365 ") {
		t.Errorf("the page after reset: %q", out)
	}
}
