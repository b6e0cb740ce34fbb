package emulate

import (
	"errors"
	"fmt"

	"github.com/chromedp/cdproto"

	"github.com/tabpilot/tabpilot/errcode"
)

// Error is an emulation failure with a stable code: errcode.BadRequest
// for options that do not validate, or that the browser refused (an
// unknown time zone or locale). Other failures of a CDP call are returned
// wrapped, without a code, so that the caller classifies them (a deadline,
// a detached target) as it does for its own calls.
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
// prefixed "emulate: ", and hint.
func badRequest(hint, format string, args ...any) *Error {
	return &Error{Code: errcode.BadRequest, Msg: "emulate: " + fmt.Sprintf(format, args...), Hint: hint}
}

// callErr wraps the error of the CDP call method. With refused set, an
// error the browser answered (a *cdproto.Error: it understood the command
// and rejected the value) is a bad request; anything else keeps its cause.
func callErr(method string, err error, refused bool) error {
	if err == nil {
		return nil
	}
	var pe *cdproto.Error
	if refused && errors.As(err, &pe) {
		return &Error{Code: errcode.BadRequest, Msg: "emulate: " + method + " refused the value: " + pe.Message, Err: err}
	}
	return fmt.Errorf("emulate: %s: %w", method, err)
}
