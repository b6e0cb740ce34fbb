package pdf

import (
	"fmt"

	"github.com/tabpilot/tabpilot/errcode"
)

// Error is a failure with a stable code and an optional hint
// (errcode.Error).
type Error = errcode.Error

// badRequest returns an *Error with errcode.BadRequest, the message
// prefixed "pdf: ", and hint.
func badRequest(hint, format string, args ...any) *Error {
	return &Error{Code: errcode.BadRequest, Msg: "pdf: " + fmt.Sprintf(format, args...), Hint: hint}
}
