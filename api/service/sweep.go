package service

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// TempPatterns are the names (filepath.Match) of the files tabpilot leaves
// in the temporary directory for a caller to read after a call: spilled
// results, full observations and model screenshots.
var TempPatterns = []string{SpillPattern, "tabpilot-observation-*.json", "tabpilot-screenshot-*"}

// DefaultTempAge is how old a file of TempPatterns must be before
// SweepTemp removes it.
const DefaultTempAge = 24 * time.Hour

// SweepTemp removes, from dir (empty means os.TempDir()), the regular files
// matching TempPatterns that the current user owns and that were last
// modified more than maxAge ago. It returns how many it removed. Files it
// cannot stat or remove are skipped: a sweep never fails. The daemon and
// the stdio modes sweep when they start, so that the files of earlier
// sessions do not pile up while a caller still has a day to read them.
func SweepTemp(dir string, maxAge time.Duration) int {
	if dir == "" {
		dir = os.TempDir()
	}
	cutoff := time.Now().Add(-maxAge)
	uid := os.Getuid()
	n := 0
	for _, p := range TempPatterns {
		matches, _ := filepath.Glob(filepath.Join(dir, p))
		for _, m := range matches {
			fi, err := os.Lstat(m)
			if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
				continue
			}
			if os.Remove(m) == nil {
				n++
			}
		}
	}
	return n
}
