package tabs_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/act"
	"github.com/tabpilot/tabpilot/tabs/script"
)

// frameApp serves a page on 127.0.0.1 with a "Pay now" button, a
// same-origin iframe ("Same widget") and a cross-site one on localhost
// ("Payments widget", out of process), each with a "Pay now" button of
// its own. Every click is posted to /hit?who=top|same|cross.
type frameApp struct {
	mu   sync.Mutex
	hits []string
	srv  *httptest.Server
}

func newFrameApp(t *testing.T) *frameApp {
	a := &frameApp{}
	mux := http.NewServeMux()
	button := func(who string) string {
		return `<button type="button" onclick="fetch('/hit?who=` + who + `', {method: 'POST'}).then(() => document.body.dataset.paid = 'yes')">Pay now</button>`
	}
	mux.HandleFunc("GET /top", func(w http.ResponseWriter, r *http.Request) {
		cross := strings.Replace("http://"+r.Host, "127.0.0.1", "localhost", 1) + "/widget?who=cross"
		fmt.Fprintf(w, `<!doctype html><title>Shop</title><h1>Shop</h1>%s
<iframe title="Same widget" src="/widget?who=same" width="300" height="120"></iframe>
<iframe title="Payments widget" src="%s" width="300" height="120"></iframe>`, button("top"), cross)
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

// waitHits waits (up to 5 s) for the server to have seen want, in order.
func (a *frameApp) waitHits(t *testing.T, want []string) {
	t.Helper()
	var got []string
	for range 50 {
		a.mu.Lock()
		got = slices.Clone(a.hits)
		a.mu.Unlock()
		if slices.Equal(got, want) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("server saw clicks %q, want %q", got, want)
}

// TestFrameScopedSelector clicks buttons inside a same-process and an
// out-of-process iframe from a run, by selectors that name the iframe by
// its title, and fills, reads and checks a strict duplicate.
func TestFrameScopedSelector(t *testing.T) {
	t.Parallel()
	app := newFrameApp(t)
	tab := obsOpen(t, app.srv.URL+"/top")
	// The cross-site frame loads on its own: wait for its button.
	run := func(code string) error {
		return sup.Run(context.Background(), tab.Name(), 60*time.Second, script.New(code, nil))
	}
	if err := run(`await tab.waitFor('iframe[title="Payments widget"] >> aria/Pay now[role="button"]')`); err != nil {
		t.Fatalf("wait for the cross-site button: %v", err)
	}
	if err := run(`await tab.click('iframe[title="Payments widget"] >> aria/Pay now[role="button"]')`); err != nil {
		t.Fatalf("click in the out-of-process iframe: %v", err)
	}
	app.waitHits(t, []string{"cross"})
	if err := run(`await tab.click('iframe[title="Same widget"] >> aria/Pay now[role="button"]')`); err != nil {
		t.Fatalf("click in the same-process iframe: %v", err)
	}
	app.waitHits(t, []string{"cross", "same"})
	// CSS parts on both sides; the top page's own button is untouched.
	if err := run(`await tab.click('iframe[title="Same widget"] >> button')`); err != nil {
		t.Fatalf("css in the same-process iframe: %v", err)
	}
	if err := run(`await tab.click('aria/Pay now[role="button"]')`); err != nil {
		t.Fatalf("click in the top page: %v", err)
	}
	app.waitHits(t, []string{"cross", "same", "same", "top"})
	// A part that matches no iframe's content matches nothing.
	// Both frames' buttons, each in its own session: the cross-site one
	// is out of process.
	var ms []act.Found
	err := sup.Run(context.Background(), tab.Name(), 60*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		ms, err = tb.MatchNodes(ctx, `iframe >> aria/Pay now[role="button"]`)
		return err
	}))
	if err != nil || len(ms) != 2 || ms[0].Session == ms[1].Session {
		t.Errorf("iframe >> Pay now matched %+v (err %v), want 2 in two sessions", ms, err)
	}
	// Strict (a replay's rule): the chain into both frames is ambiguous.
	err = sup.Run(context.Background(), tab.Name(), 60*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(act.WithStrict(ctx), tabs.Target{Selector: `iframe >> aria/Pay now[role="button"]`})
		return err
	}))
	if err == nil || !strings.Contains(err.Error(), "matches 2 elements") {
		t.Errorf("strict click of two frames' buttons: %v", err)
	}
}
