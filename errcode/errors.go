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
