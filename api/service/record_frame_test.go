package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/service"
)

// framesApp is a page on 127.0.0.1 with a "Pay now" button, a
// same-origin iframe ("Same widget") and a cross-site one on localhost
// ("Payments widget", which Chromium puts in another process), and an
// untitled same-origin one named "legacy", each with a "Pay now" button
// of its own; each click is posted to /hit?who=….
type framesApp struct {
	mu   sync.Mutex
	hits []string
	srv  *httptest.Server
}

func newFramesApp(t *testing.T) *framesApp {
	a := &framesApp{}
	mux := http.NewServeMux()
	button := func(who string) string {
		return `<button type="button" onclick="fetch('/hit?who=` + who + `', {method: 'POST'})">Pay now</button>`
	}
	mux.HandleFunc("GET /top", func(w http.ResponseWriter, r *http.Request) {
		cross := strings.Replace("http://"+r.Host, "127.0.0.1", "localhost", 1) + "/widget?who=cross"
		fmt.Fprintf(w, `<!doctype html><title>Shop</title><h1>Shop</h1>%s
<iframe title="Same widget" src="/widget?who=same" width="300" height="120"></iframe>
<iframe title="Payments widget" src="%s" width="300" height="120"></iframe>
<iframe name="legacy" src="/widget?who=legacy" width="300" height="120"></iframe>`, button("top"), cross)
	})
	mux.HandleFunc("GET /widget", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Widget</title><p>Widget</p>%s`, button(r.URL.Query().Get("who")))
	})
	mux.HandleFunc("POST /hit", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.hits = append(a.hits, r.URL.Query().Get("who"))
		a.mu.Unlock()
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

// waitHits waits (up to 5 s) for the clicks the server saw to be want,
// then forgets them.
func (a *framesApp) waitHits(t *testing.T, what string, want []string) {
	t.Helper()
	var got []string
	for range 50 {
		a.mu.Lock()
		got = slices.Clone(a.hits)
		a.mu.Unlock()
		if slices.Equal(got, want) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.mu.Lock()
	a.hits = nil
	a.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: server saw clicks %q, want %q", what, got, want)
	}
}

// payButtons returns the numbers of the four "Pay now" buttons (the top
// page's, the same-origin frame's, the cross-site frame's, the untitled
// frame's, in document order), waiting for the cross-site frame to load.
func payButtons(t *testing.T, svc *service.Service, tab string) []string {
	t.Helper()
	var text string
	for range 50 {
		res := must(t, "observe", svc.Observe(context.Background(), &api.ObserveRequest{Common: api.Common{Name: tab}}))
		text = res.Text()
		b, _ := json.Marshal(res.Details["elements"])
		var els []struct {
			ID    int    `json:"id"`
			Role  string `json:"role"`
			Name  string `json:"name"`
			Frame string `json:"frame"`
		}
		_ = json.Unmarshal(b, &els)
		var ids []string
		var frames []string
		for _, e := range els {
			if e.Role == "button" && e.Name == "Pay now" {
				ids = append(ids, fmt.Sprint(e.ID))
				frames = append(frames, e.Frame)
			}
		}
		if len(ids) == 4 {
			if frames[0] != "" || frames[1] == "" || frames[2] == "" || frames[3] == "" || frames[1] == frames[2] {
				t.Fatalf("Pay now buttons in frames %q:\n%s", frames, text)
			}
			return ids
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("want 4 Pay now buttons:\n%s", text)
	return nil
}

// TestRecordReplayFrames records clicks by number on same-named buttons
// of the top page, two same-process iframes and an out-of-process one,
// checks the locators written (each frame's named by its iframe's title,
// or its name when it has none),
// and replays the script on a fresh tab: the server sees the same clicks.
func TestRecordReplayFrames(t *testing.T) {
	app := newFramesApp(t)
	svc := newService(t)
	ctx := context.Background()
	must(t, "record start", svc.Record(ctx, &api.RecordRequest{Op: "start"}))
	c := api.Common{Name: "main", Timeout: 60}
	must(t, "open", svc.Open(ctx, &api.OpenRequest{Common: c, URL: app.srv.URL + "/top"}))
	ids := payButtons(t, svc, "main")
	for _, i := range []int{2, 1, 0, 3} {
		must(t, "click", svc.Act(ctx, "click", &api.ActRequest{Common: c, Target: api.Target(ids[i])}))
	}
	live := []string{"cross", "same", "top", "legacy"}
	app.waitHits(t, "live", live)
	file := filepath.Join(t.TempDir(), "frames.js")
	must(t, "record stop", svc.Record(ctx, &api.RecordRequest{Op: "stop", Save: file}))
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	t.Logf("recorded:\n%s", script)
	for _, w := range []string{
		"// step 2\nawait tab.click('iframe[title=\"Payments widget\"] >> aria/Pay now[role=\"button\"]');\n",
		"// step 3\nawait tab.click('iframe[title=\"Same widget\"] >> aria/Pay now[role=\"button\"]');\n",
		"// step 4\nawait tab.click('aria/Pay now[role=\"button\"]');\n",
		"// step 5\nawait tab.click('iframe[name=\"legacy\"] >> aria/Pay now[role=\"button\"]');\n",
	} {
		if !strings.Contains(script, w) {
			t.Errorf("script lacks %q", w)
		}
	}
	if strings.Contains(script, "FIXME") {
		t.Errorf("a step has no verified locator:\n%s", script)
	}
	rc := api.Common{Name: "replay", Timeout: 60}
	must(t, "open replay tab", svc.Open(ctx, &api.OpenRequest{Common: rc, URL: "about:blank", Context: "replay"}))
	rep := must(t, "replay", svc.Replay(ctx, &api.ReplayRequest{Common: rc, File: file}))
	if rep.Details["ran"] != 5 {
		t.Errorf("replay ran %v steps, want 5: %s", rep.Details["ran"], rep.Text())
	}
	app.waitHits(t, "replay", live)
}

// TestRecordReplayFrameText records a click by number on an element of a
// same-origin iframe that has no role and no attribute to name it by (a
// span with a click handler), whose locator is its text inside the
// iframe, and replays it: the text/ part of the chain resolves in the
// frame, as it did when the recorder checked it.
func TestRecordReplayFrameText(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /top", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Terms</title><h1>Terms</h1><iframe title="W3" src="/inner" width="300" height="120"></iframe>`)
	})
	mux.HandleFunc("GET /inner", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p>Read on</p><span style="cursor:pointer" onclick="fetch('/hit', {method: 'POST'})">Continue here</span>`)
	})
	mux.HandleFunc("POST /hit", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, "hit")
		mu.Unlock()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	waitHits := func(what string, n int) {
		t.Helper()
		for range 50 {
			mu.Lock()
			got := len(hits)
			mu.Unlock()
			if got >= n {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: the server saw %d clicks, want %d", what, len(hits), n)
	}
	svc := newService(t)
	ctx := context.Background()
	must(t, "record start", svc.Record(ctx, &api.RecordRequest{Op: "start"}))
	c := api.Common{Name: "main", Timeout: 60}
	must(t, "open", svc.Open(ctx, &api.OpenRequest{Common: c, URL: srv.URL + "/top"}))
	var id string
	for range 50 {
		res := must(t, "observe", svc.Observe(ctx, &api.ObserveRequest{Common: c}))
		b, _ := json.Marshal(res.Details["elements"])
		var els []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		}
		_ = json.Unmarshal(b, &els)
		for _, e := range els {
			if e.Name == "Continue here" {
				id = fmt.Sprint(e.ID)
			}
		}
		if id != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("no element named Continue here in the observation")
	}
	must(t, "click", svc.Act(ctx, "click", &api.ActRequest{Common: c, Target: api.Target(id)}))
	waitHits("live", 1)
	file := filepath.Join(t.TempDir(), "text.js")
	must(t, "record stop", svc.Record(ctx, &api.RecordRequest{Op: "stop", Save: file}))
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	if w := "await tab.click('iframe[title=\"W3\"] >> text/Continue here');\n"; !strings.Contains(script, w) || strings.Contains(script, "FIXME") {
		t.Errorf("script lacks %q, or has a FIXME:\n%s", w, script)
	}
	rc := api.Common{Name: "replay", Timeout: 60}
	must(t, "open replay tab", svc.Open(ctx, &api.OpenRequest{Common: rc, URL: "about:blank", Context: "replay"}))
	must(t, "replay", svc.Replay(ctx, &api.ReplayRequest{Common: rc, File: file}))
	waitHits("replay", 2)
}
