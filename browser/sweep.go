package browser

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// record is what Launch writes to Options.StateDir for each browser it
// starts, so a later daemon can sweep what a killed one left behind.
type record struct {
	PID         int    `json:"pid"`
	UserDataDir string `json:"userDataDir"`
	TempProfile bool   `json:"tempProfile"`
	Started     string `json:"started"`
}

func recordPath(dir string, pid int) string {
	return filepath.Join(dir, fmt.Sprintf("browser-%d.json", pid))
}

// userDataDirOf reads --user-data-dir from a process's command line.
func userDataDirOf(pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	for _, a := range strings.Split(string(raw), "\x00") {
		if v, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			return v
		}
	}
	return ""
}

// writeRecord notes a launched browser in dir (0600).
func writeRecord(dir string, pid int, tempProfile bool) error {
	if dir == "" || pid <= 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(record{PID: pid, UserDataDir: userDataDirOf(pid), TempProfile: tempProfile, Started: time.Now().UTC().Format(time.RFC3339)})
	return os.WriteFile(recordPath(dir, pid), b, 0o600)
}

// Sweep ends the browsers that a previous daemon recorded in dir and
// that still run (a daemon killed with SIGKILL cannot stop its own): it
// kills each recorded process group whose leader still has the recorded
// profile on its command line (so a reused pid is left alone), removes the
// temporary profiles, and deletes the records. It returns how many
// browsers it killed.
func Sweep(dir string, log *slog.Logger) int {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "browser-*.json"))
	killed := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		var r record
		if err != nil || json.Unmarshal(b, &r) != nil || r.PID <= 0 {
			os.Remove(f)
			continue
		}
		if processAlive(r.PID) && r.UserDataDir != "" && userDataDirOf(r.PID) == r.UserDataDir {
			_ = syscall.Kill(-r.PID, syscall.SIGKILL)
			_ = syscall.Kill(r.PID, syscall.SIGKILL)
			killed++
			log.Warn("killed a browser left by a previous daemon", "pid", r.PID, "profile", r.UserDataDir)
		}
		// Children outside the group still hold the profile: kill them by it.
		if r.UserDataDir != "" {
			killByProfile(r.UserDataDir)
		}
		if r.TempProfile && r.UserDataDir != "" && strings.Contains(filepath.Base(r.UserDataDir), "chromedp-runner") {
			time.Sleep(100 * time.Millisecond)
			os.RemoveAll(r.UserDataDir)
		}
		os.Remove(f)
	}
	return killed
}

// killByProfile kills every process whose command line has
// --user-data-dir=dir.
func killByProfile(dir string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if userDataDirOf(pid) == dir {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
