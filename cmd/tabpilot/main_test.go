package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/tabpilot/tabpilot/api"
)

// bin is the tabpilot binary built by TestMain.
var bin string

const testVersion = "v0.0.0-test"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tabpilot-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "tabpilot")
	build := exec.Command("go", "build", "-ldflags", "-X main.version="+testVersion, "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tabpilot:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is a test's environment: a private socket directory and config.
type env struct {
	t    *testing.T
	xdg  string // XDG_RUNTIME_DIR
	vars []string
	exe  string // the program run; empty: bin
	cwd  string // the working directory of the program; empty: the test's
}

func newEnv(t *testing.T, extra ...string) *env {
	t.Helper()
	// A short path: unix socket paths are limited to 107 bytes.
	xdg, err := os.MkdirTemp("", "tp")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(xdg, 0o700)
	e := &env{t: t, xdg: xdg}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TABPILOT_") && !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			e.vars = append(e.vars, kv)
		}
	}
	// A daemon a failed test leaves behind exits by itself.
	e.vars = append(e.vars, "XDG_RUNTIME_DIR="+xdg, "TABPILOT_IDLE_TIMEOUT=120")
	e.vars = append(e.vars, extra...)
	t.Cleanup(func() {
		e.killDaemons()
		os.RemoveAll(xdg)
	})
	return e
}

func (e *env) dir() string { return filepath.Join(e.xdg, "tabpilot") }

// run runs tabpilot and returns its stdout, stderr and exit code.
func (e *env) run(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.runStdin("", args...)
}

func (e *env) runStdin(stdin string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	exe := bin
	if e.exe != "" {
		exe = e.exe
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = e.vars
	cmd.Dir = e.cwd
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		e.t.Fatalf("tabpilot %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// daemonPID returns the pid of the session's daemon from its pid file, or 0.
func (e *env) daemonPID(session string) int {
	b, err := os.ReadFile(filepath.Join(e.dir(), session+".pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// killDaemons ends the daemons a failed test left: stop, then SIGKILL.
func (e *env) killDaemons() {
	matches, _ := filepath.Glob(filepath.Join(e.dir(), "*.pid"))
	for _, m := range matches {
		session := strings.TrimSuffix(filepath.Base(m), ".pid")
		pid := e.daemonPID(session)
		if pid == 0 || !alive(pid) {
			continue
		}
		e.run("stop", "--session", session, "--timeout", "30")
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) || s[i+2] != 'Z' {
		return true
	}
	// A killed Go process's leader thread turns zombie before its other
	// threads have exited, and those still hold its file descriptors (the
	// daemon's listening socket): it is gone once only the leader is left.
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return err == nil && len(tasks) > 1
}

// waitFor polls cond until it holds or the bound passes.
func waitFor(t *testing.T, what string, bound time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not the case after %v", what, bound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func decodeResult(t *testing.T, s string) api.Result {
	t.Helper()
	var r api.Result
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not a JSON result: %v: %q", err, s)
	}
	return r
}

func TestVerbFirst(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"--session s observe --all", "observe --session s --all"},
		{"--session=s --json --timeout 5 click 3", "click --session=s --json --timeout 5 3"},
		{"--tab t run -e 1", "run --tab t -e 1"},
		{"--bogus observe", "--bogus observe"},
		{"--session", "--session"},
		{"observe --session s", "observe --session s"},
		{"--help", "--help"},
	} {
		if got := strings.Join(verbFirst(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("verbFirst(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		args []string
		want string // in stderr
	}{
		{nil, "Usage: tabpilot VERB"},
		{[]string{"bogus"}, `unknown verb "bogus"`},
		{[]string{"--bogus", "tabs"}, "give the verb first"},
		{[]string{"--session", "x"}, "no verb"},
		// The common flags may come before the verb; they go to its flag set.
		{[]string{"--session", "x", "--tab", "y", "tabs"}, "flag provided but not defined: -tab"},
		{[]string{"--session=../etc", "--json", "observe"}, "invalid session name"},
		{[]string{"open", "--bogus", "http://x"}, "flag provided but not defined: -bogus"},
		{[]string{"tabs", "--tab", "x"}, "flag provided but not defined: -tab"},
		{[]string{"open", "a", "b"}, "open takes one URL"},
		{[]string{"open", "--wait-until", "soon"}, `--wait-until "soon": want one of settled, load, domcontentloaded, networkidle0, networkidle2`},
		{[]string{"open", "--dialogs", "maybe"}, `--dialogs "maybe"`},
		{[]string{"open", "--viewport", "12x"}, `--viewport "12x": want WxH`},
		{[]string{"open", "--viewport", "10x10@0"}, `--viewport "10x10@0"`},
		{[]string{"open", "--target", "x"}, "--target needs --cdp-url or --app-path"},
		{[]string{"open", "--cdp-url", "http://127.0.0.1:1", "--app-path", "/bin/true"}, "give one of --cdp-url, --grid and --app-path"},
		{[]string{"open", "--grid", "http://127.0.0.1:1", "--cdp-url", "ws://127.0.0.1:1/x"}, "give one of --cdp-url, --grid and --app-path"},
		{[]string{"open", "--cdp-header", "Authorization: Bearer T"}, "--cdp-header needs --cdp-url"},
		{[]string{"open", "--cdp-url", "ws://h:1/x", "--cdp-header", "no colon"}, "want 'Name: value'"},
		{[]string{"open", "--proxy", "http://127.0.0.1:3128"}, "--proxy needs --context"},
		{[]string{"open", "--grid-user", "u"}, "--grid-user and --grid-password need --grid"},
		{[]string{"open", "--allow-origin", "https://x.com/path"}, `--allow-origin: origin pattern "https://x.com/path": only an origin`},
		{[]string{"open", "--block-origin", "ftp://x.com"}, `--block-origin: origin pattern "ftp://x.com": scheme ftp`},
		{[]string{"open", "--allow-origin", ""}, `--allow-origin: origin pattern "": empty`},
		{[]string{"open", "--timeout", "-1"}, "--timeout -1 is negative"},
		{[]string{"open", "--browser-arg", "Translate"}, `browser argument "Translate" is not a Chromium switch`},
		{[]string{"serve", "--browser-arg", "=x"}, `browser argument "=x" is not a Chromium switch`},
		{[]string{"open", "--timeout", "soon"}, `invalid value "soon" for flag -timeout`},
		{[]string{"open", "--session", "../etc"}, "invalid session name"},
		{[]string{"open", "--tab"}, "flag needs an argument: -tab"},
		{[]string{"run"}, "give the code once"},
		{[]string{"run", "-e", "1", "file.js"}, "give the code once"},
		{[]string{"run", "/nonexistent/x.js"}, "read the code"},
		{[]string{"run", "-e", "  "}, "the code is empty"},
		{[]string{"close", "--all", "--tab", "x"}, "give --tab or --all, not both"},
		{[]string{"close", "x"}, `unexpected argument "x"`},
		{[]string{"observe", "--max-tokens", "-5"}, "negative"},
		{[]string{"click"}, "click takes N|SELECTOR, got 0 arguments"},
		{[]string{"type", "3"}, "type takes N|SELECTOR TEXT, got 1 arguments"},
		{[]string{"fill", "3", "a", "b"}, "fill takes N|SELECTOR VALUE, got 3 arguments"},
		{[]string{"press"}, "press takes KEY [N|SELECTOR]"},
		{[]string{"press", "Enter", "#a", "#b"}, "press takes KEY [N|SELECTOR], got 3"},
		{[]string{"screenshot", "x.png"}, "use --out FILE"},
		{[]string{"extract", "--format", "pdf"}, `--format "pdf": want one of markdown, text, html`},
		{[]string{"tabs", "extra"}, `unexpected argument "extra"`},
		{[]string{"stop", "--session", "a b"}, "invalid session name"},
		{[]string{"version", "x"}, `unexpected argument "x"`},
		{[]string{"serve", "x"}, `unexpected argument "x"`},
		{[]string{"daemon", "--idle-timeout", "-3"}, "negative"},
		{[]string{"help", "bogus"}, `unknown verb "bogus"`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			stdout, stderr, code := e.run(c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, stderr)
			}
			verb := ""
			if a := verbFirst(c.args); len(a) > 0 {
				verb = a[0]
			}
			if verb != "" && verb != "bogus" && verb != "help" && !strings.HasPrefix(verb, "-") {
				// The error, the synopsis and where the help is; not the whole help.
				if !strings.Contains(stderr, "Usage: tabpilot "+verb) || !strings.Contains(stderr, "Run 'tabpilot "+verb+" --help'") || strings.Count(stderr, "\n") != 3 {
					t.Errorf("stderr is not the error, the verb's synopsis and the help pointer:\n%s", stderr)
				}
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
	t.Run("bad environment", func(t *testing.T) {
		e2 := newEnv(t, "TABPILOT_HEADED=maybe")
		_, stderr, code := e2.run("tabs")
		if code != 2 || !strings.Contains(stderr, `TABPILOT_HEADED="maybe": want true or false`) {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		e3 := newEnv(t, `TABPILOT_BROWSER_ARGS=--x="unterminated`)
		_, stderr, code = e3.run("open")
		if code != 2 || !strings.Contains(stderr, "unterminated double quote") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
	// Bad usage never starts a daemon.
	if exists(e.dir()) {
		entries, _ := os.ReadDir(e.dir())
		t.Errorf("usage errors created %s: %v", e.dir(), entries)
	}
}

func TestHelp(t *testing.T) {
	e := newEnv(t)
	verbs := []string{"open", "run", "close", "observe", "click", "type", "fill", "press", "screenshot",
		"extract", "tabs", "stop", "version", "serve", "daemon", "mcp"}
	for _, v := range verbs {
		for _, h := range []string{"--help", "-h"} {
			stdout, stderr, code := e.run(v, h)
			if code != 0 || stderr != "" {
				t.Errorf("%s %s: exit %d, stderr %q", v, h, code, stderr)
			}
			if !strings.HasPrefix(stdout, "Usage: tabpilot "+v) {
				t.Errorf("%s %s: stdout does not start with its usage:\n%s", v, h, stdout)
			}
		}
		// Flags after arguments: help still wins.
		if stdout, _, code := e.run(v, "x", "--help"); code != 0 || !strings.HasPrefix(stdout, "Usage: tabpilot "+v) {
			t.Errorf("%s x --help: exit %d", v, code)
		}
		stdout, _, code := e.run("help", v)
		if code != 0 || !strings.HasPrefix(stdout, "Usage: tabpilot "+v) {
			t.Errorf("help %s: exit %d:\n%s", v, code, stdout)
		}
	}
	stdout, _, code := e.run("open", "--help")
	for _, want := range []string{"--tab name", "--session name", "--timeout seconds", "--json", "--wait-until",
		"--viewport WxH", "--dialogs", "--cdp-url URL", "--app-path path", "--target text", "TABPILOT_CHROME", "--browser-arg flag",
		"--cdp-header 'Name: value'", "TABPILOT_CDP_HEADERS", "--grid URL", "--grid-user user", "--context NAME", "--proxy URL", "--connect-timeout seconds"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("open --help lacks %q", want)
		}
	}
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	for _, h := range []string{"--help", "-h", "help"} {
		stdout, stderr, code := e.run(h)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "Usage: tabpilot VERB") || !strings.Contains(stdout, "Exit codes: 0 success, 1 the action failed") {
			t.Errorf("tabpilot %s: exit %d:\n%s", h, code, stdout)
		}
		for _, v := range verbs {
			if !strings.Contains(stdout, "\n  "+v+" ") {
				t.Errorf("tabpilot %s does not list %s", h, v)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	e := newEnv(t)
	stdout, stderr, code := e.run("version")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "tabpilot "+testVersion+" (go1.") {
		t.Fatalf("version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, _, code = e.run("version", "--json")
	r := decodeResult(t, stdout)
	if code != 0 || r.IsError || r.Details["version"] != testVersion || !strings.HasPrefix(r.Text(), "tabpilot "+testVersion) {
		t.Fatalf("version --json: exit %d, %+v", code, r)
	}
	if stdout2, _, _ := e.run("--version"); stdout2 == "" || !strings.HasPrefix(stdout2, "tabpilot "+testVersion) {
		t.Errorf("--version = %q", stdout2)
	}
	if exists(e.dir()) {
		t.Error("version started a daemon")
	}
}

func TestStopWithoutDaemon(t *testing.T) {
	e := newEnv(t)
	stdout, stderr, code := e.run("stop")
	if code != 0 || stdout != "No daemon runs for session \"default\"\n" {
		t.Fatalf("stop: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, _, code = e.run("stop", "--json", "--session", "other")
	r := decodeResult(t, stdout)
	if code != 0 || r.IsError || r.Details["stopped"] != false || r.Details["session"] != "other" {
		t.Fatalf("stop --json: exit %d, %+v", code, r)
	}
	if exists(filepath.Join(e.dir(), "default.sock")) {
		t.Error("stop started a daemon")
	}
}

// startDaemon starts the session's daemon with a call that launches no
// browser (tabs), and returns its pid.
func startDaemon(t *testing.T, e *env, session string) int {
	t.Helper()
	stdout, stderr, code := e.run("tabs", "--session", session, "--json")
	r := decodeResult(t, stdout)
	if code != 0 || r.IsError {
		// The service may not implement tabs yet: the daemon still runs.
		if e := r.ErrorOf(); e == nil || !strings.Contains(e.Message, "method not found") {
			t.Fatalf("tabs: exit %d, %s %s", code, stdout, stderr)
		}
	}
	pid := e.daemonPID(session)
	if pid == 0 || !alive(pid) {
		t.Fatalf("no daemon runs after the first call (pid %d)", pid)
	}
	sock := filepath.Join(e.dir(), session+".sock")
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v %v, want mode 0600", sock, fi, err)
	}
	if fi, err := os.Stat(e.dir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket dir: %v %v, want mode 0700", fi, err)
	}
	return pid
}

func checkGone(t *testing.T, e *env, session string, pid int) {
	t.Helper()
	waitFor(t, "the daemon exits", 30*time.Second, func() bool { return !alive(pid) })
	for _, ext := range []string{".sock", ".pid"} {
		if p := filepath.Join(e.dir(), session+ext); exists(p) {
			t.Errorf("%s remains after the daemon exited", p)
		}
	}
}

func TestDaemonStartAndStop(t *testing.T) {
	e := newEnv(t)
	pid := startDaemon(t, e, "s1")
	// A second call reaches the same daemon.
	e.run("tabs", "--session", "s1")
	if got := e.daemonPID("s1"); got != pid {
		t.Fatalf("second call: daemon pid %d, want %d", got, pid)
	}
	// Another session gets its own daemon.
	pid2 := startDaemon(t, e, "s2")
	if pid2 == pid {
		t.Fatal("two sessions share a daemon")
	}
	// A request over the daemon's 4 MiB line limit is refused, not sent.
	big := filepath.Join(t.TempDir(), "big.js")
	os.WriteFile(big, []byte("return '"+strings.Repeat("x", 5<<20)+"'"), 0o600)
	_, stderr, code := e.run("run", "--session", "s1", big)
	if code != 1 || !strings.Contains(stderr, "bad_request: ") || !strings.Contains(stderr, "over the limit") {
		t.Errorf("run of a 5 MiB script: exit %d, stderr %q", code, stderr)
	}
	stdout, stderr, code := e.run("stop", "--session", "s1")
	if code != 0 || stdout != "Stopped the daemon of session \"s1\"\n" {
		t.Fatalf("stop: exit %d, %q %q", code, stdout, stderr)
	}
	// stop returns once the daemon has shut down: no socket left.
	if p := filepath.Join(e.dir(), "s1.sock"); exists(p) {
		t.Errorf("%s remains right after stop", p)
	}
	checkGone(t, e, "s1", pid)
	if !alive(pid2) {
		t.Error("stopping s1 ended s2's daemon")
	}
	if _, _, code := e.run("stop", "--session", "s2"); code != 0 {
		t.Errorf("stop s2: exit %d", code)
	}
	checkGone(t, e, "s2", pid2)
	log, _ := os.ReadFile(filepath.Join(e.dir(), "s1.log"))
	if !strings.Contains(string(log), "daemon: listening") || !strings.Contains(string(log), `reason="stop requested"`) {
		t.Errorf("daemon log:\n%s", log)
	}
}

func TestDaemonSIGTERM(t *testing.T) {
	e := newEnv(t)
	pid := startDaemon(t, e, "default")
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	checkGone(t, e, "default", pid)
	// The next call starts a new daemon.
	pid2 := startDaemon(t, e, "default")
	if pid2 == pid {
		t.Fatal("same pid")
	}
	syscall.Kill(pid2, syscall.SIGINT)
	checkGone(t, e, "default", pid2)
}

func TestDaemonKilledLeavesStaleSocket(t *testing.T) {
	e := newEnv(t)
	pid := startDaemon(t, e, "default")
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the killed daemon is gone", 10*time.Second, func() bool { return !alive(pid) })
	// The next call replaces the stale socket with a new daemon.
	pid2 := startDaemon(t, e, "default")
	if pid2 == pid {
		t.Fatal("same pid")
	}
	e.run("stop")
	checkGone(t, e, "default", pid2)
}

func TestDaemonIdleExit(t *testing.T) {
	e := newEnv(t, "TABPILOT_IDLE_TIMEOUT=0.5")
	pid := startDaemon(t, e, "default")
	checkGone(t, e, "default", pid)
	log, _ := os.ReadFile(filepath.Join(e.dir(), "default.log"))
	if !strings.Contains(string(log), `reason="idle for 500ms"`) {
		t.Errorf("daemon log:\n%s", log)
	}
}

func TestDaemonRefusesSecond(t *testing.T) {
	e := newEnv(t)
	pid := startDaemon(t, e, "default")
	// A second daemon of the same session waits for the pid lock, then
	// gives up.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "daemon", "--session", "default", "--lock-wait", "0.3")
	cmd.Env = e.vars
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), fmt.Sprintf("another daemon (pid %d) runs", pid)) {
		t.Fatalf("second daemon: %v\n%s", err, out)
	}
	if !alive(pid) || e.daemonPID("default") != pid {
		t.Fatal("the second daemon disturbed the first")
	}
	e.run("stop")
	checkGone(t, e, "default", pid)
}

// serveProc is a running tabpilot serve.
type serveProc struct {
	cmd    *exec.Cmd
	stdin  *os.File
	out    *bufio.Reader
	stderr *bytes.Buffer
}

func startServe(t *testing.T, e *env) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = e.vars
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	p := &serveProc{cmd: cmd, stdin: inW, out: bufio.NewReaderSize(outR, 1<<20), stderr: &stderr}
	t.Cleanup(func() {
		inW.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		outR.Close()
	})
	return p
}

func (p *serveProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := p.stdin.WriteString(line + "\n"); err != nil {
		t.Fatalf("write to serve: %v", err)
	}
}

type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *api.Result     `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	JSONRPC string `json:"jsonrpc"`
}

func (p *serveProc) recv(t *testing.T) rpcResponse {
	t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() { l, err := p.out.ReadString('\n'); ch <- res{l, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("read from serve: %v (stderr: %s)", r.err, p.stderr)
		}
		var resp rpcResponse
		if err := json.Unmarshal([]byte(r.line), &resp); err != nil || resp.JSONRPC != "2.0" {
			t.Fatalf("serve wrote %q: %v", r.line, err)
		}
		return resp
	case <-time.After(2 * time.Minute):
		t.Fatal("no response from serve")
	}
	return rpcResponse{}
}

func (p *serveProc) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		t.Fatal("serve did not exit after stdin closed")
	}
	return -1
}

func TestServeProtocolErrors(t *testing.T) {
	e := newEnv(t)
	p := startServe(t, e)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tabs"`) // truncated
	if r := p.recv(t); r.Error == nil || r.Error.Code != -32700 || string(r.ID) != "null" {
		t.Fatalf("malformed line: %+v", r)
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"bogus","params":{}}`)
	if r := p.recv(t); r.Error == nil || r.Error.Code != -32601 || string(r.ID) != "2" {
		t.Fatalf("unknown method: %+v", r)
	}
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"open","params":{"url":5}}`)
	r := p.recv(t)
	if r.Error == nil || string(r.ID) != "3" {
		t.Fatalf("wrong param types: %+v", r)
	}
	if r.Error.Code != -32602 && !(r.Error.Code == -32601 && serviceIsStub()) {
		t.Fatalf("wrong param types: code %d, want -32602", r.Error.Code)
	}
	// A 10 MB line is refused, and serving goes on.
	big := `{"jsonrpc":"2.0","id":4,"method":"run","params":{"code":"` + strings.Repeat("x", 10<<20) + `"}}`
	go p.stdin.WriteString(big + "\n" + `{"jsonrpc":"2.0","id":5,"method":"bogus"}` + "\n")
	if r := p.recv(t); r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" || !strings.Contains(r.Error.Message, "longer than") {
		t.Fatalf("10 MB line: %+v", r)
	}
	if r := p.recv(t); r.Error == nil || string(r.ID) != "5" {
		t.Fatalf("after the big line: %+v", r)
	}
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Fatalf("serve exited %d after stdin closed; stderr:\n%s", code, p.stderr)
	}
}
