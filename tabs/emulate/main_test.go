package emulate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/internal/testenv"
)

var (
	server  *httptest.Server
	browser context.Context // the package's one headless browser
)

// page is an HTML page with a viewport meta tag whose window.HEADERS are
// the headers of its own request (lower-case names).
func page(w http.ResponseWriter, r *http.Request) {
	h := map[string]string{}
	for k, v := range r.Header {
		h[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	js, _ := json.Marshal(h)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<script>window.HEADERS = %s;</script></head><body><p>emulation test page</p></body></html>`, js)
}

func TestMain(m *testing.M) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", page)
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	server = httptest.NewServer(mux) // listens on 127.0.0.1
	opts := append([]chromedp.ExecAllocatorOption(nil), chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts, chromedp.NoSandbox, chromedp.DisableGPU)
	for _, f := range testenv.BrowserArgs {
		name, val, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, val))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	code := 1
	if err := chromedp.Do(bctx); err != nil {
		fmt.Fprintln(os.Stderr, "starting the browser:", err)
	} else {
		browser = bctx
		code = m.Run()
	}
	bcancel()
	acancel()
	server.Close()
	if code == 0 {
		if left := testenv.ChromiumChildren(os.Getpid()); len(left) > 0 {
			fmt.Fprintln(os.Stderr, "Chromium processes left:", left)
			code = 1
		}
	}
	os.Exit(code)
}

// newTab opens a fresh tab and returns its context (bounded by a minute),
// its page session, and a cleanup that closes it.
func newTab(t *testing.T) (context.Context, cdp.Session) {
	t.Helper()
	tctx, cancel := chromedp.NewContext(browser)
	if err := chromedp.Do(tctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	ctx, c2 := context.WithTimeout(tctx, time.Minute)
	t.Cleanup(c2)
	return ctx, chromedp.FromContext(tctx).Target
}

// navigate loads the test page.
func navigate(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(server.URL+path)); err != nil {
		t.Fatal(err)
	}
}

// eval returns the value of an expression (awaiting a promise) in the
// page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}
