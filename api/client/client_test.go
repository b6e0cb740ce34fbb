package client

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/rpc"
)

// The test binary doubles as a fake daemon (a small in-test Handler behind
// Listen), so Connect, start and Stop are tested without the real one.
const fakeEnv = "TABPILOT_CLIENT_TEST_FAKE_DAEMON"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		os.Exit(fakeDaemon(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeDaemon(args []string) int {
	if len(args) == 0 || args[0] != "daemon" {
		fmt.Fprintln(os.Stderr, "fake daemon: want the daemon verb, got", args)
		return 2
	}
	fs := flag.NewFlagSet("daemon", flag.ContinueOnError)
	session := fs.String("session", "", "")
	dir := fs.String("socket-dir", "", "")
	fail := fs.Bool("fail", false, "")
	hang := fs.Bool("hang", false, "")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *fail {
		fmt.Fprintln(os.Stderr, "fake daemon: refusing to start as asked")
		return 3
	}
	if *hang {
		time.Sleep(20 * time.Second)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	ln, err := Listen(ctx, *dir, *session)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake daemon:", err)
		return 1
	}
	stop := make(chan struct{})
	var once sync.Once
	h := rpc.HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
		switch method {
		case MethodStop:
			once.Do(func() { close(stop) })
			return &api.Result{Content: []api.Content{api.TextContent("stopping")}}, nil
		case "pid":
			return &api.Result{Content: []api.Content{api.TextContent(strconv.Itoa(os.Getpid()))}}, nil
		case "args":
			return &api.Result{Content: []api.Content{api.TextContent(strings.Join(os.Args, " "))}}, nil
		}
		return nil, api.ErrMethodNotFound
	})
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go rpc.Serve(context.Background(), c, c, h, &rpc.ServerOptions{CancelOnEOF: true})
		}
	}()
	select {
	case <-stop:
	case <-time.After(60 * time.Second): // never outlive a test run
	}
	ln.Close()
	time.Sleep(50 * time.Millisecond) // "shut down the browsers"
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
	ln.Release()
	return 0
}

func testOptions(t *testing.T, extra ...string) *Options {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(shortTempDir(t), "tabpilot")
	return &Options{
		Session:    "s1",
		Dir:        dir,
		Executable: exe,
		DaemonArgs: extra,
		Env:        append(os.Environ(), fakeEnv+"=1"),
	}
}

// shortTempDir is a temp dir with a short path: unix socket paths are
// limited to 107 bytes, and t.TempDir() embeds the test name.
func shortTempDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "tpc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConnectStartsOneDaemonAndStopEndsIt(t *testing.T) {
	o := testOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 6
	pids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := Call(ctx, o, "pid", nil)
			if err != nil {
				t.Errorf("Call: %v", err)
				return
			}
			pids[i] = res.Text()
		}()
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if pids[i] != pids[0] {
			t.Fatalf("concurrent first calls reached different daemons: %v", pids)
		}
	}
	pid, err := strconv.Atoi(pids[0])
	if err != nil || pid == os.Getpid() {
		t.Fatalf("daemon pid %q", pids[0])
	}
	p, _ := PathsFor(o.Dir, o.Session)
	if b, err := os.ReadFile(p.PID); err != nil || strings.TrimSpace(string(b)) != pids[0] {
		t.Errorf("pid file = %q, %v; want %s", b, err, pids[0])
	}
	fi, err := os.Stat(p.Socket)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("socket %v, %v; want a socket with mode 0600", fi, err)
	}
	if fi, err := os.Stat(o.Dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir %v, %v; want mode 0700", fi, err)
	}
	// The daemon got its session, directory and extra arguments.
	res, err := Call(ctx, o, "args", nil)
	if err != nil || !strings.Contains(res.Text(), "daemon --session s1 --socket-dir "+o.Dir) {
		t.Errorf("daemon args = %v, %v", res, err)
	}
	if !Running(p) {
		t.Error("Running = false while the daemon runs")
	}

	stopped, err := Stop(ctx, o)
	if err != nil || !stopped {
		t.Fatalf("Stop = %v, %v", stopped, err)
	}
	for _, f := range []string{p.Socket, p.PID} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("%s remains after Stop (%v)", f, err)
		}
	}
	waitGone(t, pid)
	if Running(p) {
		t.Error("Running = true after Stop")
	}
	stopped, err = Stop(ctx, o)
	if err != nil || stopped {
		t.Errorf("second Stop = %v, %v; want false, nil", stopped, err)
	}
}

func TestNoStart(t *testing.T) {
	o := testOptions(t)
	o.NoStart = true
	_, err := Connect(context.Background(), o)
	if !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("Connect = %v, want ErrNoDaemon", err)
	}
	if _, err := os.Stat(o.Dir); !os.IsNotExist(err) {
		t.Errorf("NoStart created the directory (%v)", err)
	}
}

func TestStartFailureQuotesLog(t *testing.T) {
	o := testOptions(t, "--fail")
	_, err := Connect(context.Background(), o)
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "refusing to start as asked") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Connect = %v, want ErrStart quoting the log", err)
	}
	p, _ := PathsFor(o.Dir, o.Session)
	if fi, err := os.Stat(p.Log); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log %v, %v; want mode 0600", fi, err)
	}
}

func TestStartTimeout(t *testing.T) {
	o := testOptions(t, "--hang")
	o.StartTimeout = 300 * time.Millisecond
	_, err := Connect(context.Background(), o)
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "did not listen") {
		t.Fatalf("Connect = %v, want ErrStart: did not listen", err)
	}
	m := regexp.MustCompile(`\(pid (\d+)\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no pid in %q", err)
	}
	pid, _ := strconv.Atoi(m[1])
	syscall.Kill(pid, syscall.SIGKILL) // the hanging fake daemon we started
	waitGone(t, pid)
}

func TestStaleSocket(t *testing.T) {
	o := testOptions(t)
	if err := EnsureDir(o.Dir); err != nil {
		t.Fatal(err)
	}
	p, _ := PathsFor(o.Dir, o.Session)
	// A socket file with nobody listening: what a SIGKILLed daemon leaves.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	stopped, err := Stop(context.Background(), o)
	if err != nil || stopped {
		t.Fatalf("Stop on a stale socket = %v, %v", stopped, err)
	}
	if _, err := os.Lstat(p.Socket); !os.IsNotExist(err) {
		t.Fatalf("Stop left the stale socket (%v)", err)
	}

	// Connect replaces a stale socket with a live daemon.
	ln, _ = net.ListenUnix("unix", &net.UnixAddr{Name: p.Socket, Net: "unix"})
	ln.SetUnlinkOnClose(false)
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Call(ctx, o, "pid", nil)
	if err != nil {
		t.Fatalf("Call over a stale socket: %v", err)
	}
	pid, _ := strconv.Atoi(res.Text())
	if stopped, err := Stop(ctx, o); err != nil || !stopped {
		t.Fatalf("Stop = %v, %v", stopped, err)
	}
	waitGone(t, pid)
}

func TestSecondDaemonRefused(t *testing.T) {
	o := testOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Call(ctx, o, "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(res.Text())
	defer func() {
		Stop(ctx, o)
		waitGone(t, pid)
	}()
	lctx, lcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer lcancel()
	_, err = Listen(lctx, o.Dir, o.Session)
	if err == nil || !strings.Contains(err.Error(), "another daemon (pid "+res.Text()+")") {
		t.Fatalf("second Listen = %v, want refusal naming pid %s", err, res.Text())
	}
}

func TestEnsureDir(t *testing.T) {
	base := t.TempDir()
	d := filepath.Join(base, "ok")
	if err := EnsureDir(d); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	if err := EnsureDir(open); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("EnsureDir(0755) = %v, want ErrUnsafeDir", err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(d, link)
	if err := EnsureDir(link); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("EnsureDir(symlink) = %v, want ErrUnsafeDir", err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	if err := EnsureDir(file); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("EnsureDir(file) = %v, want ErrUnsafeDir", err)
	}
}

func TestValidSession(t *testing.T) {
	for _, ok := range []string{"default", "a", "A1", "my-session_2.x", strings.Repeat("a", 64)} {
		if err := ValidSession(ok); err != nil {
			t.Errorf("ValidSession(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".hidden", "-x", "_x", "a/b", "..", "a b", "é", strings.Repeat("a", 65)} {
		if err := ValidSession(bad); !errors.Is(err, ErrBadSession) {
			t.Errorf("ValidSession(%q) = %v, want ErrBadSession", bad, err)
		}
	}
}

func TestPaths(t *testing.T) {
	p, err := PathsFor("/run/user/1000/tabpilot", "work")
	if err != nil {
		t.Fatal(err)
	}
	want := Paths{Socket: "/run/user/1000/tabpilot/work.sock", PID: "/run/user/1000/tabpilot/work.pid",
		Lock: "/run/user/1000/tabpilot/work.lock", Log: "/run/user/1000/tabpilot/work.log", Args: "/run/user/1000/tabpilot/work.args"}
	if p != want {
		t.Errorf("PathsFor = %+v, want %+v", p, want)
	}
	if _, err := PathsFor("/"+strings.Repeat("d", 100), "work"); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("PathsFor(long) = %v", err)
	}
	if got := DefaultDir("/run/user/1000"); got != "/run/user/1000/tabpilot" {
		t.Errorf("DefaultDir(xdg) = %q", got)
	}
	if got, want := DefaultDir(""), fmt.Sprintf("/tmp/tabpilot-%d", os.Getuid()); got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
}

// TestNoCDPStack: api/client must not import chromedp, nor anything that
// does (docs/architecture.md, section 6).
func TestNoCDPStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed too little: %q", out)
	}
	for _, dep := range deps {
		if strings.Contains(dep, "chromedp") || strings.Contains(dep, "cdproto") ||
			strings.HasSuffix(dep, "tabpilot/api/service") || strings.Contains(dep, "tabpilot/tabs") ||
			strings.Contains(dep, "tabpilot/browser") || strings.Contains(dep, "goja") {
			t.Errorf("api/client depends on %s", dep)
		}
	}
}
