package browser

import "errors"

// Codes carried by *Error; they are the api error codes of DESIGN.md
// section 8 that this package can produce.
const (
	CodeUnavailable    = "browser_unavailable"
	CodeAttachFailed   = "attach_failed"
	CodeTargetNotFound = "target_not_found"
	CodeNotAlive       = "not_alive"
	CodeBadRequest     = "bad_request"
)

// ErrNoBrowser is wrapped by the error of Find when no executable is found.
var ErrNoBrowser = errors.New("no chromium executable")

// Error is a browser failure with a stable code (ErrorCode) and an
// optional hint for an agent.
type Error struct {
	Code string
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code (e.g. "browser_unavailable").
func (e *Error) ErrorCode() string { return e.Code }

// ErrorHint returns the hint, or "" for the code's default hint.
func (e *Error) ErrorHint() string {
	if e.Hint != "" {
		return e.Hint
	}
	if e.Code == CodeUnavailable {
		return "Install Chromium: sudo apt-get install -y chromium (Debian/Ubuntu), or set TABPILOT_CHROME / --chrome to its path."
	}
	return ""
}
