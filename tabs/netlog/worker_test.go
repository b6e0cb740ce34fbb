package netlog_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/tabs/netlog"
)

// TestWorkerScript: the main scripts of the workers a page starts, whose
// ends Chromium reports to the workers' targets only, are recorded as
// workers' (Worker), unfinished; the one that came over the network has
// its status, the one from data: none. The page's own script is no
// worker's, and finishes.
func TestWorkerScript(t *testing.T) {
	ctx := browserTab(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>workers</title><link rel="icon" href="data:,"><script src="/page.js"></script>
<script>let n = 0; for (const w of [new Worker('/w.js'), new Worker('data:text/javascript,postMessage(2)')]) w.onmessage = () => { if (++n === 2) window.done = true; };</script>`)
	})
	mux.HandleFunc("/page.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `window.pageScript = true;`)
	})
	mux.HandleFunc("/w.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `postMessage(1);`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	l := netlog.New(&netlog.Options{BodyDir: t.TempDir()})
	t.Cleanup(func() { l.Close() })
	drain := feed(t, ctx, l)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitDone(t, ctx)
	drain()
	// The worker script's status comes in Network.responseReceivedExtraInfo,
	// from the network service, which may come after the drain.
	var w netlog.Entry
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if w = find(t, l, netlog.Filter{URL: "**/w.js"}); w.Status != 0 {
			break
		}
	}
	if !w.Worker || w.Finished || w.Status != 200 || w.Type != "script" {
		t.Errorf("w.js: worker %v, finished %v, status %d, type %s; want a worker's script, unfinished, 200", w.Worker, w.Finished, w.Status, w.Type)
	}
	scripts, err := l.Requests(netlog.Filter{Type: "script"})
	if err != nil {
		t.Fatal(err)
	}
	var data []netlog.Entry
	for _, e := range scripts {
		if strings.HasPrefix(e.URL, "data:") {
			data = append(data, e)
		}
	}
	if len(data) != 1 || !data[0].Worker || data[0].Finished || data[0].Status != 0 {
		t.Errorf("data: worker: %+v; want one worker's script, unfinished, with no status", data)
	}
	if p := find(t, l, netlog.Filter{URL: "**/page.js"}); p.Worker || !p.Finished || p.Status != 200 {
		t.Errorf("page.js: worker %v, finished %v, status %d; want the page's script, finished, 200", p.Worker, p.Finished, p.Status)
	}
}
