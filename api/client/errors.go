package client

import "errors"

// Errors callers branch on. They are wrapped with context.
var (
	// ErrNoDaemon: no daemon runs for the session (Stop, or Connect with
	// Options.NoStart).
	ErrNoDaemon = errors.New("no daemon running")
	// ErrSettings: the session's daemon runs with other settings than the
	// ones the call gives (Options.CheckArgs), which would be ignored.
	ErrSettings = errors.New("the session's daemon runs with other settings")
	// ErrStart: the daemon could not be started, or did not listen in
	// time; the message carries the end of its log.
	ErrStart = errors.New("daemon did not start")
	// ErrBadSession: the session name is not 1 to 64 letters, digits,
	// '.', '_' or '-', starting with a letter or digit.
	ErrBadSession = errors.New("invalid session name")
	// ErrUnsafeDir: the socket directory is not a directory owned by this
	// user and closed to others (mode 0700).
	ErrUnsafeDir = errors.New("unsafe socket directory")
)
