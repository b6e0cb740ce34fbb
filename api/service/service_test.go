package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs"
)

// pagesServer serves ../shared/pages/readability/<name>/source.html at /<name>/.
func pagesServer(t *testing.T) *httptest.Server {
	dir := testenv.PagesDir()
	if dir == "" {
		t.Skip("../shared/pages/readability not found (set TABPILOT_PAGES)")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.Trim(r.URL.Path, "/")
		if strings.Contains(name, "/") || name == "" {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, name, "source.html"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newService(t *testing.T) *service.Service {
	svc := service.New(&service.Options{BrowserArgs: testenv.BrowserArgs, MaxTimeout: 60 * time.Second})
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	return svc
}

func TestRealPages(t *testing.T) {
	srv := pagesServer(t)
	svc := newService(t)
	ctx := context.Background()
	cases := []struct {
		page      string
		minLinks  int
		extract   string // in the markdown
		title     string
		wantDir   string
		wantTitle string
	}{
		{page: "wikipedia", minLinks: 50, extract: "Mozilla Foundation", wantTitle: "Mozilla - Wikipedia"},
		{page: "nytimes-1", minLinks: 20, extract: "Sudan", wantTitle: "United States to Lift Sudan Sanctions"},
		{page: "rtl-1", minLinks: 0, extract: "Lorem ipsum dolor sit amet", wantDir: "rtl", wantTitle: "RTL Test"},
		{page: "qq", minLinks: 10, extract: "", wantTitle: ""},
	}
	for _, c := range cases {
		t.Run(c.page, func(t *testing.T) {
			name := c.page
			res := svc.Open(ctx, &api.OpenRequest{URL: srv.URL + "/" + c.page + "/", WaitUntil: "domcontentloaded", Common: api.Common{Name: name, Timeout: 60}})
			if res.IsError {
				t.Fatalf("open: %s", res.Text())
			}
			defer svc.Close(ctx, &api.CloseRequest{Common: api.Common{Name: name}})
			obs := svc.Observe(ctx, &api.ObserveRequest{Common: api.Common{Name: name}, MaxTokens: 100000})
			if obs.IsError {
				t.Fatalf("observe: %s", obs.Text())
			}
			links := 0
			els, ok := obs.Details["elements"].([]any)
			if !ok {
				t.Fatalf("elements = %#v, want a list", obs.Details["elements"])
			}
			for _, e := range els {
				if e.(map[string]any)["role"] == "link" {
					links++
				}
			}
			if links < c.minLinks || (c.minLinks > 0 && links == 0) {
				t.Errorf("observation lists %d links, want at least %d", links, c.minLinks)
			}
			ex := svc.Extract(ctx, &api.ExtractRequest{Common: api.Common{Name: name}})
			if ex.IsError {
				t.Fatalf("extract: %s", ex.Text())
			}
			if !strings.Contains(ex.Text(), c.extract) {
				t.Errorf("extract lacks %q: %.300s", c.extract, ex.Text())
			}
			if c.wantDir != "" && ex.Details["dir"] != c.wantDir {
				t.Errorf("dir = %v, want %s", ex.Details["dir"], c.wantDir)
			}
			if c.wantTitle != "" && ex.Details["title"] != c.wantTitle {
				t.Errorf("title = %v, want %s", ex.Details["title"], c.wantTitle)
			}
			if c.page != "qq" && len(strings.TrimSpace(ex.Text())) < 20 {
				t.Errorf("extract too short: %q", ex.Text())
			}
			shot := svc.Screenshot(ctx, &api.ScreenshotRequest{Common: api.Common{Name: name}})
			if shot.IsError {
				t.Fatalf("screenshot: %s", shot.Text())
			}
			img := shot.Content[1]
			if img.Type != "image" || img.MimeType != "image/jpeg" || len(img.Data) == 0 || len(img.Data)*3/4 > 150*1024 {
				t.Errorf("screenshot content = %s %s %d", img.Type, img.MimeType, len(img.Data))
			}
			meta := shot.Details["screenshots"].([]map[string]any)[0]
			if w := meta["width"].(int); w != 1024 {
				t.Errorf("model copy width = %d, want 1024 (1365 px viewport downscaled)", w)
			}
		})
	}
}

func TestErrorsAndProtocol(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	if _, err := svc.Call(ctx, "nope", nil); !errors.Is(err, api.ErrMethodNotFound) {
		t.Errorf("unknown method: %v", err)
	}
	if _, err := svc.Call(ctx, "open", json.RawMessage(`{"url": 5}`)); !errors.Is(err, api.ErrInvalidParams) || !strings.Contains(err.Error(), `field "url" must be a string, not number`) {
		t.Errorf("wrong type (the error names the field and the type, not Go's): %v", err)
	}
	if _, err := svc.Call(ctx, "observe", json.RawMessage(`{"max_tokens": -5}`)); !errors.Is(err, api.ErrInvalidParams) || !strings.Contains(err.Error(), `"max_tokens" must be at least 0`) {
		t.Errorf("negative max_tokens: %v", err)
	}
	if _, err := svc.Call(ctx, "run", json.RawMessage(`{"code": "return 1", "timeout": "5"}`)); !errors.Is(err, api.ErrInvalidParams) || !strings.Contains(err.Error(), `field "timeout" must be a number, not string`) {
		t.Errorf("string timeout (an embedded field is named as on the wire): %v", err)
	}
	if _, err := svc.Call(ctx, "run", json.RawMessage(`{"code": "return 1", "timeout": -3}`)); !errors.Is(err, api.ErrInvalidParams) || !strings.Contains(err.Error(), `"timeout" must be at least 0`) {
		t.Errorf("negative timeout: %v", err)
	}
	if _, err := svc.Call(ctx, "open", json.RawMessage(`{"waitUntil": "load"}`)); !errors.Is(err, api.ErrInvalidParams) || !strings.Contains(err.Error(), "waitUntil") || !strings.Contains(err.Error(), "wait_until") {
		t.Errorf("unknown field (the error names it and the valid ones): %v", err)
	}
	if _, err := svc.Call(ctx, "fill", json.RawMessage(`{"target": "#q", "value": "x"}`)); !errors.Is(err, api.ErrInvalidParams) || !strings.Contains(err.Error(), "(the fields: name, timeout, target, text)") {
		t.Errorf("unknown field of fill: %v", err)
	}
	res, err := svc.Call(ctx, "run", json.RawMessage(`{"name": "ghost", "code": "return 1"}`))
	if err != nil || !res.IsError || res.ErrorOf().Code != errcode.NoSuchTab || res.ErrorOf().Hint == "" {
		t.Errorf("run on missing tab: %+v %v", res, err)
	}
	res = svc.Open(ctx, &api.OpenRequest{URL: "javascript:alert(1)"})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.BadRequest {
		t.Errorf("javascript: URL: %+v", res)
	}
	res = svc.Open(ctx, &api.OpenRequest{URL: "not a url"})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.BadRequest {
		t.Errorf("bad url: %+v", res)
	}
	res = svc.Open(ctx, &api.OpenRequest{URL: "about:blank"})
	if res.IsError {
		t.Fatal(res.Text())
	}
	res = svc.Run(ctx, &api.RunRequest{Code: `display("before"); throw new TypeError("nope")`})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.ScriptError || !strings.Contains(e.Message, "TypeError: nope") {
		t.Errorf("throw: %+v", res)
	}
	if !strings.Contains(res.Text(), "before") {
		t.Errorf("displayed output lost: %q", res.Text())
	}
	// The tab stays usable.
	res = svc.Run(ctx, &api.RunRequest{Code: `return 6 * 7`})
	if res.IsError || res.Text() != "42" {
		t.Errorf("after throw: %+v", res)
	}
	b, _ := json.Marshal(res)
	var shape map[string]any
	json.Unmarshal(b, &shape)
	if _, ok := shape["content"]; !ok || shape["isError"] != false {
		t.Errorf("result shape: %s", b)
	}
	res = svc.Close(ctx, &api.CloseRequest{Common: api.Common{Name: "ghost"}})
	if res.IsError || res.Text() != `No tab named "ghost"` {
		t.Errorf("close missing: %+v", res)
	}
}

// A click that opens a new tab says so, with the tab's name.
func TestClickAnnouncesPopup(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/new" {
			w.Write([]byte(`<!doctype html><title>New</title><p>new`))
			return
		}
		w.Write([]byte(`<!doctype html><title>Opener</title><a id=l href="/new" target=_blank>Open new</a>
<button id=late onclick="setTimeout(() => window.open('/new'), 200)">Open later</button><button id=idle>Nothing</button>
<button id=written onclick="const w = window.open(''); w.document.write('<title>Written</title><p>written'); w.document.close()">Write one</button>`))
	}))
	t.Cleanup(srv.Close)
	svc := newService(t)
	ctx := context.Background()
	if res := svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "op"}, URL: srv.URL + "/", WaitUntil: "load"}); res.IsError {
		t.Fatalf("open: %s", res.Text())
	}
	res := svc.Act(ctx, "click", &api.ActRequest{Common: api.Common{Name: "op"}, Target: "#l"})
	if res.IsError || !strings.Contains(res.Text(), `it opened a new tab "op-popup-1"`) {
		t.Fatalf("click: %s", res.Text())
	}
	if pops, ok := res.Details["popups"].([]tabs.Popup); !ok || len(pops) != 1 || pops[0].Name != "op-popup-1" || pops[0].Before {
		t.Fatalf("details popups: %#v", res.Details["popups"])
	}
	// A popup the page opens between two calls (from a timer the first
	// one's click set) is not the second one's doing: it says so.
	res = svc.Act(ctx, "click", &api.ActRequest{Common: api.Common{Name: "op"}, Target: "#late"})
	if res.IsError || strings.Contains(res.Text(), "new tab") {
		t.Fatalf("click on #late: %s", res.Text())
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, err := svc.Supervisor().Tab("op-popup-2"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the late popup never opened")
		}
		time.Sleep(20 * time.Millisecond)
	}
	res = svc.Act(ctx, "click", &api.ActRequest{Common: api.Common{Name: "op"}, Target: "#idle"})
	if res.IsError || !strings.Contains(res.Text(), `; before this call, the page opened a new tab "op-popup-2"`) {
		t.Fatalf("click on #idle: %s", res.Text())
	}
	if pops, ok := res.Details["popups"].([]tabs.Popup); !ok || len(pops) != 1 || !pops[0].Before {
		t.Fatalf("details popups of the click on #idle: %#v", res.Details["popups"])
	}
	// An observation or a screenshot after such a popup says so too.
	waitPopup := func(name string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			if _, err := svc.Supervisor().Tab(name); err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the late popup %s never opened", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for i, call := range []func() *api.Result{
		func() *api.Result { return svc.Observe(ctx, &api.ObserveRequest{Common: api.Common{Name: "op"}}) },
		func() *api.Result { return svc.Screenshot(ctx, &api.ScreenshotRequest{Common: api.Common{Name: "op"}}) },
	} {
		if res := svc.Act(ctx, "click", &api.ActRequest{Common: api.Common{Name: "op"}, Target: "#late"}); res.IsError {
			t.Fatalf("click on #late: %s", res.Text())
		}
		name := fmt.Sprintf("op-popup-%d", 3+i)
		waitPopup(name)
		res := call()
		if want := fmt.Sprintf("note: before this call, the page opened a new tab %q", name); res.IsError || !strings.Contains(res.Text(), want) {
			t.Fatalf("%s after a popup: %s; want %q", res.Details["action"], res.Text(), want)
		}
		if pops, ok := res.Details["popups"].([]tabs.Popup); !ok || len(pops) != 1 || pops[0].Name != name || !pops[0].Before {
			t.Fatalf("details popups of %s: %#v", res.Details["action"], res.Details["popups"])
		}
	}
	// A popup that navigates nowhere (window.open() with no URL, then
	// written) is its click's too.
	res = svc.Act(ctx, "click", &api.ActRequest{Common: api.Common{Name: "op"}, Target: "#written"})
	if res.IsError || !strings.Contains(res.Text(), `; it opened a new tab "op-popup-5"`) {
		t.Fatalf("click on #written: %s", res.Text())
	}
}

// open says when the page is the server's error page, and gives the
// document's HTTP status in details.
func TestOpenReportsHTTPStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`<!doctype html><title>Not here</title>`))
			return
		}
		w.Write([]byte(`<!doctype html><title>Here</title>`))
	}))
	t.Cleanup(srv.Close)
	svc := newService(t)
	ctx := context.Background()
	res := svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "st"}, URL: srv.URL + "/missing", WaitUntil: "load"})
	if res.IsError || !strings.Contains(res.Text(), "(HTTP 404 Not Found)") || res.Details["status"] != int64(404) {
		t.Fatalf("open of a 404: %s %v", res.Text(), res.Details["status"])
	}
	res = svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "st"}, URL: srv.URL + "/", WaitUntil: "load"})
	if res.IsError || strings.Contains(res.Text(), "HTTP") || res.Details["status"] != int64(200) {
		t.Fatalf("open of a 200: %s %v", res.Text(), res.Details["status"])
	}
}

// TestReloadSaysWhatItWaitedFor: a reload of a page whose image never
// ends returns after the wait for load (5 s) with the note saying so, in
// the text and in details.notes, as open gives its notes.
func TestReloadSaysWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/never.png" {
			w.Header().Set("Content-Type", "image/png")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			select {
			case <-done:
			case <-r.Context().Done():
			}
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Hung image</title><h1>Waiting</h1><img alt="" src="/never.png">`)
	}))
	defer srv.Close()
	defer close(done)
	svc := newService(t)
	ctx := context.Background()
	if res, err := svc.Call(ctx, "open", json.RawMessage(`{"name":"hung","url":"`+srv.URL+`/","wait_until":"domcontentloaded"}`)); err != nil || res.IsError {
		t.Fatalf("open: %v %v", err, res)
	}
	res, err := svc.Call(ctx, "reload", json.RawMessage(`{"name":"hung"}`))
	if err != nil || res.IsError {
		t.Fatalf("reload: %v %v", err, res)
	}
	b, _ := json.Marshal(res.Details)
	var d struct {
		Notes []string `json:"notes"`
	}
	json.Unmarshal(b, &d)
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "had not fired load within 5s") || !strings.Contains(res.Text(), "Note: "+d.Notes[0]) {
		t.Errorf("reload of a page that never loads: %q, notes %q", res.Text(), d.Notes)
	}
}
