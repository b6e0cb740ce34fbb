package tabs_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs"
)

// The tests of remote browsers (a CDP endpoint behind a relay, a real
// Selenium Grid 4) and of named browser contexts.

var cookieOnce sync.Once

// cookieServer serves /cookie on its own server (the shared srv's mux is
// fixed in TestMain).
var cookieSrv *httptest.Server

func cookieBase(t *testing.T) string {
	cookieOnce.Do(func() {
		cookieSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if v := r.URL.Query().Get("v"); v != "" {
				http.SetCookie(w, &http.Cookie{Name: "who", Value: v, Path: "/"})
			}
			fmt.Fprint(w, `<!doctype html><title>Cookie</title><p id=c></p><script>document.getElementById('c').textContent = document.cookie</script>`)
		}))
	})
	return cookieSrv.URL
}

// cookieOf returns document.cookie in the tab name of s.
func cookieOf(t *testing.T, s *tabs.Supervisor, name string) string {
	t.Helper()
	var out string
	err := s.Run(context.Background(), name, 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		raw, err := tb.Evaluate(ctx, "document.cookie", nil)
		out = strings.Trim(string(raw), `"`)
		return err
	}))
	if err != nil {
		t.Fatalf("cookie of %s: %v", name, err)
	}
	return out
}

// browserContextOf returns the browser context id of tab name's page and
// the ids the browser lists (Target.getBrowserContexts).
func browserContextOf(t *testing.T, s *tabs.Supervisor, name string) (cdp.BrowserContextID, []cdp.BrowserContextID) {
	t.Helper()
	tab, err := s.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := chromedp.FromContext(tab.Context()).Browser
	info, err := cdp.Call(ctx, b, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: tab.TargetID()})
	if err != nil {
		t.Fatal(err)
	}
	all, err := cdp.Call(ctx, b, target.GetBrowserContexts, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	return info.TargetInfo.BrowserContextID, all.BrowserContextIDs
}

func contains(ids []cdp.BrowserContextID, id cdp.BrowserContextID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestContextsIsolated: a cookie set in context A is in A's other tab,
// absent in context B and in the default context; storage_state loads
// into a context; the listing shows the context; closing A's last tab
// disposes A.
func TestContextsIsolated(t *testing.T) {
	t.Parallel()
	base := cookieBase(t)
	ctx := context.Background()
	names := []string{"ctxA1", "ctxA2", "ctxB", "ctxDef", "ctxS"}
	t.Cleanup(func() {
		for _, n := range names {
			sup.Close(context.Background(), n, false, 0)
		}
	})
	for _, o := range []tabs.OpenOptions{
		{Name: "ctxA1", Context: "A", URL: base + "/cookie?v=A"},
		{Name: "ctxA2", Context: "A", URL: base + "/cookie"},
		{Name: "ctxB", Context: "B", URL: base + "/cookie"},
		{Name: "ctxDef", URL: base + "/cookie"},
		{Name: "ctxS", Context: "S", URL: base + "/cookie", StorageState: []byte(`{"cookies":[{"name":"who","value":"S","domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Lax"}],"origins":[]}`)},
	} {
		o.WaitUntil = "load"
		if _, err := sup.Open(ctx, o); err != nil {
			t.Fatalf("open %s: %v", o.Name, err)
		}
	}
	for name, want := range map[string]string{"ctxA1": "who=A", "ctxA2": "who=A", "ctxB": "", "ctxDef": "", "ctxS": "who=S"} {
		if got := cookieOf(t, sup, name); got != want {
			t.Errorf("document.cookie in %s = %q, want %q", name, got, want)
		}
	}
	ctxOf := map[string]string{}
	for _, ti := range sup.Tabs(ctx) {
		ctxOf[ti.Name] = ti.Context
	}
	if ctxOf["ctxA1"] != "A" || ctxOf["ctxB"] != "B" || ctxOf["ctxDef"] != "" {
		t.Errorf("listing contexts = %v", ctxOf)
	}
	// A tab of that name in another context is a mismatch, not a reuse.
	_, err := sup.Open(ctx, tabs.OpenOptions{Name: "ctxB", Context: "A"})
	var te *tabs.Error
	if errcode.Of(err) != errcode.BrowserMismatch || !errors.As(err, &te) || !strings.Contains(te.Hint, "another browser context") {
		t.Errorf("open ctxB in A: %v, want browser_mismatch with a hint about contexts", err)
	}
	idA, all := browserContextOf(t, sup, "ctxA1")
	idDef, _ := browserContextOf(t, sup, "ctxDef")
	if idA == "" || idA == idDef || !contains(all, idA) {
		t.Fatalf("A is %q, default %q, the browser lists %v", idA, idDef, all)
	}
	sup.Close(ctx, "ctxA1", false, 0)
	if _, all = browserContextOf(t, sup, "ctxDef"); !contains(all, idA) {
		t.Fatalf("A was disposed with a tab left in it: %v", all)
	}
	sup.Close(ctx, "ctxA2", false, 0)
	if _, all = browserContextOf(t, sup, "ctxDef"); contains(all, idA) {
		t.Fatalf("A's last tab closed, and the browser still lists it: %v", all)
	}
	// A new A is a fresh context: the cookie went with the old one.
	if _, err := sup.Open(ctx, tabs.OpenOptions{Name: "ctxA1", Context: "A", URL: base + "/cookie", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	if got := cookieOf(t, sup, "ctxA1"); got != "" {
		t.Errorf("a new context A has cookie %q", got)
	}
}

// agentRound is one agent's work: open /form in its tab, observe, click
// the button, check the page saw it, close.
func agentRound(s *tabs.Supervisor, o tabs.OpenOptions) error {
	ctx := context.Background()
	o.URL, o.WaitUntil = srv.URL+"/form", "load"
	if _, err := s.Open(ctx, o); err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer s.Close(ctx, o.Name, false, 0)
	return s.Run(ctx, o.Name, 60*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
		if err != nil {
			return fmt.Errorf("observe: %w", err)
		}
		btn := 0
		for _, e := range obs.Elements {
			if e.Role == "button" && e.Name == "Sign in" {
				btn = e.ID
			}
		}
		if btn == 0 {
			return fmt.Errorf("no Sign in button in %+v", obs.Elements)
		}
		if _, err := tb.Click(ctx, tabs.Target{ID: btn}); err != nil {
			return fmt.Errorf("click: %w", err)
		}
		raw, err := tb.Evaluate(ctx, "document.getElementById('out').textContent", nil)
		if err != nil {
			return err
		}
		if got := strings.Trim(string(raw), `"`); got != "clicked 1" {
			return fmt.Errorf("the page says %q, want clicked 1", got)
		}
		return nil
	}))
}

// TestContextsAgents: 8 agents, each in a context of its own on one
// headless browser, open, observe, click and close side by side.
func TestContextsAgents(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			errs[i] = agentRound(sup, tabs.OpenOptions{Name: fmt.Sprintf("agent%d", i), Context: fmt.Sprintf("agent%d", i)})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestContextProxy: a context's proxyServer carries its pages (to a name
// that resolves nowhere, so only the proxy can answer), and a proxy
// without a context, or with credentials, is bad_request.
func TestContextProxy(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hosts []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		fmt.Fprintf(w, `<!doctype html><title>via proxy %s</title>`, r.Host)
	}))
	defer proxy.Close()
	ctx := context.Background()
	defer sup.Close(ctx, "proxied", false, 0)
	res, err := sup.Open(ctx, tabs.OpenOptions{Name: "proxied", Context: "P", Proxy: proxy.URL, URL: "http://pool.example.test/x", WaitUntil: "load"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Title != "via proxy pool.example.test" {
		t.Fatalf("title %q, want via proxy pool.example.test", res.Title)
	}
	for _, o := range []tabs.OpenOptions{
		{Name: "noctx", Proxy: proxy.URL},
		{Name: "creds", Context: "Q", Proxy: "socks5://u:secretpw@127.0.0.1:1"},
		{Name: "path", Context: "Q", Proxy: "http://127.0.0.1:1/x"},
	} {
		_, err := sup.Open(ctx, o)
		if errcode.Of(err) != errcode.BadRequest || strings.Contains(fmt.Sprint(err), "secretpw") {
			t.Errorf("open %s: %v, want bad_request without the password", o.Name, err)
		}
	}
}

// TestContextProxyCredentials: a context proxy that asks for credentials
// (407, Proxy-Authenticate: Basic) gets them from the proxy URL, for the
// context's pages and their subresources; wrong ones end in the proxy's
// 407 page, not a loop; the password is in no result.
func TestContextProxyCredentials(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var authed, refused int
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("agent:secretpw"))
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != want {
			// Only the pages' requests count: Chromium sends its own
			// (CONNECT www.google.com:443, from Chromium 148) through a
			// context proxy too, and they are not the tab's to answer.
			if strings.HasPrefix(r.Host, "pool.example.test") {
				mu.Lock()
				refused++
				mu.Unlock()
			}
			w.Header().Set("Proxy-Authenticate", `Basic realm="pool"`)
			w.WriteHeader(http.StatusProxyAuthRequired)
			fmt.Fprint(w, `<!doctype html><title>407</title>`)
			return
		}
		mu.Lock()
		authed++
		mu.Unlock()
		if r.URL.Path == "/img.svg" {
			w.Header().Set("Content-Type", "image/svg+xml")
			fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="3" height="3"/>`)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>authed %s</title><img src="/img.svg">`, r.Host)
	}))
	defer proxy.Close()
	ctx := context.Background()
	good := strings.Replace(proxy.URL, "http://", "http://agent:secretpw@", 1)
	defer sup.Close(ctx, "authed", false, 0)
	res, err := sup.Open(ctx, tabs.OpenOptions{Name: "authed", Context: "creds", Proxy: good, URL: "http://pool.example.test/x"})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	a := authed
	mu.Unlock()
	if res.Title != "authed pool.example.test" || a < 2 {
		t.Fatalf("title %q after %d authenticated requests, want the page and its image through the proxy", res.Title, a)
	}
	bad := strings.Replace(proxy.URL, "http://", "http://agent:wrong@", 1)
	defer sup.Close(ctx, "badauth", false, 0)
	res, err = sup.Open(ctx, tabs.OpenOptions{Name: "badauth", Context: "badcreds", Proxy: bad, URL: "http://pool.example.test/y", WaitUntil: "load"})
	if err == nil && res.Title == "authed pool.example.test" {
		t.Fatalf("wrong credentials got through: %+v", res)
	}
	mu.Lock()
	r := refused
	mu.Unlock()
	if r < 1 || r > 6 {
		t.Errorf("the proxy refused %d requests with wrong credentials, want a few (one answer per request, no loop)", r)
	}
	if s := fmt.Sprint(res, err, sup.Tabs(ctx)); strings.Contains(s, "secretpw") || strings.Contains(s, "wrong") {
		t.Errorf("a password shows: %s", s)
	}
}

// debugBrowser starts a headless Chromium of its own with a debugging
// port on 127.0.0.1 and returns its browser websocket URL (as package
// browser's tests do). The test's cleanup kills its process group.
func debugBrowser(t testing.TB) string {
	t.Helper()
	exe, err := browser.Find("")
	if err != nil {
		t.Skip(err)
	}
	args := append(rootArgs(), "--headless=new", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--user-data-dir="+t.TempDir(), "about:blank")
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "DevTools listening on "); ok {
				found <- strings.TrimSpace(rest)
			}
		}
	}()
	select {
	case ws := <-found:
		return ws
	case <-time.After(30 * time.Second):
		t.Fatal("the debug browser printed no DevTools address within 30 s")
	}
	return ""
}

// rootArgs are the test flags, with --no-sandbox as root (a browser that
// chromedp does not launch does not get it by itself).
func rootArgs() []string {
	args := append([]string{}, testenv.BrowserArgs...)
	if os.Getuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	return args
}

// relay stands in for a pool's CDP front (as in package browser's
// tests): it wants ?token= and an Authorization header on the upgrade,
// then pipes to the browser; cut drops what it relays.
type relay struct {
	*httptest.Server
	target, token, bearer string
	mu                    sync.Mutex
	conns                 []net.Conn
}

func newRelay(t testing.TB, target, token, bearer string) *relay {
	r := &relay{target: target, token: token, bearer: bearer}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() { r.cut(); r.Close() })
	return r
}

func (r *relay) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Query().Get("token") != r.token || req.Header.Get("Authorization") != "Bearer "+r.bearer {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	u, _ := url.Parse(r.target)
	up, err := net.Dial("tcp", u.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out := req.Clone(context.Background())
	out.URL = &url.URL{Path: u.Path}
	out.RequestURI, out.Host = "", u.Host
	out.Header.Del("Authorization")
	if err := out.Write(up); err != nil {
		up.Close()
		return
	}
	down, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	r.mu.Lock()
	r.conns = append(r.conns, up, down)
	r.mu.Unlock()
	go func() { _, _ = io.Copy(up, brw); up.Close() }()
	go func() { _, _ = io.Copy(down, up); down.Close() }()
}

func (r *relay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// TestRemoteRelayReconnect: open --cdp-url ws://…?token=T with an
// Authorization header reaches the browser behind a pool-like relay; no
// listing, result or error shows the token or the header; a dropped
// connection makes the tab not_alive with the reconnect hint, and the
// next open reconnects.
func TestRemoteRelayReconnect(t *testing.T) {
	t.Parallel()
	const token, bearer = "tok-SECRET-1", "bear-SECRET-2"
	ws := debugBrowser(t)
	r := newRelay(t, ws, token, bearer)
	cdpURL := strings.Replace(r.URL, "http://", "ws://", 1) + "/chromium?token=" + token
	s := tabs.NewSupervisor(&tabs.Options{Browser: browser.Options{Args: testenv.BrowserArgs}, DefaultTimeout: time.Minute, MaxTimeout: 2 * time.Minute})
	defer s.Shutdown(context.Background())
	ctx := context.Background()
	app := &tabs.App{CDPURL: cdpURL, CDPHeader: http.Header{"Authorization": {"Bearer " + bearer}}, ConnectTimeout: 20 * time.Second}
	secret := func(what string, v any) {
		t.Helper()
		if s := fmt.Sprintf("%v %+v", v, v); strings.Contains(s, "SECRET") {
			t.Errorf("%s shows a secret: %s", what, s)
		}
	}
	res, err := s.Open(ctx, tabs.OpenOptions{Name: "r", App: app, URL: srv.URL + "/form", WaitUntil: "load"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Title != "Form" || res.Browser != "connected" {
		t.Fatalf("open = %+v", res)
	}
	secret("the open result", res)
	secret("the listing", s.Tabs(ctx))
	// Without the header the relay refuses: the error names no secret.
	_, err = s.Open(ctx, tabs.OpenOptions{Name: "nohdr", App: &tabs.App{CDPURL: cdpURL, ConnectTimeout: 5 * time.Second}})
	if errcode.Of(err) != errcode.AttachFailed {
		t.Errorf("open without the header: %v, want attach_failed", err)
	}
	secret("the refused open", err)
	r.cut()
	deadline := time.Now().Add(10 * time.Second)
	var terr error
	for time.Now().Before(deadline) {
		if _, terr = s.Tab("r"); terr != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var te *tabs.Error
	if errcode.Of(terr) != errcode.NotAlive || !errors.As(terr, &te) || !strings.Contains(te.Hint, "open the tab again to reconnect") {
		t.Fatalf("after the cut: %v (%+v), want not_alive with the reconnect hint", terr, te)
	}
	secret("the not_alive error", terr)
	res, err = s.Open(ctx, tabs.OpenOptions{Name: "r", App: app, URL: srv.URL + "/next", WaitUntil: "load"})
	if err != nil || res.Title != "Next" {
		t.Fatalf("reopen after the cut: %+v, %v", res, err)
	}
	if err := agentRound(s, tabs.OpenOptions{Name: "r2", App: app}); err != nil {
		t.Fatal(err)
	}
}

// poolSup is a supervisor whose pool browsers (Grid, browserless) run
// with the test flags (--no-sandbox as root: chromedriver does not add
// it), as one agent's daemon would.
func poolSup(t *testing.T) *tabs.Supervisor {
	s := tabs.NewSupervisor(&tabs.Options{Browser: browser.Options{Args: rootArgs()}, DefaultTimeout: time.Minute, MaxTimeout: 2 * time.Minute})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

// gridApp is the app of the test Grid: credentials in the URL, a
// keepalive well inside its 10 s idle timeout.
func gridApp(base string) *tabs.App {
	return &tabs.App{Grid: testenv.GridURLWithAuth(base), GridKeepAlive: 2 * time.Second}
}

// gridSessionOf returns the WebDriver session of tab name's browser.
func gridSessionOf(t *testing.T, s *tabs.Supervisor, name string) string {
	t.Helper()
	tab, err := s.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	id := tab.BrowserHandle().GridSession()
	if id == "" {
		t.Fatalf("tab %s is on no Grid session", name)
	}
	return id
}

// TestGridTabs: two tabs on one Grid browser are pages of their own (not
// chromedriver's window), observe and click work, contexts isolate on the
// Grid too, and the WebDriver session is deleted when the last tab
// closes.
func TestGridTabs(t *testing.T) {
	base := testenv.NeedGrid(t)
	s := poolSup(t)
	ctx := context.Background()
	if err := agentRound(s, tabs.OpenOptions{Name: "g0", App: gridApp(base)}); err != nil {
		t.Fatal(err)
	}
	cb := cookieBase(t)
	for _, o := range []tabs.OpenOptions{
		{Name: "g1", App: gridApp(base), URL: cb + "/cookie?v=G"},
		{Name: "g2", App: gridApp(base), Context: "other", URL: cb + "/cookie"},
	} {
		o.WaitUntil = "load"
		if _, err := s.Open(ctx, o); err != nil {
			t.Fatalf("open %s: %v", o.Name, err)
		}
	}
	id := gridSessionOf(t, s, "g1")
	if id2 := gridSessionOf(t, s, "g2"); id2 != id {
		t.Fatalf("two tabs of one agent on two sessions: %s, %s", id, id2)
	}
	if !testenv.GridSessions(t, base)[id] {
		t.Fatalf("the Grid does not list session %s", id)
	}
	if c1, c2 := cookieOf(t, s, "g1"), cookieOf(t, s, "g2"); c1 != "who=G" || c2 != "" {
		t.Fatalf("cookies on the Grid: default %q, context other %q", c1, c2)
	}
	// chromedriver's own window is left alone: the browser has it besides
	// our two pages.
	tab, _ := s.Tab("g1")
	ts, err := cdp.Call(ctx, chromedp.FromContext(tab.Context()).Browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	for _, ti := range ts.TargetInfos {
		if ti.Type == "page" {
			pages++
		}
	}
	if pages != 3 {
		t.Errorf("%d pages on the Grid browser, want chromedriver's and our two", pages)
	}
	// The listing shows our two tabs, not chromedriver's window.
	if list := s.Tabs(ctx); len(list) != 2 || list[0].Browser != "grid" || list[1].Context != "other" {
		t.Errorf("listing: %+v", list)
	}
	s.Close(ctx, "g1", false, 0)
	if !testenv.GridSessions(t, base)[id] {
		t.Fatal("the session went with the first of two tabs")
	}
	s.Close(ctx, "g2", false, 0)
	if testenv.GridSessions(t, base)[id] {
		t.Fatal("the last tab closed and the Grid still has the session")
	}
}

// TestGridAgents: agents at once on the Grid, each with a supervisor of
// its own (one daemon per agent, so one WebDriver session each), open,
// observe, click and close; then as many agents in one supervisor, one
// context each on one session. 4 in the short form, 8 with
// TABPILOT_POOLS_LONG=1 (make pools).
func TestGridAgents(t *testing.T) {
	base := testenv.NeedGrid(t)
	n := 4
	if os.Getenv("TABPILOT_POOLS_LONG") != "" {
		n = 8
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	sups := make([]*tabs.Supervisor, n)
	for i := range sups {
		sups[i] = poolSup(t)
	}
	for i := range n {
		wg.Go(func() { errs[i] = agentRound(sups[i], tabs.OpenOptions{Name: "agent", App: gridApp(base)}) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if left := testenv.GridSessions(t, base); len(left) != 0 {
		t.Fatalf("sessions left after the agents closed: %v", left)
	}
	one := poolSup(t)
	for i := range n {
		wg.Go(func() {
			errs[i] = agentRound(one, tabs.OpenOptions{Name: fmt.Sprintf("agent%d", i), Context: fmt.Sprintf("agent%d", i), App: gridApp(base)})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestGridSessionKilled: a session the Grid ends behind tabpilot's back
// makes the tab not_alive with the reason and the reconnect hint, and
// the next open makes a new session.
func TestGridSessionKilled(t *testing.T) {
	base := testenv.NeedGrid(t)
	s := poolSup(t)
	ctx := context.Background()
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "k", App: gridApp(base), URL: srv.URL + "/form", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	id := gridSessionOf(t, s, "k")
	if code := testenv.GridCall(t, http.MethodDelete, base+"/session/"+id, nil); code != http.StatusOK {
		t.Fatalf("DELETE the session: HTTP %d", code)
	}
	deadline := time.Now().Add(15 * time.Second)
	var terr error
	for time.Now().Before(deadline) {
		if _, terr = s.Tab("k"); terr != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var te *tabs.Error
	if errcode.Of(terr) != errcode.NotAlive || !errors.As(terr, &te) || !strings.Contains(te.Hint, "open the tab again") {
		t.Fatalf("after the kill: %v (%+v), want not_alive with the hint", terr, te)
	}
	if strings.Contains(fmt.Sprint(terr, te.Hint), testenv.GridPassword) {
		t.Fatalf("the error shows the Grid password: %v %s", terr, te.Hint)
	}
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "k", App: gridApp(base), URL: srv.URL + "/next", WaitUntil: "load"}); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if id2 := gridSessionOf(t, s, "k"); id2 == id {
		t.Fatal("the reopen reused the killed session")
	}
}

// BenchmarkPoolRoundTrips compares a local headless browser with a
// browser on the test Grid (through its CDP proxy), in the same run:
// the first open (connect: launch, or WebDriver session and attach), then
// per iteration an open + observe of /form on a new tab and five clicks,
// reported as medians (ms). go test ./tabs -run '^$' -bench PoolRoundTrips -benchtime 20x
func BenchmarkPoolRoundTrips(b *testing.B) {
	for _, kind := range []string{"headless", "grid"} {
		b.Run(kind, func(b *testing.B) {
			var app *tabs.App
			if kind == "grid" {
				app = gridApp(testenv.NeedGrid(b))
			}
			s := tabs.NewSupervisor(&tabs.Options{Browser: browser.Options{Args: rootArgs()}, DefaultTimeout: time.Minute, MaxTimeout: 2 * time.Minute})
			defer s.Shutdown(context.Background())
			ctx := context.Background()
			t0 := time.Now()
			if _, err := s.Open(ctx, tabs.OpenOptions{Name: "first", App: app}); err != nil {
				b.Fatal(err)
			}
			connect := time.Since(t0)
			var opens, clicks []time.Duration
			b.ResetTimer()
			for i := range b.N {
				name := fmt.Sprintf("t%d", i)
				t1 := time.Now()
				if _, err := s.Open(ctx, tabs.OpenOptions{Name: name, App: app, URL: srv.URL + "/form", WaitUntil: "load"}); err != nil {
					b.Fatal(err)
				}
				err := s.Run(ctx, name, time.Minute, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
					obs, err := tb.Observe(ctx, tabs.ObserveOptions{})
					if err != nil {
						return err
					}
					opens = append(opens, time.Since(t1))
					btn := 0
					for _, e := range obs.Elements {
						if e.Role == "button" {
							btn = e.ID
						}
					}
					for range 5 {
						t2 := time.Now()
						if _, err := tb.Click(ctx, tabs.Target{ID: btn}); err != nil {
							return err
						}
						clicks = append(clicks, time.Since(t2))
					}
					return nil
				}))
				if err != nil {
					b.Fatal(err)
				}
				s.Close(ctx, name, false, 0)
			}
			b.StopTimer()
			b.ReportMetric(float64(connect.Microseconds())/1000, "connect-ms")
			b.ReportMetric(median(opens), "open+observe-ms")
			b.ReportMetric(median(clicks), "click-ms")
		})
	}
}

func median(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration{}, ds...)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
