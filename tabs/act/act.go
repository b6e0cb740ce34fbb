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
	"sync"

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
	// line gives the page's input to one action at a time (inputTurn).
	line inputLine
}

// NewActor returns the actor of the page o observes. goFn runs a function
// on a goroutine its owner waits for at shutdown; viewport returns the
// viewport the owner set, in CSS pixels, for when the page cannot say.
func NewActor(o *observe.Observer, log *slog.Logger, goFn func(func()), viewport func() (width, height int)) *Actor {
	return &Actor{Observer: o, log: log, goFn: goFn, viewport: viewport}
}

// inputKey marks a context whose action holds the page's input.
type inputKey struct{}

// placeKey carries the InputPlace an action took before it started.
type placeKey struct{}

// inputLine gives the page's input to the actions in the order they took
// their places, one at a time.
type inputLine struct {
	mu      sync.Mutex
	next    uint64          // the next place to give
	serving uint64          // the place whose action holds the input
	gone    map[uint64]bool // places given up before their turn
	moved   chan struct{}   // closed when serving changes
}

// advanceLocked passes the input to the next place still wanted; mu is
// held.
func (l *inputLine) advanceLocked() {
	l.serving++
	for l.gone[l.serving] {
		delete(l.gone, l.serving)
		l.serving++
	}
	if l.moved != nil {
		close(l.moved)
		l.moved = nil
	}
}

// InputPlace is an action's place in the line for the page's input
// (Actor.InputPlace), taken when the action is called, so that actions
// started together, on goroutines of their own, still take the input in
// the order they were called.
type InputPlace struct {
	l    *inputLine
	n    uint64
	once sync.Once
	mu   sync.Mutex
	held bool // the action holds, or held, the input
}

// InputPlace takes the next place in the line for the page's input. The
// caller passes it to the action's context (InputPlace.Context) and
// calls Release when the action has returned, whatever it did: a place
// never used is given up there, and the line moves on.
func (t *Actor) InputPlace() *InputPlace {
	l := &t.line
	l.mu.Lock()
	defer l.mu.Unlock()
	p := &InputPlace{l: l, n: l.next}
	l.next++
	return p
}

// Context returns ctx carrying p, for the action to wait for its turn
// with.
func (p *InputPlace) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, placeKey{}, p)
}

// Release gives p up if its action never took the input, and does
// nothing if it did (the action gave the input back when it returned).
func (p *InputPlace) Release() {
	p.mu.Lock()
	held := p.held
	p.mu.Unlock()
	if !held {
		p.leave()
	}
}

// leave takes p out of the line, once: the input passes on if p held it
// or was next, else p is skipped when its turn comes.
func (p *InputPlace) leave() {
	p.once.Do(func() {
		l := p.l
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.serving == p.n {
			l.advanceLocked()
			return
		}
		if l.gone == nil {
			l.gone = map[uint64]bool{}
		}
		l.gone[p.n] = true
	})
}

// wait waits until p holds the input. Errors: ctx's.
func (p *InputPlace) wait(ctx context.Context) error {
	l := p.l
	for {
		l.mu.Lock()
		if l.serving == p.n {
			l.mu.Unlock()
			p.mu.Lock()
			p.held = true
			p.mu.Unlock()
			return nil
		}
		if l.moved == nil {
			l.moved = make(chan struct{})
		}
		moved := l.moved
		l.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
			p.leave()
			return ctx.Err()
		}
	}
}

// inputTurn waits until no other action of this page sends it input, and
// holds the input for the caller until done: the actions that move the
// mouse, press keys, scroll or change a control (click, hover, drag,
// scroll, type, fill, press, select, upload) run one at a time, in the
// order they were called (the InputPlace ctx carries, else a place taken
// now). Without it, the clicks of a run's
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
	p, _ := ctx.Value(placeKey{}).(*InputPlace)
	if p == nil {
		p = t.InputPlace()
	}
	if err := p.wait(ctx); err != nil {
		return ctx, nil, pagecore.CDPErr("wait for the page's input (another action of the run holds it)", err)
	}
	return context.WithValue(ctx, inputKey{}, true), p.leave, nil
}
