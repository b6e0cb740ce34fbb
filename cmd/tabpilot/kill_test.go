package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDaemonSIGKILLMidAction kills the daemon with SIGKILL in the middle
// of a run, with the audit log on. The next call's daemon must close the
// dangling intent as unknown and sweep the Chromium the dead daemon left.
func TestDaemonSIGKILLMidAction(t *testing.T) {
	e, marker := browserEnv(t)
	srv := testServer(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	e.vars = append(e.vars, "TABPILOT_AUDIT="+audit)
	mustRun(t, e, "open", srv.URL)
	pid := e.daemonPID("default")
	// A run that stays in flight until the kill.
	cmd := exec.Command(bin, "run", "--timeout", "30", "-e", "await wait(25000)")
	cmd.Env = e.vars
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run's intent in the audit log", 10*time.Second, func() bool {
		b, _ := os.ReadFile(audit)
		return strings.Contains(string(b), `"action":"run"`)
	})
	syscall.Kill(pid, syscall.SIGKILL)
	cmd.Wait()
	waitFor(t, "the daemon to die", 10*time.Second, func() bool { return !alive(pid) })
	// The next call starts a new daemon, which recovers the log and sweeps
	// what the parent-death signal did not end.
	mustRun(t, e, "tabs")
	waitFor(t, "no Chromium of the killed daemon remains", 10*time.Second, func() bool { return len(markedChromium(marker)) == 0 })
	f, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var runID string
	outcomes := map[string]map[string]any{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if rec["action"] == "run" && rec["type"] == "intent" {
			runID, _ = rec["id"].(string)
		}
		if rec["type"] == "outcome" {
			outcomes[rec["id"].(string)] = rec
		}
	}
	if runID == "" {
		t.Fatal("no intent for the run in the audit log")
	}
	o := outcomes[runID]
	if o == nil || o["outcome"] != "unknown" {
		t.Fatalf("outcome of the killed run = %v, want unknown", o)
	}
	if st, _ := os.Stat(audit); st.Mode().Perm() != 0o600 {
		t.Fatalf("audit log mode %v", st.Mode().Perm())
	}
}

// markedChromium returns the Chromium processes with marker (the daemon's
// own command line carries it too, in --browser-arg).
func markedChromium(marker string) []int {
	var out []int
	for _, pid := range markedProcs(marker) {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if strings.Contains(string(b), "chrom") {
			out = append(out, pid)
		}
	}
	return out
}
