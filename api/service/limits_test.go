package service_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/errcode"
)

func TestCapTextShort(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		s   string
		max int
	}{{"", 10}, {"hello", 5}, {"hello", 0}, {strings.Repeat("x", 1000), -1}} {
		got, path, err := service.CapTextIn(dir, c.s, c.max)
		if got != c.s || path != "" || err != nil {
			t.Errorf("CapTextIn(%d bytes, %d) = %d bytes, %q, %v", len(c.s), c.max, len(got), path, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("spilled %d files for short texts", len(ents))
	}
}

func TestCapTextCut(t *testing.T) {
	dir := t.TempDir()
	// Multi-byte runes everywhere, so a byte cut would split one.
	s := strings.Repeat("日本語のテキスト。", 2000) // 27 bytes each, 54 000 bytes
	const max = 4000
	got, path, err := service.CapTextIn(dir, s, max)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > max {
		t.Errorf("result is %d bytes, more than %d", len(got), max)
	}
	if !utf8.ValidString(got) {
		t.Error("the cut split a rune")
	}
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "tabpilot-result-") {
		t.Errorf("spill path %q", path)
	}
	i := strings.LastIndex(got, "\n[… ")
	if i < 0 {
		t.Fatalf("no marker in %q", got[len(got)-200:])
	}
	kept := got[:i]
	if !strings.HasPrefix(s, kept) || len(kept) < max-200 {
		t.Errorf("kept %d bytes, not a long prefix of the text", len(kept))
	}
	wantMarker := "\n[… " + strconv.Itoa(len(s)-len(kept)) + " bytes cut; full text in " + path + "]"
	if got[i:] != wantMarker {
		t.Errorf("marker %q, want %q", got[i:], wantMarker)
	}
	full, err := os.ReadFile(path)
	if err != nil || string(full) != s {
		t.Errorf("spill file holds %d bytes (%v), want the %d of the text", len(full), err, len(s))
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("spill file mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
}

func TestCapTextTinyMax(t *testing.T) {
	got, path, err := service.CapTextIn(t.TempDir(), "0123456789abcdef", 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := "\n[… 16 bytes cut; full text in " + path + "]"; got != want {
		t.Errorf("got %q, want the marker alone %q", got, want)
	}
}

func TestCapTextSpillFails(t *testing.T) {
	got, path, err := service.CapTextIn(filepath.Join(t.TempDir(), "missing"), strings.Repeat("a", 500), 200)
	if err == nil || path != "" {
		t.Fatalf("err %v, path %q; want an error and no path", err, path)
	}
	if !strings.HasSuffix(got, "[… "+strconv.Itoa(500-strings.Index(got, "\n"))+" bytes cut; the full text could not be saved]") || len(got) > 200 {
		t.Errorf("got %q", got)
	}
}

func TestLimitsDefaultsAndChecks(t *testing.T) {
	d := service.Limits{}.WithDefaults()
	if d != service.DefaultLimits() || d.MaxResultBytes != 100_000 || d.MaxScreenshotsPerRun != 20 || d.MaxTabs != 16 || d.MaxRunTime != time.Hour {
		t.Errorf("defaults %+v", d)
	}
	l := service.Limits{MaxScreenshotsPerRun: 2, MaxTabs: 3}
	if l.CheckScreenshot(1) != nil || l.CheckTabs(2) != nil {
		t.Error("refused under the limit")
	}
	err := l.CheckScreenshot(2)
	var le *service.LimitError
	if !errors.As(err, &le) || le.Limit != "max_screenshots_per_run" || !errors.Is(err, service.ErrLimit) || le.ErrorCode() != errcode.BadRequest || le.ErrorHint() == "" {
		t.Errorf("CheckScreenshot(2) = %#v", err)
	}
	if err := l.CheckTabs(3); !errors.As(err, &le) || le.Limit != "max_tabs" || !strings.Contains(err.Error(), "3 tabs") {
		t.Errorf("CheckTabs(3) = %v", err)
	}
	unbounded := service.Limits{MaxScreenshotsPerRun: -1, MaxTabs: -1}
	if unbounded.CheckScreenshot(1e6) != nil || unbounded.CheckTabs(1e6) != nil {
		t.Error("a negative limit refused")
	}
	// Cap uses MaxResultBytes and SpillDir.
	dir := t.TempDir()
	got, path, err := service.Limits{MaxResultBytes: 300, SpillDir: dir}.Cap(strings.Repeat("z", 1000))
	if err != nil || len(got) > 300 || filepath.Dir(path) != dir {
		t.Errorf("Cap: %d bytes, %q, %v", len(got), path, err)
	}
}

func TestRunBudget(t *testing.T) {
	b := service.NewRunBudget(time.Hour)
	left, done, err := b.Start()
	if err != nil || left != time.Hour {
		t.Fatalf("Start = %v, %v", left, err)
	}
	time.Sleep(20 * time.Millisecond)
	done()
	done() // counted once
	used := b.Used()
	if used < 20*time.Millisecond || used > 10*time.Minute {
		t.Fatalf("used %v", used)
	}
	left, done, err = b.Start()
	if err != nil || left != time.Hour-used {
		t.Errorf("second Start = %v, %v; want %v", left, err, time.Hour-used)
	}
	done()

	small := service.NewRunBudget(time.Nanosecond)
	_, done, err = small.Start()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	done()
	_, _, err = small.Start()
	var le *service.LimitError
	if !errors.As(err, &le) || le.Limit != "max_run_time" {
		t.Errorf("Start past the budget = %v", err)
	}
	if left, _, err := service.NewRunBudget(-1).Start(); err != nil || left < 100*365*24*time.Hour {
		t.Errorf("unbounded budget: %v, %v", left, err)
	}
}

// SweepTemp removes tabpilot's own old files and nothing else.
func TestSweepTemp(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-25 * time.Hour)
	files := map[string]bool{ // name → removed
		"tabpilot-result-1.txt":        true,
		"tabpilot-observation-2.json":  true,
		"tabpilot-screenshot-3.jpg":    true,
		"tabpilot-screenshot-4.png":    false, // new
		"notes.txt":                    false, // not tabpilot's
		"tabpilot-observation-5.jsonl": false, // another name
	}
	for name, removed := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if removed || name != "tabpilot-screenshot-4.png" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "tabpilot-screenshot-dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if n := service.SweepTemp(dir, service.DefaultTempAge); n != 3 {
		t.Errorf("removed %d files, want 3", n)
	}
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tabpilot-screenshot-dir")); err != nil {
		t.Errorf("the directory was removed: %v", err)
	}
}
