package browser

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
)

// gridAgents is how many agents TestGridAgents runs at once: 4 in the
// short form, 8 with -grid.agents=8 or TABPILOT_POOLS_LONG=1 (make pools).
var gridAgents = flag.Int("grid.agents", 0, "agents at once in TestGridAgents (default 4, or 8 with TABPILOT_POOLS_LONG=1)")

func agents() int {
	if *gridAgents > 0 {
		return *gridAgents
	}
	if os.Getenv("TABPILOT_POOLS_LONG") != "" {
		return 8
	}
	return 4
}

// gridKey is the key of a browser on the test Grid, the credentials in
// the URL, keepalive every keep.
func gridKey(t testing.TB, base string, keep time.Duration) Key {
	t.Helper()
	k, err := GridKey(strings.Replace(base, "http://", "http://"+gridUser+":"+gridPassword+"@", 1),
		&GridOptions{Binary: "/usr/bin/chromium", KeepAlive: keep})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRewriteCDPHost(t *testing.T) {
	for _, c := range []struct{ cdp, grid, want string }{
		{"ws://10.0.3.7:5555/session/abc/se/cdp", "http://grid.example:4444", "ws://grid.example:4444/session/abc/se/cdp"},
		{"ws://172.17.0.2:4444/session/abc/se/cdp", "https://u:p@grid.example", "wss://grid.example/session/abc/se/cdp"},
		{"wss://node:4444/wd/hub/session/abc/se/cdp?x=1", "http://127.0.0.1:4444/wd/hub", "ws://127.0.0.1:4444/wd/hub/session/abc/se/cdp?x=1"},
	} {
		got, err := RewriteCDPHost(c.cdp, c.grid)
		if err != nil || got != c.want {
			t.Errorf("RewriteCDPHost(%q, %q) = %q, %v; want %q", c.cdp, c.grid, got, err, c.want)
		}
	}
	if _, err := RewriteCDPHost("not a url", "http://g:1"); err == nil {
		t.Error("RewriteCDPHost of a bad se:cdp succeeded")
	}
}

func TestGridKey(t *testing.T) {
	a, err := GridKey("http://alice:s3cretpw@grid.example:4444/", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GridKey("http://grid.example:4444", &GridOptions{User: "alice", Password: "s3cretpw"})
	c, _ := GridKey("http://grid.example:4444", &GridOptions{User: "alice", Password: "other"})
	if a != b || a == c || a.Endpoint != "http://grid.example:4444" || a.Kind != Grid {
		t.Fatalf("a %v b %v c %v: a==b %v a==c %v", a, b, c, a == b, a == c)
	}
	if s := fmt.Sprintf("%v %#v", a, a); strings.Contains(s, "s3cret") || !strings.Contains(s, "basic auth") {
		t.Fatalf("the key shows %q", s)
	}
	if got := a.remote.httpHeader().Get("Authorization"); got != "Basic YWxpY2U6czNjcmV0cHc=" {
		t.Fatalf("Authorization = %q", got)
	}
	for _, bad := range []string{"ws://grid:4444", "grid:4444", "http://grid:4444/?x=1"} {
		if _, err := GridKey(bad, nil); err == nil {
			t.Errorf("GridKey(%q) succeeded", bad)
		}
	}
}

// TestGridSession opens a browser on a real Grid, navigates a page served
// here and evaluates in it; keeps the session past the Grid's idle
// timeout with CDP traffic only (the keepalive is what the Grid sees);
// and on Release the WebDriver session is gone from the Grid's /status.
func TestGridSession(t *testing.T) {
	t.Parallel()
	base := needGrid(t)
	ctx := context.Background()
	reg := NewRegistry(ctx, &Options{Args: testArgs()})
	defer reg.Close(ctx)
	key := gridKey(t, base, 3*time.Second)
	t0 := time.Now()
	h, err := reg.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("grid connect: %v", time.Since(t0))
	id := h.GridSession()
	if h.Kind() != Grid || id == "" || !gridSessions(t, base)[id] || !strings.Contains(h.Version(), "Chrome") {
		t.Fatalf("kind %s session %q version %q sessions %v", h.Kind(), id, h.Version(), gridSessions(t, base))
	}
	u := page(t, "grid")
	if got := roundTrip(ctx, t, h, u); got != "grid/grid" {
		t.Fatalf("title = %q", got)
	}

	// CDP traffic only, for longer than the Grid's idle timeout.
	tctx, cancel, err := h.NewTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	idle := time.Duration(gridSessionTimeout+5) * time.Second
	for end := time.Now().Add(idle); time.Now().Before(end); time.Sleep(time.Second) {
		if _, err := chromedp.Run(tctx, chromedp.Evaluate[int](`1+1`)); err != nil {
			t.Fatalf("CDP traffic after %v: %v", idle-time.Until(end), err)
		}
	}
	if !h.Alive() || !gridSessions(t, base)[id] {
		t.Fatalf("after %v of CDP-only traffic: alive %v, sessions %v", idle, h.Alive(), gridSessions(t, base))
	}
	if got := roundTrip(ctx, t, h, u); got != "grid/grid" {
		t.Fatalf("title after the idle timeout = %q", got)
	}
	cancel()
	if last, err := reg.Release(ctx, h); !last || err != nil {
		t.Fatalf("Release = %v, %v", last, err)
	}
	if gridSessions(t, base)[id] {
		t.Fatalf("session %s still on the Grid after Release", id)
	}
}

// TestGridSessionKilled deletes the WebDriver session behind the
// handle's back: the handle is not alive, with the reconnect hint, and
// the registry's next Acquire opens a new session.
func TestGridSessionKilled(t *testing.T) {
	t.Parallel()
	base := needGrid(t)
	ctx := context.Background()
	reg := NewRegistry(ctx, &Options{Args: testArgs()})
	defer reg.Close(ctx)
	key := gridKey(t, base, 2*time.Second)
	h, err := reg.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if st := gridCall(t, http.MethodDelete, base+"/session/"+h.GridSession(), nil); st != http.StatusOK {
		t.Fatalf("DELETE session: HTTP %d", st)
	}
	select {
	case <-h.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the handle is alive 10 s after the Grid ended its session")
	}
	_, _, err = h.NewTab(ctx)
	var e *Error
	if !errors.As(err, &e) || e.Code != errcode.NotAlive || !strings.Contains(e.Hint, "reconnect") {
		t.Fatalf("NewTab on a killed session: %v", err)
	}
	h2, err := reg.Acquire(ctx, key)
	if err != nil || h2 == h || h2.GridSession() == h.GridSession() {
		t.Fatalf("reopen: %v", err)
	}
	if got := roundTrip(ctx, t, h2, page(t, "reopened")); got != "reopened/reopened" {
		t.Fatalf("title = %q", got)
	}
	if _, err := reg.Release(ctx, h2); err != nil {
		t.Fatal(err)
	}
}

// TestGridAgents runs several agents at once, each with its own registry
// (one daemon per agent, one remote browser each): each opens, navigates,
// sets a cookie that none of the others sees, and closes; then the Grid
// holds none of their sessions.
func TestGridAgents(t *testing.T) {
	base := needGrid(t)
	n := agents()
	ctx := context.Background()
	srv := page(t, "agent")
	var wg sync.WaitGroup
	errs := make([]error, n)
	ids := make([]string, n)
	cookies := make([]string, n)
	ready := make(chan struct{})
	var mu sync.Mutex
	set := 0
	t0 := time.Now()
	for i := range n {
		wg.Go(func() {
			errs[i] = func() error {
				reg := NewRegistry(ctx, &Options{Args: testArgs()})
				defer reg.Close(ctx)
				h, err := reg.Acquire(ctx, gridKey(t, base, 5*time.Second))
				if err != nil {
					return err
				}
				ids[i] = h.GridSession()
				tctx, cancel, err := h.NewTab(ctx)
				if err != nil {
					return err
				}
				defer cancel()
				if err := chromedp.Do(tctx, chromedp.Navigate(srv)); err != nil {
					return err
				}
				if _, err := chromedp.Run(tctx, chromedp.Evaluate[string](fmt.Sprintf(`document.cookie = "agent%d=1"`, i))); err != nil {
					return err
				}
				mu.Lock()
				if set++; set == n {
					close(ready)
				}
				mu.Unlock()
				<-ready // every agent has set its cookie
				c, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.cookie`))
				cookies[i] = c
				if err != nil {
					return err
				}
				_, err = reg.Release(ctx, h)
				return err
			}()
			if errs[i] != nil {
				mu.Lock()
				if set < n {
					set = n + 1 // fail the others' wait too
					close(ready)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d agents on the Grid: %v", n, time.Since(t0))
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("agent %d: %v", i, errs[i])
		}
		if cookies[i] != fmt.Sprintf("agent%d=1", i) {
			t.Errorf("agent %d sees cookies %q", i, cookies[i])
		}
	}
	left := gridSessions(t, base)
	for i, id := range ids {
		if left[id] {
			t.Errorf("agent %d's session %s still on the Grid", i, id)
		}
	}
}

// median returns the middle of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchRoundTrip measures, on a browser open connects: the connect (and
// close) of a fresh handle, and a navigate + evaluate round trip on an
// open tab; it reports the medians as connect-ms and roundtrip-ms.
func benchRoundTrip(b *testing.B, open func() (*Handle, error)) {
	ctx := context.Background()
	u := page(b, "bench")
	b.Run("connect", func(b *testing.B) {
		var ds []time.Duration
		for b.Loop() {
			t0 := time.Now()
			h, err := open()
			if err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t0))
			cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			_ = h.Close(cctx)
			cancel()
		}
		b.ReportMetric(float64(median(ds).Microseconds())/1000, "median-ms")
	})
	b.Run("navigate+eval", func(b *testing.B) {
		h, err := open()
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close(ctx)
		tctx, cancel, err := h.NewTab(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer cancel()
		var ds []time.Duration
		for i := 0; b.Loop(); i++ {
			t0 := time.Now()
			if err := chromedp.Do(tctx, chromedp.Navigate(fmt.Sprintf("%s/?%d", u, i))); err != nil {
				b.Fatal(err)
			}
			if _, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.title`)); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t0))
		}
		b.ReportMetric(float64(median(ds).Microseconds())/1000, "median-ms")
	})
}

// BenchmarkGridRoundTrip is benchRoundTrip through the Grid's CDP proxy.
func BenchmarkGridRoundTrip(b *testing.B) {
	base := needGrid(b)
	ctx := context.Background()
	key := gridKey(b, base, time.Minute)
	benchRoundTrip(b, func() (*Handle, error) { return ConnectGrid(ctx, ctx, key, &Options{Args: testArgs()}) })
}

// BenchmarkLocalRoundTrip is benchRoundTrip on a local headless browser
// (Launch, over a pipe), for comparison in the same run.
func BenchmarkLocalRoundTrip(b *testing.B) {
	if _, err := Find(""); err != nil {
		b.Skip(err)
	}
	ctx := context.Background()
	benchRoundTrip(b, func() (*Handle, error) { return Launch(ctx, ctx, &Options{Args: testArgs()}) })
}
