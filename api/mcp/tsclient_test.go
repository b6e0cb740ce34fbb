package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// TestTypeScriptClient drives `tabpilot mcp` with the official TypeScript
// SDK (npm @modelcontextprotocol/sdk: Client with StdioClientTransport):
// testdata/tsclient/client.mjs lists the tools, opens the test page,
// observes, clicks by number, takes a screenshot and checks the image
// content, then closes; the binary must exit 0 and leave no Chromium. The
// set-up installs the SDK with npm into a scratch directory under
// os.TempDir(), kept between runs (keyed by package.json). It skips when
// node or npm is missing.
func TestTypeScriptClient(t *testing.T) {
	skipShort(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TypeScript client test needs node and npm (apt-get install -y nodejs npm)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: the TypeScript client test needs node and npm (apt-get install -y nodejs npm)")
	}
	pkg, err := os.ReadFile("testdata/tsclient/package.json")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/tsclient/client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pkg)
	dir := filepath.Join(os.TempDir(), "tabpilot-mcp-tsclient-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "client.mjs"), script, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install in %s: %v\n%s", dir, err, out)
	}

	bin := tabpilotBinary(t)
	env, marker := binaryEnv(t)
	run := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), bin, pageSrv.URL)
	run.Env = env
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var report struct {
		OK    bool     `json:"ok"`
		Tools []string `json:"tools"`
		Image struct {
			Width, Height, Bytes int
		} `json:"image"`
		Exit any `json:"exit"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &report); err != nil || !report.OK || report.Exit != float64(0) {
		t.Fatalf("the client's report %q: %v", stdout.String(), err)
	}
	t.Logf("TypeScript client: tools %v, screenshot %dx%d (%d bytes), tabpilot mcp exited %v",
		report.Tools, report.Image.Width, report.Image.Height, report.Image.Bytes, report.Exit)
	if s := stderr.String(); s != "" {
		t.Logf("stderr of node and tabpilot:\n%s", s)
	}
	waitUntil(t, "no Chromium of tabpilot mcp remains", 10*time.Second, func() bool { return len(markedProcs(marker)) == 0 })
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// tabpilotBinary builds cmd/tabpilot once for the package's tests.
func tabpilotBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tabpilot-mcp-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "tabpilot")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/tabpilot/tabpilot/cmd/tabpilot").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("build tabpilot: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// binaryEnv is the environment of a tabpilot binary under test: no
// TABPILOT_* of the caller's, and the test browser flags with a unique
// marker, to find the browser's processes (and only them) afterwards.
// The cleanup kills what a failed test left.
func binaryEnv(t *testing.T) (env []string, marker string) {
	b := make([]byte, 8)
	rand.Read(b)
	marker = "--tabpilot-test-marker=" + hex.EncodeToString(b)
	t.Cleanup(func() { killMarked(marker) })
	args := `--no-sandbox --disable-gpu --disable-quic --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1" ` +
		`--disable-background-networking --disable-component-update --disable-sync --no-first-run ` + marker
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TABPILOT_") {
			env = append(env, kv)
		}
	}
	return append(env, "TABPILOT_BROWSER_ARGS="+args), marker
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
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue // a zombie
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// killMarked ends the Chromium processes a failed test left (ours only:
// they carry our marker).
func killMarked(marker string) {
	for _, pid := range markedProcs(marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
