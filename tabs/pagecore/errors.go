package pagecore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
)

// Sentinels callers branch on with errors.Is.
var (
	ErrBusy      = errors.New("tab is busy")
	ErrNoSuchTab = errors.New("no such tab")
	ErrNotAlive  = errors.New("tab is not alive")
	ErrStale     = errors.New("stale element")
	ErrClosed    = errors.New("supervisor is closed")
)

// Error is a failure with a stable code and an optional hint
// (errcode.Error).
type Error = errcode.Error

// Errorf returns an *Error with code and a formatted message. A %w verb in
// format sets the cause.
func Errorf(code errcode.Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// CDPErr turns an error from a CDP call into a coded error: a deadline is a
// timeout, a detached target or lost browser is not_alive, a document (or
// execution context) that went with a navigation under the call is
// script_error with a hint to run it again on the new page, anything else
// keeps its code or becomes internal. what names the operation.
func CDPErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var c errcode.Coder
	if errors.As(err, &c) {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: errcode.Timeout, Msg: what + ": timed out", Err: err}
	case errors.Is(err, chromedp.ErrTargetDetached), strings.Contains(err.Error(), "lost the connection"),
		strings.Contains(err.Error(), "Target closed"), strings.Contains(err.Error(), "target crashed"):
		return &Error{Code: errcode.NotAlive, Msg: what + ": the tab is gone (" + err.Error() + ")", Err: ErrNotAlive}
	case errors.Is(err, context.Canceled):
		return &Error{Code: errcode.Timeout, Msg: what + ": cancelled", Err: err}
	case strings.Contains(err.Error(), "Inspected target navigated or closed"), strings.Contains(err.Error(), "Execution context was destroyed"),
		strings.Contains(err.Error(), "Cannot find context with specified id"), strings.Contains(err.Error(), "Not attached to an active page"):
		// The document the call ran in went away under it (the last: the
		// call reached the page's old frame host as a navigation replaced
		// it, as on a page that refreshes itself in a loop).
		return &Error{Code: errcode.ScriptError, Msg: what + ": the page navigated while it ran, and its result is lost", Err: err, Hint: NavigatedHint}
	}
	return &Error{Code: errcode.Internal, Msg: what + ": " + err.Error(), Err: err}
}

// NavigatedHint is the hint of a call that the page's navigation cut.
const NavigatedHint = "Call it again on the new page; if the navigation is expected, wait for it first (wait, or tab.waitForUrl in a run). A page that keeps navigating on its own (a refresh loop) never holds still: close its tab."
