// Package act owns what an action does to a page: it locates the element a
// target names (an element number of the page's observations, or a
// selector: CSS, text/, xpath/, pierce/, aria/), checks that a person could
// act on it (attached, visible, stable, enabled, editable, receiving the
// pointer: the hit test and the click guard), and sends the input: click,
// hover, type, fill, press, select, drag, upload, scroll, and the waits for
// an element's state (Input.dispatchMouseEvent, Input.dispatchKeyEvent,
// Input.insertText, DOM.setFileInputFiles, Runtime.callFunctionOn).
//
// An Actor builds on the page's Observer (for numbers) and its page core
// (for the session, the dialog rule and the navigation an action starts,
// which every action waits for as the settled wait says). It must not own
// a tab's life: names, the action slot, timeouts and kills are package
// tabs'.
package act

import (
	"log/slog"

	"github.com/tabpilot/tabpilot/tabs/observe"
)

// Actor acts on one page. Its methods are safe for concurrent use, but a
// tab runs one action at a time.
type Actor struct {
	*observe.Observer
	log  *slog.Logger
	goFn func(func())
	// viewport returns the viewport the tab set, in CSS pixels.
	viewport func() (width, height int)
}

// NewActor returns the actor of the page o observes. goFn runs a function
// on a goroutine its owner waits for at shutdown; viewport returns the
// viewport the owner set, in CSS pixels, for when the page cannot say.
func NewActor(o *observe.Observer, log *slog.Logger, goFn func(func()), viewport func() (width, height int)) *Actor {
	return &Actor{Observer: o, log: log, goFn: goFn, viewport: viewport}
}
