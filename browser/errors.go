package browser

import (
	"errors"

	"github.com/tabpilot/tabpilot/errcode"
)

// ErrNoBrowser is wrapped by the error of Find when no executable is found.
var ErrNoBrowser = errors.New("no chromium executable")

// Error is a browser failure with a stable code (ErrorCode) and an
// optional hint for an agent. The codes it carries are
// errcode.BrowserUnavailable, AttachFailed, TargetNotFound, NotAlive and
// BadRequest.
type Error struct {
	Code errcode.Code
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code (e.g. errcode.BrowserUnavailable).
func (e *Error) ErrorCode() errcode.Code { return e.Code }

// ErrorHint returns the specific hint, or "" for the code's default
// (errcode.Code.Hint).
func (e *Error) ErrorHint() string { return e.Hint }
