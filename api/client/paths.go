package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// DefaultSession is the session used when none is given.
const DefaultSession = "default"

// maxSocketPath is the longest unix socket path (sun_path is 108 bytes on
// Linux, including the terminating NUL).
const maxSocketPath = 107

// DefaultDir returns the directory of the daemon sockets:
// xdgRuntimeDir/tabpilot when xdgRuntimeDir (the value of $XDG_RUNTIME_DIR)
// is set, else /tmp/tabpilot-UID (os.TempDir is not used: it would follow
// $TMPDIR, which differs between shells). It reads no environment itself.
func DefaultDir(xdgRuntimeDir string) string {
	if xdgRuntimeDir != "" {
		return filepath.Join(xdgRuntimeDir, "tabpilot")
	}
	return filepath.Join("/tmp", "tabpilot-"+strconv.Itoa(os.Getuid()))
}

// EnsureDir creates dir with mode 0700 when absent and checks that it is a
// directory (not a symlink) owned by this user and closed to group and
// others; else it returns ErrUnsafeDir.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return fmt.Errorf("create socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, dir)
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("%w: %s is owned by uid %d, not %d", ErrUnsafeDir, dir, st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %v; want 0700 (chmod 700 it)", ErrUnsafeDir, dir, fi.Mode().Perm())
	}
	return nil
}

// ValidSession returns nil when name is a usable session name: 1 to 64
// letters, digits, '.', '_' or '-', starting with a letter or digit. Else it
// returns ErrBadSession.
func ValidSession(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w %q: want 1 to 64 characters", ErrBadSession, name)
	}
	for i, r := range name {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || r != '.' && r != '_' && r != '-') {
			return fmt.Errorf("%w %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", ErrBadSession, name)
		}
	}
	return nil
}

// Paths are the files of one session's daemon, all in one directory.
type Paths struct {
	// Socket is the daemon's unix socket (mode 0600).
	Socket string
	// PID holds the daemon's process id; the daemon holds an exclusive
	// flock on it while it runs, so a second daemon of the session refuses
	// to start.
	PID string
	// Lock serialises starting the daemon between clients.
	Lock string
	// Log receives the output of a daemon started by a client.
	Log string
	// Args holds the DaemonArgs the daemon was started with (mode 0600),
	// one per line, for Options.CheckArgs.
	Args string
}

// PathsFor returns the paths of session's files in dir. It fails with
// ErrBadSession for a bad name, and when the socket path would be too long
// for a unix socket.
func PathsFor(dir, session string) (Paths, error) {
	if err := ValidSession(session); err != nil {
		return Paths{}, err
	}
	base := filepath.Join(dir, session)
	p := Paths{Socket: base + ".sock", PID: base + ".pid", Lock: base + ".lock", Log: base + ".log", Args: base + ".args"}
	if len(p.Socket) > maxSocketPath {
		return Paths{}, fmt.Errorf("socket path %s is %d bytes, longer than the %d a unix socket allows: use a shorter directory (XDG_RUNTIME_DIR) or session name",
			p.Socket, len(p.Socket), maxSocketPath)
	}
	return p, nil
}
