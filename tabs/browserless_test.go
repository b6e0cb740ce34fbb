package tabs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs"
)

// The tests of tabs on a real browserless 2 (testenv.NeedBrowserless):
// each websocket to its /chromium route is a browser of its own, which
// browserless launches with the launch options of the URL and closes
// when the connection ends.

// blApp is the app of the test browserless: the token in the query, the
// test flags as the launch options, a session timeout (ms) past the
// test's, and trackingID (when not "") as the session's name in
// browserless's management API.
func blApp(addr, trackingID string) *tabs.App {
	launch, _ := json.Marshal(map[string]any{"args": rootArgs()})
	q := url.Values{"token": {testenv.BrowserlessToken}, "timeout": {"120000"}, "launch": {string(launch)}}
	if trackingID != "" {
		q.Set("trackingId", trackingID)
	}
	return &tabs.App{CDPURL: "ws://" + addr + "/chromium?" + q.Encode(), ConnectTimeout: 30 * time.Second}
}

// blSessions lists the browsers browserless runs, failing the test when
// it cannot.
func blSessions(t *testing.T, addr string) []testenv.BrowserlessSession {
	t.Helper()
	ss, err := testenv.BrowserlessSessions(addr)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// waitBrowserless polls browserless's sessions until ok holds of them,
// for up to d, and returns the last list, whether ok held, and the last error. A listing that fails
// (browserless answers 500 when a browser closes under it) is retried.
func waitBrowserless(addr string, d time.Duration, ok func([]testenv.BrowserlessSession) bool) ([]testenv.BrowserlessSession, bool, error) {
	deadline := time.Now().Add(d)
	for {
		ss, err := testenv.BrowserlessSessions(addr)
		if err == nil && ok(ss) {
			return ss, true, nil
		}
		if time.Now().After(deadline) {
			return ss, false, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBrowserlessAgents: agents at once on browserless, each with a
// supervisor of its own (one daemon per agent, so one browserless
// browser each): each sets a cookie on the shared cookie origin and sees
// only its own (a shared browser would show every agent the last one
// set), and each opens /form, observes, clicks and closes; when they are
// done browserless runs no browser. 4 in the short form, 8 with
// TABPILOT_POOLS_LONG=1 (make pools).
func TestBrowserlessAgents(t *testing.T) {
	addr := testenv.NeedBrowserless(t)
	n := 4
	if os.Getenv("TABPILOT_POOLS_LONG") != "" {
		n = 8
	}
	cb := cookieBase(t)
	ctx := context.Background()
	sups := make([]*tabs.Supervisor, n)
	for i := range sups {
		sups[i] = poolSup(t)
	}
	each := func(f func(i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				if err := f(i); err != nil {
					errs[i] = fmt.Errorf("agent %d: %w", i, err)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	// All cookies are set before any is read.
	each(func(i int) error {
		res, err := sups[i].Open(ctx, tabs.OpenOptions{Name: "c", App: blApp(addr, ""), URL: fmt.Sprintf("%s/cookie?v=agent%d", cb, i), WaitUntil: "load"})
		if err != nil {
			return err
		}
		if res.Browser != "connected" || res.Title != "Cookie" {
			return fmt.Errorf("open = %+v", res)
		}
		return nil
	})
	t.Logf("%d agents connected and set their cookies in %v", n, time.Since(t0))
	if ss := blSessions(t, addr); len(ss) != n {
		t.Fatalf("browserless runs %d browsers for %d agents: %+v", len(ss), n, ss)
	}
	for i, s := range sups {
		if got, want := cookieOf(t, s, "c"), fmt.Sprintf("who=agent%d", i); got != want {
			t.Errorf("agent %d sees document.cookie %q, want %q", i, got, want)
		}
	}
	t1 := time.Now()
	each(func(i int) error { return agentRound(sups[i], tabs.OpenOptions{Name: "agent", App: blApp(addr, "")}) })
	t.Logf("%d agents opened, observed, clicked and closed in %v", n, time.Since(t1))
	for _, s := range sups {
		if _, err := s.Close(ctx, "c", false, 0); err != nil {
			t.Fatal(err)
		}
	}
	if left, ok, err := waitBrowserless(addr, 15*time.Second, func(ss []testenv.BrowserlessSession) bool { return len(ss) == 0 }); !ok {
		t.Fatalf("browsers left on browserless after the agents closed their tabs: %+v (%v)", left, err)
	}
}

// TestBrowserlessSessionKilled: a session browserless ends behind
// tabpilot's back (GET /kill/<trackingId>, its management API) makes the
// tab not_alive with the reconnect hint and no token in it, and the next
// open of the same app makes a new browserless browser.
func TestBrowserlessSessionKilled(t *testing.T) {
	addr := testenv.NeedBrowserless(t)
	s := poolSup(t)
	ctx := context.Background()
	const track = "tp-killed"
	app := blApp(addr, track)
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "k", App: app, URL: srv.URL + "/form", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	mine := func(ss []testenv.BrowserlessSession) string {
		for _, x := range ss {
			if x.TrackingID == track {
				return x.BrowserID
			}
		}
		return ""
	}
	killed := mine(blSessions(t, addr))
	if killed == "" {
		t.Fatalf("browserless lists no session %s", track)
	}
	if code := testenv.BrowserlessGet(addr, "/kill/"+track); code != http.StatusNoContent {
		t.Fatalf("GET /kill/%s: HTTP %d, want 204", track, code)
	}
	deadline := time.Now().Add(15 * time.Second)
	var terr error
	for time.Now().Before(deadline) {
		if _, terr = s.Tab("k"); terr != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var te *tabs.Error
	if errcode.Of(terr) != errcode.NotAlive || !errors.As(terr, &te) || !strings.Contains(te.Hint, "open the tab again to reconnect") {
		t.Fatalf("after the kill: %v (%+v), want not_alive with the reconnect hint", terr, te)
	}
	if strings.Contains(fmt.Sprint(terr, te.Hint), testenv.BrowserlessToken) {
		t.Fatalf("the error shows the token: %v %s", terr, te.Hint)
	}
	// The same trackingId again: browserless refuses one that a listed
	// session has, and the killed one is gone (here it is by the time the
	// tab is not_alive; the poll only bounds a slow close).
	if ss, ok, err := waitBrowserless(addr, 15*time.Second, func(ss []testenv.BrowserlessSession) bool { return mine(ss) == "" }); !ok {
		t.Fatalf("the killed session is still listed: %+v (%v)", ss, err)
	}
	res, err := s.Open(ctx, tabs.OpenOptions{Name: "k", App: app, URL: srv.URL + "/next", WaitUntil: "load"})
	if err != nil || res.Title != "Next" {
		t.Fatalf("reopen after the kill: %+v, %v", res, err)
	}
	if id := mine(blSessions(t, addr)); id == "" || id == killed {
		t.Fatalf("after the reopen browserless's session %s is %q, want a new one (the killed one was %s)", track, id, killed)
	}
	if err := agentRound(s, tabs.OpenOptions{Name: "k2", App: app}); err != nil {
		t.Fatal(err)
	}
}
