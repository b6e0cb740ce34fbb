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
	"context"
	"log/slog"

	"github.com/tabpilot/tabpilot/tabs/observe"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// Actor acts on one page. Its methods are safe for concurrent use, but a
// tab runs one action at a time.
type Actor struct {
	*observe.Observer
	log  *slog.Logger
	goFn func(func())
	// viewport returns the viewport the tab set, in CSS pixels.
	viewport func() (width, height int)
	// input is held by the action that sends the page input (inputTurn).
	input chan struct{}
}

// NewActor returns the actor of the page o observes. goFn runs a function
// on a goroutine its owner waits for at shutdown; viewport returns the
// viewport the owner set, in CSS pixels, for when the page cannot say.
func NewActor(o *observe.Observer, log *slog.Logger, goFn func(func()), viewport func() (width, height int)) *Actor {
	return &Actor{Observer: o, log: log, goFn: goFn, viewport: viewport, input: make(chan struct{}, 1)}
}

// inputKey marks a context whose action holds the page's input.
type inputKey struct{}

// inputTurn waits until no other action of this page sends it input, and
// holds the input for the caller until done: the actions that move the
// mouse, press keys, scroll or change a control (click, hover, drag,
// scroll, type, fill, press, select, upload) run one at a time, in the
// order they asked. Without it, the clicks of a run's
// Promise.all([tab.click(a), tab.click(b)]) interleaved their presses and
// releases: the page got one click, and every call said it had clicked.
// Waits and evaluations do not take it, so a click and a wait for what it
// does still run together. An action that holds the input and calls
// another (fill on a select) does not wait for itself. Errors: timeout
// when ctx ends first.
func (t *Actor) inputTurn(ctx context.Context) (context.Context, func(), error) {
	if ctx.Value(inputKey{}) != nil {
		return ctx, func() {}, nil
	}
	select {
	case t.input <- struct{}{}:
		return context.WithValue(ctx, inputKey{}, true), func() { <-t.input }, nil
	case <-ctx.Done():
		return ctx, nil, pagecore.CDPErr("wait for the page's input (another action of the run holds it)", ctx.Err())
	}
}
