package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests drive the real binary, its daemon and a headless
// Chromium against an httptest page. They skip while api/service is the
// stub that knows no method.

const testPage = `<!doctype html>
<html><head><title>Tabpilot Test</title></head>
<body>
<h1>Hello from the test page</h1>
<p>Tabpilot drives a real browser. This paragraph is the readable content of the page.</p>
<button id="b" onclick="document.getElementById('out').textContent='clicked'">Press me</button>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('out').textContent='submitted ' + document.getElementById('q').value">
  <input id="name" aria-label="Full name">
  <input id="q" aria-label="Query">
  <button type="submit">Search</button>
</form>
<p id="out"></p>
</body></html>`

func testServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, testPage)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// browserEnv is an env whose browsers carry a unique marker flag, so the
// test can find its Chromium processes (and only them).
func browserEnv(t *testing.T) (*env, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("launches Chromium")
	}
	if serviceIsStub() {
		t.Skip("api/service is still the stub (open is not implemented)")
	}
	b := make([]byte, 8)
	rand.Read(b)
	marker := "--tabpilot-test-marker=" + hex.EncodeToString(b)
	args := `--no-sandbox --disable-gpu --disable-quic --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1" ` +
		`--disable-background-networking --disable-component-update --disable-sync --no-first-run ` + marker
	e := newEnv(t, "TABPILOT_BROWSER_ARGS="+args)
	t.Cleanup(func() { killMarked(marker) })
	return e, marker
}

// markedProcs returns the live processes whose command line has marker.
func markedProcs(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(marker)) || !alive(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// killMarked ends the Chromium processes of a failed test (ours only: they
// carry our marker).
func killMarked(marker string) {
	for _, pid := range markedProcs(marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func checkNoBrowser(t *testing.T, marker string) {
	t.Helper()
	waitFor(t, "no Chromium of the test remains", 10*time.Second, func() bool { return len(markedProcs(marker)) == 0 })
}

// mustRun runs tabpilot and fails the test unless it exits 0.
func mustRun(t *testing.T, e *env, args ...string) string {
	t.Helper()
	stdout, stderr, code := e.run(args...)
	if code != 0 {
		t.Fatalf("tabpilot %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// elementNumber finds the number of the element line with role and name in
// an observation's text rendering (number first, then role and quoted
// name, or a button's name in brackets).
func elementNumber(t *testing.T, observation, role, name string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\D*?(\d+)\D[^\n]*\b` + regexp.QuoteMeta(role) + `\b[^\n]*"` + regexp.QuoteMeta(name) + `"`)
	m := re.FindStringSubmatch(observation)
	if m == nil && role == "button" {
		// The compact rendering writes a button as its name in brackets.
		m = regexp.MustCompile(`(?m)^(\d+) \[` + regexp.QuoteMeta(name) + `\]`).FindStringSubmatch(observation)
	}
	if m == nil {
		t.Fatalf("no %s %q in the observation:\n%s", role, name, observation)
	}
	return m[1]
}

func evalOut(t *testing.T, e *env) string {
	t.Helper()
	return strings.TrimSpace(mustRun(t, e, "run", "-e", `return await tab.evaluate(() => document.getElementById("out").textContent)`))
}

func TestCLIEndToEnd(t *testing.T) {
	e, marker := browserEnv(t)
	srv := testServer(t)
	url := srv.URL + "/page"

	// open, with flags after the argument.
	stdout := mustRun(t, e, "open", url, "--json", "--viewport", "1024x700")
	r := decodeResult(t, stdout)
	if r.IsError || r.Details["title"] != "Tabpilot Test" || r.Details["url"] != url || !strings.Contains(r.Text(), "Opened") {
		t.Fatalf("open: %s", stdout)
	}
	pid := e.daemonPID("default")
	if pid == 0 || !alive(pid) {
		t.Fatal("no daemon after open")
	}
	if len(markedProcs(marker)) == 0 {
		t.Fatal("no Chromium with the test's flags: TABPILOT_BROWSER_ARGS did not reach the browser")
	}
	// A second open reuses the tab.
	if out := mustRun(t, e, "open", url); !strings.Contains(out, "Reused") {
		t.Errorf("second open: %q", out)
	}

	// observe: numbered elements; act by number.
	obs := mustRun(t, e, "observe")
	n := elementNumber(t, obs, "button", "Press me")
	elementNumber(t, obs, "textbox", "Full name")
	stdout = mustRun(t, e, "observe", "--json")
	r = decodeResult(t, stdout)
	if els, ok := r.Details["elements"].([]any); !ok || len(els) < 3 {
		t.Errorf("observe --json: details.elements = %v", r.Details["elements"])
	}
	mustRun(t, e, "click", n)
	if got := evalOut(t, e); got != "clicked" {
		t.Errorf("after click: out = %q, want clicked", got)
	}

	// fill, type, press.
	mustRun(t, e, "fill", "#name", "Ada Lovelace")
	if got := strings.TrimSpace(mustRun(t, e, "run", "-e", `return await tab.evaluate(() => document.getElementById("name").value)`)); got != "Ada Lovelace" {
		t.Errorf("after fill: value = %q", got)
	}
	mustRun(t, e, "type", "#q", "needle")
	mustRun(t, e, "press", "Enter", "#q")
	if got := evalOut(t, e); got != "submitted needle" {
		t.Errorf("after type and press Enter: out = %q, want %q", got, "submitted needle")
	}

	// run: -e, a file, stdin.
	if got := mustRun(t, e, "run", "-e", "return await tab.title()"); got != "Tabpilot Test\n" {
		t.Errorf("run -e: %q", got)
	}
	file := filepath.Join(t.TempDir(), "s.js")
	os.WriteFile(file, []byte("return 6 * 7"), 0o600)
	if got := mustRun(t, e, "run", file); strings.TrimSpace(got) != "42" {
		t.Errorf("run FILE: %q", got)
	}
	if got, _, code := e.runStdin("return 'from stdin'", "run", "-"); code != 0 || got != "from stdin\n" {
		t.Errorf("run -: exit %d, %q", code, got)
	}

	// A failing script: exit 1, the code and hint on stderr, or in the JSON.
	stdout, stderr, code := e.run("run", "-e", `throw new Error("nope")`)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "script_error: ") || !strings.Contains(stderr, "nope") || !strings.Contains(stderr, "hint: ") {
		t.Errorf("failing run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, _, code = e.run("run", "--json", "-e", `throw new Error("nope")`)
	r = decodeResult(t, stdout)
	if ei := r.ErrorOf(); code != 1 || !r.IsError || ei == nil || ei.Code != "script_error" || ei.Hint == "" {
		t.Errorf("failing run --json: exit %d, %s", code, stdout)
	}
	_, stderr, code = e.run("click", "#missing", "--timeout", "2")
	if code != 1 || !strings.Contains(stderr, "hint: ") {
		t.Errorf("click #missing: exit %d, stderr %q", code, stderr)
	}

	// screenshot --out writes a PNG; extract returns the text.
	png := filepath.Join(t.TempDir(), "shot.png")
	mustRun(t, e, "screenshot", "--out", png)
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot --out: %v, %d bytes", err, len(b))
	}
	if got := mustRun(t, e, "extract", "--format", "text"); !strings.Contains(got, "readable content of the page") {
		t.Errorf("extract: %q", got)
	}

	// A second named tab, then tabs.
	mustRun(t, e, "open", url, "--tab", "second")
	stdout = mustRun(t, e, "tabs", "--json")
	if r := decodeResult(t, stdout); !strings.Contains(r.Text(), "main") || !strings.Contains(r.Text(), "second") {
		t.Errorf("tabs: %s", stdout)
	}

	// A dropped connection cancels the run in progress: kill the CLI while
	// its run waits, and the tab is free again long before the wait ends.
	cmd := exec.Command(bin, "run", "--timeout", "30", "-e", "await wait(25000); return 'finished'")
	cmd.Env = e.vars
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	busy := func() bool {
		out, _, _ := e.run("tabs", "--json")
		return strings.Contains(out, `"busy":true`)
	}
	waitFor(t, "the run starts", 20*time.Second, busy)
	cmd.Process.Kill()
	cmd.Wait()
	waitFor(t, "the killed CLI's run is cancelled", 15*time.Second, func() bool { return !busy() })
	if got := mustRun(t, e, "run", "-e", "return 'free'"); got != "free\n" {
		t.Errorf("after the cancelled run: %q", got)
	}

	// close one tab, then stop.
	if out := mustRun(t, e, "close", "--tab", "second"); !strings.Contains(out, "Closed") {
		t.Errorf("close: %q", out)
	}
	if out := mustRun(t, e, "tabs"); strings.Contains(out, "second") {
		t.Errorf("tabs after close: %q", out)
	}
	if out := mustRun(t, e, "stop"); !strings.Contains(out, "Stopped") {
		t.Errorf("stop: %q", out)
	}
	if p := filepath.Join(e.dir(), "default.sock"); exists(p) {
		t.Errorf("%s remains after stop", p)
	}
	checkGone(t, e, "default", pid)
	checkNoBrowser(t, marker)
}

func TestCLISIGTERMClosesBrowser(t *testing.T) {
	e, marker := browserEnv(t)
	srv := testServer(t)
	mustRun(t, e, "open", srv.URL)
	pid := e.daemonPID("default")
	if len(markedProcs(marker)) == 0 {
		t.Fatal("no Chromium of the test runs after open")
	}
	syscall.Kill(pid, syscall.SIGTERM)
	checkGone(t, e, "default", pid)
	checkNoBrowser(t, marker)
}

func TestServeEndToEnd(t *testing.T) {
	e, marker := browserEnv(t)
	srv := testServer(t)
	p := startServe(t, e)
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"open","params":{"url":%q}}`, srv.URL))
	r := p.recv(t)
	if r.Error != nil || r.Result == nil || r.Result.IsError || r.Result.Details["title"] != "Tabpilot Test" {
		t.Fatalf("open: %+v (stderr %s)", r, p.stderr)
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"run","params":{"code":"return await tab.title()"}}`)
	if r := p.recv(t); r.Error != nil || r.Result.Text() != "Tabpilot Test" {
		t.Fatalf("run: %+v", r)
	}
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"observe","params":{"timeout":"soon"}}`)
	if r := p.recv(t); r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("observe with a string timeout: %+v", r)
	}
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"tabs"}`)
	if r := p.recv(t); r.Error != nil || !strings.Contains(r.Result.Text(), "main") {
		t.Fatalf("tabs: %+v", r)
	}
	// stdin closes: the tabs are closed and serve exits 0.
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Fatalf("serve exited %d; stderr:\n%s", code, p.stderr)
	}
	checkNoBrowser(t, marker)
}

// TestCLISettingsOfARunningDaemon: daemon flags given to a call whose
// session's daemon runs with other settings are refused, not silently
// ignored; a call without daemon flags uses the daemon as it is.
func TestCLISettingsOfARunningDaemon(t *testing.T) {
	e, _ := browserEnv(t)
	srv := testServer(t)
	url := srv.URL + "/page"
	mustRun(t, e, "open", "--session", "pol", "--allow-origin", srv.URL, url)
	_, stderr, code := e.run("open", "--session", "pol", "--block-origin", srv.URL, url)
	if code == 0 || !strings.Contains(stderr, "runs with other settings") || !strings.Contains(stderr, "tabpilot stop --session pol") || !strings.Contains(stderr, "bad_request") {
		t.Fatalf("open with other daemon flags: exit %d, stderr %q", code, stderr)
	}
	if out := mustRun(t, e, "observe", "--session", "pol"); !strings.Contains(out, "Press me") {
		t.Fatalf("observe without daemon flags: %s", out)
	}
	mustRun(t, e, "open", "--session", "pol", "--allow-origin", srv.URL, url)
	mustRun(t, e, "stop", "--session", "pol")
}
