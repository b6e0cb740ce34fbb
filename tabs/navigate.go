package tabs

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/tabpilot/tabpilot/errcode"
)

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
	if !pageSchemes[strings.ToLower(u.Scheme)] {
		// Chromium hands such a URL to the system's protocol handler,
		// and the tab then gets no input event again until it is closed.
		return Errorf(errcode.BadRequest, "invalid URL %q: Chromium shows no page for %s: URLs (it hands them to another program); give an http, https, file, data or about URL", trim(raw, 80), strings.ToLower(u.Scheme))
	}
	return nil
}

// pageSchemes are the URL schemes Chromium navigates to itself; any other
// (mailto:, ftp:, a custom app's scheme) goes to an external protocol
// handler.
var pageSchemes = map[string]bool{
	"http": true, "https": true, "file": true, "data": true, "about": true, "blob": true,
	"chrome": true, "chrome-untrusted": true, "chrome-extension": true, "devtools": true, "view-source": true,
}

// Goto navigates the tab (Page.navigate) and waits per waitUntil: settled
// (the default: the load event, then the first 100 ms in which no fetch,
// XHR or frame document is in flight and neither a request nor the DOM
// changed, at most 500 ms past load; see awaitSettled), load,
// domcontentloaded, networkidle0 or networkidle2 (Page.lifecycleEvent
// networkIdle / networkAlmostIdle, capped at NetworkIdleMax past load).
// Errors: bad_request, navigation_failed (net::ERR_… or an HTTP error page
// is not an error), timeout when the document has not loaded in time.
func (t *Page) Goto(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
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
func (t *Page) navigate(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
	g := t.env.guard
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

func (t *Page) navigateRaw(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
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
				t.env.log.Debug("loaded", "tab", t.name, "url", trim(rawURL, 120), "navigate", committed.Sub(start), "load", loadedAt.Sub(start))
				if want == "networkIdle" || want == "networkAlmostIdle" {
					idleTimer = time.After(t.env.networkIdleMax)
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
			out.Notes = append(out.Notes, t.pendingNote(t.env.networkIdleMax, ""))
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
				out.Notes = append(out.Notes, t.pendingNote(waited, fmt.Sprintf("the timeout ended the wait, before its %v cap", t.env.networkIdleMax)))
				return out, nil
			}
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("navigate to %s: the document did not load within the timeout", rawURL), Err: ctx.Err()}
		}
	}
}

// pendingNote names the requests still in flight when a network-idle wait
// gave up, waited past load; why, when set, says what ended the wait
// (else the cap, Options.NetworkIdleMax).
func (t *Page) pendingNote(waited time.Duration, why string) string {
	n, list := t.pendingRequests()
	if why == "" {
		why = "the cap on the wait"
	}
	if n == 0 {
		return fmt.Sprintf("network not idle after %v past load (%s); returned the loaded page", waited, why)
	}
	return fmt.Sprintf("network not idle after %v past load (%s; %d pending: %s); returned the loaded page", waited, why, n, list)
}

// pendingNavigation is the URL of a top-level navigation that was
// requested and has neither committed nor stopped, or "".
func (t *Page) pendingNavigation() string {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if !t.navPending {
		return ""
	}
	return t.navURL
}

// navMark is where an action starts: the counts of top-level navigations
// committed and requested. ordered is set by an action whose last call
// after its input went to the top page's session (Click's check): its
// reply came after the events the renderer sent before it, and navigated
// needs no barrier of its own.
type navMark struct {
	seq, req, route int
	ordered         bool
}

func (t *Page) navMark() navMark {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return navMark{seq: t.navSeq, req: t.navReq, route: t.routeSeq}
}

// heldByNavigation returns a context of ctx that ends navCommitWait after
// a top-level navigation is requested since m, if it has not committed by
// then, and its cancel. While such a navigation is pending Chromium holds
// every call to the page; the request's event (Page.frameRequestedNavigation)
// travels on another pipe than the reply to the input event that caused
// it, so it can arrive after that reply, and the wait for it goes on while
// the call runs.
func (t *Page) heldByNavigation(ctx context.Context, m navMark) (context.Context, context.CancelFunc) {
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
func (t *Page) navigated(ctx context.Context, m navMark) bool {
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
// yet and m is not ordered already. The reply to an input event (Input.dispatchMouseEvent,
// dispatchKeyEvent) comes on the renderer's input pipe, and the
// Page.frameRequestedNavigation the event caused on its DevTools pipe,
// so the reply can come first. One call on the DevTools pipe (a
// Runtime.evaluate of "0", answered in order after the events the
// renderer sent before it; chromedp runs a session's listeners and
// replies in the order they arrive) puts them in order, as Playwright's
// inputActionEpilogue does. It is bounded by the tab's life, a dialog
// (which blocks evaluation), a navigation that holds the call
// (heldByNavigation) and barrierWait.
func (t *Page) eventBarrier(ctx context.Context, m navMark) {
	t.evMu.Lock()
	seen := m.ordered || t.navSeq != m.seq || t.navReq != m.req || t.dialog != nil
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
		return
	}
	t.evMu.Lock()
	routed := t.routeSeq != m.route
	t.evMu.Unlock()
	if routed {
		// A route change of a single-page app (history.pushState, then
		// the fetch that renders the new view), or a jump to a fragment:
		// the same document, so the numbers stand, but what it shows is
		// waited for as after a load.
		if note := t.awaitRouteSettled(ctx); note != "" {
			res.Note = note
		}
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
