package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// buildThin builds the thin client (the tag thin) into dir.
func buildThin(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "tabpilot")
	build := exec.Command("go", "build", "-tags", "thin", "-o", p, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the thin client: %v\n%s", err, out)
	}
	return p
}

// TestThinClient: the thin client starts its engine (tabpilot-engine next
// to it) as the session's daemon and drives it like the full binary;
// without an engine it says where it looked.
func TestThinClient(t *testing.T) {
	e, _ := browserEnv(t)
	dir := t.TempDir()
	thin := buildThin(t, dir)
	if err := os.Symlink(bin, filepath.Join(dir, "tabpilot-engine")); err != nil {
		t.Fatal(err)
	}
	e.exe = thin
	srv := testServer(t)
	mustRun(t, e, "open", srv.URL+"/page")
	pid := e.daemonPID("default")
	if pid == 0 || !alive(pid) {
		t.Fatal("no daemon after open")
	}
	if cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); !strings.HasPrefix(string(cmdline), filepath.Join(dir, "tabpilot-engine")+"\x00daemon\x00") {
		t.Fatalf("the daemon is %q, want the engine", strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	n := elementNumber(t, mustRun(t, e, "observe"), "button", "Press me")
	mustRun(t, e, "click", n)
	if got := evalOut(t, e); got != "clicked" {
		t.Errorf("after click: out = %q, want clicked", got)
	}
	if out := mustRun(t, e, "version"); !strings.Contains(out, "tabpilot") {
		t.Errorf("version: %q", out)
	}
	mustRun(t, e, "stop")

	// Alone, the thin client names the engine it misses.
	lone := buildThin(t, t.TempDir())
	e.exe = lone
	_, stderr, code := e.run("serve")
	if code != exitFailed || !strings.Contains(stderr, "thin client") || !strings.Contains(stderr, "tabpilot-engine") {
		t.Errorf("serve without an engine: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = e.run("observe", "--session", "lone")
	if code == 0 || !strings.Contains(stderr, "tabpilot-engine") || strings.Contains(stderr, "retry") {
		t.Errorf("observe without an engine: exit %d, stderr %q", code, stderr)
	}
	// A thin client named as the engine is refused, not started again and
	// again.
	e.vars = append(e.vars, "TABPILOT_ENGINE="+lone)
	_, stderr, code = e.run("serve")
	if code != exitFailed || !strings.Contains(stderr, "is this thin client") {
		t.Errorf("serve with itself as the engine: exit %d, stderr %q", code, stderr)
	}
	other := filepath.Join(t.TempDir(), "other")
	if b, err := os.ReadFile(lone); err != nil || os.WriteFile(other, b, 0o755) != nil {
		t.Fatal("copy the thin client")
	}
	e.vars = append(e.vars, "TABPILOT_ENGINE="+other)
	_, stderr, code = e.run("serve")
	if code != exitFailed || !strings.Contains(stderr, "a thin client too") {
		t.Errorf("serve with another thin client as the engine: exit %d, stderr %q", code, stderr)
	}
}
