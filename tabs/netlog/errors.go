package netlog

import (
	"errors"
	"fmt"

	"github.com/tabpilot/tabpilot/errcode"
)

// ErrNotFound is the cause of the error of Request for an id the log does
// not hold (never given, or dropped from the ring).
var ErrNotFound = errors.New("no such request")

// Error is a failure with a stable code and an optional hint
// (errcode.Error).
type Error = errcode.Error

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
