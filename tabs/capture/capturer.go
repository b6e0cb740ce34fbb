// Package capture owns what a tab gives back as pictures and text:
// screenshots sized for a model (Page.captureScreenshot, scaled with
// disintegration/imaging), with the element numbers of the observation
// drawn on them (marks), the click at a point of a screenshot mapped back
// to the viewport, and the page read as markdown or text (package render,
// on the DOM flattened in the page by tabs/js/flatten.js, read with
// Runtime.evaluate).
//
// A Capturer builds on the page's Actor (for element boxes and the click)
// and keeps the tab's screenshots. It must not decide a tab's life or
// change the page beyond the marks it draws and removes.
package capture

import (
	"log/slog"
	"sync"

	"github.com/tabpilot/tabpilot/tabs/act"
)

// Capturer captures one page. Its methods are safe for concurrent use.
type Capturer struct {
	*act.Actor
	log *slog.Logger
	// dir is where screenshots are written ("" the temp directory).
	dir string
	// scale returns the device scale factor the tab set.
	scale func() float64

	// mu guards shots and lastShot.
	mu       sync.Mutex
	shots    int
	lastShot *Screenshot
}

// NewCapturer returns the capturer of the page a acts on, writing
// screenshots to dir ("" the temp directory); scale returns the device
// scale factor the tab set (Emulation.setDeviceMetricsOverride).
func NewCapturer(a *act.Actor, log *slog.Logger, dir string, scale func() float64) *Capturer {
	return &Capturer{Actor: a, log: log, dir: dir, scale: scale}
}
