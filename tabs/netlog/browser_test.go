package netlog_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/websocket"

	"github.com/tabpilot/tabpilot/internal/testenv"
	"github.com/tabpilot/tabpilot/tabs/netlog"
)

// The test page: a fetch of JSON, a form post, a 404, a refused
// connection, a redirect, a WebSocket echo, console calls, an uncaught
// error and an unhandled rejection. It sets window.done when every request
// has settled.
const pageHTML = `<!doctype html><title>netlog</title><link rel="icon" href="data:,"><script>
console.log("x %%d", 3);
console.error("bad", {a: 1});
setTimeout(function thrower() { throw new Error("boom"); }, 0);
Promise.reject(new Error("nope"));
const ws = new Promise(res => {
  const s = new WebSocket("ws://" + location.host + "/ws");
  s.onopen = () => s.send("hello");
  s.onmessage = () => { s.close(); res(); };
  s.onerror = res;
});
Promise.allSettled([
  fetch("/data.json").then(r => r.json()),
  fetch("/submit", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "name=ann&age=3"}),
  fetch("/missing"),
  fetch("http://127.0.0.1:%d/refused"),
  fetch("/redirect"),
  ws,
]).then(() => { window.done = true; });
</script>`

// server serves the test pages on 127.0.0.1, and returns it with a port
// nothing listens on.
func server(t *testing.T) (*httptest.Server, int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, pageHTML, closed)
	})
	mux.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>second</title><link rel="icon" href="data:,"><script>console.warn("second page")</script>`)
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		http.SetCookie(w, &http.Cookie{Name: "seen", Value: "1", Path: "/"})
		fmt.Fprint(w, `{"user":"ann","n":3}`)
	})
	mux.HandleFunc("/submit", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Method != "POST" {
			http.Error(w, "bad form", 400)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(201)
		fmt.Fprintf(w, "hello %s", r.PostForm.Get("name"))
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/final", http.StatusFound) })
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "final") })
	mux.Handle("/ws", websocket.Handler(func(c *websocket.Conn) {
		var msg string
		if websocket.Message.Receive(c, &msg) == nil {
			websocket.Message.Send(c, "echo: "+msg)
		}
		var rest string
		websocket.Message.Receive(c, &rest) // until the page closes
	}))
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, closed
}

// browserTab starts a headless Chromium with the test flags and returns a
// tab's context; both end with the test.
func browserTab(t *testing.T) context.Context {
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(profile), chromedp.Flag("headless", true))
	for _, a := range testenv.BrowserArgs {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser; no deadline
		cancel()
		acancel()
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		_ = chromedp.Cancel(cctx)
		ccancel()
		cancel()
		acancel()
		testenv.KillDescendants(os.Getpid(), profile)
	})
	return ctx
}

// feed wires the tab's events into l the way tabs will: the listener only
// queues; a goroutine handles each event, tells l of main-frame
// navigations, and fetches the bodies WantBody asks for. The returned func
// waits until the queue is drained.
func feed(t *testing.T, ctx context.Context, l *netlog.Log) (drain func()) {
	events := make(chan any, 4096)
	var pending sync.WaitGroup
	if err := chromedp.Listen(ctx, func(ev any) {
		pending.Add(1)
		select {
		case events <- ev:
		default:
			pending.Done()
			t.Errorf("event queue full: %T dropped", ev)
		}
	}); err != nil {
		t.Fatal(err)
	}
	target := chromedp.FromContext(ctx).Target
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for {
			var ev any
			select {
			case ev = <-events:
			case <-done:
				return
			}
			l.Handle(ev)
			switch ev := ev.(type) {
			case *page.EventFrameNavigated:
				if ev.Frame.ParentID == "" {
					l.Navigated(ev.Frame.URL + ev.Frame.URLFragment)
				}
			case *network.EventLoadingFinished:
				if l.WantBody(ev.RequestID) {
					body, b64, err := netlog.FetchBody(ctx, target, ev.RequestID)
					if err == nil {
						err = l.SetBody(ev.RequestID, body, b64)
					}
					if err != nil {
						t.Logf("body of %s: %v", ev.RequestID, err)
					}
				}
			}
			pending.Done()
		}
	})
	t.Cleanup(func() { close(done); wg.Wait() })
	return func() {
		time.Sleep(100 * time.Millisecond) // events still in flight from the browser
		pending.Wait()
	}
}

// waitDone waits for window.done on the page.
func waitDone(t *testing.T, ctx context.Context) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.done === true"))
		if err == nil && done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not finish its requests: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func find(t *testing.T, l *netlog.Log, f netlog.Filter) netlog.Entry {
	t.Helper()
	es, err := l.Requests(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 {
		t.Fatalf("Requests(%+v) = %d entries, want 1: %+v", f, len(es), es)
	}
	return es[0]
}
