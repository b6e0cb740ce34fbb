package tabs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs"
)

// newSup returns a supervisor of its own (its own browser), shut down at
// the end of the test.
func newSup(t *testing.T) *tabs.Supervisor { return newSupWith(t, nil) }

// newSupWith is newSup with options set by set (nil: the defaults).
func newSupWith(t *testing.T, set func(*tabs.Options)) *tabs.Supervisor {
	o := &tabs.Options{Browser: browser.Options{Args: testenv.BrowserArgs}, Grace: time.Second}
	if set != nil {
		set(o)
	}
	s := tabs.NewSupervisor(o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

func openOn(t *testing.T, s *tabs.Supervisor, name, path string) *tabs.Tab {
	t.Helper()
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: name, URL: srv.URL + path, WaitUntil: "load"}); err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	tab, err := s.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestRendererCrash(t *testing.T) {
	t.Parallel()
	s := newSup(t)
	a := openOn(t, s, "a", "/form")
	openOn(t, s, "b", "/next")
	err := s.Run(context.Background(), "a", 5*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Send(ctx, "Page.crash", nil)
		return err
	}))
	if err == nil {
		time.Sleep(500 * time.Millisecond)
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.Alive() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := s.Tab("a"); errcode.Of(err) != errcode.NotAlive || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("crashed tab: %v, want not_alive naming the crash", err)
	}
	// The other tab goes on.
	if err := s.Run(context.Background(), "b", 5*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tabs.Target{Selector: "button"})
		return err
	})); err != nil {
		t.Fatalf("other tab: %v", err)
	}
	// Reopening works.
	if _, err := s.Open(context.Background(), tabs.OpenOptions{Name: "a", URL: srv.URL + "/form", WaitUntil: "load"}); err != nil {
		t.Fatalf("reopen: %v", err)
	}
}

func TestBrowserKilled(t *testing.T) {
	t.Parallel()
	s := newSup(t)
	openOn(t, s, "a", "/form")
	openOn(t, s, "b", "/next")
	infos := s.Tabs(context.Background())
	if len(infos) != 2 {
		t.Fatalf("tabs = %+v", infos)
	}
	pid := s.BrowserPIDs()
	if len(pid) != 1 {
		t.Fatalf("browser pids = %v", pid)
	}
	syscall.Kill(pid[0], syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := s.Tab("a"); errcode.Of(err) == errcode.NotAlive {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, n := range []string{"a", "b"} {
		if _, err := s.Tab(n); errcode.Of(err) != errcode.NotAlive {
			t.Fatalf("tab %s after the browser died: %v, want not_alive", n, err)
		}
	}
	// The next open launches a new browser.
	openOn(t, s, "a", "/form")
	if p := s.BrowserPIDs(); len(p) != 1 || p[0] == pid[0] {
		t.Fatalf("browser pids after reopen = %v (old %d)", p, pid[0])
	}
}

func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	s := newSup(t)
	for i := range 10 {
		openOn(t, s, fmt.Sprintf("t%d", i), "/form")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[errcode.Code]int{}
	for i := range 20 {
		wg.Go(func() {
			err := s.Run(context.Background(), fmt.Sprintf("t%d", i%10), 10*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
				_, err := tb.Click(ctx, tabs.Target{Selector: "#go"})
				return err
			}))
			mu.Lock()
			counts[errcode.Of(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[""]+counts[errcode.Busy] != 20 || counts[""] < 10 {
		t.Fatalf("outcomes = %v, want all ok or busy, at least 10 ok", counts)
	}
}

// testApp is a second Chromium started by the test with a CDP port, as a
// user's running browser or app.
type testApp struct {
	path    string // a wrapper unique to this test, so "same-path" processes are only ours
	profile string
}

func newTestApp(t *testing.T) *testApp {
	dir := t.TempDir()
	exe, err := browser.Find("")
	if err != nil {
		t.Skip(err)
	}
	real := exe
	if b, err := os.ReadFile(exe); err == nil && strings.HasPrefix(string(b), "#!") {
		// Debian's /usr/bin/chromium is a shell wrapper around this binary.
		if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
			real = "/usr/lib/chromium/chromium"
		}
	}
	wrapper := filepath.Join(dir, "app")
	script := fmt.Sprintf("#!/bin/bash\nexec -a %q %q --headless=new --no-sandbox --disable-gpu --user-data-dir=%q %s \"$@\"\n",
		wrapper, real, filepath.Join(dir, "profile"), shellArgs(testenv.BrowserArgs))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.KillDescendants(os.Getpid(), dir) })
	return &testApp{path: wrapper, profile: filepath.Join(dir, "profile")}
}

func shellArgs(args []string) string {
	var q []string
	for _, a := range args {
		q = append(q, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(q, " ")
}

func TestSpawnedApp(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	s := newSup(t)
	ctx := context.Background()
	res, err := s.Open(ctx, tabs.OpenOptions{Name: "app", App: &tabs.App{Path: app.path}, URL: srv.URL + "/form", WaitUntil: "load"})
	if err != nil {
		t.Fatalf("open spawned: %v", err)
	}
	if res.Browser != "spawned" || res.Title != "Form" {
		t.Fatalf("open = %+v", res)
	}
	pids := s.BrowserPIDs()
	if len(pids) != 1 {
		t.Fatalf("pids = %v", pids)
	}
	t.Cleanup(func() { syscall.Kill(-pids[0], syscall.SIGKILL) })
	// Closing without kill leaves the app running, and the next open reuses it.
	if _, err := s.Close(ctx, "app", false, 0); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(pids[0], 0) != nil {
		t.Fatal("the app died on close without kill")
	}
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "app2", App: &tabs.App{Path: app.path, Target: "Form"}}); err != nil {
		t.Fatalf("reattach: %v", err)
	}
	if _, err := s.Close(ctx, "app2", false, 0, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pids[0], 0) == nil && !isZombie(pids[0]) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if syscall.Kill(pids[0], 0) == nil && !isZombie(pids[0]) {
		t.Fatal("the app survived close with kill")
	}
	// A relative path is refused.
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "rel", App: &tabs.App{Path: "chromium"}}); errcode.Of(err) != errcode.BadRequest {
		t.Fatalf("relative app path: %v", err)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return s[i+2] == 'Z'
}

func TestConnected(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	port := freePort(t)
	cmd := exec.Command(app.path, fmt.Sprintf("--remote-debugging-port=%d", port), srv.URL+"/next")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	s := newSup(t)
	ctx := context.Background()
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitCDP(t, endpoint)
	_, err := s.Open(ctx, tabs.OpenOptions{Name: "c", App: &tabs.App{CDPURL: endpoint, Target: "no-such-page"}})
	if errcode.Of(err) != "target_not_found" || !strings.Contains(err.Error(), "/next") {
		t.Fatalf("missing target: %v, want target_not_found listing the pages", err)
	}
	res, err := s.Open(ctx, tabs.OpenOptions{Name: "c", App: &tabs.App{CDPURL: endpoint}})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	if res.Browser != "connected" || res.Title != "Next" {
		t.Fatalf("open = %+v", res)
	}
	// Closing releases the page: it stays open in the browser.
	if _, err := s.Close(ctx, "c", false, 0); err != nil {
		t.Fatal(err)
	}
	pages := listPages(t, endpoint)
	if !strings.Contains(strings.Join(pages, " "), "/next") {
		t.Fatalf("the page we attached to was closed: %v", pages)
	}
	// A bad endpoint is attach_failed.
	_, err = s.Open(ctx, tabs.OpenOptions{Name: "d", App: &tabs.App{CDPURL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}})
	if errcode.Of(err) != "attach_failed" {
		t.Fatalf("bad endpoint: %v", err)
	}
	// A tab name on another kind is browser_mismatch.
	openOn(t, s, "h", "/form")
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "h", App: &tabs.App{CDPURL: endpoint}}); errcode.Of(err) != errcode.BrowserMismatch {
		t.Fatalf("mismatch: %v", err)
	}
}

func listPages(t *testing.T, endpoint string) []string {
	resp, err := http.Get(endpoint + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l []struct{ URL string }
	json.NewDecoder(resp.Body).Decode(&l)
	var urls []string
	for _, p := range l {
		urls = append(urls, p.URL)
	}
	return urls
}

func freePort(t *testing.T) int {
	l, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*netTCPAddr).Port
}

var netListen = func() (netListener, error) { return net.Listen("tcp", "127.0.0.1:0") }

type (
	netListener = net.Listener
	netTCPAddr  = net.TCPAddr
)

// waitCDP waits (up to about 30 s) until a browser answers /json/version
// at endpoint, failing the test otherwise.
func waitCDP(t *testing.T, endpoint string) {
	t.Helper()
	for i := 0; ; i++ {
		pctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := browser.ProbeVersion(pctx, endpoint)
		cancel()
		if err == nil {
			return
		}
		if i > 300 {
			t.Fatalf("the test browser did not come up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCrashEndsPendingCall: a renderer that crashes while a call waits on
// the page (a promise that never settles) ends the run at once with
// not_alive naming the crash, not at the run's deadline: Chromium never
// answers a call to a crashed renderer.
func TestCrashEndsPendingCall(t *testing.T) {
	t.Parallel()
	s := newSup(t)
	a := openOn(t, s, "a", "/form")
	before := s.Stats().Crashes
	go func() {
		time.Sleep(300 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, _ = a.Send(ctx, "Page.crash", nil) // never answered
	}()
	start := time.Now()
	err := s.Run(context.Background(), "a", 30*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Evaluate(ctx, "new Promise(() => {})", nil)
		return err
	}))
	took := time.Since(start)
	if errcode.Of(err) != errcode.NotAlive || !strings.Contains(err.Error(), "renderer crashed") {
		t.Fatalf("run during a crash: %v, want not_alive naming the crash", err)
	}
	if took > 10*time.Second {
		t.Fatalf("the crash was reported after %v, at the deadline, not at once", took)
	}
	if got := s.Stats().Crashes - before; got != 1 {
		t.Fatalf("Stats().Crashes counted %d crashes, want 1", got)
	}
}

// TestPopupThatClosesItself: a popup whose page calls window.close() is
// gone at once (not listed alive, its actions fail not_alive, open makes
// it again), and its opener goes on.
func TestPopupThatClosesItself(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/child" {
			fmt.Fprint(w, `<!doctype html><title>Child</title><button onclick="window.close()">Close me</button>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Opener</title><button onclick="window.open('/child', 'c', 'width=300,height=200')">Open</button>`)
	}))
	s := newSup(t)
	ctx := context.Background()
	name := openPopup(t, s, base)
	_ = s.Run(ctx, name, 10*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Click(ctx, tabs.Target{Selector: "text/Close me"})
		return err
	}))
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.Tab(name)
		if errcode.Of(err) == errcode.NotAlive {
			if !strings.Contains(err.Error(), "closed") {
				t.Fatalf("closed popup: %v, want it to say the page was closed", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the popup closed itself but is still alive (Tab: %v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: name, URL: base + "/child", WaitUntil: "load"}); err != nil {
		t.Fatalf("open the closed popup's name again: %v", err)
	}
	if tab, err := s.Tab("o"); err != nil || !tab.Alive() {
		t.Fatalf("the opener: %v", err)
	}
}

// TestTimeoutSaysWhatHeldIt: a click whose navigation does not commit
// says so, and a run that then times out, held by it, says so too; one
// whose page loops says the tab was killed.
func TestTimeoutSaysWhatHeldIt(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Start</title><a href="/hang">Never</a>`)
	}))
	defer close(release)
	s := newSup(t)
	ctx := context.Background()
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "n", URL: base + "/", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	var click *tabs.ActionResult
	if err := s.Run(ctx, "n", 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		click, err = tb.Click(ctx, tabs.Target{Selector: "text/Never"})
		if err == nil && ctx.Err() != nil {
			// The page holds every call while the navigation is pending:
			// a click that waits for one of them sits out the timeout.
			return errors.New("the click returned only at the run's deadline")
		}
		return err
	})); err != nil {
		t.Fatalf("click: %v", err)
	}
	if !click.Navigated || !strings.Contains(click.Note, "the navigation to "+base+"/hang has not committed yet") {
		t.Fatalf("click on a link whose server never answers: %+v, want a note that its navigation has not committed", click)
	}
	err := s.Run(ctx, "n", 2*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Evaluate(ctx, "document.title", nil)
		return err
	}))
	if errcode.Of(err) != errcode.Timeout || !strings.Contains(err.Error(), "still navigating to "+base+"/hang") {
		t.Fatalf("a call held by a navigation: %v, want a timeout naming the navigation", err)
	}
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "n", URL: base + "/", WaitUntil: "load"}); err != nil {
		t.Fatalf("open another URL: %v", err)
	}
	err = s.Run(ctx, "n", 2*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Evaluate(ctx, "while (true) {}", nil)
		return err
	}))
	if errcode.Of(err) != errcode.Timeout || !strings.Contains(err.Error(), "so the tab was killed") {
		t.Fatalf("a looping page: %v, want a timeout that says the tab was killed", err)
	}
}

// popupLog counts the supervisor's warnings that a popup's stealth
// patches failed.
type popupLog struct{ failed atomic.Int32 }

func (l *popupLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *popupLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *popupLog) WithGroup(string) slog.Handler            { return l }
func (l *popupLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "install stealth on popup" {
		l.failed.Add(1)
	}
	return nil
}

// openPopup opens base's page in tab "o" and clicks its "Open" button,
// which opens a popup; it returns the popup's tab name.
func openPopup(t *testing.T, s *tabs.Supervisor, base string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Open(ctx, tabs.OpenOptions{Name: "o", URL: base + "/", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	var name string
	err := s.Run(ctx, "o", 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		w := tb.WatchPopups()
		if _, err := tb.Click(ctx, tabs.Target{Selector: "text/Open"}); err != nil {
			return err
		}
		p, err := w.Wait(ctx)
		if err != nil {
			return err
		}
		name = p.Name
		return nil
	}))
	if err != nil {
		t.Fatalf("open the popup: %v", err)
	}
	return name
}

// TestPopupGetsItsStealth: a same-site popup, which shares its opener's
// renderer process and so its locale override, gets its stealth patches
// without a failure (Chromium answers the popup's own locale override
// "Another locale override is already in effect"): its navigator reads
// as the opener's, without webdriver.
func TestPopupGetsItsStealth(t *testing.T) {
	t.Parallel()
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/child" {
			fmt.Fprint(w, `<!doctype html><title>Child</title><p>child</p>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Opener</title><button onclick="window.open('/child', 'c', 'width=300,height=200')">Open</button>`)
	}))
	log := &popupLog{}
	s := newSupWith(t, func(o *tabs.Options) { o.Logger = slog.New(log) })
	ctx := context.Background()
	name := openPopup(t, s, base)
	var got string
	err := s.Run(ctx, name, 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		v, err := tb.Evaluate(ctx, `() => navigator.language + ' ' + navigator.webdriver`, nil)
		got = string(v)
		return err
	}))
	if err != nil || got != `"en-US false"` {
		t.Errorf("the popup's navigator: %s, %v", got, err)
	}
	if n := log.failed.Load(); n != 0 {
		t.Errorf("the popup's stealth patches failed %d times", n)
	}
}

// TestPopupFirstPageUserAgent: the first page of a popup sends a headed
// Chromium's user agent and reads it in navigator.userAgent, not
// HeadlessChrome's (the launch's --user-agent, made for the executable's
// version, which also holds for a popup the tab could not hold: a
// rel=noopener one), and, opened by window.open, it has its tab's stealth
// patches from its first script on: its WebGL renderer is the patched
// one its tab reads later, not SwiftShader.
func TestPopupFirstPageUserAgent(t *testing.T) {
	t.Parallel()
	var header atomic.Value
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/child" {
			header.Store(r.UserAgent())
			fmt.Fprint(w, `<!doctype html><title>Child</title><script>
const gl = () => { const c = document.createElement('canvas').getContext('webgl'); return c.getParameter(c.getExtension('WEBGL_debug_renderer_info').UNMASKED_RENDERER_WEBGL); };
window.first = {ua: navigator.userAgent, gl: gl()}; window.gl = gl;</script><p>child</p>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Opener</title><button onclick="window.open('/child', 'c', 'width=300,height=200')">Open</button>`)
	}))
	s := newSup(t)
	name := openPopup(t, s, base)
	var got struct{ UA, GL, Later string }
	err := s.Run(context.Background(), name, 20*time.Second, tabs.JobFunc(func(ctx context.Context, tb *tabs.Tab) error {
		v, err := tb.Evaluate(ctx, `() => ({UA: window.first.ua, GL: window.first.gl, Later: window.gl()})`, nil)
		if err == nil {
			err = json.Unmarshal(v, &got)
		}
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := header.Load().(string)
	if !strings.Contains(got.UA, " Chrome/") || strings.Contains(got.UA, "Headless") || h != got.UA {
		t.Errorf("the popup's first page: navigator.userAgent %q, User-Agent header %q; want one headed Chromium's user agent in both", got.UA, h)
	}
	if strings.Contains(got.GL, "SwiftShader") || got.GL != got.Later {
		t.Errorf("the popup's first page: WebGL renderer %q at its first script, %q later; want the patched one from the start", got.GL, got.Later)
	}
}

// TestCloseRefreshLoop: closing a tab whose page sends itself on again and
// again (a meta refresh to itself) ends that page: its server hears no
// more of it. Chromium answers Target.closeTarget before the page is
// gone, and a commit meanwhile kept it running (on a loaded machine, 4 of
// 8 closes here, until close checked that the page went).
func TestCloseRefreshLoop(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `<!doctype html><title>Again</title><meta http-equiv="refresh" content="0"><p>again</p>`)
	}))
	s := newSup(t)
	ctx := context.Background()
	openOn(t, s, "keep", "/") // the browser stays while the loops close
	for i := range 6 {
		name := fmt.Sprintf("loop%d", i)
		if _, err := s.Open(ctx, tabs.OpenOptions{Name: name, URL: base + "/", WaitUntil: "load"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20*i) * time.Millisecond) // close at different points of the loop
		if _, err := s.Close(ctx, name, false, 0); err != nil {
			t.Fatalf("close %s: %v", name, err)
		}
		before := hits.Load()
		time.Sleep(300 * time.Millisecond)
		if n := hits.Load() - before; n > 0 {
			t.Errorf("close %s: its page asked the server %d more times in 300 ms; want it gone", name, n)
		}
	}
}

// TestOpenEndsWhenItsTabCloses: an open waiting for a server that has
// not answered ends, not_alive, as soon as its tab is closed, not at its
// timeout (Chromium answers nothing more on a closed tab's session).
func TestOpenEndsWhenItsTabCloses(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	base := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, `<!doctype html><title>Page</title><p>page</p>`)
	}))
	t.Cleanup(func() { close(release) })
	s := newSup(t)
	ctx := context.Background()
	openOn(t, s, "keep", "/") // the browser stays
	errc := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := s.Open(ctx, tabs.OpenOptions{Name: "slow", URL: base + "/slow", Timeout: 20 * time.Second})
		errc <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if tb, err := s.Tab("slow"); err == nil && tb.Busy() && tb.PendingNavigation() != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the open never started its navigation")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := s.Close(ctx, "slow", false, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if errcode.Of(err) != errcode.NotAlive {
			t.Errorf("open after its tab closed: %v (%s), want not_alive", err, errcode.Of(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("open still waiting %v after its tab closed", time.Since(start).Round(time.Second))
	}
}
