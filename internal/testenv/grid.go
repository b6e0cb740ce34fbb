package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The Selenium Grid the Grid tests share: a standalone Selenium 4 server
// (the jar of the npm package @nightwatch/selenium-server, which .ci/run
// installs into /tmp/tabpilot-grid-npm) on 127.0.0.1 with Debian's
// chromedriver and chromium, basic auth, and a 10 s idle timeout so the
// keepalive test is short.
const (
	GridUser     = "tp"
	GridPassword = "grid-secret-pw"
	// GridSessionTimeout is the Grid's --session-timeout in seconds.
	GridSessionTimeout = 10
	gridNPMDir         = "/tmp/tabpilot-grid-npm"
	chromedriverPath   = "/usr/bin/chromedriver"
)

var grid struct {
	once sync.Once
	url  string // http://127.0.0.1:P, no credentials
	cmd  *exec.Cmd
	log  string
	err  error
	skip string
}

// gridJar returns the Selenium server jar: TABPILOT_GRID_JAR, else the
// one in gridNPMDir (TABPILOT_GRID_NPM).
func gridJar() string {
	if j := os.Getenv("TABPILOT_GRID_JAR"); j != "" {
		return j
	}
	dir := gridNPMDir
	if d := os.Getenv("TABPILOT_GRID_NPM"); d != "" {
		dir = d
	}
	m, _ := filepath.Glob(filepath.Join(dir, "node_modules/@nightwatch/selenium-server/lib/selenium-server-*.jar"))
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

// NeedGrid returns the URL of the shared Grid, starting it on first use.
// Without java, the jar, chromedriver or chromium it skips, unless CI is
// set: there the Grid tests must run.
func NeedGrid(t testing.TB) string {
	t.Helper()
	grid.once.Do(startGrid)
	if grid.skip != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and the Grid cannot run: %s", grid.skip)
		}
		t.Skip(grid.skip)
	}
	if grid.err != nil {
		t.Fatalf("start the Grid: %v\n%s", grid.err, grid.log)
	}
	return grid.url
}

func startGrid() {
	java, err := exec.LookPath("java")
	if err != nil {
		grid.skip = "no java on PATH (apt-get install openjdk-17-jre-headless)"
		return
	}
	jar := gridJar()
	if _, err := os.Stat(jar); jar == "" || err != nil {
		grid.skip = "no Selenium server jar: npm install --ignore-scripts --prefix " + gridNPMDir + " @nightwatch/selenium-server (or set TABPILOT_GRID_JAR)"
		return
	}
	if _, err := os.Stat(chromedriverPath); err != nil {
		grid.skip = "no " + chromedriverPath + " (apt-get install chromium-driver)"
		return
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		grid.skip = "no /usr/bin/chromium (apt-get install chromium)"
		return
	}
	port, err := FreePort()
	if err != nil {
		grid.err = err
		return
	}
	logf, err := os.CreateTemp("", "tabpilot-grid-*.log")
	if err != nil {
		grid.err = err
		return
	}
	grid.log = logf.Name()
	cmd := exec.Command(java, gridArgs(jar, port)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		grid.err = err
		return
	}
	grid.cmd = cmd
	go cmd.Wait() // reap
	grid.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := GridStatus(grid.url); err == nil && st.Ready {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	b, _ := os.ReadFile(grid.log)
	grid.err = fmt.Errorf("the Grid at %s was not ready within 60 s:\n%s", grid.url, b)
}

// gridArgs is the command line of the test Grid, after java.
func gridArgs(jar string, port int) []string {
	return []string{
		"-Dwebdriver.chrome.driver=" + chromedriverPath,
		"-jar", jar, "standalone",
		"--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--selenium-manager", "false", "--detect-drivers", "false",
		"--username", GridUser, "--password", GridPassword,
		"--session-timeout", strconv.Itoa(GridSessionTimeout),
		"--max-sessions", "8", "--override-max-sessions", "true",
		"--driver-configuration", "display-name=chromium", "max-sessions=8",
		"webdriver-executable=" + chromedriverPath,
		`stereotype={"browserName":"chrome","goog:chromeOptions":{"binary":"/usr/bin/chromium"}}`,
	}
}

// StopGrid ends the shared Grid's process group (call it from TestMain).
func StopGrid() {
	if grid.cmd != nil {
		_ = syscall.Kill(-grid.cmd.Process.Pid, syscall.SIGTERM)
		time.Sleep(500 * time.Millisecond)
		_ = syscall.Kill(-grid.cmd.Process.Pid, syscall.SIGKILL)
	}
	if grid.log != "" && grid.err == nil {
		os.Remove(grid.log)
	}
}

type GridStatusValue struct {
	Ready bool `json:"ready"`
	Nodes []struct {
		Slots []struct {
			Session *struct {
				SessionID string `json:"sessionId"`
			} `json:"session"`
		} `json:"slots"`
	} `json:"nodes"`
}

// gridStatus reads the Grid's GET /status.
func GridStatus(base string) (*GridStatusValue, error) {
	req, _ := http.NewRequest(http.MethodGet, base+"/status", nil)
	req.SetBasicAuth(GridUser, GridPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var env struct {
		Value GridStatusValue `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return nil, err
	}
	return &env.Value, nil
}

// GridSessions lists the session ids the Grid's /status shows.
func GridSessions(t testing.TB, base string) map[string]bool {
	t.Helper()
	st, err := GridStatus(base)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, n := range st.Nodes {
		for _, s := range n.Slots {
			if s.Session != nil {
				ids[s.Session.SessionID] = true
			}
		}
	}
	return ids
}

// GridCall sends a WebDriver command to the Grid with its credentials,
// behind any handle's back, and returns the HTTP status.
func GridCall(t testing.TB, method, u string, body any) int {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, _ := http.NewRequestWithContext(context.Background(), method, u, bytes.NewReader(b))
	req.SetBasicAuth(GridUser, GridPassword)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// GridURLWithAuth is base (http://127.0.0.1:P) with the test Grid's
// credentials in it.
func GridURLWithAuth(base string) string {
	return "http://" + GridUser + ":" + GridPassword + "@" + base[len("http://"):]
}
