package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/tabpilot/tabpilot/errcode"
)

func TestFind(t *testing.T) {
	if _, err := Find("/nonexistent/chromium"); err == nil {
		t.Fatal("Find of a missing path succeeded")
	} else {
		var e *Error
		if !errors.As(err, &e) || e.ErrorCode() != errcode.BrowserUnavailable || !strings.Contains(e.ErrorCode().Hint(), "apt-get install") {
			t.Fatalf("err = %#v", err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	// With an empty PATH only the usual absolute paths remain.
	p, err := Find("")
	if err == nil && !strings.HasPrefix(p, "/") {
		t.Fatalf("Find = %q", p)
	}
}

func TestSplitFlag(t *testing.T) {
	for in, want := range map[string]string{
		"--no-first-run": "no-first-run=true",
		`--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE localhost"`: "host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
		"--window-size=1,2": "window-size=1,2",
		"  ":                "=<nil>",
	} {
		n, v := splitFlag(in)
		if got := n + "=" + strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(toString(v), "%!s(<nil>)", "<nil>"), "\n", "")); got != want {
			t.Errorf("splitFlag(%q) = %q, want %q", in, got, want)
		}
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	return "?"
}

func TestRemoteEndpoint(t *testing.T) {
	cases := map[string]struct {
		base     string
		discover bool
	}{
		"http://127.0.0.1:9222":                    {"http://127.0.0.1:9222", true},
		"http://127.0.0.1:9222/json":               {"http://127.0.0.1:9222", true},
		"ws://127.0.0.1:9222/devtools/browser/abc": {"ws://127.0.0.1:9222/devtools/browser/abc", false},
		"ws://127.0.0.1:9222/":                     {"http://127.0.0.1:9222", true},
		"wss://pool.example/chrome?token=T":        {"wss://pool.example/chrome?token=T", false},
		"ws://127.0.0.1:3000?token=T":              {"ws://127.0.0.1:3000?token=T", false},
	}
	for in, want := range cases {
		b, d, err := remoteEndpoint(in)
		if err != nil || b != want.base || d != want.discover {
			t.Errorf("remoteEndpoint(%q) = %q, %v, %v", in, b, d, err)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:9222", "ftp://x:1", "http://"} {
		if _, _, err := remoteEndpoint(bad); err == nil {
			t.Errorf("remoteEndpoint(%q) succeeded", bad)
		}
	}
}

func TestPickPage(t *testing.T) {
	pages := []Page{
		{ID: "1", URL: "devtools://devtools/bundled/inspector.html", Title: "DevTools"},
		{ID: "2", URL: "chrome-extension://x/bg.html", Title: "Background Page"},
		{ID: "3", URL: "https://app.example/inbox", Title: "Inbox"},
		{ID: "4", URL: "https://app.example/settings", Title: "Settings"},
	}
	if p, err := PickPage(pages, "", nil); err != nil || p.ID != "3" {
		t.Errorf("default = %v %v, want 3", p, err)
	}
	if p, err := PickPage(pages, "SETTINGS", nil); err != nil || p.ID != "4" {
		t.Errorf("by title = %v %v, want 4", p, err)
	}
	if p, err := PickPage(pages, "", map[target.ID]bool{"3": true}); err != nil || p.ID != "4" {
		t.Errorf("skipping held = %v %v, want 4", p, err)
	}
	_, err := PickPage(pages, "mail", nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != errcode.TargetNotFound || !strings.Contains(e.Msg, "Inbox") {
		t.Errorf("missing = %v", err)
	}
	only := []Page{{ID: "9", URL: "devtools://x", Title: "DevTools"}}
	if p, err := PickPage(only, "", nil); err != nil || p.ID != "9" {
		t.Errorf("fallback = %v %v", p, err)
	}
}

// sleeper starts a process that looks like a browser holding dir: a shell
// whose command line carries --user-data-dir (as $0) and that stays alive
// (GNU sleep itself would reject the unknown option and exit at once).
func sleeper(t *testing.T, dir string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", "while :; do sleep 1; done", "--user-data-dir="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Until the child has exec'd, its command line is the test binary's.
	for i := 0; userDataDirOf(cmd.Process.Pid) != dir; i++ {
		if i > 200 {
			t.Fatalf("the sleeper's command line never showed %s", dir)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd
}

func TestCheckProfile(t *testing.T) {
	dir := t.TempDir()
	if err := checkProfile(dir); err != nil {
		t.Fatalf("empty profile: %v", err)
	}
	host, _ := os.Hostname()
	// A stale lock (dead pid) is not an error.
	os.Symlink(host+"-999999999", filepath.Join(dir, "SingletonLock"))
	if err := checkProfile(dir); err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	os.Remove(filepath.Join(dir, "SingletonLock"))
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Until the child has exec'd sleep and set up its arguments (the kernel
	// renames the task before it writes the new command line).
	for i := 0; ; i++ {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid)); strings.HasPrefix(string(b), "sleep\x00") || i > 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	os.Symlink(host+"-"+strconv.Itoa(cmd.Process.Pid), filepath.Join(dir, "SingletonLock"))
	err := checkProfile(dir)
	if !errors.Is(err, ErrProfileInUse) || !strings.Contains(err.Error(), strconv.Itoa(cmd.Process.Pid)) || !strings.Contains(err.Error(), "sleep") {
		t.Fatalf("live lock: %v", err)
	}
}

func TestSweep(t *testing.T) {
	state := t.TempDir()
	profile := filepath.Join(t.TempDir(), "chromedp-runner123")
	os.MkdirAll(profile, 0o700)
	cmd := sleeper(t, profile)
	if err := writeRecord(state, cmd.Process.Pid, true); err != nil {
		t.Fatal(err)
	}
	// A record whose pid now belongs to another program is left alone.
	other := exec.Command("sleep", "30")
	other.Start()
	defer func() { other.Process.Kill(); other.Wait() }()
	os.WriteFile(recordPath(state, other.Process.Pid), []byte(`{"pid":`+strconv.Itoa(other.Process.Pid)+`,"userDataDir":"/nope"}`), 0o600)

	if n := Sweep(state, nil); n != 1 {
		t.Fatalf("Sweep killed %d, want 1", n)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("the recorded browser survived the sweep")
	}
	if syscall.Kill(other.Process.Pid, 0) != nil {
		t.Fatal("the sweep killed an unrelated process")
	}
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Fatalf("temp profile left: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "*")); len(left) != 0 {
		t.Fatalf("records left: %v", left)
	}
}

func TestLaunchClose(t *testing.T) {
	if _, err := Find(""); err != nil {
		t.Skip(err)
	}
	state := t.TempDir()
	ctx := context.Background()
	h, err := Launch(ctx, ctx, &Options{StateDir: state, Args: []string{"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if h.PID() <= 0 || !strings.Contains(h.Version(), "Chrome") {
		t.Fatalf("pid %d version %q", h.PID(), h.Version())
	}
	profile := userDataDirOf(h.PID())
	if recs, _ := filepath.Glob(filepath.Join(state, "browser-*.json")); len(recs) != 1 {
		t.Fatalf("records = %v", recs)
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := h.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if processAlive(h.PID()) {
		t.Fatal("browser alive after Close")
	}
	select {
	case <-h.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed")
	}
	if _, err := os.Stat(profile); profile != "" && !os.IsNotExist(err) {
		t.Fatalf("temp profile %s left: %v", profile, err)
	}
	if recs, _ := filepath.Glob(filepath.Join(state, "browser-*.json")); len(recs) != 0 {
		t.Fatalf("records left = %v", recs)
	}
}

func TestMergeFeatures(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"--a", "--disable-features=X,Y", "--enable-features=E", "--b=1", `--disable-features="Y,Z"`, "--disable-features=", "--enable-features=F,E", "--disable-features", "-disable-features=W", "-enable-features"},
			[]string{"--a", "--disable-features=X,Y,Z,W", "--enable-features=E,F", "--b=1"}},
		// The later word on a feature wins: tabpilot's default disable
		// of Y gives way to the caller's enable (with its parameters),
		// and the caller's disable of E to a later enable's.
		{[]string{"--disable-features=X,Y", "--enable-features=E", "--enable-features=Y:p/1", "--disable-features=E", "--enable-features=E<Trial"},
			[]string{"--disable-features=X", "--enable-features=E<Trial,Y:p/1"}},
		{[]string{"--enable-features=Y", "--disable-features=Y"}, []string{"--enable-features=", "--disable-features=Y"}},
	} {
		if got := mergeFeatures(c.in); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("mergeFeatures(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLaunchNoBrowserWebUI checks that a launched browser starts no
// renderer for its window's own WebUI pages (the omnibox popup, which
// Chromium 156 builds at launch), with a --disable-features of the
// caller's merged in, not replacing tabpilot's.
func TestLaunchNoBrowserWebUI(t *testing.T) {
	if _, err := Find(""); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	h, err := Launch(ctx, ctx, &Options{StateDir: t.TempDir(), Args: append(testArgs(), "--disable-features=AcceptCHFrame")})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	cmdline := func(pid string) string {
		b, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		return strings.ReplaceAll(string(b), "\x00", " ")
	}
	self := cmdline(strconv.Itoa(h.PID()))
	if n := strings.Count(self, "--disable-features="); n != 1 {
		t.Fatalf("the browser's command line has %d --disable-features, want 1: %s", n, self)
	}
	for _, f := range []string{"AcceptCHFrame", "WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "Translate"} {
		if !strings.Contains(self, f) {
			t.Errorf("the browser's --disable-features lacks %s: %s", f, self)
		}
	}
	// The popup's renderer, when it starts, does within the first second
	// (traced: 0.3 to 0.5 s after launch).
	dir := "--user-data-dir=" + userDataDirOf(h.PID())
	renderers := 0
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		renderers = 0
		for _, e := range ents {
			c := cmdline(e.Name())
			if !strings.Contains(c, dir+" ") || !strings.Contains(c, "--type=renderer") {
				continue
			}
			renderers++
			if strings.Contains(c, "--top-chrome-webui") {
				t.Fatalf("the browser started a WebUI renderer of its own window: %s", c)
			}
		}
	}
	if renderers == 0 {
		t.Fatalf("no renderer of the browser found by %s", dir)
	}
}

// TestLaunchRefusesANonSwitch: an extra argument that is not a Chromium
// switch is refused with bad_request before anything starts, not passed
// on as a switch Chromium ignores.
func TestLaunchRefusesANonSwitch(t *testing.T) {
	for _, a := range []string{"Translate", "--", "=x", ""} {
		ctx := context.Background()
		h, err := Launch(ctx, ctx, &Options{StateDir: t.TempDir(), Args: []string{"--mute-audio", a}})
		if err == nil {
			h.Close(ctx)
		}
		if errcode.Of(err) != errcode.BadRequest || !strings.Contains(err.Error(), "is not a Chromium switch") {
			t.Errorf("launch with %q: %v, want bad_request: is not a Chromium switch", a, err)
		}
	}
	if err := CheckArgs([]string{"--disable-features=Translate", "-a", "--b=1"}); err != nil {
		t.Errorf("CheckArgs of switches: %v", err)
	}
}
