package tabs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/script"
)

// Issue 5: "the websocket stalls → calls fail by their deadline, never
// hang". A connected browser's CDP connection goes quiet while it stays
// open (a wedged proxy, a stopped process); every call on its tabs must
// come back with timeout or not_alive by its own deadline, and the
// supervisor must go on answering.

// stallGuard bounds every call of these tests: a call that has not
// returned by then hangs, and the test fails with the goroutines. It is
// twice the longest timeout of a call (a headless launch on a loaded
// machine may take most of its 30 s), so only a hang trips it.
const stallGuard = 60 * time.Second

// stallTimeout is the timeout of each call made while the connection is
// stalled.
const stallTimeout = 2 * time.Second

// stallProxy forwards TCP connections from a loopback listener to target.
// After Stall it forwards nothing more: the bytes it reads are held and
// the connections stay open, as behind a wedged proxy or a full network.
type stallProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{}
	done    chan struct{}
	once    sync.Once
	stall   sync.Once
	wg      sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target, stalled: make(chan struct{}), done: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(p.Close)
	return p
}

// Addr returns the proxy's host:port.
func (p *stallProxy) Addr() string { return p.ln.Addr().String() }

// Stall stops all forwarding, on the connections open now and later ones.
func (p *stallProxy) Stall() { p.stall.Do(func() { close(p.stalled) }) }

// Close closes the listener and every connection, and waits for the
// proxy's goroutines.
func (p *stallProxy) Close() {
	p.once.Do(func() {
		close(p.done)
		p.ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
}

func (p *stallProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		select {
		case <-p.done:
			p.mu.Unlock()
			c.Close()
			u.Close()
			return
		default:
		}
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(u, c) })
		p.wg.Go(func() { p.pipe(c, u) })
	}
}

// pipe copies src to dst until either ends; once stalled it holds what it
// read and reads no more until the proxy closes.
func (p *stallProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case <-p.stalled:
				<-p.done
				return
			default:
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			return
		}
	}
}

// startApp starts a Chromium of its own (newTestApp) with a CDP port and
// one page per token (srv's /form?token), and returns its CDP port and
// the process, killed (its whole group) at the end of the test.
func startApp(t *testing.T, tokens ...string) (int, *exec.Cmd) {
	t.Helper()
	app := newTestApp(t)
	port := freePort(t)
	cmd := exec.Command(app.path, fmt.Sprintf("--remote-debugging-port=%d", port), srv.URL+"/next")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitCDP(t, endpoint)
	for _, tok := range tokens {
		// /json/new opens a page (PUT since Chrome 111).
		req, _ := http.NewRequest(http.MethodPut, endpoint+"/json/new?"+url.QueryEscape(srv.URL+"/form?"+tok), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/json/new: HTTP %d", resp.StatusCode)
		}
	}
	// Wait until every page has loaded, so the attach finds their titles.
	for i := 0; ; i++ {
		loaded := 0
		for _, p := range listTargets(t, endpoint) {
			if p.Title == "Form" {
				loaded++
			}
		}
		if loaded == len(tokens) {
			break
		}
		if i > 300 {
			t.Fatalf("the test browser's pages did not load: %+v", listTargets(t, endpoint))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return port, cmd
}

// listTargets returns the page targets of a CDP endpoint (/json/list).
func listTargets(t *testing.T, endpoint string) []struct{ URL, Title string } {
	t.Helper()
	resp, err := http.Get(endpoint + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l []struct{ Type, URL, Title string }
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	var out []struct{ URL, Title string }
	for _, p := range l {
		if p.Type == "page" {
			out = append(out, struct{ URL, Title string }{p.URL, p.Title})
		}
	}
	return out
}

// stallOutcome is what one call made while the connection was stalled
// returned.
type stallOutcome struct {
	what string
	err  error
	took time.Duration
}

// The tabs of a stall test, each attached to a page of its own: one per
// kind of call, and one left idle until it is closed.
var stallTabs = []string{"stall-observe", "stall-click", "stall-evaluate", "stall-run", "stall-open", "stall-idle"}

// testStall attaches a tab to each of stallTabs' pages through endpoint,
// checks that they work, calls stall, then makes every kind of call on
// the stalled tabs at once and checks that each returns timeout or
// not_alive; then that the supervisor still lists its tabs, opens a
// headless tab and acts on it, and closes the stalled tabs.
func testStall(t *testing.T, endpoint string, stall func()) {
	t0 := time.Now()
	phase := func(what string) { t.Logf("%s at %v", what, time.Since(t0).Round(time.Millisecond)) }
	t.Cleanup(func() { phase("the supervisor shut down") })
	s := newSup(t)
	ctx := context.Background()
	for _, name := range stallTabs {
		res, err := s.Open(ctx, tabs.OpenOptions{Name: name, App: &tabs.App{CDPURL: endpoint, Target: "?" + name}})
		if err != nil {
			t.Fatalf("attach %s: %v", name, err)
		}
		if res.Browser != "connected" || res.Title != "Form" || !strings.HasSuffix(res.URL, "/form?"+name) {
			t.Fatalf("attach %s = %+v", name, res)
		}
	}
	// Before the stall the connection works: the failures below are the
	// stall's.
	if got := evalOn(t, s, "stall-evaluate", "document.title"); got != `"Form"` {
		t.Fatalf("before the stall, document.title = %s", got)
	}

	phase("attached")
	stall()

	job := func(fn func(ctx context.Context, tb *tabs.Tab) error) tabs.Job { return tabs.JobFunc(fn) }
	calls := []struct {
		what string
		call func() error
	}{
		{"observe", func() error {
			return s.Run(ctx, "stall-observe", stallTimeout, job(func(ctx context.Context, tb *tabs.Tab) error {
				_, err := tb.Observe(ctx, tabs.ObserveOptions{})
				return err
			}))
		}},
		{"click", func() error {
			return s.Run(ctx, "stall-click", stallTimeout, job(func(ctx context.Context, tb *tabs.Tab) error {
				_, err := tb.Click(ctx, tabs.Target{Selector: "#go"})
				return err
			}))
		}},
		{"evaluate", func() error {
			return s.Run(ctx, "stall-evaluate", stallTimeout, job(func(ctx context.Context, tb *tabs.Tab) error {
				_, err := tb.Evaluate(ctx, "document.title", nil)
				return err
			}))
		}},
		{"run (script)", func() error {
			sc := script.New(`await tab.click("#go"); return await tab.evaluate(() => document.title)`, nil)
			return s.Run(ctx, "stall-run", stallTimeout, sc)
		}},
		{"open (reuse and navigate)", func() error {
			_, err := s.Open(ctx, tabs.OpenOptions{Name: "stall-open", App: &tabs.App{CDPURL: endpoint}, URL: srv.URL + "/next", WaitUntil: "load", Timeout: stallTimeout})
			return err
		}},
		{"open (new tab on the stalled browser)", func() error {
			_, err := s.Open(ctx, tabs.OpenOptions{Name: "stall-new", App: &tabs.App{CDPURL: endpoint, Target: "/next"}, Timeout: stallTimeout})
			return err
		}},
	}
	outcomes := make([]stallOutcome, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			t0 := time.Now()
			err := c.call()
			outcomes[i] = stallOutcome{c.what, err, time.Since(t0)}
		})
	}
	within(t, "the calls on the stalled tabs", wg.Wait)
	for _, o := range outcomes {
		t.Logf("%s: %v after %v (timeout %v)", o.what, o.err, o.took.Round(time.Millisecond), stallTimeout)
		if c := errcode.Of(o.err); c != errcode.Timeout && c != errcode.NotAlive {
			t.Errorf("%s on a stalled connection: %v (code %q), want timeout or not_alive", o.what, o.err, c)
		}
	}
	// A run that timed out on a page that no longer answers kills its
	// tab, so the next call fails at once instead of waiting again.
	for _, name := range []string{"stall-observe", "stall-click", "stall-evaluate", "stall-run"} {
		if _, err := s.Tab(name); errcode.Of(err) != errcode.NotAlive {
			t.Errorf("tab %s after its run timed out on a stalled connection: %v, want not_alive", name, err)
		}
	}
	var again error
	within(t, "a second run on a killed tab", func() {
		again = s.Run(ctx, "stall-evaluate", stallTimeout, job(func(ctx context.Context, tb *tabs.Tab) error { return nil }))
	})
	if errcode.Of(again) != errcode.NotAlive {
		t.Errorf("a second run on the killed tab: %v, want not_alive", again)
	}

	phase("the stalled calls returned")
	// The supervisor goes on: it lists its tabs, and a headless tab opens
	// and acts.
	var infos []tabs.TabInfo
	within(t, "Tabs", func() { infos = s.Tabs(ctx) })
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
	}
	for _, name := range stallTabs {
		if !slices.Contains(names, name) {
			t.Errorf("Tabs() = %v, missing %s", names, name)
		}
	}
	var opened *tabs.OpenResult
	var err error
	within(t, "opening a headless tab", func() {
		opened, err = s.Open(ctx, tabs.OpenOptions{Name: "fresh", URL: srv.URL + "/form", WaitUntil: "load"})
	})
	if err != nil || opened.Browser != "headless" || opened.Title != "Form" {
		t.Fatalf("open a headless tab while a connected browser is stalled: %+v, %v", opened, err)
	}
	var clicked string
	within(t, "a run on the headless tab", func() {
		err = s.Run(ctx, "fresh", 10*time.Second, job(func(ctx context.Context, tb *tabs.Tab) error {
			if _, err := tb.Click(ctx, tabs.Target{Selector: "#go"}); err != nil {
				return err
			}
			raw, err := tb.Evaluate(ctx, "document.getElementById('out').textContent", nil)
			clicked = string(raw)
			return err
		}))
	})
	if err != nil || clicked != `"clicked 1"` {
		t.Fatalf("run on the headless tab: %s, %v", clicked, err)
	}

	phase("a headless tab opened and ran")
	// Closing a stalled tab returns within its timeout; it reports the
	// name, and at most a timeout for the detach that got no answer.
	for _, name := range []string{"stall-idle", "stall-open", "stall-observe"} {
		var closed []string
		var err error
		t0 := time.Now()
		within(t, "close "+name, func() { closed, err = s.Close(ctx, name, false, stallTimeout) })
		t.Logf("close %s: %v after %v (timeout %v)", name, err, time.Since(t0).Round(time.Millisecond), stallTimeout)
		if len(closed) != 1 || closed[0] != name || (err != nil && errcode.Of(err) != errcode.Timeout) {
			t.Errorf("close %s: %v, %v; want [%s] and no error or a timeout", name, closed, err, name)
		}
		if _, err := s.Tab(name); errcode.Of(err) != errcode.NoSuchTab {
			t.Errorf("tab %s after close: %v, want no_such_tab", name, err)
		}
	}
	phase("closed")
}

// evalOn evaluates expr on the tab name and returns the JSON result.
func evalOn(t *testing.T, s *tabs.Supervisor, name, expr string) string {
	t.Helper()
	var out string
	err := s.Run(context.Background(), name, 10*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		raw, err := tb.Evaluate(ctx, expr, nil)
		out = string(raw)
		return err
	}))
	if err != nil {
		t.Fatalf("evaluate %s on %s: %v", expr, name, err)
	}
	return out
}

// within runs fn and fails the test with every goroutine's stack when fn
// has not returned after stallGuard: a hang.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(stallGuard):
		buf := make([]byte, 4<<20)
		t.Fatalf("%s did not return within %v: it hangs\n%s", what, stallGuard, buf[:runtime.Stack(buf, true)])
	}
}

func TestStalledWebsocket(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	port, _ := startApp(t, stallTabs...)
	t.Logf("the test browser came up in %v", time.Since(t0).Round(time.Millisecond))
	v, err := browser.ProbeVersion(context.Background(), fmt.Sprintf("http://127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(v.WSURL)
	if err != nil || !strings.HasPrefix(u.Path, "/devtools/browser/") {
		t.Fatalf("webSocketDebuggerUrl %q: %v", v.WSURL, err)
	}
	// The browser's websocket, reached through the proxy: the ws:// form
	// skips /json/version, which would name the browser's own port.
	p := newStallProxy(t, fmt.Sprintf("127.0.0.1:%d", port))
	testStall(t, "ws://"+p.Addr()+u.Path, p.Stall)
}

func TestStoppedBrowser(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	port, cmd := startApp(t, stallTabs...)
	t.Logf("the test browser came up in %v", time.Since(t0).Round(time.Millisecond))
	// SIGSTOP on the browser's process group: its sockets stay open, and
	// nothing answers. The cleanup of startApp resumes and kills it.
	testStall(t, fmt.Sprintf("http://127.0.0.1:%d", port), func() {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	})
}
