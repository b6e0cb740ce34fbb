package browser

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// testArgs are the flags of a browser a test starts: testenv's, and
// --no-sandbox as root (Chromium refuses to start as root without it).
func testArgs() []string {
	args := append([]string{}, testenv.BrowserArgs...)
	if os.Getuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	return args
}

// debugBrowser starts a headless Chromium of its own with a debugging
// port on 127.0.0.1 and returns its browser websocket URL. The test's
// cleanup kills its process group.
func debugBrowser(t testing.TB) string {
	t.Helper()
	exe, err := Find("")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	args := append(testArgs(), "--headless=new", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--user-data-dir="+dir, "about:blank")
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

// relay is a loopback stand-in for a browser pool's CDP front: it wants
// ?token=want and "Authorization: Bearer bearer" on the websocket
// upgrade, then pipes the connection to the browser at target. cut drops
// every connection it relays.
type relay struct {
	*httptest.Server
	target string // ws://127.0.0.1:P/devtools/browser/ID
	token  string
	bearer string

	mu    sync.Mutex
	conns []net.Conn
	seen  []string // the request URIs, for the query check
}

func newRelay(t testing.TB, target, token, bearer string) *relay {
	r := &relay{target: target, token: token, bearer: bearer}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() { r.cut(); r.Close() })
	return r
}

func (r *relay) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.RequestURI)
	r.mu.Unlock()
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

// page serves a page whose title is title on 127.0.0.1.
func page(t testing.TB, title string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>%s</title><p id=p>%s</p>", title, title)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// roundTrip navigates a new tab of h to u and returns document.title.
func roundTrip(ctx context.Context, t testing.TB, h *Handle, u string) string {
	t.Helper()
	tctx, cancel, err := h.NewTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.title + "/" + document.getElementById("p").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	return title
}

func TestRemoteKey(t *testing.T) {
	a, err := RemoteKey("wss://pool.example/chrome?token=SECRETQ&timeout=60000", &RemoteOptions{Header: http.Header{"authorization": {"Bearer SECRETH"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RemoteKey("wss://pool.example/chrome?token=SECRETQ&timeout=60000", &RemoteOptions{Header: http.Header{"Authorization": {"Bearer other"}}})
	c, _ := RemoteKey("wss://pool.example/chrome?token=SECRETQ&timeout=60000", &RemoteOptions{Header: http.Header{"Authorization": {" Bearer SECRETH "}}})
	if a == b || a != c {
		t.Fatalf("keys: a==b %v, a==c %v", a == b, a == c)
	}
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("k", "key", a)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("k", "key", a)
	fmt.Fprintf(&buf, "%v %+v %#v %s", a, a, a, a)
	if out := buf.String(); strings.Contains(out, "SECRET") || !strings.Contains(out, "token=…&timeout=…") || !strings.Contains(out, "(1 headers)") {
		t.Fatalf("a key shows a secret, or not its shape: %s", out)
	}
	for _, bad := range []http.Header{{"Bad Name": {"x"}}, {"X-A": {"a\r\nb"}}, {"Upgrade": {"h2c"}}} {
		if _, err := RemoteKey("ws://127.0.0.1:1/x", &RemoteOptions{Header: bad}); err == nil {
			t.Errorf("header %v accepted", bad)
		}
	}
	h := http.Header{}
	if err := ParseHeader(h, "Authorization: Bearer T:1"); err != nil || h.Get("Authorization") != "Bearer T:1" {
		t.Fatalf("ParseHeader = %v %v", h, err)
	}
	if err := ParseHeader(h, "no colon SECRETX"); err == nil || strings.Contains(err.Error(), "SECRETX") {
		t.Fatalf("ParseHeader of a bad line: %v", err)
	}
	if got := RedactURL("ws://u:p@h:1/x?token=T&a"); got != "ws://…@h:1/x?token=…&a=…" {
		t.Fatalf("RedactURL = %q", got)
	}
}

// TestRemoteEndpointHeaders connects through a relay that wants a query
// token and a bearer header, as a hosted pool does: the URL is dialed
// with its query, the header goes on the upgrade, a wrong header fails
// without the secret in the error or the log, a dropped connection makes
// the handle not alive with a hint, and the registry's next Acquire
// reconnects.
func TestRemoteEndpointHeaders(t *testing.T) {
	t.Parallel()
	ws := debugBrowser(t)
	rl := newRelay(t, ws, "QTOKEN", "HTOKEN")
	endpoint := strings.Replace(rl.URL, "http://", "ws://", 1) + "/chrome?token=QTOKEN&timeout=60000"
	logs := &testenv.SyncBuffer{}
	ctx := context.Background()
	reg := NewRegistry(ctx, &Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	defer reg.Close(ctx)

	bad, _ := RemoteKey(endpoint, &RemoteOptions{Header: http.Header{"Authorization": {"Bearer WRONGTOKEN"}}, Timeout: 5 * time.Second})
	_, err := reg.Acquire(ctx, bad)
	var e *Error
	if !errors.As(err, &e) || e.Code != errcode.AttachFailed || strings.Contains(err.Error(), "TOKEN") || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong header: %v", err)
	}

	key, _ := RemoteKey(endpoint, &RemoteOptions{Header: http.Header{"Authorization": {"Bearer HTOKEN"}}, Timeout: 5 * time.Second})
	t0 := time.Now()
	h, err := reg.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("connect through the relay: %v", time.Since(t0))
	if h.Kind() != Connected || !strings.Contains(h.Version(), "Chrome") {
		t.Fatalf("kind %s version %q", h.Kind(), h.Version())
	}
	rl.mu.Lock()
	last := rl.seen[len(rl.seen)-1]
	rl.mu.Unlock()
	if last != "/chrome?token=QTOKEN&timeout=60000" {
		t.Fatalf("the relay saw %q: the query was not dialed as given", last)
	}
	if got := roundTrip(ctx, t, h, page(t, "remote")); got != "remote/remote" {
		t.Fatalf("title = %q", got)
	}

	rl.cut()
	select {
	case <-h.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the handle is alive 5 s after its connection dropped")
	}
	_, _, err = h.NewTab(ctx)
	if !errors.As(err, &e) || e.Code != errcode.NotAlive || !strings.Contains(e.Hint, "reconnect") {
		t.Fatalf("NewTab on a dropped handle: %v (hint %q)", err, e.Hint)
	}
	h2, err := reg.Acquire(ctx, key)
	if err != nil || h2 == h || !h2.Alive() {
		t.Fatalf("reconnect: %v (same handle %v)", err, h2 == h)
	}
	if got := roundTrip(ctx, t, h2, page(t, "again")); got != "again/again" {
		t.Fatalf("title after reconnect = %q", got)
	}
	if _, err := reg.Release(ctx, h2); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); strings.Contains(out, "TOKEN") {
		t.Fatalf("the log shows a token:\n%s", out)
	}
}

// TestRemoteConnectTimeout dials an endpoint that accepts the TCP
// connection and never answers the upgrade: the connect ends after the
// key's timeout, not the caller's.
func TestRemoteConnectTimeout(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	key, _ := RemoteKey("ws://"+l.Addr().String()+"/devtools/browser/x", &RemoteOptions{Timeout: 700 * time.Millisecond})
	t0 := time.Now()
	_, err = connectKey(context.Background(), context.Background(), key, nil)
	took := time.Since(t0)
	var e *Error
	if !errors.As(err, &e) || e.Code != errcode.AttachFailed || took < 600*time.Millisecond || took > 3*time.Second {
		t.Fatalf("err %v after %v", err, took)
	}
}
