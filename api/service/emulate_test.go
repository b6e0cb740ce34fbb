package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/errcode"
)

// TestPDFAndEmulate drives pdf and emulate through Service.Call, as the
// JSON-RPC door does: a PDF of the page with its sentence, an iPhone 15
// whose navigator.userAgent is the header the server got, the device
// list, a bad device, and a reset.
func TestPDFAndEmulate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>Print me</title><p>A sentence for the printer.</p><p id=ua>%s</p>`, r.Header.Get("User-Agent"))
	}))
	defer srv.Close()
	svc := newService(t)
	ctx := context.Background()
	call := func(method, params string) (string, map[string]any, bool) {
		t.Helper()
		res, err := svc.Call(ctx, method, json.RawMessage(params))
		if err != nil {
			t.Fatalf("%s %s: %v", method, params, err)
		}
		b, _ := json.Marshal(res.Details)
		var d map[string]any
		json.Unmarshal(b, &d)
		return res.Text(), d, res.IsError
	}
	if text, _, isErr := call("open", `{"name":"p","url":"`+srv.URL+`/"}`); isErr {
		t.Fatal(text)
	}
	path := filepath.Join(t.TempDir(), "p.pdf")
	text, d, isErr := call("pdf", `{"name":"p","save":"`+path+`","format":"A5","print_background":true,"margins":{"top":"2cm"}}`)
	if isErr || d["path"] != path || d["pages"] != 1.0 || d["bytes"].(float64) < 1000 || !strings.Contains(text, "Printed 1 page (A5) to "+path) {
		t.Fatalf("pdf: %q %v", text, d)
	}
	if _, err := exec.LookPath("pdftotext"); err == nil {
		out, err := exec.Command("pdftotext", path, "-").Output()
		if err != nil || !strings.Contains(string(out), "A sentence for the printer.") {
			t.Errorf("pdftotext: %q %v", out, err)
		}
	}

	text, d, isErr = call("emulate", `{"name":"p","device":"iPhone 15","timezone":"Europe/Paris"}`)
	if isErr || !strings.Contains(text, "device iPhone 15") || !strings.Contains(text, "reload") || d["options"].(map[string]any)["device"] != "iPhone 15" {
		t.Fatalf("emulate: %q %v", text, d)
	}
	if text, _, isErr := call("reload", `{"name":"p"}`); isErr {
		t.Fatal(text)
	}
	text, _, _ = call("run", `{"name":"p","code":"return await tab.evaluate(() => [navigator.userAgent === document.getElementById('ua').textContent, innerWidth, Intl.DateTimeFormat().resolvedOptions().timeZone])"}`)
	if !strings.Contains(text, `true`) || !strings.Contains(text, "393") || !strings.Contains(text, "Europe/Paris") {
		t.Errorf("the page after emulate: %s", text)
	}

	text, d, isErr = call("emulate", `{"list":true}`)
	if isErr || !strings.Contains(text, "iPhone 15: phone, 393x659@3x") || len(d["devices"].([]any)) < 6 {
		t.Errorf("list: %q", text)
	}
	_, d, isErr = call("emulate", `{"name":"p","device":"Nokia 3310"}`)
	e, _ := d["error"].(map[string]any)
	if !isErr || e["code"] != string(errcode.BadRequest) || !strings.Contains(e["hint"].(string), "Pixel 7") {
		t.Errorf("bad device: %v", d)
	}
	if text, _, isErr := call("emulate", `{"name":"p","reset":true,"device":"Pixel 7"}`); !isErr {
		t.Errorf("reset with a device: %q", text)
	}
	if text, _, isErr := call("emulate", `{"name":"p","reset":true}`); isErr || !strings.HasPrefix(text, "Emulation reset") {
		t.Errorf("reset: %q", text)
	}
	call("reload", `{"name":"p"}`)
	text, _, _ = call("run", `{"name":"p","code":"return await tab.evaluate(() => [navigator.userAgent === document.getElementById('ua').textContent, innerWidth, navigator.maxTouchPoints])"}`)
	if !strings.Contains(text, "true") || strings.Contains(text, "393") {
		t.Errorf("the page after reset: %s", text)
	}
}
