package tabs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// Tab is a named page target. Its action methods are safe for concurrent
// use, but the supervisor runs one action at a time on a tab.
type Tab struct {
	*Page

	sup *Supervisor
	key browser.Key

	cancel context.CancelFunc
	// borrowed marks a page tabpilot attached to but did not open: closing
	// the tab only detaches.
	borrowed bool
	released atomic.Bool
	opened   atomic.Bool

	slot chan struct{}

	// mu guards the observation state.
	mu       sync.Mutex
	num      *observe.Numbering
	lastObs  *observe.Observation
	viewport Viewport
	shots    int
	lastShot *Screenshot

	// obs is the observation state beside the numbering.
	obs obsTabState
}

func newTab(s *Supervisor, name string, key browser.Key, dialogs string) *Tab {
	t := &Tab{sup: s, key: key, slot: make(chan struct{}, 1), num: observe.NewNumbering(), viewport: s.opts.Viewport}
	t.Page = newPage(name, dialogs, t.pageEnv())
	return t
}

// Name returns the tab's name.
func (t *Tab) Name() string { return t.name }

func (t *Tab) tryAcquire() bool {
	select {
	case t.slot <- struct{}{}:
		return true
	default:
		return false
	}
}

func (t *Tab) release() { <-t.slot }

// Busy reports whether an action holds the tab.
func (t *Tab) Busy() bool { return len(t.slot) > 0 }

// Alive reports whether the tab's target and browser are up.
func (t *Page) Alive() bool {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if t.dead != "" {
		return false
	}
	if t.handle != nil && !t.handle.Alive() {
		t.markDeadLocked("the browser went away (crashed, killed or disconnected)")
		return false
	}
	return true
}

// DeadReason says why the tab is not alive, or "".
func (t *Page) DeadReason() string {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.dead
}

func (t *Page) markDeadLocked(reason string) {
	if t.dead == "" {
		t.dead = reason
		close(t.deadSig)
	}
}

func (t *Tab) kill(reason string) {
	t.evMu.Lock()
	t.markDeadLocked(reason)
	t.evMu.Unlock()
	if t.cancel != nil {
		go t.cancel() // closes the target; may wait on a hung renderer
	}
}

func (t *Tab) close(ctx context.Context) error {
	t.evMu.Lock()
	t.markDeadLocked("closed")
	t.evMu.Unlock()
	if t.cancel == nil {
		return nil
	}
	done := make(chan struct{})
	go func() { t.cancel(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close target: %w", ctx.Err())
	}
}

func (t *Tab) browserName() string { return string(t.key.Kind) }

// Browser returns the kind and version of the tab's browser.
func (t *Tab) Browser() (kind, version string) {
	h := t.browserHandle()
	if h == nil {
		return string(t.key.Kind), ""
	}
	return string(h.Kind()), h.Version()
}

// setHandle records the tab's browser handle. A tab is in the registry
// while it starts, so Alive and the supervisor may read it meanwhile.
func (t *Page) setHandle(h *browser.Handle) {
	t.evMu.Lock()
	t.handle = h
	t.evMu.Unlock()
}

// browserHandle is the tab's browser handle, nil before it started.
func (t *Page) browserHandle() *browser.Handle {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.handle
}

// heldOn reports the tab's target when it is a live tab on h.
func (t *Page) heldOn(h *browser.Handle) (target.ID, bool) {
	t.evMu.Lock()
	id, on := t.targetID, t.handle == h
	t.evMu.Unlock()
	return id, on && id != "" && t.Alive()
}

// Viewport returns the tab's viewport.
func (t *Tab) Viewport() Viewport {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.viewport
}

// watchDetach marks the tab dead when the browser detaches its target
// (the page closed itself with window.close, or another client closed
// it), so that Alive, tabs and open see it gone, and the action running
// on it ends (opCtx).
func (t *Page) watchDetach() {
	ch, err := chromedp.Detached(t.ctx)
	if err != nil {
		return
	}
	t.env.goFn(func() {
		select {
		case <-ch:
			t.evMu.Lock()
			t.markDeadLocked("the page was closed (window.close(), or another client closed its target)")
			t.evMu.Unlock()
		case <-t.ctx.Done():
		}
	})
}

// Target returns the tab's CDP session (for raw CDP: cdp.send).
func (t *Page) Target() *chromedp.Target { return t.target }

// Send sends a raw CDP command on the tab's session and returns its raw
// JSON result (the cdp.send escape hatch). It honours the dialog rule.
func (t *Page) Send(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method == "" || !strings.Contains(method, ".") {
		return nil, Errorf(errcode.BadRequest, "invalid CDP method %q: use Domain.method", method)
	}
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	var out json.RawMessage
	err := t.blocking(ctx, func(ctx context.Context) error {
		return t.target.Call(ctx, method, params, &out)
	})
	if err != nil {
		var dpe *dialogPendingError
		if asDialog(err, &dpe) {
			return nil, evalErr(err)
		}
		if ctx.Err() != nil {
			return nil, cdpErr(method, err)
		}
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("cdp %s: %v", method, err), Err: err}
	}
	return out, nil
}

// pageEnv is what the tab's Page needs from the supervisor and the tab.
func (t *Tab) pageEnv() pageEnv {
	s := t.sup
	return pageEnv{
		log:            s.log,
		goFn:           func(f func()) { s.wg.Go(f) },
		crashed:        func() { s.crashes.Add(1) },
		downloadDir:    s.DownloadDir,
		guard:          s.opts.Guard,
		networkIdleMax: s.opts.NetworkIdleMax,
		headless:       t.key.Kind == browser.Headless,
		worldScript:    walkerJS,
		topNavigated: func(restored bool) {
			if restored {
				// Its remote objects did not come back with it.
				t.obs.mu.Lock()
				clear(t.obs.clickables)
				t.obs.mu.Unlock()
			}
			t.mu.Lock()
			t.num.Reset()
			t.lastObs = nil
			t.mu.Unlock()
		},
		popup: func(info *target.Info) { s.wg.Go(func() { s.adoptPopup(t, info) }) },
	}
}
