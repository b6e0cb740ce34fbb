package tabs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// Tab is a named page target. Its action methods are safe for concurrent
// use, but the supervisor runs one action at a time on a tab.
type Tab struct {
	sup     *Supervisor
	name    string
	key     browser.Key
	dialogs string // policy

	handle   *browser.Handle
	ctx      context.Context // chromedp tab context
	cancel   context.CancelFunc
	target   *chromedp.Target
	targetID target.ID
	// borrowed marks a page tabpilot attached to but did not open: closing
	// the tab only detaches.
	borrowed bool
	released atomic.Bool
	opened   atomic.Bool

	slot chan struct{}

	// evMu guards the state updated by the CDP listener.
	evMu       sync.Mutex
	dead       string
	url, title string
	navSeq     int    // top-level navigations seen
	loading    bool   // a top-level document committed and has not fired load
	navReq     int    // top-level navigations requested (Page.frameRequestedNavigation)
	routeSeq   int    // top-level navigations within the document (Page.navigatedWithinDocument: pushState, a fragment)
	navPending bool   // one was requested and has neither committed nor stopped
	navURL     string // where the last requested top-level navigation goes
	dialog     *Dialog
	dialogSig  chan struct{} // closed when a dialog opens
	handled    []Dialog      // dialogs the policy handled, drained by runs
	inflight   map[network.RequestID]inflightReq
	docStatus  map[cdp.LoaderID]int64 // HTTP status of recent top-level documents
	navFail    string                 // the last top-level document request that failed: "URL: net::ERR_…"
	st         settleState            // what the settled wait needs (settle.go)
	deadSig    chan struct{}

	// unloadAsk (evMu) is set while a beforeunload dialog of the top
	// frame is open: dismissing it cancels the navigation that asked.
	unloadAsk bool
	// dclPending (evMu) is set when a top-level document commits and
	// cleared at its DOMContentLoaded (Page.domContentEventFired) or load.
	dclPending bool

	// mu guards the observation state.
	mu       sync.Mutex
	num      *observe.Numbering
	lastObs  *observe.Observation
	viewport Viewport
	shots    int
	lastShot *Screenshot

	dialogQ chan struct{}

	// x is the state of popups, downloads and frames (hooks.go).
	x extras
	// ob is the observation state: frame sessions, navigations (oopif.go).
	ob obsState
}

func newTab(s *Supervisor, name string, key browser.Key, dialogs string) *Tab {
	return &Tab{sup: s, name: name, key: key, dialogs: dialogs,
		slot: make(chan struct{}, 1), dialogSig: make(chan struct{}), deadSig: make(chan struct{}),
		inflight: map[network.RequestID]inflightReq{}, num: observe.NewNumbering(),
		dialogQ: make(chan struct{}, 1), viewport: s.opts.Viewport}
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
func (t *Tab) Alive() bool {
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
func (t *Tab) DeadReason() string {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.dead
}

func (t *Tab) markDeadLocked(reason string) {
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
func (t *Tab) setHandle(h *browser.Handle) {
	t.evMu.Lock()
	t.handle = h
	t.evMu.Unlock()
}

// browserHandle is the tab's browser handle, nil before it started.
func (t *Tab) browserHandle() *browser.Handle {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.handle
}

// heldOn reports the tab's target when it is a live tab on h.
func (t *Tab) heldOn(h *browser.Handle) (target.ID, bool) {
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
func (t *Tab) watchDetach() {
	ch, err := chromedp.Detached(t.ctx)
	if err != nil {
		return
	}
	t.sup.wg.Go(func() {
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
func (t *Tab) Target() *chromedp.Target { return t.target }

// Send sends a raw CDP command on the tab's session and returns its raw
// JSON result (the cdp.send escape hatch). It honours the dialog rule.
func (t *Tab) Send(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
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
