package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseVersion(t *testing.T) {
	for out, want := range map[string]string{
		"Chromium 156.0.8078.129 built on Debian GNU/Linux 12 (bookworm)\n": "156.0.8078.129",
		"Google Chrome 156.0.8078.129 \n":                                   "156.0.8078.129",
		"Chromium\n":                                                        "",
	} {
		if got := parseVersion(out); got != want {
			t.Errorf("parseVersion(%q) = %q, want %q", out, got, want)
		}
	}
}

// TestExecVersionCache: the version comes from --version until a launch
// names the binary that ran; then from the cache while that binary is
// unchanged, and from --version again once it changed (an upgrade).
func TestExecVersionCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	exe := filepath.Join(dir, "chromium")
	script := "#!/bin/sh\necho x >> " + calls + "\necho 'Chromium 150.0.7000.1 built on Debian'\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ran := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "x")
	}
	for i := 1; i <= 2; i++ {
		v, err := ExecVersion(exe)
		if err != nil || v != "150.0.7000.1" || ran() != i {
			t.Fatalf("ExecVersion #%d: %q, %v, --version ran %d times; want 150.0.7000.1 from run %d", i, v, err, ran(), i)
		}
	}
	// A launch saw the binary that ran (here a copy standing for
	// /proc/PID/exe's target) and the version it reported.
	real := filepath.Join(dir, "real")
	if err := os.WriteFile(real, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	size, mt, _ := fileStamp(real)
	storeVersion(exe, versionEntry{Version: "150.0.7000.1", Real: real, Size: size, ModTime: mt})
	if v, err := ExecVersion(exe); err != nil || v != "150.0.7000.1" || ran() != 2 {
		t.Fatalf("ExecVersion from the cache: %q, %v, --version ran %d times; want 2", v, err, ran())
	}
	// An upgrade changes the binary.
	if err := os.WriteFile(real, []byte("binary, upgraded"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(real, later, later); err != nil {
		t.Fatal(err)
	}
	if v, err := ExecVersion(exe); err != nil || v != "150.0.7000.1" || ran() != 3 {
		t.Fatalf("ExecVersion after an upgrade: %q, %v, --version ran %d times; want 3", v, err, ran())
	}
	if !noteLaunched(exe, "150.0.7000.1", "HeadlessChrome/150.0.7000.1", 0) || noteLaunched(exe, "150.0.7000.1", "HeadlessChrome/151.0.7100.2", 0) {
		t.Error("noteLaunched: want true for the version the flags were made for, false for another")
	}
	if e := readVersionCache()[exe]; e.Version != "151.0.7100.2" {
		t.Errorf("after a launch reported 151.0.7100.2: cached %+v", e)
	}
}

// TestExecVersionBadCache: a cache file that is not one, or an entry
// without a usable version, is read as empty: --version answers, and the
// file is rewritten.
func TestExecVersionBadCache(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "chromium")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho 'Chromium 150.0.7000.1'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	if err := os.WriteFile(real, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	size, mt, _ := fileStamp(real)
	stamp := fmt.Sprintf(`"real":%q,"size":%d,"mtime":%d`, real, size, mt)
	for _, bad := range []string{
		"null", "[]", "{", `{"` + exe + `":"x"}`, `{"` + exe + `":{"version":"",` + stamp + `}}`,
		`{"` + exe + `":{"version":"dev",` + stamp + `}}`,
	} {
		cache := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache)
		p := filepath.Join(cache, versionCacheFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if v, err := ExecVersion(exe); err != nil || v != "150.0.7000.1" {
			t.Errorf("cache %s: ExecVersion %q, %v; want 150.0.7000.1", bad, v, err)
		}
		if e := readVersionCache()[exe]; e.Version != "150.0.7000.1" {
			t.Errorf("cache %s: rewritten as %+v", bad, e)
		}
	}
}
