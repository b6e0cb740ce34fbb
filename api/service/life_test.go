package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/tabs"
)

// A click on a link that downloads through a new tab (target=_blank to an
// attachment) says what it downloaded, and the file is in the session's
// download directory under its suggested name, as tab.downloads() lists it.
func TestClickDownloadThroughNewTab(t *testing.T) {
	const body = "quarter,total\nq3,42\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/links", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Links</title><a id=dl href="/report" target=_blank>Report</a>`)
	})
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="q3 report.csv"`)
		fmt.Fprint(w, body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	svc := newService(t)
	ctx := context.Background()
	if res := svc.Open(ctx, &api.OpenRequest{URL: srv.URL + "/links", WaitUntil: "load", Common: api.Common{Name: "dl"}}); res.IsError {
		t.Fatalf("open: %s", res.Text())
	}
	res, err := svc.Call(ctx, "click", json.RawMessage(`{"name": "dl", "target": "#dl"}`))
	if err != nil || res.IsError {
		t.Fatalf("click: %v %+v", err, res)
	}
	text := res.Text()
	if !strings.Contains(text, `"q3 report.csv"`) || strings.Contains(text, "new tab") {
		t.Fatalf("click result %q, want it to name the download and no new tab", text)
	}
	res, err = svc.Call(ctx, "run", json.RawMessage(`{"name": "dl", "code": "for (;;) { const d = tab.downloads()[0]; if (d && d.finished) return d; await wait(50); }"}`))
	if err != nil || res.IsError {
		t.Fatalf("run: %v %s", err, res.Text())
	}
	var d tabs.Download
	if err := json.Unmarshal([]byte(res.Text()), &d); err != nil {
		t.Fatalf("%v: %s", err, res.Text())
	}
	dir, _ := svc.Supervisor().DownloadDir()
	t.Cleanup(func() { os.Remove(d.Path); os.Remove(dir) })
	if d.SuggestedName != "q3 report.csv" || d.Path != filepath.Join(dir, "q3 report.csv") {
		t.Fatalf("download = %+v (dir %s)", d, dir)
	}
	if b, err := os.ReadFile(d.Path); err != nil || string(b) != body {
		t.Fatalf("the file: %q %v", b, err)
	}
}
