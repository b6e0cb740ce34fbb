package pdf

import (
	"fmt"

	"github.com/tabpilot/tabpilot/errcode"
)

// Error is a PDF failure with a stable code: errcode.BadRequest for
// options that do not validate or page ranges the browser refused. Other
// failures of a CDP call are returned wrapped, without a code, so that the
// caller classifies them (a deadline, a detached target) as it does for
// its own calls.
type Error struct {
	Code errcode.Code
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code.
func (e *Error) ErrorCode() errcode.Code { return e.Code }

// ErrorHint returns a specific hint, or "" for the code's default.
func (e *Error) ErrorHint() string { return e.Hint }

// badRequest returns an *Error with errcode.BadRequest, the message
// prefixed "pdf: ", and hint.
func badRequest(hint, format string, args ...any) *Error {
	return &Error{Code: errcode.BadRequest, Msg: "pdf: " + fmt.Sprintf(format, args...), Hint: hint}
}
