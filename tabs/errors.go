package tabs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
)

// Code is a stable error code; the values are the api codes of DESIGN.md
// section 8 that tabs produces.
type Code string

// The codes tabs produces.
const (
	CodeBadRequest       Code = "bad_request"
	CodeTimeout          Code = "timeout"
	CodeBusy             Code = "busy"
	CodeNotAlive         Code = "not_alive"
	CodeNoSuchTab        Code = "no_such_tab"
	CodeBrowserMismatch  Code = "browser_mismatch"
	CodeNavigationFailed Code = "navigation_failed"
	CodeElementNotFound  Code = "element_not_found"
	CodeNotActionable    Code = "not_actionable"
	CodeStaleElement     Code = "stale_element"
	CodeScriptError      Code = "script_error"
	CodeAssertionFailed  Code = "assertion_failed"
	CodeInternal         Code = "internal"
)

// Sentinels callers branch on with errors.Is.
var (
	ErrBusy      = errors.New("tab is busy")
	ErrNoSuchTab = errors.New("no such tab")
	ErrNotAlive  = errors.New("tab is not alive")
	ErrStale     = errors.New("stale element")
	ErrClosed    = errors.New("supervisor is closed")
)

// Error is a tab failure with a stable code and an optional hint.
type Error struct {
	Code Code
	Msg  string
	Hint string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code, e.g. "stale_element".
func (e *Error) ErrorCode() string { return string(e.Code) }

// ErrorHint returns a specific hint, or "" for the code's default.
func (e *Error) ErrorHint() string { return e.Hint }

// Errorf returns an *Error with code and a formatted message. A %w verb in
// format sets the cause.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// CodeOf returns the code of err: the code of the first coded error in its
// chain, CodeTimeout for a deadline, else CodeInternal.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return Code(c.ErrorCode())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return CodeTimeout
	}
	return CodeInternal
}

// cdpErr turns an error from a CDP call into a coded error: a deadline is a
// timeout, a detached target or lost browser is not_alive, anything else
// keeps its code or becomes internal. what names the operation.
func cdpErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeTimeout, Msg: what + ": timed out", Err: err}
	case errors.Is(err, chromedp.ErrTargetDetached), strings.Contains(err.Error(), "lost the connection"),
		strings.Contains(err.Error(), "Target closed"), strings.Contains(err.Error(), "target crashed"):
		return &Error{Code: CodeNotAlive, Msg: what + ": the tab is gone (" + err.Error() + ")", Err: ErrNotAlive}
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeTimeout, Msg: what + ": cancelled", Err: err}
	case strings.Contains(err.Error(), "Inspected target navigated or closed"), strings.Contains(err.Error(), "Execution context was destroyed"):
		// The document the call ran in went away under it.
		return &Error{Code: CodeScriptError, Msg: what + ": the page navigated while it ran, and its result is lost", Err: err,
			Hint: "Run it again on the new page; if the navigation is expected, wait for it first (tab.waitForUrl)."}
	}
	return &Error{Code: CodeInternal, Msg: what + ": " + err.Error(), Err: err}
}
