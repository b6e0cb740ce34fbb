package script_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/tabs"
)

// loadServer serves pages whose requests outlive their load event, and
// counts the hits of each path.
type loadServer struct {
	url  string
	hits map[string]*atomic.Int64
}

func newLoadServer(t *testing.T) *loadServer {
	t.Helper()
	ls := &loadServer{hits: map[string]*atomic.Int64{}}
	for _, p := range []string{"/slowfetch", "/slow-data", "/hang", "/never"} {
		ls.hits[p] = new(atomic.Int64)
	}
	done := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slowfetch", func(w http.ResponseWriter, r *http.Request) {
		ls.hits["/slowfetch"].Add(1)
		fmt.Fprint(w, `<!doctype html><title>Waiting</title><script>fetch('/slow-data').then((r) => r.text()).then((t) => { document.title = t; });</script>`)
	})
	mux.HandleFunc("/slow-data", func(w http.ResponseWriter, r *http.Request) {
		ls.hits["/slow-data"].Add(1)
		time.Sleep(1500 * time.Millisecond)
		fmt.Fprint(w, "done")
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		ls.hits["/hang"].Add(1)
		fmt.Fprint(w, `<!doctype html><title>Hang</title><script>fetch('/never?x=1');</script>`)
	})
	mux.HandleFunc("/never", func(w http.ResponseWriter, r *http.Request) {
		ls.hits["/never"].Add(1)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { close(done); srv.Close() })
	ls.url = srv.URL
	return ls
}

// tab.waitForLoadState waits on the page as it is: networkidle resolves
// once a slow fetch has finished, load and domcontentloaded reached
// already resolve at once, and nothing is reloaded.
func TestWaitForLoadState(t *testing.T) {
	t.Parallel()
	ls := newLoadServer(t)
	name := openAt(t, ls.url+"/slowfetch", tabs.OpenOptions{WaitUntil: "load"})
	got := result(t, name, `
const t0 = Date.now();
await tab.waitForLoadState('load');
await tab.waitForLoadState('domcontentloaded');
const quick = Date.now() - t0;
await tab.waitForLoadState('networkidle', {timeout: 10000, idleMs: 300});
return [quick, await tab.title()].join('|');`)
	parts := strings.Split(got, "|")
	quick, _ := strconv.Atoi(parts[0])
	if len(parts) != 2 || parts[1] != "done" || quick > 500 {
		t.Fatalf("got %q: want load and domcontentloaded at once, then networkidle after the fetch (title done)", got)
	}
	if a, b := ls.hits["/slowfetch"].Load(), ls.hits["/slow-data"].Load(); a != 1 || b != 1 {
		t.Fatalf("hits: page %d, data %d; want one each (no reload)", a, b)
	}
}

// A request that never ends makes networkidle fail with timeout, naming it.
func TestWaitForLoadStateTimeoutNamesRequests(t *testing.T) {
	t.Parallel()
	ls := newLoadServer(t)
	name := openAt(t, ls.url+"/hang", tabs.OpenOptions{WaitUntil: "load"})
	got := result(t, name, `
const t0 = Date.now();
try { await tab.waitForLoadState('networkidle', {timeout: 1500}); return 'resolved'; }
catch (e) { return [e.code, Date.now() - t0, e.message].join('|'); }`)
	parts := strings.SplitN(got, "|", 3)
	if len(parts) != 3 || parts[0] != "timeout" || !strings.Contains(parts[2], ls.url+"/never?x=1") || !strings.Contains(parts[2], "1 request(s) still pending") {
		t.Fatalf("got %q, want a timeout naming the pending request", got)
	}
	if ms, _ := strconv.Atoi(parts[1]); ms < 1400 || ms > 4000 {
		t.Errorf("failed after %d ms, want about the 1500 ms timeout", ms)
	}
	if r := result(t, name, `try { await tab.waitForLoadState('idle'); } catch (e) { return e.code; }`); r != "bad_request" {
		t.Errorf("an unknown state: %q", r)
	}
	if a := ls.hits["/hang"].Load(); a != 1 {
		t.Fatalf("the page was loaded %d times, want once (no reload)", a)
	}
}
