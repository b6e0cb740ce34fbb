package service_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

func readAudit(t *testing.T, path string) ([]service.AuditRecord, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []service.AuditRecord
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r service.AuditRecord
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		recs = append(recs, r)
	}
	return recs, b
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestAuditLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := service.OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UTC()
	id1, err := a.Intent("main", service.OriginOf("https://Example.com:443/login?x=1"), "type", "#password", "hunter2")
	if err != nil {
		t.Fatal(err)
	}
	// The intent is in the file before the action would run.
	recs, _ := readAudit(t, path)
	if len(recs) != 1 || recs[0].ID != id1 {
		t.Fatalf("after Intent the file holds %+v", recs)
	}
	if err := a.Outcome(id1, tabs.Errorf(errcode.ElementNotFound, "nothing matched #password while typing %q", "hunter2")); err != nil {
		t.Fatal(err)
	}
	id2, _ := a.Intent("main", "https://example.com", "click", "text/Sign in", "")
	a.Outcome(id2, nil)
	id3, _ := a.Intent("work", "http://127.0.0.1:8080", "goto", "https://example.org/", "")
	a.Outcome(id3, tabs.Errorf(errcode.Timeout, "navigate: no response within the timeout"))
	id4, _ := a.Intent("work", "about:blank", "run", "", "await tab.click('#x')")
	a.Outcome(id4, fmt.Errorf("run: %w", service.ErrOutcomeUnknown))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	recs, raw := readAudit(t, path)
	if bytes.Contains(raw, []byte("hunter2")) {
		t.Fatalf("the typed text is in the log:\n%s", raw)
	}
	if len(recs) != 8 {
		t.Fatalf("%d lines, want 8:\n%s", len(recs), raw)
	}
	in := recs[0]
	if in.Type != "intent" || in.Tab != "main" || in.Origin != "https://example.com" || in.Action != "type" || in.Target != "#password" ||
		in.TextSHA256 != sha("hunter2") || in.PID != os.Getpid() || in.Time.Before(before.Add(-time.Second)) || in.Outcome != "" {
		t.Errorf("intent %+v", in)
	}
	out := recs[1]
	if out.Type != "outcome" || out.ID != id1 || out.Outcome != "error" || out.Code != "element_not_found" ||
		out.Error != `nothing matched #password while typing "[text]"` || out.Tab != "main" || out.Action != "type" {
		t.Errorf("outcome %+v", out)
	}
	if recs[2].TextSHA256 != "" || recs[3].Outcome != "ok" || recs[3].Code != "" || recs[3].Error != "" {
		t.Errorf("click: %+v %+v", recs[2], recs[3])
	}
	if recs[4].Origin != "http://127.0.0.1:8080" || recs[5].Outcome != "unknown" || recs[5].Code != "timeout" {
		t.Errorf("goto: %+v %+v", recs[4], recs[5])
	}
	if recs[6].TextSHA256 != sha("await tab.click('#x')") || recs[7].Outcome != "unknown" {
		t.Errorf("run: %+v %+v", recs[6], recs[7])
	}
	ids := map[string]bool{}
	for _, r := range recs {
		ids[r.ID] = true
	}
	if len(ids) != 4 {
		t.Errorf("%d distinct ids, want 4", len(ids))
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if _, err := a.Intent("main", "", "click", "#x", ""); !errors.Is(err, service.ErrAuditClosed) {
		t.Errorf("Intent after Close = %v", err)
	}
}

func TestAuditNil(t *testing.T) {
	var a *service.Audit
	id, err := a.Intent("main", "", "click", "#x", "t")
	if id != "" || err != nil || a.Outcome(id, nil) != nil || a.Close() != nil {
		t.Error("a nil *Audit did something")
	}
}

func TestAuditLockAndMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := service.OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after open, want 0600", st.Mode().Perm())
	}
	if _, err := service.OpenAudit(path); !errors.Is(err, service.ErrAuditLocked) {
		t.Errorf("second OpenAudit = %v, want ErrAuditLocked", err)
	}
}

// TestAuditTornLine: a log whose last line was cut off (power loss) and
// that has a dangling intent is mended at open.
func TestAuditTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	content := `{"type":"intent","id":"old-1","time":"2026-01-01T00:00:00Z","pid":7,"tab":"main","action":"click","target":"#a"}
{"type":"outcome","id":"old-1","time":"2026-01-01T00:00:01Z","pid":7,"tab":"main","action":"click","outcome":"ok"}
{"type":"intent","id":"old-2","time":"2026-01-01T00:00:02Z","pid":7,"tab":"main","action":"fill","target":"#b","textSha256":"ab"}
{"type":"outcome","id":"old-2","ti`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := service.OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 5 || lines[3] != `{"type":"outcome","id":"old-2","ti` {
		t.Fatalf("lines:\n%s", b)
	}
	var r service.AuditRecord
	if err := json.Unmarshal([]byte(lines[4]), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "old-2" || r.Outcome != "unknown" || !r.Recovered || r.Action != "fill" || !strings.Contains(r.Error, "pid 7") {
		t.Errorf("recovered %+v", r)
	}
}

func TestAuditConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := service.OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				id, err := a.Intent(fmt.Sprintf("tab%d", g), "https://example.com", "click", "#x", "")
				if err != nil {
					t.Error(err)
					return
				}
				a.Outcome(id, nil)
			}
		}()
	}
	wg.Wait()
	a.Close()
	recs, _ := readAudit(t, path)
	if len(recs) != 400 {
		t.Fatalf("%d lines, want 400", len(recs))
	}
	seen := map[string]string{}
	for _, r := range recs {
		switch {
		case r.Type == "intent" && seen[r.ID] == "":
			seen[r.ID] = "intent"
		case r.Type == "outcome" && seen[r.ID] == "intent":
			seen[r.ID] = "done"
		default:
			t.Fatalf("line out of order: %+v (state %q)", r, seen[r.ID])
		}
	}
}

// TestAuditKilledMidAction runs a child process (this test binary) that
// opens the log, completes one action, writes the intent of a second and
// blocks as if the action hung; the test kills it with SIGKILL, reopens the
// log as the next daemon would, and finds the second intent closed as
// unknown.
func TestAuditKilledMidAction(t *testing.T) {
	if path := os.Getenv("TABPILOT_AUDIT_CHILD"); path != "" {
		auditChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditKilledMidAction$", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), "TABPILOT_AUDIT_CHILD="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	// The live child holds the log.
	if _, err := service.OpenAudit(path); !errors.Is(err, service.ErrAuditLocked) {
		t.Fatalf("OpenAudit while the child lives = %v, want ErrAuditLocked", err)
	}
	childPID := cmd.Process.Pid
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred cleanup runs
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true

	before, _ := readAudit(t, path)
	if len(before) != 3 || before[2].Type != "intent" || before[2].Action != "type" {
		t.Fatalf("the child's log: %+v", before)
	}
	a, err := service.OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	recs, raw := readAudit(t, path)
	if len(recs) != 4 {
		t.Fatalf("%d lines after recovery, want 4:\n%s", len(recs), raw)
	}
	r := recs[3]
	if r.Type != "outcome" || r.ID != before[2].ID || r.Outcome != "unknown" || !r.Recovered || r.PID != os.Getpid() ||
		r.Tab != "main" || r.Action != "type" || !strings.Contains(r.Error, fmt.Sprintf("pid %d", childPID)) {
		t.Errorf("recovered outcome %+v", r)
	}
	if before[2].PID != childPID || before[2].TextSHA256 != sha("correct horse") || bytes.Contains(raw, []byte("correct horse")) {
		t.Errorf("child intent %+v", before[2])
	}
	// Recovery is done once: a second open adds nothing.
	a, err = service.OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if again, _ := readAudit(t, path); len(again) != 4 {
		t.Errorf("%d lines after a second open, want 4", len(again))
	}
}

// auditChild is the daemon killed mid-action.
func auditChild(path string) {
	a, err := service.OpenAudit(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	id, _ := a.Intent("main", "https://example.com", "click", "#next", "")
	a.Outcome(id, nil)
	if _, err := a.Intent("main", "https://example.com", "type", "#q", "correct horse"); err != nil {
		fmt.Println("intent:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	select {} // the action hangs until the parent kills us
}

func TestOriginOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://Example.com/a?b#c":      "https://example.com",
		"https://example.com:443/":       "https://example.com",
		"http://example.com:8080/x":      "http://example.com:8080",
		"http://[::1]:9222/json":         "http://[::1]:9222",
		"about:blank":                    "about:blank",
		"data:text/html,<b>secret</b>":   "data:",
		"file:///home/me/notes.txt":      "file:",
		"chrome://settings":              "chrome:",
		"":                               "",
		"not a url":                      "",
		"https://user:pw@example.com/":   "https://example.com",
		"wss://live.example.com:8443/ws": "wss://live.example.com:8443",
	} {
		if got := service.OriginOf(in); got != want {
			t.Errorf("OriginOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkAuditIntentOutcome(b *testing.B) {
	a, err := service.OpenAudit(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ReportAllocs()
	for b.Loop() {
		id, err := a.Intent("main", "https://example.com", "type", "#q", "some text")
		if err != nil {
			b.Fatal(err)
		}
		a.Outcome(id, nil)
	}
}

func BenchmarkCapText(b *testing.B) {
	s := strings.Repeat("lorem ipsum dolor sit amet ", 40_000) // ~1 MB
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		_, p, err := service.CapTextIn(dir, s, 100_000)
		if err != nil {
			b.Fatal(err)
		}
		os.Remove(p)
	}
}
