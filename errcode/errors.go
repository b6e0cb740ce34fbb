package errcode

import (
	"context"
	"errors"
)

// Coder is an error that carries a stable code. The packages that fail
// define their own error types (tabs.Error, browser.Error,
// egress.BlockedError, …) and implement it; Of finds it in a chain.
type Coder interface {
	error
	ErrorCode() Code
}

// Hinter is an error that carries a hint more specific than its code's
// default (Code.Hint). ErrorHint returns "" for the default.
type Hinter interface {
	error
	ErrorHint() string
}

// Of returns the code of err: "" for nil, the code of the first Coder in
// its chain (errors.As), Timeout for an uncoded context.DeadlineExceeded,
// else Internal.
func Of(err error) Code {
	if err == nil {
		return ""
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout
	}
	return Internal
}

// Error is a failure with a stable code and an optional hint: the one
// coded error type the packages return (browser.Error, pagecore.Error and
// the others are this type). A %w cause is in Err.
type Error struct {
	Code Code
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code, e.g. StaleElement.
func (e *Error) ErrorCode() Code { return e.Code }

// ErrorHint returns a specific hint, or "" for the code's default.
func (e *Error) ErrorHint() string { return e.Hint }
