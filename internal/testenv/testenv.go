// Package testenv holds what tabpilot's browser tests share: the launch
// flags that keep test browsers on this machine, a leak check for
// Chromium processes, a real Selenium Grid 4 on 127.0.0.1 (grid.go) and a
// real browserless 2 on 127.0.0.1 (browserless.go).
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BrowserArgs are the flags every test browser gets: names resolve only
// to localhost and 127.0.0.1, and no background traffic leaves.
var BrowserArgs = []string{
	`--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1`,
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
}

// ChromiumChildren returns the pids of Chromium processes whose parent
// chain reaches pid (the test process).
func ChromiumChildren(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	name := map[int]string{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
		name[p] = s[strings.IndexByte(s, '(')+1 : i]
	}
	var out []int
	for p := range parent {
		if !strings.Contains(name[p], "chrom") {
			continue
		}
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// PagesDir returns the directory of the saved real-world pages
// (../shared/pages/readability beside the repository), or "" when absent.
// TABPILOT_PAGES overrides it.
func PagesDir() string {
	if d := os.Getenv("TABPILOT_PAGES"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "..", "shared", "pages", "readability")
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return p
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// KillDescendants sends SIGKILL to the processes below pid whose command
// line contains marker (e.g. a test's temp profile directory): the
// cleanup of browsers a test started itself.
func KillDescendants(pid int, marker string) {
	for _, p := range ChromiumChildren(pid) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// WaitGoroutines waits up to d for the goroutine count to fall to at most
// base+slack, and returns the stacks when it does not (a leak).
func WaitGoroutines(base, slack int, d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		if runtime.NumGoroutine() <= base+slack {
			return ""
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			return string(buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
