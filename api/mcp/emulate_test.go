package mcp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPDFAndEmulateActions calls pdf and emulate through the browser tool.
func TestPDFAndEmulateActions(t *testing.T) {
	skipShort(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>Paper</title><p>Print this line.</p>`)
	}))
	defer srv.Close()
	cs := connect(t, svc)
	const tab = "paper"
	ok := func(args map[string]any, want string) {
		t.Helper()
		args["name"] = tab
		res := call(t, cs, args)
		if text := resultText(res); res.IsError || !strings.Contains(text, want) {
			t.Fatalf("%v: isError %v, %q; want %q", args, res.IsError, text, want)
		}
	}
	ok(map[string]any{"action": "open", "url": srv.URL + "/"}, "Paper")
	defer call(t, cs, map[string]any{"action": "close", "name": tab})
	ok(map[string]any{"action": "emulate", "device": "Pixel 7", "locale": "de-DE"}, "device Pixel 7")
	ok(map[string]any{"action": "reload"}, "Paper")
	ok(map[string]any{"action": "run", "code": "return await tab.evaluate(() => innerWidth + ' ' + navigator.language)"}, "412 de-DE")
	path := filepath.Join(t.TempDir(), "paper.pdf")
	ok(map[string]any{"action": "pdf", "save": path, "format": "A4", "landscape": true}, "Printed 1 page (A4, landscape) to "+path)
	if b, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(b), "%PDF-") {
		t.Errorf("the PDF: %v", err)
	}
	ok(map[string]any{"action": "emulate", "list": true}, "iPhone 15: phone")
	ok(map[string]any{"action": "emulate", "reset": true}, "Emulation reset")
}
