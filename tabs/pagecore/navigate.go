package pagecore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/msg"
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

// CheckURL refuses URLs that cannot be navigated to.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return Errorf(errcode.BadRequest, "invalid URL %q: give an absolute URL such as https://example.com/", raw)
	}
	if strings.EqualFold(u.Scheme, "javascript") {
		// Page.navigate would run it in the current page.
		return Errorf(errcode.BadRequest, "invalid URL %q: a javascript: URL is code, not a page; use tab.evaluate", msg.Trim(raw, 80))
	}
	if !pageSchemes[strings.ToLower(u.Scheme)] {
		// Chromium hands such a URL to the system's protocol handler,
		// and the tab then gets no input event again until it is closed.
		return Errorf(errcode.BadRequest, "invalid URL %q: Chromium shows no page for %s: URLs (it hands them to another program); give an http, https, file, data or about URL", msg.Trim(raw, 80), strings.ToLower(u.Scheme))
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
// (the default: the load event, then the first 50 ms in which no fetch,
// XHR or frame document is in flight and neither a request nor the DOM
// changed, at most 500 ms past load; see AwaitSettled), load,
// domcontentloaded, networkidle0 or networkidle2 (500 ms past load with at
// most 0 or 2 of the page's requests in flight, awaitNetIdle, capped at
// NetworkIdleMax past load).
// Errors: bad_request, navigation_failed (net::ERR_… or an HTTP error page
// is not an error), timeout when the document has not loaded in time.
func (t *Page) Goto(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
	if err := CheckURL(rawURL); err != nil {
		return nil, err
	}
	waitUntil, err := NormWaitUntil(waitUntil)
	if err != nil {
		return nil, err
	}
	return t.Navigate(ctx, rawURL, waitUntil)
}

// WaitUntilList names the waits of open and goto, for errors.
const WaitUntilList = "settled (the default), load, domcontentloaded, networkidle0 (or networkidle, as Playwright names it) or networkidle2"

// NormWaitUntil returns the wait of open and goto that w names: "" is
// settled, and networkidle (Playwright's name: no connection for 500 ms)
// is networkidle0. Errors: bad_request for any other name.
func NormWaitUntil(w string) (string, error) {
	switch w {
	case "":
		return "settled", nil
	case "networkidle":
		return "networkidle0", nil
	case "settled", "load", "domcontentloaded", "networkidle0", "networkidle2":
		return w, nil
	}
	return "", Errorf(errcode.BadRequest, "invalid wait %q (wait_until, or waitUntil in a run): use "+WaitUntilList, w)
}

// Navigate vets the URL with the supervisor's Guard (when set), navigates,
// and reports a refusal of the navigation or of its redirects as the error.
func (t *Page) Navigate(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
	g := t.env.Guard
	if g == nil {
		return t.navigateRaw(ctx, rawURL, waitUntil)
	}
	if err := g.CheckURL(ctx, rawURL); err != nil {
		return nil, err
	}
	mark, pm := g.Mark(), t.Mark()
	res, err := t.navigateRaw(ctx, rawURL, waitUntil)
	if bs := t.BlockedSince(pm); len(bs) > 0 {
		if err != nil || res == nil {
			for _, b := range bs {
				if !b.Frame && !b.Popup {
					// A redirect the guard refused: the page stayed as
					// it was.
					return nil, b.Err()
				}
			}
		} else {
			// The page loaded, then a frame, a script or a meta refresh
			// went where the policy refuses.
			res.Notes = append(res.Notes, BlockedNote(bs))
		}
	}
	if rerr := g.Refused(rawURL, mark); rerr != nil {
		return nil, rerr
	}
	return res, err
}

// ownNavHint ends the errors of an open that the previous page's own
// navigation took over.
const ownNavHint = "open it again; a page that keeps sending itself on (a refresh loop) takes the tab over each time: close the tab and open it anew"

func (t *Page) navigateRaw(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
	// A dialog already open blocks the navigation; one the navigation
	// opens (beforeunload, an alert at load) is returned with the result.
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	subCtx, cancelSub := context.WithCancel(ctx)
	defer cancelSub()
	// cdp.Events subscribes when it is called, before the navigation (so
	// no event is missed), and ends the subscription only when its
	// iterator returns: a return before the loop below starts (a failed
	// navigation, a same-document one) must run the iterator out, or the
	// subscription's goroutine stays for the tab's life.
	events := cdp.Events(subCtx, t.target, page.LifecycleEvent)
	// The document requests that fail: the navigation's own (its request
	// id is its loader id) when another navigation cancels it.
	failc := make(chan network.EventLoadingFailed, 16)
	go func() {
		for ev, err := range cdp.Events(subCtx, t.target, network.LoadingFailed) {
			if err != nil {
				return
			}
			if ev.Type != network.ResourceTypeDocument {
				continue
			}
			select {
			case failc <- ev:
			case <-subCtx.Done():
				return
			}
		}
	}()
	var iterating atomic.Bool
	defer func() {
		if !iterating.Load() {
			cancelSub()
			for range events {
				break
			}
		}
	}()

	var res page.NavigateResult
	start := time.Now()
	err := t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.target, page.Navigate, page.NavigateParams{URL: rawURL})
		return err
	})
	committed := time.Now()
	var dpe *DialogPendingError
	switch {
	case AsDialog(err, &dpe):
		return &NavResult{URL: rawURL, Dialog: dpe.Dialog}, nil
	case errors.Is(err, ErrNotAlive):
		return nil, &Error{Code: errcode.NotAlive, Msg: fmt.Sprintf("navigate to %s: the tab is gone (%s)", rawURL, t.DeadReason()), Err: ErrNotAlive}
	case err != nil && ctx.Err() != nil:
		return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("navigate to %s: no response within the timeout", rawURL), Err: ctx.Err()}
	case err != nil:
		return nil, &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("navigate to %s: %v", rawURL, err), Err: err}
	case res.ErrorText != "":
		msg := fmt.Sprintf("navigate to %s: %s", rawURL, res.ErrorText)
		if u := t.PendingNavigation(); strings.Contains(res.ErrorText, "ERR_ABORTED") && u != "" && u != rawURL {
			// The page that was there sent itself on (a timer, a
			// redirect loop) while this navigation started.
			msg += "; the page that was there started a navigation of its own, to " + u + ", which interrupted it; " + ownNavHint
		}
		return nil, &Error{Code: errcode.NavigationFailed, Msg: msg}
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
	redirects := 0        // client-side redirects followed before load
	first := res.LoaderID // the document navigated to, before any redirect of its own
	var foreign error     // the previous page's navigation committed before this one's (tookOver)
	ownCommitted := false // an event of the document navigated to (or of a redirect's) came
	var committedAt time.Time
	var loadedAt time.Time
	sig := t.dialogSignal()
	evc := make(chan page.EventLifecycleEvent)
	errc := make(chan error, 1)
	iterating.Store(true)
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
			if ev.FrameID != res.FrameID {
				continue
			}
			if ev.LoaderID != res.LoaderID {
				// A client-side redirect before load (location.href or
				// location.replace in an inline script, at
				// DOMContentLoaded, in a timer): the frame committed
				// another document, whose "init" comes first; the
				// first will never load. The wait follows it, as
				// Playwright's goto does. After load, the settle sees
				// such a navigation instead. Only once the document
				// navigated to has committed: before that, a document
				// that commits is the old page's own (a redirect loop
				// still running), not this navigation's.
				if ev.Name != "init" || loaded {
					continue
				}
				if err := t.tookOver(rawURL, ev.LoaderID, ownCommitted, committedAt); err != nil {
					if ownCommitted {
						return nil, err // the page asked for is gone
					}
					// The previous page's navigation was committing when
					// this one started: Chromium commits it first and this
					// one after it, unless it cancels this one. Wait for
					// this navigation's own document, or its end: an open
					// that returned now would leave its navigation to
					// commit over the next one's.
					foreign = err
					continue
				}
				res.LoaderID = ev.LoaderID
				redirects++
				if redirects > MaxClientRedirects {
					return nil, t.redirectLoop(rawURL, ev.LoaderID)
				}
				continue
			}
			if !ownCommitted {
				ownCommitted, committedAt = true, time.Now()
				foreign = nil
			}
			if ev.Name == "load" && !loaded {
				loaded, loadedAt = true, time.Now()
				t.env.Log.Debug("loaded", "tab", t.name, "url", msg.Trim(rawURL, 120), "navigate", committed.Sub(start), "load", loadedAt.Sub(start))
				if want == "networkIdle" || want == "networkAlmostIdle" {
					// Counted here, from the page's requests in flight:
					// Chromium's own networkIdle lifecycle event came
					// 0.5 to 1.5 s late on a page with nothing in flight.
					maxBusy := 0
					if want == "networkAlmostIdle" {
						maxBusy = 2
					}
					idle, err := t.awaitNetIdle(ctx, maxBusy, loadedAt.Add(t.env.NetworkIdleMax))
					switch {
					case err != nil:
						return nil, err
					case !idle && ctx.Err() != nil:
						waited := time.Since(loadedAt).Round(100 * time.Millisecond)
						out.Notes = append(out.Notes, t.pendingNote(waited, fmt.Sprintf("the timeout ended the wait, before its %v cap", t.env.NetworkIdleMax)))
					case !idle:
						out.Notes = append(out.Notes, t.pendingNote(t.env.NetworkIdleMax, ""))
					}
					if d := t.PendingDialog(); d != nil && t.dialogs == "" {
						out.Dialog = d
					}
					return t.onwardFailed(rawURL, first, out)
				}
			}
			if ev.Name == "load" && waitUntil == "settled" {
				if note := t.AwaitSettled(ctx, NavLoadWait); note != "" {
					out.Notes = append(out.Notes, note)
				}
				if err := t.awaitOlderNavigations(ctx, rawURL, committedAt); err != nil {
					return nil, err
				}
				t.evMu.Lock()
				doc := t.st.doc
				t.evMu.Unlock()
				if doc != "" && doc != res.LoaderID {
					// The page moved on during the settle: by a navigation
					// of its own, or by one the previous page had in flight
					// that committed only after this one loaded.
					if err := t.tookOver(rawURL, doc, true, committedAt); err != nil {
						return nil, err
					}
				}
				t.evMu.Lock()
				if t.st.doc != "" && t.st.loaded == t.st.doc {
					// The page the settle followed (one the page sent
					// itself on to at load) is the one whose status counts.
					res.LoaderID = t.st.doc
				}
				t.evMu.Unlock()
				if d := t.PendingDialog(); d != nil && t.dialogs == "" {
					out.Dialog = d
				}
				return t.onwardFailed(rawURL, first, out)
			}
			if ev.Name == want || (want == "DOMContentLoaded" && ev.Name == "load") {
				return t.onwardFailed(rawURL, first, out)
			}
		case f := <-failc:
			if ownCommitted || string(f.RequestID) != string(first) {
				continue
			}
			// This navigation ended before it committed.
			if foreign != nil {
				return nil, foreign
			}
			return nil, &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("navigate to %s: %s", rawURL, f.ErrorText)}
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
			if foreign != nil {
				return nil, foreign
			}
			if ctx.Err() != nil {
				return nil, t.notLoaded(rawURL, redirects, ctx.Err())
			}
			return nil, CDPErr("navigate", err)
		case <-ctx.Done():
			if loaded {
				// The navigation's own timeout ended the wait before the
				// cap: say how long it really waited.
				waited := time.Since(loadedAt).Round(100 * time.Millisecond)
				out.Notes = append(out.Notes, t.pendingNote(waited, fmt.Sprintf("the timeout ended the wait, before its %v cap", t.env.NetworkIdleMax)))
				return out, nil
			}
			if foreign != nil {
				return nil, foreign
			}
			return nil, t.notLoaded(rawURL, redirects, ctx.Err())
		}
	}
}

// awaitOlderNavigations waits until no top-level navigation that started
// before the document navigated to committed (at committedAt) is still in
// flight. Such a navigation is the previous page's (a redirect it asked
// for as this one got ready to commit): Chromium does not cancel it when
// this one commits, and it commits over the page asked for when its server
// answers. Settled, the open checks the tab's document (tookOver); at the
// timeout it fails with navigation_failed naming that navigation.
func (t *Page) awaitOlderNavigations(ctx context.Context, rawURL string, committedAt time.Time) error {
	for {
		t.evMu.Lock()
		var old *docRequest
		for _, r := range t.navStarted {
			if r.at.Before(committedAt) {
				old = &r
				break
			}
		}
		if old == nil {
			t.evMu.Unlock()
			return nil
		}
		changed := t.st.waitLocked()
		t.evMu.Unlock()
		select {
		case <-changed:
		case <-t.deadSig:
			return nil // the caller's wait reports the tab's death
		case <-ctx.Done():
			return &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("navigate to %s: the page that was there had a navigation of its own in flight, to %s, which had neither committed nor ended within the timeout; %s", rawURL, msg.Trim(old.url, 120), ownNavHint)}
		}
	}
}

// MaxClientRedirects is how many client-side redirects an open follows
// before its page loads: as many as Chromium follows HTTP redirects
// (net::ERR_TOO_MANY_REDIRECTS past 20). One more is taken for a loop.
const MaxClientRedirects = 20

// redirectLoop ends the loop (endLoop) and returns the navigation_failed
// error of an open of rawURL that followed MaxClientRedirects client-side
// redirects before any page loaded, the last to the document of loader
// doc.
func (t *Page) redirectLoop(rawURL string, doc cdp.LoaderID) error {
	t.endLoop()
	t.evMu.Lock()
	last := t.docReqAt[doc].url
	t.evMu.Unlock()
	if last == "" {
		last = t.LastURL()
	}
	return &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("navigate to %s: %s", rawURL, sentOnTooOften(last)),
		Hint: "Chromium follows at most 20 HTTP redirects, and tabpilot as many client-side ones; a page that keeps sending itself on is often a loop that wants a cookie or a login it does not get."}
}

// sentOnTooOften says that a page sent itself on more than
// MaxClientRedirects times before any page loaded, the last to last, and
// that tabpilot ended it there (endLoop).
func sentOnTooOften(last string) string {
	return fmt.Sprintf("the page sent itself on more than %d times before any page loaded, the last to %s (client-side redirects: location.replace or location.href in its scripts); tabpilot stopped it there", MaxClientRedirects, msg.Trim(last, 120))
}

// loopEndWait bounds how long endLoop waits for the loop's last
// navigation to end.
const loopEndWait = 3 * time.Second

// endLoop ends a client-side redirect loop in the tab. It turns the
// page's scripts off (Emulation.setScriptExecutionDisabled), so that the
// document the loop has committed, or has in flight, loads without
// running the script that would send it on, waits (at most loopEndWait)
// until the top document has loaded and no top-level navigation is in
// flight, and turns them on again. The tab is left on the loop's last
// document, as it loaded without its scripts. Page.stopLoading alone
// does not end it: it races the last document's inline script.
func (t *Page) endLoop() {
	scripts := func(off bool) error {
		// Each call has its own bound: scripts must come back on
		// however long the wait took.
		ctx, cancel := context.WithTimeout(t.ctx, 2*time.Second)
		defer cancel()
		_, err := cdp.Call(ctx, t.target, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
		return err
	}
	if err := scripts(true); err != nil {
		t.env.Log.Debug("end a redirect loop: turn scripts off", "tab", t.name, "err", err)
		return
	}
	defer func() {
		if err := scripts(false); err != nil {
			t.env.Log.Warn("end a redirect loop: turn scripts on again", "tab", t.name, "err", err)
		}
	}()
	t.waitState(t.ctx, loopEndWait, false, func() (bool, bool) {
		return !t.navPending && !t.loading, true
	})
}

// tookOver returns the navigation_failed error of a navigation to rawURL
// that another top-level document, loader doc, replaced: one that
// committed before the document navigated to did (own is false), or that
// was requested (Network.requestWillBeSent) before that document committed
// at committedAt. Such a document is the previous page's own navigation (a
// redirect loop, a timer) still in flight, never a redirect of the page
// asked for. Otherwise it returns nil: doc is a client-side redirect of
// the page asked for.
func (t *Page) tookOver(rawURL string, doc cdp.LoaderID, own bool, committedAt time.Time) error {
	t.evMu.Lock()
	asked, known := t.docReqAt[doc]
	t.evMu.Unlock()
	if own && (!known || !asked.at.Before(committedAt)) {
		return nil
	}
	to := asked.url
	if to == "" {
		to = t.LastURL()
	}
	return &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("navigate to %s: the page that was there had a navigation of its own in flight, to %s, and it replaced the page asked for; %s", rawURL, msg.Trim(to, 120), ownNavHint)}
}

// onwardFailed returns out, or, when the page navigated to (loader first)
// sent itself on and that navigation failed (a refused connection, a
// response without a body), so that the tab shows Chromium's error page
// now, the navigation_failed error an open of that URL gives.
func (t *Page) onwardFailed(rawURL string, first cdp.LoaderID, out *NavResult) (*NavResult, error) {
	t.evMu.Lock()
	doc, u, fail := t.st.doc, t.url, t.navFail
	t.evMu.Unlock()
	if doc == first || !strings.HasPrefix(u, "chrome-error:") || fail == "" {
		return out, nil
	}
	return nil, &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("navigate to %s: the page sent itself on (a client-side redirect), and that navigation failed: %s", rawURL, fail)}
}

// notLoaded is the timeout error of a navigation to rawURL whose document
// committed and did not load: it names the client-side redirects followed
// and the requests still in flight (a hanging image or frame holds the
// load event).
func (t *Page) notLoaded(rawURL string, redirects int, err error) error {
	msg := fmt.Sprintf("navigate to %s: the document did not load within the timeout", rawURL)
	if redirects > 0 {
		msg += fmt.Sprintf(" (after %d client-side redirect(s), the last to %s)", redirects, t.LastURL())
	}
	if u := t.PendingNavigation(); u != "" {
		msg += fmt.Sprintf("; the page sent itself on to %s, which has not answered", u)
	}
	if n, list := t.pendingRequests(); n > 0 {
		msg += fmt.Sprintf("; %d request(s) still loading: %s", n, list)
	}
	return &Error{Code: errcode.Timeout, Msg: msg, Err: err}
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
		return fmt.Sprintf("network not idle after %v past load (%s; requests kept starting, never 500ms apart); returned the loaded page", waited, why)
	}
	return fmt.Sprintf("network not idle after %v past load (%s; %d pending: %s); returned the loaded page", waited, why, n, list)
}

// PendingNavigation is the URL of a top-level navigation that was
// requested and has neither committed nor stopped, or "".
func (t *Page) PendingNavigation() string {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if !t.navPending {
		return ""
	}
	return t.navURL
}

// NavMark is where an action starts: the counts of top-level navigations
// committed and requested. ordered is set by an action whose last call
// after its input went to the top page's session (Click's check): its
// reply came after the events the renderer sent before it, and navigated
// needs no barrier of its own.
type NavMark struct {
	Seq, Req, Route, Blocked int
	// FrameReq is the count of child frames' navigations requested.
	FrameReq int
	Ordered  bool
}

// Mark records where the page's navigations stand, before an action, for
// Navigated and HeldByNavigation to compare with.
func (t *Page) Mark() NavMark {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return NavMark{Seq: t.navSeq, Req: t.navReq, Route: t.routeSeq, Blocked: t.blockedSeq, FrameReq: t.frameReq}
}

// AwaitFrameNavigation waits, after an action on an element of child
// frame frame, for a navigation of that frame requested since m (a link
// clicked in an iframe; Page.frameRequestedNavigation, which the renderer
// sends before the reply that ordered m) to commit or stop, at most
// navCommitWait, while ctx lives and no dialog holds the page, so that
// what runs after the action sees the frame's new document. It returns
// that navigation's URL, "" when none was requested.
func (t *Page) AwaitFrameNavigation(ctx context.Context, m NavMark, frame cdp.FrameID) string {
	t.evMu.Lock()
	n, ok := t.framesAsked[frame]
	t.evMu.Unlock()
	if !ok || n.req <= m.FrameReq {
		return ""
	}
	t.waitState(ctx, navCommitWait, false, func() (bool, bool) {
		p, ok := t.framesPending[frame]
		return !ok || p.req != n.req || t.dialog != nil, true
	})
	return n.url
}

// HeldByNavigation returns a context of ctx that ends navCommitWait after
// a top-level navigation is requested since m, if it has not committed by
// then, or as soon as a new top-level document commits (the call's
// document is gone, and the new one may start a navigation of its own at
// once, a meta refresh of 0, which Chromium then holds the call for in
// turn), and its cancel. While such a navigation is pending Chromium holds
// every call to the page; the request's event (Page.frameRequestedNavigation)
// travels on another pipe than the reply to the input event that caused
// it, so it can arrive after that reply, and the wait for it goes on while
// the call runs.
func (t *Page) HeldByNavigation(ctx context.Context, m NavMark) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		var limit <-chan time.Time
		for {
			t.evMu.Lock()
			requested := t.navReq != m.Req
			pending := t.navPending
			committed := t.navSeq != m.Seq
			changed := t.st.waitLocked()
			t.evMu.Unlock()
			if committed {
				cancel()
				return
			}
			if requested && limit == nil {
				if !pending {
					return // ended without a commit: calls are not held
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

// HeldByPending bounds ctx by the top-level navigation pending now, if
// one is (requested, neither committed nor stopped): Chromium answers no
// call to the page until it commits, so a call made meanwhile waits for
// the page's server, up to its whole timeout when the server never
// answers. It returns a context of ctx that ends once the call has waited
// navCommitWait for that navigation to commit, its cancel, and
// held, which after the context ended so returns the honest error
// (code timeout, naming the navigation), else nil. A navigation started
// meanwhile (a goto, which Chromium does answer) ends the bound.
func (t *Page) HeldByPending(ctx context.Context) (context.Context, context.CancelFunc, func() error) {
	t.evMu.Lock()
	pending, req, url, since := t.navPending, t.navReq, t.navURL, t.navSince
	t.evMu.Unlock()
	if !pending {
		return ctx, func() {}, func() error { return nil }
	}
	cctx, cancel := context.WithCancel(ctx)
	var fired atomic.Bool
	go func() {
		// Counted from the call, not from the navigation's request: a
		// call right after a click that gave up waiting for the commit
		// (its note says so) still waits its own while.
		limit := time.NewTimer(navCommitWait)
		defer limit.Stop()
		for {
			t.evMu.Lock()
			still := t.navPending && t.navReq == req
			changed := t.st.waitLocked()
			t.evMu.Unlock()
			if !still {
				return
			}
			select {
			case <-changed:
			case <-limit.C:
				fired.Store(true)
				cancel()
				return
			case <-cctx.Done():
				return
			}
		}
	}()
	held := func() error {
		if !fired.Load() {
			return nil
		}
		return &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("the page is still navigating to %s, which has not answered in %v (the page holds every call until it does: open another URL to give up on it)",
			msg.Trim(url, 200), time.Since(since).Round(time.Second)), Hint: "Try again when the server has answered, open another URL in the tab (which ends the wait), or close it."}
	}
	return cctx, cancel, held
}

// navCommitWait bounds how long an action that requested a top-level
// navigation waits for the new document to commit.
const navCommitWait = 5 * time.Second

// Navigated reports whether a top-level navigation started since m. When
// one was requested (Page.frameRequestedNavigation) but has not committed
// yet, it waits, at most navCommitWait and while ctx lives, for the commit
// (Page.frameNavigated) or for the navigation to end without one
// (Page.frameStoppedLoading, navigatedWithinDocument), so that what
// follows the action (an observation, a number) reads the new document,
// as Playwright's actions wait for the navigations they start. A
// navigation still in flight at the limit counts as started.
func (t *Page) Navigated(ctx context.Context, m NavMark) bool {
	t.eventBarrier(ctx, m)
	return t.waitState(ctx, navCommitWait, true, func() (bool, bool) {
		switch {
		case t.navSeq != m.Seq:
			return true, true
		case t.navReq == m.Req || !t.navPending:
			return true, false
		case t.dialog != nil:
			return true, true
		}
		return false, false
	})
}

// waitState calls check, with evMu held, at once and each time the page's
// event state changes or a dialog opens, until check reports done, and
// returns its verdict; when limit passes, the tab dies or ctx ends first,
// it returns gaveUp.
func (t *Page) waitState(ctx context.Context, limit time.Duration, gaveUp bool, check func() (done, verdict bool)) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		t.evMu.Lock()
		done, verdict := check()
		changed, sig := t.st.waitLocked(), t.dialogSig
		t.evMu.Unlock()
		if done {
			return verdict
		}
		select {
		case <-changed:
		case <-sig:
		case <-timer.C:
			return gaveUp
		case <-t.deadSig:
			return gaveUp
		case <-ctx.Done():
			return gaveUp
		}
	}
}

// AwaitRedirect waits while the committed top document, before firing
// load, has started another top-level navigation that has neither
// committed nor stopped (a client-side redirect: location.href in an
// inline script, location.replace, a timer of 0), at most limit, while
// ctx lives and no dialog holds the page. An action whose navigation
// committed calls it, so that the settle that follows is the page's the
// redirect led to, as open follows it (navigateRaw). A navigation started
// after load is the settle's to see. It reports whether none is pending
// at the end.
func (t *Page) AwaitRedirect(ctx context.Context, limit time.Duration) bool {
	return t.waitState(ctx, limit, false, func() (bool, bool) {
		loaded := t.st.doc != "" && t.st.loaded == t.st.doc
		switch {
		case !t.navPending || loaded:
			return true, !t.navPending
		case t.dialog != nil:
			return true, false
		}
		return false, false
	})
}

// RequestedSince reports whether a top-level navigation was requested
// (Page.frameRequestedNavigation) or committed since m, by the events
// handled so far.
func (t *Page) RequestedSince(m NavMark) bool {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.navSeq != m.Seq || t.navReq != m.Req
}

// LeavingSince reports whether the top document was replaced since m, or
// a navigation to another document requested since m is pending, once
// the events the renderer sent before the call are in (eventBarrier): an
// input event's reply can come before the request it caused.
func (t *Page) LeavingSince(ctx context.Context, m NavMark) bool {
	t.eventBarrier(ctx, m)
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.navSeq != m.Seq || t.navReq != m.Req && t.navPending
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
func (t *Page) eventBarrier(ctx context.Context, m NavMark) {
	t.evMu.Lock()
	seen := m.Ordered || t.navSeq != m.Seq || t.navReq != m.Req || t.dialog != nil
	sig := t.dialogSig
	t.evMu.Unlock()
	if seen {
		return
	}
	cctx, cancel := t.HeldByNavigation(ctx, m)
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

// Guard vets top-level navigations for an egress policy (package
// browser/egress implements the policy; api/service adapts it). Errors it
// returns should carry the code blocked_destination (an ErrorCode method).
type Guard interface {
	// CheckURL refuses a URL before the browser is asked to load it.
	CheckURL(ctx context.Context, url string) error
	// Mark returns a position in the guard's log of refused requests.
	Mark() uint64
	// Refused returns the refusal of url (or of a redirect it led to)
	// logged since mark, as an error, or nil.
	Refused(url string, since uint64) error
}

// Back goes one entry back in the tab's session history, as the browser's
// back button does (Page.getNavigationHistory, Page.navigateToHistoryEntry),
// and waits until the page it lands on has loaded (document.readyState
// complete; at once for an entry of the same document, such as one that
// history.pushState made) and settled as open's default wait has it
// (Tab.Goto; a note says what was still busy when the settle ran out). As
// an action that navigates, it waits at most 5 s for the load: past that
// it returns the page as it is, with a note. It returns the URL and HTTP
// status of the page.
// Errors: bad_request when there is no earlier entry (the blank page a
// tab starts on does not count), timeout when the page
// does not commit or load in time, not_alive when the tab dies.
func (t *Page) Back(ctx context.Context) (*NavResult, error) { return t.history(ctx, "back", -1) }

// Forward goes one entry forward in the tab's session history, as Back
// goes back. Errors: bad_request when there is no later entry, timeout,
// not_alive.
func (t *Page) Forward(ctx context.Context) (*NavResult, error) {
	return t.history(ctx, "forward", 1)
}

// Reload reloads the tab's page (Page.reload, from the cache where it is
// fresh, as the reload button does) and waits until the new document has
// loaded, as Back does. A page that answered a form's POST is requested
// again with the same POST (a browser asks first), and a note says so.
// Errors: timeout, not_alive.
func (t *Page) Reload(ctx context.Context) (*NavResult, error) {
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	t.evMu.Lock()
	post := t.postDocs[t.st.doc]
	t.evMu.Unlock()
	res, err := t.historyNav(ctx, "reload", t.currentURL(ctx), func(ctx context.Context) error {
		_, err := cdp.Call(ctx, t.target, page.Reload, page.ReloadParams{})
		return err
	})
	if err == nil && post && res.Dialog == nil {
		// A browser asks first; Page.reload does not.
		res.Notes = append(res.Notes, "the page was the answer to a form sent with POST: the reload sent the form again")
	}
	return res, err
}

func (t *Page) history(ctx context.Context, what string, delta int) (*NavResult, error) {
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	h, err := cdp.Call(ctx, t.target, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return nil, CDPErr(what, err)
	}
	i := int(h.CurrentIndex) + delta
	// The blank page a tab starts on (its first entry, about:blank) is
	// not a page it visited: going back to it leaves the page it opened.
	if i == 0 && delta < 0 && len(h.Entries) > 0 && h.Entries[0].URL == "about:blank" {
		i = -1
	}
	if i < 0 || i >= len(h.Entries) {
		side := "earlier"
		if delta > 0 {
			side = "later"
		}
		pos := fmt.Sprintf("entry %d of %d", h.CurrentIndex+1, len(h.Entries))
		if len(h.Entries) > 0 && h.Entries[0].URL == "about:blank" {
			// The blank first entry is none of the pages it visited.
			pos = fmt.Sprintf("page %d of the %d it visited", h.CurrentIndex, len(h.Entries)-1)
		}
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("%s: the tab's history has no %s page (%s)", what, side, pos),
			Hint: "Back and forward move through the pages this tab visited; open a URL instead."}
	}
	e := h.Entries[i]
	return t.historyNav(ctx, what, e.URL, func(ctx context.Context) error {
		_, err := cdp.Call(ctx, t.target, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: e.ID})
		return err
	})
}

// historyNav runs start, a navigation the browser starts (history, reload),
// waits for the top frame to commit a document (Page.frameNavigated) or
// move within its document (Page.navigatedWithinDocument), then for the
// document to load. dest names the destination in errors.
func (t *Page) historyNav(ctx context.Context, what, dest string, start func(ctx context.Context) error) (*NavResult, error) {
	// Subscribed before the command, so its events are not missed.
	navs, stop1 := t.target.Subscribe(page.FrameNavigated.Method)
	defer stop1()
	within, stop2 := t.target.Subscribe(page.NavigatedWithinDocument.Method)
	defer stop2()
	out := &NavResult{URL: dest}
	err := t.Blocking(ctx, start)
	var dpe *DialogPendingError
	switch {
	case AsDialog(err, &dpe):
		out.Dialog = dpe.Dialog // a beforeunload prompt holds the navigation
		return out, nil
	case err != nil && ctx.Err() != nil:
		return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("%s to %s: no response within the timeout", what, dest), Err: ctx.Err()}
	case err != nil:
		return nil, &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("%s to %s: %v", what, dest, err), Err: err}
	}
	var loader cdp.LoaderID
	withinDoc := false
	sig := t.dialogSignal()
wait:
	for {
		select {
		case raw, ok := <-navs:
			if !ok {
				navs = nil
				continue
			}
			var ev page.EventFrameNavigated
			if UnmarshalEvent(raw, &ev) == nil && ev.Frame != nil && ev.Frame.ParentID == "" {
				loader = ev.Frame.LoaderID
				break wait
			}
		case raw, ok := <-within:
			if !ok {
				within = nil
				continue
			}
			var ev page.EventNavigatedWithinDocument
			if UnmarshalEvent(raw, &ev) == nil && ev.FrameID == cdp.FrameID(t.targetID) {
				withinDoc = true
				break wait
			}
		case <-sig:
			if d := t.PendingDialog(); d != nil && t.dialogs == "" {
				out.Dialog = d
				return out, nil
			}
			sig = t.dialogSignal()
		case <-t.deadSig:
			return nil, &Error{Code: errcode.NotAlive, Msg: what + ": the tab died: " + t.DeadReason(), Err: ErrNotAlive}
		case <-ctx.Done():
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("%s to %s: the page did not commit within the timeout", what, dest), Err: ctx.Err()}
		}
	}
	if loader != "" {
		// chromedp hands an event to its subscriptions before its
		// listeners: the commit reached navs before onEvent recorded it,
		// and until it has, the state read below is the old document's
		// (loaded, its settle long over: the reload of a page that sends
		// itself on at load returned at once, naming its own URL).
		t.waitState(ctx, NavLoadWait, false, func() (bool, bool) {
			return t.st.doc == loader, true
		})
	}
	// The load is waited for as long as an action that navigates waits
	// for it (navLoadWait): a page whose image never ends is returned as
	// it is, with a note, not after the whole timeout.
	// Counted from the page's events (Page.loadEventFired; a page the
	// back/forward cache restores fires none and is loaded), not by
	// asking the page: a page that sends itself on at load has Chromium
	// hold every call until that navigation commits.
	loadedInTime := t.waitState(ctx, NavLoadWait, false, func() (bool, bool) {
		return !t.loading, true
	})
	if !loadedInTime {
		if ctx.Err() != nil {
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("%s to %s: the page did not finish loading within the timeout", what, dest), Err: ctx.Err()}
		}
		t.evMu.Lock()
		out.Status = t.docStatus[loader]
		t.evMu.Unlock()
		out.Notes = append(out.Notes, fmt.Sprintf("the page had not fired load within %v; returned it as it was", NavLoadWait))
		out.URL = t.currentURL(ctx)
		return out, nil
	}
	switch {
	case loader != "":
		t.evMu.Lock()
		out.Status = t.docStatus[loader]
		t.evMu.Unlock()
		if note := t.AwaitSettled(ctx, NavLoadWait); note != "" {
			out.Notes = append(out.Notes, note)
		}
	case withinDoc:
		// An entry of the same document (a single-page app's route,
		// a fragment): the page renders it on popstate or hashchange,
		// often from a fetch, and is waited for as after a route change,
		// once what settle.js reported of its handlers is in: a call's
		// reply comes after the events the renderer sent before it.
		ectx, cancel := context.WithTimeout(ctx, time.Second)
		_ = t.EvalJSON(ectx, "0", nil)
		cancel()
		if note := t.AwaitRouteSettled(ctx); note != "" {
			out.Notes = append(out.Notes, note)
		}
	}
	out.URL = t.currentURL(ctx)
	return out, nil
}
