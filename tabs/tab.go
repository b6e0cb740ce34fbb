package tabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// Dialog is a JavaScript dialog (alert, confirm, prompt, beforeunload)
// reported by Page.javascriptDialogOpening.
type Dialog struct {
	Type         string `json:"type"`
	Message      string `json:"message"`
	DefaultValue string `json:"defaultValue,omitempty"`
	// Handled says how the tab's policy handled it: "accepted",
	// "dismissed", or "" while it is pending.
	Handled string `json:"handled,omitempty"`
}

// Article is the dialog's type with its indefinite article, for messages:
// "an alert", "a confirm", "a prompt", "a beforeunload".
func (d *Dialog) Article() string {
	if d.Type != "" && strings.ContainsRune("aeiou", rune(d.Type[0])) {
		return "an " + d.Type
	}
	return "a " + d.Type
}

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

// start creates the tab's browser (via the registry) and page target, and
// installs the listener, stealth patches and viewport. On a connected or
// spawned browser it attaches to an existing page (o.App.Target, or the
// default rules of browser.PickPage) and never closes it: closing only
// detaches.
func (t *Tab) start(ctx context.Context, o *OpenOptions) error {
	var args []string
	if o.App != nil {
		args = o.App.Args
	}
	t0 := time.Now()
	h, err := t.sup.reg.Acquire(ctx, t.key, args...)
	if err != nil {
		return err
	}
	t.setHandle(h)
	tBrowser := time.Now()
	var tctx context.Context
	var cancel context.CancelFunc
	if t.key.Kind == browser.Headless {
		tctx, cancel, err = h.NewTab(ctx)
	} else {
		tctx, cancel, err = t.attachPage(ctx, h, o)
	}
	if err != nil {
		return cdpErr("create tab", err)
	}
	t.ctx, t.cancel = tctx, cancel
	t.target = chromedp.FromContext(tctx).Target
	t.evMu.Lock()
	t.targetID = t.target.TargetID
	t.evMu.Unlock()
	if err := chromedp.Listen(tctx, t.onEvent); err != nil {
		return cdpErr("listen", err)
	}
	t.watchDetach()
	tTarget := time.Now()
	if err := t.installHooks(ctx); err != nil {
		return err
	}
	if err := t.installSettle(ctx); err != nil {
		return err
	}
	tHooks := time.Now()
	if len(o.StorageState) > 0 {
		if err := t.SetStorageState(ctx, o.StorageState); err != nil {
			return err
		}
	}
	t.sup.wg.Go(t.dialogLoop)
	if t.stealthy() {
		if err := installStealth(ctx, t); err != nil {
			return cdpErr("install stealth", err)
		}
	}
	t.sup.log.Debug("tab started", "tab", t.name, "browser", tBrowser.Sub(t0), "target", tTarget.Sub(tBrowser),
		"hooks", tHooks.Sub(tTarget), "stealth", time.Since(tHooks))
	if t.borrowed {
		t.settleBorrowed(ctx, 5*time.Second)
	}
	if t.borrowed && o.Viewport == nil {
		// Leave a page we did not open as it is; report its size.
		var info pageInfo
		if err := t.evalJSON(ctx, pageInfoJS, &info); err == nil {
			t.mu.Lock()
			t.viewport = Viewport{Width: int(info.VW), Height: int(info.VH), Scale: 1}
			t.mu.Unlock()
		}
		return nil
	}
	vp := t.sup.opts.Viewport
	if o.Viewport != nil {
		vp = *o.Viewport
	}
	return t.setViewport(ctx, vp)
}

// attachPage attaches to the page of a connected or spawned browser that
// o selects, skipping pages other tabs hold. With no page at all and no
// app.target, or on a connected browser with a URL and no app.target, it
// opens a new tab that it owns. The page is probed first
// (browser.ProbePage): one a JavaScript dialog holds is not_actionable at
// once, where the attach would hang until the open's timeout.
func (t *Tab) attachPage(ctx context.Context, h *browser.Handle, o *OpenOptions) (context.Context, context.CancelFunc, error) {
	pages, err := h.Pages(ctx)
	if err != nil {
		return nil, nil, &Error{Code: errcode.NotAlive, Msg: "list pages: " + err.Error(), Err: err}
	}
	want := ""
	if o.App != nil {
		want = o.App.Target
	}
	if want == "" && (len(pages) == 0 || (o.URL != "" && t.key.Kind == browser.Connected)) {
		// An open with a URL never navigates a page of the user's: it
		// opens one of its own.
		return h.NewTab(ctx)
	}
	p, err := browser.PickPage(pages, want, t.sup.heldTargets(h))
	if err != nil {
		return nil, nil, err
	}
	if err := h.ProbePage(ctx, p.ID, attachProbeWait); err != nil {
		return nil, nil, heldErr(p, err)
	}
	t.borrowed = true
	return h.NewTab(ctx, chromedp.WithTargetID(p.ID), chromedp.WithDetachOnCancel())
}

// attachProbeWait bounds how long a page of a connected or spawned browser
// has to answer the probe before tabpilot attaches to it.
const attachProbeWait = 2 * time.Second

// heldErr is the error of an attach to page p that the probe refused.
func heldErr(p browser.Page, err error) error {
	var he *browser.HeldError
	if !errors.As(err, &he) {
		return err
	}
	page := fmt.Sprintf("page %q (%s, target %s)", p.Title, p.URL, p.ID)
	hint := "Answer the dialog in the browser window (or wait for the page's script), then open the tab again; or pick another page: tabpilot tabs lists the browser's pages with their target ids, and tabpilot open --cdp-url URL --target ID attaches to one."
	if he.Dialog != nil {
		d := &Dialog{Type: he.Dialog.Type, Message: he.Dialog.Message}
		return &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("%s is blocked by %s dialog (%q): it answers nothing until the dialog is closed", page, d.Article(), d.Message), Hint: hint, Err: err}
	}
	return &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("%s is blocked: it did not answer within %v, which is what a JavaScript dialog (alert, confirm, prompt) open on it does (or a script that never yields); tabpilot did not attach to it", page, he.Wait), Hint: hint, Err: err}
}

// settleBorrowed waits, at most limit, for a page we attached to in the
// middle of a navigation (its target URL, from Target.getTargetInfo, is not
// yet the document's location, or document.readyState is not "complete"),
// so that open reports the page a person sees rather than the initial
// about:blank. A page that never finishes loading is left as it is.
func (t *Tab) settleBorrowed(ctx context.Context, limit time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		info, err := cdp.Call(ctx, chromedp.FromContext(t.ctx).Browser, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.targetID})
		var st struct{ Href, State string }
		if err == nil && t.PendingDialog() == nil {
			err = t.evalJSON(ctx, `({Href: location.href, State: document.readyState})`, &st)
		}
		if err != nil || (st.State == "complete" && info.TargetInfo != nil && info.TargetInfo.URL == st.Href) {
			return
		}
		if !sleepCtx(ctx, 50*time.Millisecond) {
			return
		}
	}
}

// stealthy reports whether the tab has the stealth patches.
func (t *Tab) stealthy() bool {
	return t.key.Kind == browser.Headless && !t.sup.opts.NoStealth
}

// setViewport applies a viewport with Emulation.setDeviceMetricsOverride.
func (t *Tab) setViewport(ctx context.Context, vp Viewport) error {
	if vp.Scale <= 0 {
		vp.Scale = 1
	}
	_, err := cdp.Call(ctx, t.target, emulation.SetDeviceMetricsOverride, t.metrics(vp))
	if err != nil {
		return cdpErr("set viewport", err)
	}
	t.mu.Lock()
	t.viewport = vp
	t.mu.Unlock()
	return nil
}

// onEvent runs in chromedp's read loop for the tab: it must return fast and
// never call CDP. It records state; work is handed to goroutines.
func (t *Tab) onEvent(ev any) {
	switch ev.(type) {
	case *page.EventFrameNavigated, *page.EventFrameDetached, *page.EventLifecycleEvent, *network.EventRequestWillBeSent,
		*network.EventLoadingFinished, *network.EventLoadingFailed, *runtime.EventBindingCalled:
		t.evMu.Lock()
		t.onSettleEventLocked(ev)
		t.evMu.Unlock()
	}
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		t.evMu.Lock()
		t.dialog = &Dialog{Type: string(ev.Type), Message: ev.Message, DefaultValue: ev.DefaultPrompt}
		t.unloadAsk = ev.Type == page.DialogTypeBeforeunload && ev.FrameID == cdp.FrameID(t.targetID)
		close(t.dialogSig)
		t.dialogSig = make(chan struct{})
		t.evMu.Unlock()
		if t.dialogs != "" {
			select {
			case t.dialogQ <- struct{}{}:
			default:
			}
		}
	case *page.EventJavascriptDialogClosed:
		t.evMu.Lock()
		t.dialog = nil
		// A dismissed beforeunload cancels the navigation it held, and
		// Chromium sends no Page.frameStoppedLoading for it: the page
		// stays as it is, not navigating.
		if t.unloadAsk && !ev.Result {
			t.navPending = false
		}
		t.unloadAsk = false
		t.evMu.Unlock()
	case *page.EventFrameNavigated:
		if ev.Frame.ParentID == "" {
			t.evMu.Lock()
			t.url = ev.Frame.URL + ev.Frame.URLFragment
			t.title = "" // the new document's is read on demand
			// A document back from the back/forward cache has loaded: it
			// fires no load event again.
			restored := ev.Type == page.NavigationTypeBackForwardCacheRestore
			t.loading = !restored
			t.dclPending = !restored
			t.navPending = false
			t.navSeq++
			// The old page's requests that were in flight end with it,
			// and Chromium does not always say so (no loadingFailed for a
			// document that went away): only the new document's own
			// request is the page's now.
			for id, r := range t.inflight {
				if r.loader != ev.Frame.LoaderID {
					delete(t.inflight, id)
				}
			}
			t.evMu.Unlock()
			if restored {
				// Its remote objects did not come back with it.
				t.ob.mu.Lock()
				clear(t.ob.worlds)
				clear(t.ob.clickables)
				t.ob.mu.Unlock()
			}
			t.mu.Lock()
			t.num.Reset()
			t.lastObs = nil
			t.mu.Unlock()
		}
	case *page.EventFrameRequestedNavigation:
		// Emitted by the renderer as it starts the navigation, so before
		// the reply to any later command on the session: an action can
		// tell that it started one before the new document commits.
		if ev.FrameID == cdp.FrameID(t.targetID) && ev.Disposition == page.ClientNavigationDispositionCurrentTab {
			t.evMu.Lock()
			t.navReq++
			t.navPending = true
			t.navURL = ev.URL
			t.st.wakeLocked()
			t.evMu.Unlock()
		}
	case *page.EventFrameStartedNavigating:
		// Emitted by the browser for every navigation, those it starts
		// itself (Page.navigate, a reload) too.
		switch ev.NavigationType {
		case page.FrameStartedNavigatingNavigationTypeSameDocument, page.FrameStartedNavigatingNavigationTypeHistorySameDocument:
		default:
			if ev.FrameID == cdp.FrameID(t.targetID) {
				t.evMu.Lock()
				t.navReq++
				t.navPending = true
				t.navURL = ev.URL
				t.st.wakeLocked()
				t.evMu.Unlock()
			}
		}
	case *page.EventFrameStoppedLoading:
		// A requested navigation that never commits (a 204, a download,
		// one the page cancelled) ends here.
		if ev.FrameID == cdp.FrameID(t.targetID) {
			t.evMu.Lock()
			t.navPending = false
			t.st.wakeLocked()
			t.evMu.Unlock()
		}
	case *page.EventLoadEventFired:
		t.evMu.Lock()
		t.loading = false
		t.dclPending = false
		t.evMu.Unlock()
	case *page.EventDomContentEventFired:
		t.evMu.Lock()
		t.dclPending = false
		t.evMu.Unlock()
	case *page.EventNavigatedWithinDocument:
		t.evMu.Lock()
		t.url = ev.URL
		if ev.FrameID == cdp.FrameID(t.targetID) {
			t.navPending = false
			t.st.wakeLocked()
		}
		t.evMu.Unlock()
	case *inspector.EventTargetCrashed:
		t.sup.crashes.Add(1)
		t.evMu.Lock()
		t.markDeadLocked("the page's renderer crashed")
		t.evMu.Unlock()
	case *inspector.EventDetached:
		t.evMu.Lock()
		t.markDeadLocked("detached: " + ev.Reason)
		t.evMu.Unlock()
	case *network.EventRequestWillBeSent:
		t.evMu.Lock()
		if len(t.inflight) < 10000 {
			t.inflight[ev.RequestID] = inflightReq{ev.Request.URL, ev.LoaderID, ev.FrameID}
		}
		t.evMu.Unlock()
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == cdp.FrameID(t.targetID) && ev.Response != nil {
			t.evMu.Lock()
			if t.docStatus == nil || len(t.docStatus) > 16 {
				t.docStatus = map[cdp.LoaderID]int64{}
			}
			t.docStatus[ev.LoaderID] = ev.Response.Status
			t.evMu.Unlock()
		}
	case *network.EventLoadingFinished:
		t.evMu.Lock()
		delete(t.inflight, ev.RequestID)
		t.evMu.Unlock()
	case *network.EventLoadingFailed:
		t.evMu.Lock()
		if r, ok := t.inflight[ev.RequestID]; ok && ev.Type == network.ResourceTypeDocument && r.frame == cdp.FrameID(t.targetID) {
			t.navFail = r.url + ": " + ev.ErrorText
		}
		delete(t.inflight, ev.RequestID)
		t.evMu.Unlock()
	}
}

// dialogLoop applies the tab's dialog policy (Page.handleJavaScriptDialog)
// outside the event loop.
func (t *Tab) dialogLoop() {
	for {
		select {
		case <-t.deadSig:
			return
		case <-t.dialogQ:
		}
		t.evMu.Lock()
		d := t.dialog
		t.evMu.Unlock()
		if d == nil {
			continue
		}
		accept := t.dialogs == "accept"
		ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
		_, err := cdp.Call(ctx, t.target, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept, PromptText: d.DefaultValue})
		cancel()
		if err != nil {
			t.sup.log.Warn("handle dialog", "tab", t.name, "err", err)
			continue
		}
		h := *d
		h.Handled = map[bool]string{true: "accepted", false: "dismissed"}[accept]
		t.evMu.Lock()
		if t.dialog == d {
			t.dialog = nil
		}
		t.handled = append(t.handled, h)
		t.evMu.Unlock()
	}
}

// PendingDialog returns the dialog waiting for the script, or nil.
func (t *Tab) PendingDialog() *Dialog {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if t.dialog == nil {
		return nil
	}
	d := *t.dialog
	return &d
}

// HandledDialogs returns and forgets the dialogs the policy handled.
func (t *Tab) HandledDialogs() []Dialog {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	h := t.handled
	t.handled = nil
	return h
}

// HandleDialog accepts or dismisses the pending dialog
// (Page.handleJavaScriptDialog); promptText answers a prompt. Errors:
// bad_request when no dialog is pending.
func (t *Tab) HandleDialog(ctx context.Context, accept bool, promptText *string) error {
	d := t.PendingDialog()
	if d == nil {
		return &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("no dialog is open on tab %q", t.name),
			Hint: "Answer a dialog only while one is open: tab.dialog() returns it, or null; an action that opens one returns it in its result (dialog)."}
	}
	p := page.HandleJavaScriptDialogParams{Accept: accept}
	if promptText != nil {
		p.PromptText = *promptText
	} else if accept {
		p.PromptText = d.DefaultValue
	}
	if _, err := cdp.Call(ctx, t.target, page.HandleJavaScriptDialog, p); err != nil {
		return cdpErr("handle dialog", err)
	}
	t.evMu.Lock()
	t.dialog = nil
	t.evMu.Unlock()
	return nil
}

func (t *Tab) dialogSignal() <-chan struct{} {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.dialogSig
}

// errDialogPending is returned by blocking when a dialog opened and no
// policy handles it; the action's effect happened, and the dialog waits.
type dialogPendingError struct{ d *Dialog }

func (e *dialogPendingError) Error() string {
	return fmt.Sprintf("%s dialog is open: %q", e.d.Article(), e.d.Message)
}

// blocking runs a CDP call that a JavaScript dialog can block (input
// events, evaluation, navigation). If a dialog opens while it waits and the
// tab has no dialog policy, it returns at once with *dialogPendingError;
// the call finishes when the dialog is handled.
func (t *Tab) blocking(ctx context.Context, fn func(ctx context.Context) error) error {
	if d := t.PendingDialog(); d != nil && t.dialogs == "" {
		return &dialogPendingError{d}
	}
	sig := t.dialogSignal()
	errc := make(chan error, 1)
	go func() { errc <- fn(ctx) }()
	for {
		select {
		case err := <-errc:
			return err
		case <-sig:
			if t.dialogs != "" {
				sig = t.dialogSignal() // the policy handles it; keep waiting
				continue
			}
			if d := t.PendingDialog(); d != nil {
				return &dialogPendingError{d}
			}
			sig = t.dialogSignal()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NavResult is the outcome of a navigation.
type NavResult struct {
	URL    string
	Notes  []string
	Dialog *Dialog
	// Status is the HTTP status of the document's response
	// (Network.responseReceived), 0 when there was none (a same-document
	// navigation, a file: URL).
	Status int64
}

// checkURL refuses URLs that cannot be navigated to.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return Errorf(errcode.BadRequest, "invalid URL %q: give an absolute URL such as https://example.com/", raw)
	}
	if strings.EqualFold(u.Scheme, "javascript") {
		// Page.navigate would run it in the current page.
		return Errorf(errcode.BadRequest, "invalid URL %q: a javascript: URL is code, not a page; use tab.evaluate", trim(raw, 80))
	}
	return nil
}

// Goto navigates the tab (Page.navigate) and waits per waitUntil: settled
// (the default: the load event, then the first 100 ms in which no fetch,
// XHR or frame document is in flight and neither a request nor the DOM
// changed, at most 500 ms past load; see awaitSettled), load,
// domcontentloaded, networkidle0 or networkidle2 (Page.lifecycleEvent
// networkIdle / networkAlmostIdle, capped at NetworkIdleMax past load).
// Errors: bad_request, navigation_failed (net::ERR_… or an HTTP error page
// is not an error), timeout when the document has not loaded in time.
func (t *Tab) Goto(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
	if err := checkURL(rawURL); err != nil {
		return nil, err
	}
	switch waitUntil {
	case "":
		waitUntil = "settled"
	case "settled", "load", "domcontentloaded", "networkidle0", "networkidle2":
	default:
		return nil, Errorf(errcode.BadRequest, "invalid waitUntil %q: use "+waitUntilList, waitUntil)
	}
	return t.navigate(ctx, rawURL, waitUntil)
}

// waitUntilList names the waits of open and goto, for errors.
const waitUntilList = "settled (the default), load, domcontentloaded, networkidle0 or networkidle2"

// navigate vets the URL with the supervisor's Guard (when set), navigates,
// and reports a refusal of the navigation or of its redirects as the error.
func (t *Tab) navigate(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
	g := t.sup.opts.Guard
	if g == nil {
		return t.navigateRaw(ctx, rawURL, waitUntil)
	}
	if err := g.CheckURL(ctx, rawURL); err != nil {
		return nil, err
	}
	mark := g.Mark()
	res, err := t.navigateRaw(ctx, rawURL, waitUntil)
	if rerr := g.Refused(rawURL, mark); rerr != nil {
		return nil, rerr
	}
	return res, err
}

func (t *Tab) navigateRaw(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
	// A dialog already open blocks the navigation; one the navigation
	// opens (beforeunload, an alert at load) is returned with the result.
	if err := t.dialogBlock(); err != nil {
		return nil, err
	}
	subCtx, cancelSub := context.WithCancel(ctx)
	defer cancelSub()
	events := cdp.Events(subCtx, t.target, page.LifecycleEvent)

	var res page.NavigateResult
	start := time.Now()
	err := t.blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.target, page.Navigate, page.NavigateParams{URL: rawURL})
		return err
	})
	committed := time.Now()
	var dpe *dialogPendingError
	switch {
	case asDialog(err, &dpe):
		return &NavResult{URL: rawURL, Dialog: dpe.d}, nil
	case err != nil && ctx.Err() != nil:
		return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("navigate to %s: no response within the timeout", rawURL), Err: ctx.Err()}
	case err != nil:
		return nil, &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("navigate to %s: %v", rawURL, err), Err: err}
	case res.ErrorText != "":
		return nil, &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("navigate to %s: %s", rawURL, res.ErrorText)}
	}
	out := &NavResult{URL: rawURL}
	if res.LoaderID == "" {
		return out, nil // same-document navigation
	}
	defer func() {
		t.evMu.Lock()
		out.Status = t.docStatus[res.LoaderID]
		t.evMu.Unlock()
	}()
	want := map[string]string{"settled": "load", "load": "load", "domcontentloaded": "DOMContentLoaded",
		"networkidle0": "networkIdle", "networkidle2": "networkAlmostIdle"}[waitUntil]
	loaded := false
	var loadedAt time.Time
	var idleTimer <-chan time.Time
	sig := t.dialogSignal()
	evc := make(chan page.EventLifecycleEvent)
	errc := make(chan error, 1)
	go func() {
		for ev, err := range events {
			if err != nil {
				errc <- err
				return
			}
			select {
			case evc <- ev:
			case <-subCtx.Done():
				return
			}
		}
		errc <- nil
	}()
	for {
		select {
		case ev := <-evc:
			if ev.FrameID != res.FrameID || ev.LoaderID != res.LoaderID {
				continue
			}
			if ev.Name == "load" && !loaded {
				loaded, loadedAt = true, time.Now()
				t.sup.log.Debug("loaded", "tab", t.name, "url", trim(rawURL, 120), "navigate", committed.Sub(start), "load", loadedAt.Sub(start))
				if want == "networkIdle" || want == "networkAlmostIdle" {
					idleTimer = time.After(t.sup.opts.NetworkIdleMax)
				}
			}
			if ev.Name == "load" && waitUntil == "settled" {
				if note := t.awaitSettled(ctx, navLoadWait); note != "" {
					out.Notes = append(out.Notes, note)
				}
				if d := t.PendingDialog(); d != nil && t.dialogs == "" {
					out.Dialog = d
				}
				return out, nil
			}
			if ev.Name == want || (want == "DOMContentLoaded" && ev.Name == "load") {
				return out, nil
			}
		case <-idleTimer:
			out.Notes = append(out.Notes, t.pendingNote(t.sup.opts.NetworkIdleMax, ""))
			return out, nil
		case <-sig:
			if d := t.PendingDialog(); d != nil && t.dialogs == "" {
				out.Dialog = d
				return out, nil
			}
			sig = t.dialogSignal()
		case <-t.deadSig:
			return nil, &Error{Code: errcode.NotAlive, Msg: "navigate: the tab died: " + t.DeadReason(), Err: ErrNotAlive}
		case err := <-errc:
			if loaded {
				return out, nil
			}
			if ctx.Err() != nil {
				return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("navigate to %s: the document did not load within the timeout", rawURL), Err: ctx.Err()}
			}
			return nil, cdpErr("navigate", err)
		case <-ctx.Done():
			if loaded {
				// The navigation's own timeout ended the wait before the
				// cap: say how long it really waited.
				waited := time.Since(loadedAt).Round(100 * time.Millisecond)
				out.Notes = append(out.Notes, t.pendingNote(waited, fmt.Sprintf("the timeout ended the wait, before its %v cap", t.sup.opts.NetworkIdleMax)))
				return out, nil
			}
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("navigate to %s: the document did not load within the timeout", rawURL), Err: ctx.Err()}
		}
	}
}

// pendingNote names the requests still in flight when a network-idle wait
// gave up, waited past load; why, when set, says what ended the wait
// (else the cap, Options.NetworkIdleMax).
func (t *Tab) pendingNote(waited time.Duration, why string) string {
	n, list := t.pendingRequests()
	if why == "" {
		why = "the cap on the wait"
	}
	if n == 0 {
		return fmt.Sprintf("network not idle after %v past load (%s); returned the loaded page", waited, why)
	}
	return fmt.Sprintf("network not idle after %v past load (%s; %d pending: %s); returned the loaded page", waited, why, n, list)
}

// inflightReq is a request of the page in flight: its URL and the loader
// of the document that made it (Network.requestWillBeSent loaderId).
type inflightReq struct {
	url    string
	loader cdp.LoaderID
	frame  cdp.FrameID
}

// pendingRequests returns the number of the page's requests in flight
// (Network.requestWillBeSent without loadingFinished or loadingFailed) and
// the first 5 of their URLs, sorted, each cut at 120 bytes, joined.
func (t *Tab) pendingRequests() (int, string) {
	t.evMu.Lock()
	urls := make([]string, 0, len(t.inflight))
	for _, r := range t.inflight {
		urls = append(urls, r.url)
	}
	t.evMu.Unlock()
	sort.Strings(urls)
	n := len(urls)
	if len(urls) > 5 {
		urls = urls[:5]
	}
	for i, u := range urls {
		if len(u) > 120 {
			urls[i] = u[:117] + "..."
		}
	}
	return n, strings.Join(urls, ", ")
}

// URL returns the tab's current URL (history API changes included).
func (t *Tab) URL(ctx context.Context) string {
	u, _ := t.urlTitle(ctx)
	return u
}

// Title returns the document title.
func (t *Tab) Title(ctx context.Context) string {
	_, title := t.urlTitle(ctx)
	return title
}

func (t *Tab) cachedURLTitle() (string, string) {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.url, t.title
}

// urlTitle reads location.href and document.title (Runtime.evaluate),
// falling back to the last known values when the page cannot answer.
func (t *Tab) urlTitle(ctx context.Context) (string, string) {
	if t.PendingDialog() == nil {
		var v struct{ U, T string }
		if err := t.evalJSON(ctx, `({U: location.href, T: document.title})`, &v); err == nil {
			t.evMu.Lock()
			t.url, t.title = v.U, v.T
			t.evMu.Unlock()
		}
	}
	return t.cachedURLTitle()
}

// evalJSON evaluates expr in the top frame (Runtime.evaluate, awaiting
// promises, by value) and decodes the result into out.
func (t *Tab) evalJSON(ctx context.Context, expr string, out any) error {
	var res runtime.EvaluateResult
	err := t.blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{
			Expression: expr, ReturnByValue: new(true), AwaitPromise: new(true), UserGesture: new(true),
		})
		return err
	})
	if err != nil {
		return evalErr(err)
	}
	if res.ExceptionDetails != nil {
		return &Error{Code: errcode.ScriptError, Msg: "page script error: " + exceptionText(res.ExceptionDetails)}
	}
	if out == nil || res.Result == nil {
		return nil
	}
	raw := res.Result.Value
	if len(raw) == 0 {
		raw = []byte("null")
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode evaluation result: %w", err)
	}
	return nil
}

func evalErr(err error) error {
	var dpe *dialogPendingError
	if asDialog(err, &dpe) {
		return dialogBlocked(dpe.d, "be acted on")
	}
	return cdpErr("evaluate", err)
}

// dialogHint says how to answer a pending JavaScript dialog.
const dialogHint = "Answer the dialog first: tab.acceptDialog(text?) or tab.dismissDialog() in a run (CLI: tabpilot dialog accept [TEXT], or dialog dismiss), or open the tab with a dialog policy (dialogs: accept or dismiss)."

// dialogBlocked is the not_actionable error of an action (what it could
// not do: "be acted on", "be observed") that a pending JavaScript dialog
// blocks.
func dialogBlocked(d *Dialog, doing string) *Error {
	return &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("%s dialog is open (%q), and the page cannot %s until it is answered", d.Article(), d.Message, doing), Hint: dialogHint}
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		s := d.Exception.Description
		if i := strings.Index(s, "\n    at "); i > 0 {
			s = s[:i]
		}
		return s
	}
	return d.Text
}

// probe reports whether the page answers a trivial evaluation within d.
func (t *Tab) probe(d time.Duration) bool {
	if !t.Alive() {
		return false
	}
	if t.PendingDialog() != nil {
		return true
	}
	// While a navigation is in flight, Chromium holds the commands for
	// the page until the new document commits: a slow server is not a
	// hung page.
	t.evMu.Lock()
	pending := t.navPending
	t.evMu.Unlock()
	if pending {
		return true
	}
	ctx, cancel := context.WithTimeout(t.ctx, d)
	defer cancel()
	_, err := cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{Expression: "1", ReturnByValue: new(true)})
	return err == nil
}

// pendingNavigation is the URL of a top-level navigation that was
// requested and has neither committed nor stopped, or "".
func (t *Tab) pendingNavigation() string {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if !t.navPending {
		return ""
	}
	return t.navURL
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

// lastURL is the top document's URL as the last Page.frameNavigated or
// navigatedWithinDocument gave it, without asking the page.
func (t *Tab) lastURL() string {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.url
}

// NavSeq returns the count of top-level navigations seen; screenshots and
// observations compare it to tell stale coordinates.
func (t *Tab) NavSeq() int {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.navSeq
}

// navMark is where an action starts: the counts of top-level navigations
// committed and requested.
type navMark struct{ seq, req int }

func (t *Tab) navMark() navMark {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return navMark{t.navSeq, t.navReq}
}

// heldByNavigation returns a context of ctx that ends navCommitWait after
// a top-level navigation is requested since m, if it has not committed by
// then, and its cancel. While such a navigation is pending Chromium holds
// every call to the page; the request's event (Page.frameRequestedNavigation)
// travels on another pipe than the reply to the input event that caused
// it, so it can arrive after that reply, and the wait for it goes on while
// the call runs.
func (t *Tab) heldByNavigation(ctx context.Context, m navMark) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		var limit <-chan time.Time
		for {
			t.evMu.Lock()
			requested := t.navReq != m.req
			pending := t.navPending
			changed := t.st.waitLocked()
			t.evMu.Unlock()
			if requested && limit == nil {
				if !pending {
					return // committed or ended: calls are not held
				}
				tm := time.NewTimer(navCommitWait)
				defer tm.Stop()
				limit = tm.C
			}
			select {
			case <-changed:
			case <-limit:
				cancel()
				return
			case <-cctx.Done():
				return
			}
		}
	}()
	return cctx, cancel
}

// navCommitWait bounds how long an action that requested a top-level
// navigation waits for the new document to commit.
const navCommitWait = 5 * time.Second

// navigated reports whether a top-level navigation started since m. When
// one was requested (Page.frameRequestedNavigation) but has not committed
// yet, it waits, at most navCommitWait and while ctx lives, for the commit
// (Page.frameNavigated) or for the navigation to end without one
// (Page.frameStoppedLoading, navigatedWithinDocument), so that what
// follows the action (an observation, a number) reads the new document,
// as Playwright's actions wait for the navigations they start. A
// navigation still in flight at the limit counts as started.
func (t *Tab) navigated(ctx context.Context, m navMark) bool {
	t.eventBarrier(ctx, m)
	limit := time.NewTimer(navCommitWait)
	defer limit.Stop()
	for {
		t.evMu.Lock()
		seq, req, pending, dialog := t.navSeq, t.navReq, t.navPending, t.dialog != nil
		changed, sig := t.st.waitLocked(), t.dialogSig
		t.evMu.Unlock()
		if seq != m.seq {
			return true
		}
		if req == m.req || !pending {
			return false
		}
		if dialog {
			return true
		}
		select {
		case <-changed:
		case <-sig:
		case <-limit.C:
			return true
		case <-t.deadSig:
			return true
		case <-ctx.Done():
			return true
		}
	}
}

// eventBarrier returns once the events the page's renderer sent before
// now have been handled, when none of a navigation since m has been seen
// yet. The reply to an input event (Input.dispatchMouseEvent,
// dispatchKeyEvent) comes on the renderer's input pipe, and the
// Page.frameRequestedNavigation the event caused on its DevTools pipe,
// so the reply can come first. One call on the DevTools pipe (a
// Runtime.evaluate of "0", answered in order after the events the
// renderer sent before it; chromedp runs a session's listeners and
// replies in the order they arrive) puts them in order, as Playwright's
// inputActionEpilogue does. It is bounded by the tab's life, a dialog
// (which blocks evaluation), a navigation that holds the call
// (heldByNavigation) and barrierWait.
func (t *Tab) eventBarrier(ctx context.Context, m navMark) {
	t.evMu.Lock()
	seen := t.navSeq != m.seq || t.navReq != m.req || t.dialog != nil
	sig := t.dialogSig
	t.evMu.Unlock()
	if seen {
		return
	}
	cctx, cancel := t.heldByNavigation(ctx, m)
	defer cancel()
	cctx, cancelWait := context.WithTimeout(cctx, barrierWait)
	defer cancelWait()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cdp.Call(cctx, t.target, runtime.Evaluate, runtime.EvaluateParams{Expression: "0", ReturnByValue: new(true)})
	}()
	select {
	case <-done:
	case <-sig:
	case <-t.deadSig:
	case <-cctx.Done():
	}
}

// barrierWait bounds eventBarrier's call: a renderer that does not answer
// in it is busy, and the navigation state is read as it is.
const barrierWait = time.Second

// noteNavigation sets res.Navigated when the action started a top-level
// navigation (navigated), and notes in res.Note one that has not
// committed yet: the page then holds every other call until its server
// answers, which the caller should know before its next call hangs.
func (t *Tab) noteNavigation(ctx context.Context, m navMark, res *ActionResult) {
	res.Navigated = t.navigated(ctx, m)
	if res.Navigated {
		t.settleNavigation(ctx, res)
	}
}

// settleNavigation waits, after an action that started a top-level
// navigation, as open's default wait does: when the new document has
// committed, for its load event (at most navLoadWait) and its settle
// (awaitSettled), so that the observation after a navigating click shows
// the new page; a navigation not committed yet is noted instead
// (notePending). What ran out is noted in res.Note.
func (t *Tab) settleNavigation(ctx context.Context, res *ActionResult) {
	if t.pendingNavigation() != "" {
		t.notePending(res)
		return
	}
	if note := t.awaitSettled(ctx, navLoadWait); note != "" {
		if res.Note != "" {
			note = res.Note + "; " + note
		}
		res.Note = note
	}
	// A navigation that failed commits Chromium's error page, and one the
	// server refused commits its answer: the action worked, the page it
	// led to did not, and the caller is told.
	t.evMu.Lock()
	u, fail, status := t.url, t.navFail, t.docStatus[t.st.doc]
	t.evMu.Unlock()
	note := ""
	switch {
	case strings.HasPrefix(u, "chrome-error:"):
		note = "the navigation failed (" + fail + "); the tab shows Chromium's error page"
	case status >= 400:
		note = fmt.Sprintf("the new page answered HTTP %d", status)
	}
	if note != "" {
		if res.Note != "" {
			note = res.Note + "; " + note
		}
		res.Note = note
	}
}

// notePending notes in res.Note a top-level navigation that has not
// committed yet.
func (t *Tab) notePending(res *ActionResult) {
	if u := t.pendingNavigation(); u != "" {
		note := fmt.Sprintf("the navigation to %s has not committed yet (its server has not answered); the page holds other calls until it does", u)
		if res.Note != "" {
			note = res.Note + "; " + note
		}
		res.Note = note
	}
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
