package service_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/browser/egress"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// listener is a test server on one loopback address that records the
// paths it was asked for.
type listener struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func listen(t *testing.T, addr string, h func(l *listener, w http.ResponseWriter, r *http.Request)) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	l := &listener{}
	l.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		h(l, w, r)
	})}}
	l.srv.Start()
	t.Cleanup(l.srv.Close)
	return l
}

func (l *listener) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

func (l *listener) origin() string { return l.srv.URL }

// guardedService returns a service behind an egress guard (public-only)
// with the origin rules allow, allowSub and block; cleanup shuts both.
func guardedService(t testing.TB, allow, allowSub, block []string) *service.Service {
	t.Helper()
	rules, err := egress.ParseRules(allow, allowSub, block)
	if err != nil {
		t.Fatal(err)
	}
	p := egress.New(&egress.Options{Rules: rules})
	if _, err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc := service.New(&service.Options{BrowserArgs: testenv.BrowserArgs, MaxTimeout: 60 * time.Second, Egress: p})
	t.Cleanup(func() {
		svc.Shutdown(context.Background())
		p.Close()
	})
	return svc
}

// TestNavigationPolicy drives the origin rules end to end: an app on
// 127.0.0.1 is allowed (a loopback origin the user named, under
// public-only), a server on 127.0.0.2 is not, and a localhost server is
// allowed for subresources only. Whatever starts a navigation to a refused
// origin (goto, a link, a form post, a script, a redirect, window.open),
// the listener behind it receives nothing, the result says the
// navigation was blocked, and the tab stays on the page it was on.
func TestNavigationPolicy(t *testing.T) {
	other := listen(t, "127.0.0.2:0", func(_ *listener, w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>other</title>`)
	})
	cdn := listen(t, "127.0.0.1:0", func(_ *listener, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`)
	})
	blockedL := listen(t, "127.0.0.3:0", func(_ *listener, w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>blocked</title>`)
	})
	cdnURL := strings.Replace(cdn.origin(), "127.0.0.1", "localhost", 1)
	app := listen(t, "127.0.0.1:0", func(l *listener, w http.ResponseWriter, r *http.Request) {
		o := other.origin()
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, o+"/from-redirect", http.StatusFound)
		case "/meta":
			fmt.Fprintf(w, `<!doctype html><title>meta</title><meta http-equiv=refresh content="0;url=%s/from-meta">`, o)
		case "/fetch":
			fmt.Fprintf(w, `<!doctype html><title>fetch</title><script>
fetch('%[1]s/from-fetch').catch(() => {}); try { new WebSocket('%[2]s/from-ws') } catch (e) {}
</script><iframe src="%[1]s/from-frame"></iframe><iframe src="%[3]s/from-blocked-frame"></iframe>`, o, strings.Replace(o, "http:", "ws:", 1), blockedL.origin())
		case "/next":
			fmt.Fprint(w, `<!doctype html><title>next</title><p>next page</p>`)
		default:
			fmt.Fprintf(w, `<!doctype html><title>app</title>
<a id=link href="%[1]s/from-link">Other site</a>
<a id=local href="/next">Next</a>
<a id=cdnlink href="%[2]s/page">CDN page</a>
<form id=f method=post action="%[1]s/from-form"><input name=q value=x><button id=post>Post</button></form>
<button id=script onclick="location.href='%[1]s/from-script'">Script</button>
<button id=pop onclick="window.open('%[1]s/from-popup')">Popup</button>
<a id=file href="file:///etc/hostname">File</a>
<img id=img src="%[2]s/logo.svg">`, o, cdnURL)
		}
	})
	svc := guardedService(t, []string{app.origin(), blockedL.origin()}, []string{cdnURL}, []string{blockedL.origin()})
	ctx := context.Background()
	tab := api.Common{Name: "pol"}
	home := app.origin() + "/"

	res := svc.Open(ctx, &api.OpenRequest{Common: tab, URL: home})
	if res.IsError || res.Details["title"] != "app" {
		t.Fatalf("open the allowed loopback app: %s", res.Text())
	}
	urlIs := func(step, want string) {
		t.Helper()
		r := svc.Run(ctx, &api.RunRequest{Common: tab, Code: `return await tab.evaluate(() => location.href)`})
		if r.IsError || !strings.Contains(r.Text(), want) {
			t.Errorf("%s: the tab is not on %s: %s", step, want, r.Text())
		}
	}

	for _, c := range []struct{ id, dest string }{
		{"link", "/from-link"}, {"post", "/from-form"}, {"script", "/from-script"},
	} {
		res = svc.Act(ctx, "click", &api.ActRequest{Common: tab, Target: api.Target("#" + c.id)})
		if res.IsError || !strings.Contains(res.Text(), "was blocked") || !strings.Contains(res.Text(), other.origin()+c.dest) ||
			!strings.Contains(res.Text(), "allow list") || res.Details["navigated"] == true || res.Details["blocked"] == nil {
			t.Errorf("click #%s: %s %v", c.id, res.Text(), res.Details)
		}
		urlIs("click #"+c.id, home)
	}

	res = svc.Act(ctx, "click", &api.ActRequest{Common: tab, Target: api.Target("#pop")})
	if res.IsError || !strings.Contains(res.Text(), "the popup it opened, to "+other.origin()+"/from-popup, was blocked") {
		t.Errorf("click #pop: %s", res.Text())
	}
	if s := fmt.Sprint(svc.Tabs(ctx).Details["tabs"]); strings.Contains(s, "popup") {
		t.Errorf("the blocked popup is still a tab: %s", s)
	}

	// A page of an origin allowed for subresources only: its image loads,
	// its pages do not.
	res = svc.Act(ctx, "click", &api.ActRequest{Common: tab, Target: api.Target("#cdnlink")})
	if res.IsError || !strings.Contains(res.Text(), "subresources only") {
		t.Errorf("click #cdnlink: %s", res.Text())
	}
	res = svc.Open(ctx, &api.OpenRequest{Common: tab, URL: home + "redirect"})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.BlockedDestination || !strings.Contains(e.Message, "/from-redirect") {
		t.Errorf("open a redirect to a refused origin: %s", res.Text())
	}
	res = svc.Open(ctx, &api.OpenRequest{Common: tab, URL: other.origin() + "/from-open"})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.BlockedDestination || !strings.Contains(e.Message, "allow list") {
		t.Errorf("open a refused origin: %s", res.Text())
	}
	res = svc.Act(ctx, "click", &api.ActRequest{Common: tab, Target: api.Target("#file")})
	if res.IsError {
		t.Errorf("click a file: link: %s", res.Text())
	}
	res = svc.Act(ctx, "click", &api.ActRequest{Common: tab, Target: api.Target("#local")})
	if res.IsError || res.Details["navigated"] != true {
		t.Errorf("click a link of the allowed origin: %s", res.Text())
	}
	res = svc.Open(ctx, &api.OpenRequest{Common: tab, URL: "about:blank"})
	if res.IsError {
		t.Errorf("reopen about:blank: %s", res.Text())
	}

	// A meta refresh after load: the page stays, the open says why.
	res = svc.Open(ctx, &api.OpenRequest{Common: tab, URL: home + "meta"})
	if res.IsError || !strings.Contains(res.Text(), other.origin()+"/from-meta was blocked") {
		t.Errorf("open a page whose meta refresh goes to a refused origin: %s", res.Text())
	}
	urlIs("meta refresh", home+"meta")
	// Subresources, a WebSocket and frames of refused origins (one both
	// allowed and blocked: blocking wins) reach nothing.
	res = svc.Open(ctx, &api.OpenRequest{Common: tab, URL: home + "fetch"})
	if res.IsError {
		t.Errorf("open the page with refused subresources: %s", res.Text())
	}
	if got := blockedL.got(); len(got) > 0 {
		t.Errorf("the allowed and blocked origin received %v, want nothing", got)
	}
	if got := other.got(); len(got) > 0 {
		t.Errorf("the refused origin received %v, want nothing", got)
	}
	if got := cdn.got(); !slices.Contains(got, "GET /logo.svg") || slices.Contains(got, "GET /page") {
		t.Errorf("the subresource origin received %v, want its image and not its page", got)
	}
	if got := app.got(); !slices.Contains(got, "GET /next") {
		t.Errorf("the app received %v", got)
	}
}

// connectProxy is an upstream proxy that takes CONNECT tunnels only, with
// Basic credentials, and records their targets.
type connectProxy struct {
	srv     *httptest.Server
	mu      sync.Mutex
	targets []string
}

func newConnectProxy(t *testing.T, user, password string) *connectProxy {
	cp := &connectProxy{}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	cp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		if r.Header.Get("Proxy-Authorization") != want {
			w.Header().Set("Proxy-Authenticate", `Basic realm="up"`)
			w.WriteHeader(http.StatusProxyAuthRequired)
			return
		}
		cp.mu.Lock()
		cp.targets = append(cp.targets, r.Host)
		cp.mu.Unlock()
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
		go func() { io.Copy(up, brw); up.Close() }()
		io.Copy(c, up)
		c.Close()
	}))
	t.Cleanup(cp.srv.Close)
	return cp
}

func (cp *connectProxy) seen() []string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]string(nil), cp.targets...)
}

// TestContextProxyBehindGuard: a context's upstream proxy is chained
// behind the egress guard: its pages and subresources are vetted by the
// guard's rules, the upstream is asked only for vetted addresses (with its
// credentials, which the guard sends), and what the rules refuse reaches
// neither the upstream nor its destination.
func TestContextProxyBehindGuard(t *testing.T) {
	other := listen(t, "127.0.0.2:0", func(_ *listener, w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>other</title>`)
	})
	app := listen(t, "127.0.0.1:0", func(_ *listener, w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>app via upstream</title><img src="%s/pixel">`, other.origin())
	})
	up := newConnectProxy(t, "agent", "uppw")
	svc := guardedService(t, []string{app.origin()}, nil, nil)
	ctx := context.Background()
	upURL := strings.Replace(up.srv.URL, "http://", "http://agent:uppw@", 1)
	res := svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "chained"}, Context: "agent1", Proxy: upURL, URL: app.origin() + "/"})
	if res.IsError || res.Details["title"] != "app via upstream" {
		t.Fatalf("open through the chained upstream: %s", res.Text())
	}
	appHost := strings.TrimPrefix(app.origin(), "http://")
	if got := up.seen(); !slices.Contains(got, appHost) {
		t.Errorf("the upstream saw %v, want a tunnel to %s", got, appHost)
	}
	res = svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "chained"}, Context: "agent1", URL: other.origin() + "/"})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.BlockedDestination {
		t.Errorf("open a refused origin in the chained context: %s", res.Text())
	}
	for _, h := range up.seen() {
		if strings.HasPrefix(h, "127.0.0.2") {
			t.Errorf("the upstream was asked for the refused %s", h)
		}
	}
	if got := other.got(); len(got) > 0 {
		t.Errorf("the refused origin received %v through the chain", got)
	}
	if strings.Contains(fmt.Sprint(svc.Tabs(ctx).Details), "uppw") {
		t.Errorf("the upstream's password shows in tabs")
	}
}

// BenchmarkOpenUnderPolicy measures what the navigation policy costs an
// open plus its first observation of a loopback page with an image: no
// policy, against an allow list naming the page's origin (the guard proxy
// carries every request, and the tab vets the document on the Fetch
// domain), side by side. It reports the median in ms (median-ms).
func BenchmarkOpenUnderPolicy(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/img.svg" {
			w.Header().Set("Content-Type", "image/svg+xml")
			fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>p</title><img src="/img.svg?%s"><a href="/x">Next</a><button>Go</button>`, r.URL.RawQuery)
	})}}
	srv.Start()
	defer srv.Close()
	for _, mode := range []string{"none", "allow-list"} {
		b.Run(mode, func(b *testing.B) {
			var svc *service.Service
			if mode == "allow-list" {
				svc = guardedService(b, []string{srv.URL}, nil, nil)
			} else {
				svc = service.New(&service.Options{BrowserArgs: testenv.BrowserArgs, MaxTimeout: 60 * time.Second})
				defer svc.Shutdown(context.Background())
			}
			ctx := context.Background()
			tab := api.Common{Name: "b"}
			if res := svc.Open(ctx, &api.OpenRequest{Common: tab, URL: srv.URL + "/"}); res.IsError {
				b.Fatal(res.Text())
			}
			var took []time.Duration
			i := 0
			for b.Loop() {
				i++
				t0 := time.Now()
				if res := svc.Open(ctx, &api.OpenRequest{Common: tab, URL: fmt.Sprintf("%s/?%d", srv.URL, i)}); res.IsError {
					b.Fatal(res.Text())
				}
				if res := svc.Observe(ctx, &api.ObserveRequest{Common: tab}); res.IsError {
					b.Fatal(res.Text())
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "median-ms")
		})
	}
}
