package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The version of a Chromium executable is known before its launch from
// `chromium --version` (40 to 140 ms here, most of it the binary's own
// start), which is kept in the user's cache directory so that only the first
// launch on a machine, or after an upgrade, pays it. An entry names the
// binary that really ran (/proc/PID/exe: a launcher such as Debian's
// /usr/bin/chromium is a shell script that execs it), and holds while that
// binary's size and modification time do; the launch checks it against
// Browser.getVersion and corrects it.

// versionCacheFile is the cache's file under os.UserCacheDir.
const versionCacheFile = "tabpilot/chromium-versions.json"

// versionEntry is what the cache knows of one executable.
type versionEntry struct {
	Version string `json:"version"` // "156.0.8078.129"
	// Real is the binary that ran, with its size and modification time
	// (Unix nanoseconds) then; empty until a launch has seen it.
	Real    string `json:"real,omitempty"`
	Size    int64  `json:"size,omitempty"`
	ModTime int64  `json:"mtime,omitempty"`
}

// versionMu serializes this process's reads and writes of the cache file.
var versionMu sync.Mutex

// versionCachePath returns the cache file's path, or "" without a cache
// directory.
func versionCachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, versionCacheFile)
}

// readVersionCache returns the cache's valid entries: a file that is not
// one (truncated, "null", hand-edited) counts as empty, and an entry
// without a version as absent; the next store rewrites it.
func readVersionCache() map[string]versionEntry {
	var m map[string]versionEntry
	if p := versionCachePath(); p != "" {
		if b, err := os.ReadFile(p); err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	for k, e := range m {
		if v := parseVersion(e.Version); v == "" || v != e.Version {
			delete(m, k)
		}
	}
	if m == nil {
		m = map[string]versionEntry{}
	}
	return m
}

// writeVersionCache replaces the cache file in one rename, so that a
// concurrent reader sees the old or the new one whole.
func writeVersionCache(m map[string]versionEntry) error {
	p := versionCachePath()
	if p == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".chromium-versions-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), p)
}

// fileStamp returns a file's size and modification time.
func fileStamp(path string) (int64, int64, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, 0, false
	}
	return st.Size(), st.ModTime().UnixNano(), true
}

// ExecVersion returns the version ("156.0.8078.129") of the Chromium
// executable exe: from the cache while the binary it last ran is
// unchanged, else from `exe --version` (at most 10 s), which is then
// cached. Errors: the command's, or one saying its output named no version.
func ExecVersion(exe string) (string, error) {
	versionMu.Lock()
	e, ok := readVersionCache()[exe]
	versionMu.Unlock()
	if ok && e.Real != "" {
		if size, mt, ok := fileStamp(e.Real); ok && size == e.Size && mt == e.ModTime {
			return e.Version, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", exe, err)
	}
	v := parseVersion(string(out))
	if v == "" {
		return "", fmt.Errorf("%s --version: no version in %q", exe, strings.TrimSpace(string(out)))
	}
	storeVersion(exe, versionEntry{Version: v})
	return v, nil
}

// parseVersion finds the version in the output of --version ("Chromium
// 156.0.8078.129 built on Debian", "Google Chrome 156.0.8078.129").
func parseVersion(out string) string {
	for _, f := range strings.Fields(out) {
		if major, _, ok := strings.Cut(f, "."); ok && major != "" && strings.Trim(major, "0123456789") == "" {
			return f
		}
	}
	return ""
}

// storeVersion records e for exe; errors are left out: a cache that
// cannot be written costs a --version at the next launch.
func storeVersion(exe string, e versionEntry) {
	versionMu.Lock()
	defer versionMu.Unlock()
	m := readVersionCache()
	m[exe] = e
	_ = writeVersionCache(m)
}

// noteLaunched records what a launch of exe found: the version the
// browser reports (Browser.getVersion's product, "HeadlessChrome/156.0.8078.129")
// and the binary that runs as pid. It reports whether used, the version
// the launch's flags were made for, was that one.
func noteLaunched(exe, used, product string, pid int) bool {
	_, v, _ := strings.Cut(product, "/")
	if v == "" {
		return true
	}
	e := versionEntry{Version: v}
	if pid > 0 {
		if real, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
			if size, mt, ok := fileStamp(real); ok {
				e.Real, e.Size, e.ModTime = real, size, mt
			}
		}
	}
	versionMu.Lock()
	old, ok := readVersionCache()[exe]
	versionMu.Unlock()
	if !ok || old != e {
		storeVersion(exe, e)
	}
	return used == v
}
