// Package client is the CLI's side of the daemon socket: it finds the
// per-session daemon's unix socket, starts the daemon when none listens,
// and calls it over JSON-RPC (api/rpc). It also holds the daemon's side of
// the same files (Listen): one place owns the layout and the locking.
//
// A session's files live in one private directory (DefaultDir): NAME.sock
// (the socket, 0600), NAME.pid (the daemon's pid, flock'ed while it runs),
// NAME.lock (serialises starting the daemon) and NAME.log (the output of a
// daemon a client started).
//
// The package imports no CDP stack (a test checks it); it reads no
// environment and no flags: cmd/tabpilot passes them in Options.
package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/rpc"
)

// Methods the daemon answers besides api.Methods.
const (
	// MethodStop asks the daemon to close every tab and browser, remove its
	// socket and exit. It answers first, then closes the connection once
	// the shutdown is done.
	MethodStop = "$/stop"
	// MethodStatus returns the daemon's pid, session, version and requests
	// in flight in details.
	MethodStatus = "$/status"
)

// DefaultStartTimeout bounds the start of a daemon.
const DefaultStartTimeout = 10 * time.Second

// maxLogSize is the size past which a daemon log is rotated to NAME.log.1
// when a new daemon starts.
const maxLogSize = 1 << 20

// Options say which daemon to reach and how to start it. A nil *Options
// means the defaults.
type Options struct {
	// Session names the daemon; empty means DefaultSession.
	Session string
	// Dir is the socket directory; empty means DefaultDir("").
	Dir string
	// Executable is the program started as the daemon, with the arguments
	// "daemon --session NAME --socket-dir DIR" then DaemonArgs; empty means
	// os.Executable() (the running tabpilot).
	Executable string
	// DaemonArgs are extra arguments for the daemon (its configuration
	// flags).
	DaemonArgs []string
	// CheckArgs, when set, refuses (ErrSettings) to use a running daemon
	// that a client started with other DaemonArgs: a caller that gives
	// settings (an origin rule, a policy) must not have them silently
	// ignored.
	CheckArgs bool
	// Env is the daemon's environment; nil means this process's.
	Env []string
	// StartTimeout bounds the wait for a started daemon's socket; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// NoStart makes Connect fail with ErrNoDaemon instead of starting a
	// daemon.
	NoStart bool
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Session == "" {
		c.Session = DefaultSession
	}
	if c.Dir == "" {
		c.Dir = DefaultDir("")
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// absent reports whether a dial error means that no daemon listens: no
// socket file, or a stale one.
func absent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// Connect returns a client connected to the session's daemon, starting the
// daemon first when none listens (unless NoStart). Starting is serialised
// with a lock file, so concurrent callers start one daemon. It fails with
// ErrNoDaemon (NoStart), ErrStart (the daemon exited or did not listen
// within StartTimeout; the error quotes its log), ErrBadSession or
// ErrUnsafeDir.
func Connect(ctx context.Context, opts *Options) (*rpc.Client, error) {
	o := opts.withDefaults()
	p, err := PathsFor(o.Dir, o.Session)
	if err != nil {
		return nil, err
	}
	copts := &rpc.ClientOptions{Logger: o.Logger}
	c, err := rpc.Dial(ctx, p.Socket, copts)
	if err == nil {
		if err := checkArgs(&o, p); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	if !absent(err) {
		return nil, fmt.Errorf("connect to the daemon of session %q: %w", o.Session, err)
	}
	if o.NoStart {
		return nil, fmt.Errorf("session %q: %w", o.Session, ErrNoDaemon)
	}
	if err := EnsureDir(o.Dir); err != nil {
		return nil, err
	}
	return start(ctx, &o, p, copts)
}

// start starts the daemon under the start lock and waits for its socket.
func start(ctx context.Context, o *Options, p Paths, copts *rpc.ClientOptions) (*rpc.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	unlock, err := lockFile(ctx, p.Lock)
	if err != nil {
		return nil, fmt.Errorf("%w: session %q: wait for the start lock %s: %v", ErrStart, o.Session, p.Lock, err)
	}
	defer unlock()
	// Another client may have started it while we waited for the lock.
	if c, err := rpc.Dial(ctx, p.Socket, copts); err == nil {
		if err := checkArgs(o, p); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	if err := os.WriteFile(p.Args, []byte(strings.Join(o.DaemonArgs, "\n")), 0o600); err != nil {
		return nil, fmt.Errorf("%w: record the daemon's settings: %v", ErrStart, err)
	}

	exe := o.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("%w: find the tabpilot executable: %v", ErrStart, err)
		}
	}
	rotateLog(p.Log)
	logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: open the daemon log: %v", ErrStart, err)
	}
	logStart, _ := logf.Seek(0, io.SeekEnd)
	args := append([]string{"daemon", "--session", o.Session, "--socket-dir", o.Dir}, o.DaemonArgs...)
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf // stdin is /dev/null
	cmd.Env = o.Env
	// Its own session: no controlling terminal, no signals of the shell's
	// process group (Ctrl-C in the shell does not stop the daemon).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	logf.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: run %s: %v", ErrStart, exe, err)
	}
	o.Logger.Info("client: started daemon", "session", o.Session, "pid", cmd.Process.Pid, "log", p.Log)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reap it if it dies while we run

	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := rpc.Dial(ctx, p.Socket, copts); err == nil {
			return c, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("%w: the daemon of session %q exited (%v)%s", ErrStart, o.Session, err, logTail(p.Log, logStart))
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: the daemon of session %q (pid %d) did not listen on %s within %v%s",
				ErrStart, o.Session, cmd.Process.Pid, p.Socket, o.StartTimeout, logTail(p.Log, logStart))
		case <-tick.C:
		}
	}
}

// checkArgs returns ErrSettings when o.CheckArgs is set and the running
// daemon was started with other DaemonArgs (its Args file); a daemon
// without one (started by hand) is not checked.
func checkArgs(o *Options, p Paths) error {
	if !o.CheckArgs {
		return nil
	}
	b, err := os.ReadFile(p.Args)
	if err != nil {
		return nil
	}
	if got, want := string(b), strings.Join(o.DaemonArgs, "\n"); got != want {
		return fmt.Errorf("%w: session %q runs with %s, and this call asks for %s; stop it first (tabpilot stop --session %s) or use another --session",
			ErrSettings, o.Session, strings.ReplaceAll(got, "\n", " "), strings.Join(o.DaemonArgs, " "), o.Session)
	}
	return nil
}

// rotateLog moves a large log aside, keeping one old copy.
func rotateLog(path string) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogSize {
		os.Rename(path, path+".1")
	}
}

// logTail returns the last lines the daemon wrote to its log since offset,
// formatted to follow an error message.
func logTail(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 2048
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > max {
		offset = fi.Size() - max
	}
	f.Seek(offset, io.SeekStart)
	b, _ := io.ReadAll(io.LimitReader(f, max))
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "; its log " + path + " is empty"
	}
	return "; the end of its log " + path + ":\n" + s
}

// Call connects to the session's daemon (starting it when absent), makes
// one call and closes the connection. Errors are those of Connect and
// rpc.Client.Call. Cancelling ctx cancels the call on the daemon.
func Call(ctx context.Context, opts *Options, method string, params any) (*api.Result, error) {
	c, err := Connect(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Call(ctx, method, params)
}

// Stop stops the session's daemon: it asks it to shut down (MethodStop) and
// waits, bounded by ctx, until the daemon has closed its tabs and browsers,
// removed its socket and released its pid file. It reports whether a
// daemon was running; a stale socket file left by a killed daemon is
// removed.
func Stop(ctx context.Context, opts *Options) (bool, error) {
	o := opts.withDefaults()
	p, err := PathsFor(o.Dir, o.Session)
	if err != nil {
		return false, err
	}
	c, err := rpc.Dial(ctx, p.Socket, &rpc.ClientOptions{Logger: o.Logger})
	if err != nil {
		if absent(err) {
			removeStale(p)
			return false, nil
		}
		return false, fmt.Errorf("connect to the daemon of session %q: %w", o.Session, err)
	}
	defer c.Close()
	if _, err := c.Call(ctx, MethodStop, nil); err != nil {
		return true, fmt.Errorf("stop the daemon of session %q: %w", o.Session, err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		return true, fmt.Errorf("stop the daemon of session %q: wait for its shutdown: %w", o.Session, ctx.Err())
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for Running(p) {
		select {
		case <-ctx.Done():
			return true, fmt.Errorf("stop the daemon of session %q: wait for its exit: %w", o.Session, ctx.Err())
		case <-tick.C:
		}
	}
	return true, nil
}

// removeStale removes the socket file of a daemon that is gone (killed
// with SIGKILL), holding the pid lock meanwhile so that no daemon starts
// in between.
func removeStale(p Paths) {
	if _, err := os.Lstat(p.Socket); err != nil {
		return
	}
	f, err := os.OpenFile(p.PID, os.O_RDWR, 0)
	if err != nil {
		if os.IsNotExist(err) {
			os.Remove(p.Socket)
		}
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // a daemon holds it: not stale
	}
	os.Remove(p.Socket)
	os.Remove(p.PID)
}

// Running reports whether a daemon holds the session's pid file.
func Running(p Paths) bool {
	f, err := os.OpenFile(p.PID, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// lockFile takes an exclusive flock on path, polling until ctx is done.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
