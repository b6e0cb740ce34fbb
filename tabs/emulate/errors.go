package emulate

import (
	"errors"
	"fmt"

	"github.com/chromedp/cdproto"

	"github.com/tabpilot/tabpilot/errcode"
)

// Error is a failure with a stable code and an optional hint
// (errcode.Error).
type Error = errcode.Error

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
