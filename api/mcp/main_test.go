package mcp

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// The package's browser tests share one service (one headless Chromium,
// launched at the first open), each test on its own tab names, and one
// httptest server of test pages. Tests that use the service do not run in
// parallel: the tabs action lists every tab.
var (
	svc     *service.Service
	pageSrv *httptest.Server
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testPage has a button, a form and a link to a second page.
const testPage = `<!doctype html>
<html><head><title>Tabpilot MCP Test</title></head>
<body>
<h1>Hello from the MCP test page</h1>
<p>Tabpilot drives a real browser. This paragraph is the readable content of the page, long enough for readability to keep it as the article of the page.</p>
<button id="b" onclick="document.getElementById('out').textContent='clicked'">Press me</button>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('out').textContent='submitted ' + document.getElementById('q').value">
  <input id="name" aria-label="Full name">
  <input id="q" aria-label="Query">
  <button type="submit">Search</button>
</form>
<p id="out"></p>
<a href="/second">Second page</a>
</body></html>`

const secondPage = `<!doctype html>
<html><head><title>Second</title></head>
<body><h1>The second page</h1><a href="/">Back</a></body></html>`

func TestMain(m *testing.M) {
	flag.Parse()
	pageSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, testPage)
		case "/second":
			fmt.Fprint(w, secondPage)
		default:
			http.NotFound(w, r)
		}
	}))
	svc = service.New(&service.Options{BrowserArgs: testenv.BrowserArgs})
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := svc.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		code = 1
	}
	cancel()
	pageSrv.Close()
	// No Chromium of ours (the service's, or a tabpilot binary's) survives.
	deadline := time.Now().Add(10 * time.Second)
	for len(testenv.ChromiumChildren(os.Getpid())) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := testenv.ChromiumChildren(os.Getpid()); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "Chromium processes left after the tests: %v\n", left)
		code = 1
	}
	os.Exit(code)
}

// skipShort skips a test that launches Chromium under -short.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("launches Chromium")
	}
}

// lines splits output into its lines, without the last newline.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
