package pagecore

import (
	"errors"
	"testing"

	"github.com/tabpilot/tabpilot/errcode"
)

// TestCDPErrNavigatedAway: the errors Chromium gives for a call whose
// document went away with a navigation (as on a page that reloads itself
// while it is observed) are script_error, saying so, not internal.
func TestCDPErrNavigatedAway(t *testing.T) {
	for _, msg := range []string{
		"Cannot find context with specified id (-32000)",
		"Execution context was destroyed. (-32000)",
		"Inspected target navigated or closed (-32000)",
		"Not attached to an active page (-32000)",
	} {
		err := CDPErr("create isolated world", errors.New(msg))
		if errcode.Of(err) != errcode.ScriptError {
			t.Errorf("%q: %v (%s), want script_error", msg, err, errcode.Of(err))
		}
	}
	if err := CDPErr("x", errors.New("something else")); errcode.Of(err) != errcode.Internal {
		t.Errorf("an unknown CDP error: %s, want internal", errcode.Of(err))
	}
}
