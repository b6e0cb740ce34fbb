package netlog

import (
	"errors"
	"fmt"

	"github.com/tabpilot/tabpilot/errcode"
)

// ErrNotFound is the cause of the error of Request for an id the log does
// not hold (never given, or dropped from the ring).
var ErrNotFound = errors.New("no such request")

// Error is a failure of a query or a recording, with a stable code and an
// optional hint; errors.Is finds its cause.
type Error struct {
	Code errcode.Code
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause, e.g. ErrNotFound.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code: bad_request for a malformed filter or
// option, element_not_found for an unknown request id.
func (e *Error) ErrorCode() errcode.Code { return e.Code }

// ErrorHint returns a hint more specific than the code's, or "".
func (e *Error) ErrorHint() string { return e.Hint }

func badRequest(format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: errcode.BadRequest, Msg: err.Error(), Err: errors.Unwrap(err)}
}

func notFound(id string) *Error {
	return &Error{
		Code: errcode.ElementNotFound,
		Msg:  fmt.Sprintf("no request %q in the log", id),
		Hint: "List the requests again and use a current id; the log keeps the newest entries only.",
		Err:  ErrNotFound,
	}
}
