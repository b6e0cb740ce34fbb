// Package pagecore is the page core of a tab: the CDP session of one page
// target and what tabpilot knows of it from its events.
//
// A Page owns its target's chromedp context and session, the sessions of
// its out-of-process iframes (Target.attachToTarget) and the isolated
// worlds made in its frames (Page.createIsolatedWorld), and the event
// state its listeners keep: top-level navigations requested, committed
// and within the document, load and DOMContentLoaded, the HTTP status of
// its documents, requests in flight, JavaScript dialogs and the dialog
// policy, the popups it opened and its downloads. On that state it
// builds the waits every layer above shares: the settled wait (load,
// then a short quiet window of DOM and fetches), networkidle, the wait
// for a navigation an action started, and the rule that a call a dialog
// blocks returns at once (Blocking). It also holds the page-level
// operations on that session: navigation (Goto, history), cookies and
// storage, response waiters, and the coded Error every layer returns.
//
// Listeners run in chromedp's read loop: they record and return, and
// never call CDP. Every exported method is safe for concurrent use.
//
// It must not know about tabs, numbers or observations: what it needs
// from its owner (the supervisor's logger and goroutines, the download
// directory, the egress guard, a callback when the top document changes
// or a popup opens) comes in Env. Observation (tabs/observe), element
// location and input (tabs/act) and the tab's life (tabs) are built on it.
package pagecore

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/cdptap"
	"github.com/tabpilot/tabpilot/secrets"
)

// Page is the CDP side of one page target: its session, the sessions of
// its out-of-process iframes, its isolated worlds, and the state its
// event listeners keep (see the package doc). Its methods are safe for
// concurrent use.
type Page struct {
	env     Env
	name    string
	dialogs string // policy

	ctx    context.Context // chromedp tab context
	target *chromedp.Target
	// tap says when the browser's connection writes a command (nil on
	// a browser allocated without one).
	tap      *cdptap.Tap
	targetID target.ID

	// evMu guards the state updated by the CDP listener.
	evMu       sync.Mutex
	handle     *browser.Handle
	dead       string
	url, title string
	navSeq     int // top-level navigations seen
	// unloadedRun counts the top-level documents committed since a top
	// document last fired load: a page that sends itself on before it
	// loads, again and again, runs it up.
	unloadedRun int
	commits     [16]time.Time // when recent top-level navigations committed, at navSeq modulo 16
	loading     bool          // a top-level document committed and has not fired load
	navReq      int           // top-level navigations requested (Page.frameRequestedNavigation)
	routeSeq    int           // top-level navigations within the document (Page.navigatedWithinDocument: pushState, a fragment)
	navPending  bool          // one was requested and has neither committed nor stopped
	navURL      string        // where the last requested top-level navigation goes
	navSince    time.Time
	blocked     []Blocked
	blockedSeq  int // navigations the policy refused (blocked.go)
	dialog      *Dialog
	dialogSig   chan struct{} // closed when a dialog opens
	handled     []Dialog      // dialogs the policy handled, drained by runs
	inflight    map[network.RequestID]Request
	docStatus   map[cdp.LoaderID]int64      // HTTP status of recent top-level documents
	postDocs    map[cdp.LoaderID]bool       // recent top-level documents that answered a POST
	docReqAt    map[cdp.LoaderID]docRequest // when and for what URL recent top-level documents were first requested
	// navStarted are the top-level navigations started
	// (Page.frameStartedNavigating) that have neither committed nor
	// ended, by loader.
	navStarted map[cdp.LoaderID]docRequest
	// docsPruneAt is how many documents the maps above hold before
	// pruneDocsLocked looks at them again.
	// frameReq counts the navigations of child frames of the page's
	// session requested (Page.frameRequestedNavigation); framesAsked is
	// the last of each frame, framesPending those that have neither
	// committed nor stopped.
	frameReq      int
	framesAsked   map[cdp.FrameID]childNav
	framesPending map[cdp.FrameID]childNav
	docsPruneAt   int
	navFail       string      // the last top-level document request that failed: "URL: net::ERR_…"
	st            settleState // what the settled wait needs (settle.go)
	deadSig       chan struct{}

	// unloadAsk (evMu) is set while a beforeunload dialog of the top
	// frame is open: dismissing it cancels the navigation that asked.
	unloadAsk bool
	// dclPending (evMu) is set when a top-level document commits and
	// cleared at its DOMContentLoaded (Page.domContentEventFired) or load.
	dclPending bool
	// navRestorable (evMu) is set while the pending navigation is a
	// history traversal whose document has not been requested: the
	// back/forward cache may serve it, and then Page.frameStoppedLoading
	// can come before its Page.frameNavigated (type
	// BackForwardCacheRestore).
	navRestorable bool

	dialogQ chan struct{}

	// x is the state of popups, downloads and frames (hooks.go).
	x extras
	// net is the network and console record (network.go).
	net *netState
	// ob is the frame state: frame sessions, worlds, navigations (oopif.go).
	ob obsState
	// held are the held functions (held.go).
	held heldState
}

// Env is what a Page needs from its owner.
type Env struct {
	Log *slog.Logger
	// goFn runs f on a goroutine the owner waits for at shutdown.
	Go func(f func())
	// crashed counts a renderer crash.
	Crashed func()
	// downloadDir returns the session's download directory.
	DownloadDir func() (string, error)
	// guard checks navigations, or nil.
	Guard Guard
	// networkIdleMax caps the networkidle waits.
	NetworkIdleMax time.Duration
	// headless says the browser is one tabpilot launched headless.
	Headless bool
	// worldScript is compiled in each isolated world the page makes.
	WorldScript string
	// HeldScripts are the sources of functions the actions call on
	// elements often enough to compile once per execution context (Held):
	// each a function expression, or an expression that evaluates to one
	// (a closure that keeps state between calls, out of the page's reach).
	HeldScripts []string
	// topNavigated is called, from the event loop, when the top frame
	// commits a document (restored: from the back/forward cache).
	TopNavigated func(restored bool)
	// popup is called, from the event loop, when the page opens a page
	// target.
	Popup func(info *target.Info)
	// Secrets are the session's named secrets (package secrets), or nil:
	// the actions expand their placeholders, and what the page core
	// writes to files (body files, HARs) has their values masked.
	Secrets *secrets.Store
}

// Secrets returns the session's secrets (nil when none were given): the
// store the layers above expand {{secret:NAME}} with and redact with.
func (t *Page) Secrets() *secrets.Store { return t.env.Secrets }

// New returns the page core of the tab name, with dialog policy dialogs
// ("accept", "dismiss" or ""). It is bound to a target by Attach.
func New(name, dialogs string, env Env) *Page {
	return &Page{env: env, name: name, dialogs: dialogs,
		dialogSig: make(chan struct{}), deadSig: make(chan struct{}),
		inflight: map[network.RequestID]Request{}, dialogQ: make(chan struct{}, 1), net: newNetState(name, env.Secrets)}
}

// Alive reports whether the tab's target and browser are up.
func (t *Page) Alive() bool {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if t.dead != "" {
		return false
	}
	if t.handle != nil && !t.handle.Alive() {
		reason := "the browser went away (crashed, killed or disconnected)"
		if hint := t.handle.LostHint(); hint != "" {
			reason += ": " + hint // a remote browser: the next open reconnects
		}
		t.markDeadLocked(reason)
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

// SetHandle records the tab's browser handle. A tab is in the registry
// while it starts, so Alive and the supervisor may read it meanwhile.
func (t *Page) SetHandle(h *browser.Handle) {
	t.evMu.Lock()
	t.handle = h
	t.evMu.Unlock()
}

// BrowserHandle is the tab's browser handle, nil before it started.
func (t *Page) BrowserHandle() *browser.Handle {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.handle
}

// HeldOn reports the tab's target when it is a live tab on h.
func (t *Page) HeldOn(h *browser.Handle) (target.ID, bool) {
	t.evMu.Lock()
	id, on := t.targetID, t.handle == h
	t.evMu.Unlock()
	return id, on && id != "" && t.Alive()
}

// watchDetach marks the tab dead when the browser detaches its target
// (the page closed itself with window.close, or another client closed
// it, or the browser went), so that Alive, tabs and open see it gone, and
// the action running on it ends (opCtx). Whether the browser still
// answers (Handle.Answers) tells the page closed from the browser gone.
func (t *Page) watchDetach() {
	ch, err := chromedp.Detached(t.ctx)
	if err != nil {
		return
	}
	t.env.Go(func() {
		select {
		case <-ch:
			reason := "the page was closed (window.close(), or another client closed its target)"
			if h := t.BrowserHandle(); h != nil && !h.Answers(context.Background(), time.Second) {
				// The page went with its browser, whose connection drops
				// after its targets detach: the tab is not alive for that
				// reason, and its error carries the handle's hint once the
				// handle has seen the connection go.
				select {
				case <-h.Done():
				case <-time.After(2 * time.Second):
				}
				reason = "the connection to its browser was lost"
			}
			t.evMu.Lock()
			t.markDeadLocked(reason)
			t.evMu.Unlock()
		case <-t.ctx.Done():
		}
	})
}

// Target returns the tab's CDP session (for raw CDP: cdp.send).
func (t *Page) Target() *chromedp.Target { return t.target }

// Tap returns the protocol logger of the browser's connection, which
// says when a command is written (package cdptap), or nil when the
// browser has none.
func (t *Page) Tap() *cdptap.Tap { return t.tap }

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
	err := t.Blocking(ctx, func(ctx context.Context) error {
		return t.target.Call(ctx, method, params, &out)
	})
	if err != nil {
		var dpe *DialogPendingError
		if AsDialog(err, &dpe) {
			return nil, EvalErr(err)
		}
		if ctx.Err() != nil {
			return nil, CDPErr(method, err)
		}
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("cdp %s: %v", method, err), Err: err}
	}
	return out, nil
}

// MarkDead records why the page is gone, once, and wakes what waits on
// Dead.
func (t *Page) MarkDead(reason string) {
	t.evMu.Lock()
	t.markDeadLocked(reason)
	t.evMu.Unlock()
}

// Dead returns a channel closed when the page is gone.
func (t *Page) Dead() <-chan struct{} { return t.deadSig }

// TargetID returns the page's target id, "" before it is attached.
func (t *Page) TargetID() target.ID {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.targetID
}

// Attach binds the page to its chromedp target context tctx and installs
// its listeners (the event state, popups and frames, downloads), the
// settle script and the dialog policy. A popup's target may be paused
// waiting for a debugger, which RunPopup ends once the caller has set it
// up, and it works without the settle script.
func (t *Page) Attach(ctx, tctx context.Context, popup bool) error {
	t.ctx = tctx
	t.target = chromedp.FromContext(tctx).Target
	t.tap = cdptap.FromContext(tctx)
	t.evMu.Lock()
	t.targetID = t.target.TargetID
	t.evMu.Unlock()
	if err := chromedp.Listen(tctx, t.onEvent); err != nil {
		return CDPErr("listen", err)
	}
	t.watchDetach()
	if err := t.installHooks(ctx); err != nil {
		return err
	}
	if err := t.installSettle(ctx); err != nil {
		if !popup {
			return err
		}
		t.env.Log.Warn("install settle on popup", "tab", t.name, "err", err)
	}
	t.env.Go(t.dialogLoop)
	t.env.Go(t.feedNet)
	return nil
}

// popupURLWait bounds RunPopup's wait for the URL of the popup's first
// page.
const popupURLWait = 250 * time.Millisecond

// RunPopup lets a popup's page run (Runtime.runIfWaitingForDebugger),
// once its tab has set it up. A popup with an opener (window.open) that
// opens while its opener's auto-attach waits for the debugger (the
// stealth patches' watch) has its first navigation held by Chromium
// before its request: set up first, its first page has the tab's patches,
// hooks and settle script, and the User-Agent its overrides give. The
// opener's renderer, which the popup shares, waits meanwhile (15 to 30 ms
// more than the attach alone, measured). A popup not held (rel=noopener,
// no stealth) is not affected.
//
// It returns the URL of the popup's first page once its request goes out
// or it commits (at most popupURLWait, 10 to 100 times what a held popup's
// request takes; "" for one that navigates nowhere, window.open() with no
// URL, which the popup's report must not wait a second for: the click that
// opened it waits for that report at most 1 s): a held popup's target still names no URL,
// and what the tab reports and the navigation policy checks is that one.
func (t *Page) RunPopup(ctx context.Context) string {
	t.evMu.Lock()
	seq := t.navSeq
	t.evMu.Unlock()
	// The page it shows: a popup not held has committed its first page
	// already, most often (Page.getFrameTree).
	var shown string
	if ft, err := cdp.Call(ctx, t.target, page.GetFrameTree, cdp.Empty{}); err == nil && ft.FrameTree != nil && ft.FrameTree.Frame != nil {
		shown = ft.FrameTree.Frame.URL
	}
	if _, err := cdp.Call(ctx, t.target, runtime.RunIfWaitingForDebugger, cdp.Empty{}); err != nil {
		t.env.Log.Debug("run popup", "tab", t.name, "err", err)
		return ""
	}
	if shown != "" && shown != "about:blank" {
		return shown
	}
	var u string
	t.waitState(ctx, popupURLWait, false, func() (bool, bool) {
		switch {
		case t.navSeq != seq && t.url != "" && t.url != "about:blank":
			u = t.url
		case len(t.docReqAt) > 0:
			var first time.Time
			for _, r := range t.docReqAt {
				if u == "" || r.at.Before(first) {
					u, first = r.url, r.at
				}
			}
		}
		return u != "", true
	})
	return u
}

// childNav is a child frame's navigation requested: where it goes, and
// frameReq once it was counted.
type childNav struct {
	url string
	req int
}

// docRequest is when a top-level document was first requested, and its
// URL then.
type docRequest struct {
	at  time.Time
	url string
}

// NavState is what the page's event state says of its top document:
// whether it is loading (committed and not loaded, or a navigation is
// requested) while no dialog holds it, and the count of top-level
// navigations (NavSeq).
func (t *Page) NavState() (loading bool, seq int) {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return (t.loading || t.navPending) && t.dialog == nil, t.navSeq
}

// RouteMoved reports whether the top document navigated within itself
// (Page.navigatedWithinDocument) since m.
func (t *Page) RouteMoved(m NavMark) bool {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.routeSeq != m.Route
}

// DocOutcome returns the top document's URL, the last failed top-level
// document request ("URL: net::ERR_…", or "") and the HTTP status of the
// committed document (0 when unknown).
func (t *Page) DocOutcome() (url, fail string, status int64) {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.url, t.navFail, t.docStatus[t.st.doc]
}

// InFlight returns the set of the page's requests in flight.
func (t *Page) InFlight() map[network.RequestID]Request {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return maps.Clone(t.inflight)
}

// CrossDocPending reports whether a cross-document navigation of the top
// frame has started and neither committed nor stopped, and returns the
// channel closed when that changes.
func (t *Page) CrossDocPending() (bool, <-chan struct{}) {
	t.ob.mu.Lock()
	defer t.ob.mu.Unlock()
	return t.ob.navPending, t.ob.navSignal
}

// TopWorld returns the walker's world of the top-level document, when it
// is the page's own session's, still known, and the world of the document
// the top frame has now: the one before a navigation is not.
func (t *Page) TopWorld() (WorldKey, World, bool) {
	t.evMu.Lock()
	doc := t.st.doc
	t.evMu.Unlock()
	t.ob.mu.Lock()
	k := t.ob.topWorld
	w, ok := t.ob.worlds[k]
	t.ob.mu.Unlock()
	return k, w, ok && k.Session == t.target.SessionID && (doc == "" || k.Loader == doc)
}

// Looping reports whether the page keeps sending itself on: at least
// loopCommits top-level documents committed within the last loopWindow
// (a refresh loop holds every call while each of its pages loads), and
// where it is going now.
func (t *Page) Looping() (bool, string) {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	n := 0
	for _, c := range t.commits {
		if !c.IsZero() && time.Since(c) < loopWindow {
			n++
		}
	}
	u := t.url
	if t.navPending {
		u = t.navURL
	}
	return n >= loopCommits, u
}

// A page is looping with loopCommits commits within loopWindow.
const (
	loopCommits = 8
	loopWindow  = 2 * time.Second
)

// Name returns the tab name the page is registered under.
func (t *Page) Name() string { return t.name }

// Context returns the chromedp context of the page's target: it ends when
// the target is closed or detached.
func (t *Page) Context() context.Context { return t.ctx }

// DialogPolicy returns how the page answers JavaScript dialogs on its
// own: "accept", "dismiss", or "" (left to the caller).
func (t *Page) DialogPolicy() string { return t.dialogs }
