package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Listener is the daemon's side of a session's files: it holds the pid
// file's lock for the daemon's lifetime and listens on the socket.
type Listener struct {
	net.Listener
	// Paths are the session's files.
	Paths Paths

	pid       *os.File
	closeOnce sync.Once
	relOnce   sync.Once
}

// Listen is called by the daemon of session: it ensures dir (EnsureDir),
// takes the session's pid lock, waiting until ctx is done while another
// daemon holds it (one that is shutting down), writes its pid, removes a
// stale socket file and listens on the socket with mode 0600. It fails
// when another daemon keeps running.
func Listen(ctx context.Context, dir, session string) (*Listener, error) {
	p, err := PathsFor(dir, session)
	if err != nil {
		return nil, err
	}
	if err := EnsureDir(dir); err != nil {
		return nil, err
	}
	f, err := lockPID(ctx, p.PID)
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", session, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err := os.Remove(p.Socket); err != nil && !os.IsNotExist(err) {
		f.Close()
		return nil, fmt.Errorf("remove the stale socket: %w", err)
	}
	ln, err := net.Listen("unix", p.Socket)
	if err != nil {
		os.Remove(p.PID)
		f.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	if err := os.Chmod(p.Socket, 0o600); err != nil {
		ln.Close()
		os.Remove(p.PID)
		f.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	return &Listener{Listener: ln, Paths: p, pid: f}, nil
}

// lockPID takes the exclusive flock of the pid file, polling until ctx is
// done. It makes sure the locked file is still the one at path (a daemon
// that exits removes its pid file before unlocking it).
func lockPID(ctx context.Context, path string) (*os.File, error) {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open the pid file: %w", err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			var a, b syscall.Stat_t
			if syscall.Fstat(int(f.Fd()), &a) == nil && syscall.Stat(path, &b) == nil && a.Ino == b.Ino && a.Dev == b.Dev {
				return f, nil
			}
			f.Close() // the file was removed while we waited: retry
			continue
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock the pid file: %w", err)
		}
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("another daemon (pid %s) runs: %w", strings.TrimSpace(string(b[:n])), ctx.Err())
		case <-tick.C:
		}
	}
}

// Close stops listening and removes the socket file and the Args file; it keeps the pid lock
// (see Release), so no new daemon of the session starts while this one
// shuts down.
func (l *Listener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		err = l.Listener.Close() // a unix listener unlinks its socket
		if rerr := os.Remove(l.Paths.Socket); rerr != nil && !os.IsNotExist(rerr) && err == nil {
			err = rerr
		}
		// The settings the daemon was started with go with it: a daemon
		// started later by hand has none to be checked against.
		os.Remove(l.Paths.Args)
	})
	return err
}

// Release closes the listener if open, removes the pid file and releases
// its lock. The daemon calls it last, once its browsers are gone.
func (l *Listener) Release() error {
	err := l.Close()
	l.relOnce.Do(func() {
		os.Remove(l.Paths.PID)
		l.pid.Close()
	})
	return err
}
