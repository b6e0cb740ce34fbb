package browser

import (
	"errors"

	"github.com/tabpilot/tabpilot/errcode"
)

// ErrNoBrowser is wrapped by the error of Find when no executable is found.
var ErrNoBrowser = errors.New("no chromium executable")

// Error is a failure with a stable code and an optional hint
// (errcode.Error).
type Error = errcode.Error
