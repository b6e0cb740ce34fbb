package pagecore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/tabpilot/tabpilot/errcode"
)

// onEvent runs in chromedp's read loop for the tab: it must return fast and
// never call CDP. It records state; work is handed to goroutines.
func (t *Page) onEvent(ev any) {
	t.queueNet(ev)
	switch ev.(type) {
	case *page.EventFrameDetached, *page.EventLifecycleEvent, *network.EventRequestWillBeSent,
		*network.EventResponseReceived, *network.EventDataReceived, *network.EventLoadingFinished, *network.EventLoadingFailed,
		*runtime.EventBindingCalled, *network.EventWebSocketCreated:
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
		if ev.Frame.ParentID != "" {
			t.childNavEnded(ev.Frame.ID)
		}
		if ev.Frame.ParentID == "" {
			// One critical section for the commit: a waiter that sees
			// the settle's new document (st.doc) sees it loading too.
			t.evMu.Lock()
			t.onSettleEventLocked(ev)
			t.url = ev.Frame.URL + ev.Frame.URLFragment
			t.title = "" // the new document's is read on demand
			// A document back from the back/forward cache has loaded: it
			// fires no load event again.
			restored := ev.Type == page.NavigationTypeBackForwardCacheRestore
			t.loading = !restored
			t.dclPending = !restored
			t.navPending = false
			t.navRestorable = false
			delete(t.navStarted, ev.Frame.LoaderID)
			t.navSeq++
			if !restored {
				t.unloadedRun++
			}
			t.commits[t.navSeq%len(t.commits)] = time.Now()
			// The old page's requests that were in flight end with it,
			// and Chromium does not always say so (no loadingFailed for a
			// document that went away): only the new document's own
			// request is the page's now.
			for id, r := range t.inflight {
				if r.Loader != ev.Frame.LoaderID {
					delete(t.inflight, id)
				}
			}
			t.evMu.Unlock()
			// A document back from the back/forward cache keeps its
			// execution context ids, but its remote objects did not come
			// back with it, and the ids of new ones start again: a held
			// function's id would name another object.
			t.held.reset()
			if restored {
				t.ob.mu.Lock()
				clear(t.ob.worlds)
				t.ob.mu.Unlock()
			}
			if t.env.TopNavigated != nil {
				t.env.TopNavigated(restored)
			}
		}
	case *page.EventFrameRequestedNavigation:
		// Emitted by the renderer as it starts the navigation, so before
		// the reply to any later command on the session: an action can
		// tell that it started one before the new document commits.
		if ev.FrameID == cdp.FrameID(t.targetID) && ev.Disposition == page.ClientNavigationDispositionCurrentTab {
			t.evMu.Lock()
			t.navReq++
			t.navPending = true
			t.navRestorable = false
			t.navURL = ev.URL
			t.navSince = time.Now()
			t.st.wakeLocked()
			t.evMu.Unlock()
		} else if ev.Disposition == page.ClientNavigationDispositionCurrentTab {
			// A child frame's (a link clicked in an iframe).
			t.evMu.Lock()
			t.frameReq++
			if t.framesPending == nil {
				t.framesPending = map[cdp.FrameID]childNav{}
				t.framesAsked = map[cdp.FrameID]childNav{}
			}
			t.framesPending[ev.FrameID] = childNav{ev.URL, t.frameReq}
			t.framesAsked[ev.FrameID] = childNav{ev.URL, t.frameReq}
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
				t.navRestorable = ev.NavigationType == page.FrameStartedNavigatingNavigationTypeHistoryDifferentDocument
				t.navURL = ev.URL
				t.navSince = time.Now()
				if t.navStarted == nil || len(t.navStarted) >= docsMax {
					t.navStarted = map[cdp.LoaderID]docRequest{}
				}
				t.navStarted[ev.LoaderID] = docRequest{time.Now(), ev.URL}
				t.st.wakeLocked()
				t.evMu.Unlock()
			}
		}
	case *page.EventFrameStoppedLoading:
		// A requested navigation that never commits (a 204, a download,
		// one the page cancelled) ends here. A history traversal the
		// back/forward cache serves can stop loading before Chromium
		// reports its commit: it ends with that commit (Page.frameNavigated),
		// or navCommitWait after it started.
		t.childNavEnded(ev.FrameID)
		if ev.FrameID == cdp.FrameID(t.targetID) {
			t.evMu.Lock()
			if !t.navRestorable {
				t.navPending = false
			}
			// Chromium stops a frame's loading only once no navigation
			// of it is in flight: every one started has ended, those
			// whose end no event names too (a history traversal the
			// back/forward cache serves commits its document's old
			// loader, not the one it started with).
			clear(t.navStarted)
			t.st.wakeLocked()
			t.evMu.Unlock()
		}
	case *page.EventLoadEventFired:
		t.evMu.Lock()
		t.unloadedRun = 0
		t.loading = false
		t.dclPending = false
		t.st.wakeLocked() // for those waiting on loading (historyNav)
		t.evMu.Unlock()
	case *page.EventDomContentEventFired:
		t.evMu.Lock()
		t.dclPending = false
		t.evMu.Unlock()
	case *page.EventNavigatedWithinDocument:
		t.childNavEnded(ev.FrameID) // a fragment link in an iframe
		t.evMu.Lock()
		if ev.FrameID == cdp.FrameID(t.targetID) {
			// (An iframe's pushState is not the tab's URL.)
			t.url = ev.URL
			t.navPending = false
			t.routeSeq++
			now := time.Now()
			t.st.routeAt = now
			t.st.kickLocked(now)
		}
		t.evMu.Unlock()
	case *target.EventAttachedToTarget:
		// An out-of-process iframe the auto-attach did not hold (without
		// stealth: chromedp's flattened auto-attach) runs at once; one
		// the stealth patches held is announced when they let it run
		// (stealth.Options.FrameStarted).
		if ev.TargetInfo != nil && ev.TargetInfo.Type == "iframe" && !ev.WaitingForDebugger {
			t.FrameStarted(ev.TargetInfo.TargetID)
		}
	case *target.EventTargetInfoChanged:
		// chromedp's Target.setDiscoverTargets on the page's session
		// reports every target's changes here.
		if ev.TargetInfo != nil && ev.TargetInfo.Type == "iframe" {
			t.frameCommitted(ev.TargetInfo.TargetID, ev.TargetInfo.URL)
		}
	case *inspector.EventTargetCrashed:
		t.env.Crashed()
		t.evMu.Lock()
		t.markDeadLocked("the page's renderer crashed")
		t.evMu.Unlock()
	case *inspector.EventDetached:
		t.evMu.Lock()
		t.markDeadLocked("detached: " + ev.Reason)
		t.evMu.Unlock()
	case *network.EventRequestWillBeSent:
		t.evMu.Lock()
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == cdp.FrameID(t.targetID) {
			// Not from the back/forward cache, then.
			t.navRestorable = false
			// A POST's answer, unless a redirect (the same request
			// again, with a GET after a 303) moved on from it.
			if t.postDocs == nil {
				t.postDocs = map[cdp.LoaderID]bool{}
				t.docReqAt = map[cdp.LoaderID]docRequest{}
			}
			t.pruneDocsLocked()
			t.postDocs[ev.LoaderID] = ev.Request.Method == "POST"
			if _, ok := t.docReqAt[ev.LoaderID]; !ok {
				t.docReqAt[ev.LoaderID] = docRequest{time.Now(), ev.Request.URL}
			}
		}
		if len(t.inflight) < 10000 && !workerScript(ev) {
			t.inflight[ev.RequestID] = Request{ev.Request.URL, ev.LoaderID, ev.FrameID, time.Now()}
		}
		t.evMu.Unlock()
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == cdp.FrameID(t.targetID) && ev.Response != nil {
			t.evMu.Lock()
			if t.docStatus == nil {
				t.docStatus = map[cdp.LoaderID]int64{}
			}
			t.pruneDocsLocked()
			t.docStatus[ev.LoaderID] = ev.Response.Status
			for k := range ev.Response.Headers {
				if strings.EqualFold(k, "refresh") {
					// The document goes elsewhere on its own: no
					// document settled at load (see settleState).
					t.st.refresh = ev.LoaderID
				}
			}
			t.evMu.Unlock()
		}
	case *network.EventLoadingFinished:
		t.evMu.Lock()
		t.navEndedLocked(cdp.LoaderID(ev.RequestID))
		delete(t.inflight, ev.RequestID)
		t.evMu.Unlock()
	case *page.EventFrameDetached:
		// A frame that went away ends its requests here, and one that
		// moved to another process (reason swap, a cross-site iframe's
		// document) has the end of its document request reported in
		// that process's session, not in this one.
		t.childNavEnded(ev.FrameID)
		t.evMu.Lock()
		delete(t.framesAsked, ev.FrameID)
		for id, r := range t.inflight {
			if r.Frame == ev.FrameID {
				delete(t.inflight, id)
			}
		}
		t.evMu.Unlock()
	case *network.EventLoadingFailed:
		t.evMu.Lock()
		t.navEndedLocked(cdp.LoaderID(ev.RequestID))
		if r, ok := t.inflight[ev.RequestID]; ok && ev.Type == network.ResourceTypeDocument && r.Frame == cdp.FrameID(t.targetID) {
			t.navFail = r.URL + ": " + ev.ErrorText
		}
		delete(t.inflight, ev.RequestID)
		t.evMu.Unlock()
	}
}

// workerScript reports whether ev is the main script of a worker the page
// started (new Worker, a module worker, from a URL, blob: or data:).
// Chromium fetches it for the worker and reports its start on the page's
// session, as a Script of the page's frame with no loader (and the
// script's own URL as its document's), but its end only on the worker's
// target: counted in flight, it would never end.
func workerScript(ev *network.EventRequestWillBeSent) bool {
	return ev.Type == network.ResourceTypeScript && ev.LoaderID == ""
}

// Request is a request of the page in flight: its URL, the loader of
// the document that made it and its frame (Network.requestWillBeSent
// loaderId, frameId), and when it started (as tabpilot got the event).
type Request struct {
	URL    string
	Loader cdp.LoaderID
	Frame  cdp.FrameID
	Start  time.Time
}

// pendingRequests returns the number of the page's requests in flight
// (Network.requestWillBeSent without loadingFinished or loadingFailed) and
// the first 5 of their URLs, sorted, each cut at 120 bytes, joined.
func (t *Page) pendingRequests() (int, string) {
	t.evMu.Lock()
	urls := make([]string, 0, len(t.inflight))
	for _, r := range t.inflight {
		urls = append(urls, r.URL)
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
func (t *Page) URL(ctx context.Context) string {
	u, _ := t.URLTitle(ctx)
	return u
}

// Title returns the document title.
func (t *Page) Title(ctx context.Context) string {
	_, title := t.URLTitle(ctx)
	return title
}

// CachedURLTitle returns the URL and title last seen, without asking the
// page.
func (t *Page) CachedURLTitle() (string, string) {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.url, t.title
}

// URLTitle reads location.href and document.title (Runtime.evaluate),
// falling back to the last known values when the page cannot answer.
// While a top-level navigation is pending, Chromium holds every call to
// the page until it commits (as long as the server takes to answer): the
// committed page's entry of Page.getNavigationHistory, which the browser
// answers, gives them then.
func (t *Page) URLTitle(ctx context.Context) (string, string) {
	t.evMu.Lock()
	pending := t.navPending
	t.evMu.Unlock()
	if pending {
		if h, err := cdp.Call(ctx, t.target, page.GetNavigationHistory, cdp.Empty{}); err == nil && h.CurrentIndex >= 0 && int(h.CurrentIndex) < len(h.Entries) {
			e := h.Entries[h.CurrentIndex]
			t.evMu.Lock()
			t.url, t.title = e.URL, e.Title
			t.evMu.Unlock()
		}
		return t.CachedURLTitle()
	}
	if t.PendingDialog() == nil {
		var v struct{ U, T string }
		if err := t.EvalJSON(ctx, `({U: location.href, T: document.title})`, &v); err == nil {
			t.evMu.Lock()
			t.url, t.title = v.U, v.T
			t.evMu.Unlock()
		}
	}
	return t.CachedURLTitle()
}

// EvalJSON evaluates expr in the top frame (Runtime.evaluate, awaiting
// promises, by value) and decodes the result into out.
//
// expr is tabpilot's own script: when it throws, that is the page's state
// (a document that was replaced under it, or has no element yet because
// it has only just committed: script_error, with NavigatedHint) or a bug
// of tabpilot's (internal), never the caller's code.
func (t *Page) EvalJSON(ctx context.Context, expr string, out any) error {
	t.evMu.Lock()
	seq := t.navSeq
	t.evMu.Unlock()
	var res runtime.EvaluateResult
	err := t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{
			Expression: expr, ReturnByValue: new(true), AwaitPromise: new(true), UserGesture: new(true),
		})
		return err
	})
	if err != nil {
		return EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		t.evMu.Lock()
		moving := t.navSeq != seq || t.navPending || t.loading
		t.evMu.Unlock()
		if moving {
			return &Error{Code: errcode.ScriptError, Msg: "the page was navigating while tabpilot read it (" + ExceptionText(res.ExceptionDetails) + "), and the read is lost", Hint: NavigatedHint}
		}
		return &Error{Code: errcode.Internal, Msg: "tabpilot's page script failed: " + ExceptionText(res.ExceptionDetails)}
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

// EvalErr turns the error of an evaluation into a coded one: a pending
// dialog is not_actionable with its hint, the rest as CDPErr.
func EvalErr(err error) error {
	var dpe *DialogPendingError
	if AsDialog(err, &dpe) {
		return DialogBlocked(dpe.Dialog, "be acted on")
	}
	return CDPErr("evaluate", err)
}

// ExceptionText is the first line of a thrown exception's description
// (Runtime.ExceptionDetails), or its text.
func ExceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		s := d.Exception.Description
		if i := strings.Index(s, "\n    at "); i > 0 {
			s = s[:i]
		}
		return s
	}
	return d.Text
}

// Probe reports whether the page answers a trivial evaluation within d.
func (t *Page) Probe(d time.Duration) bool {
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

// LastURL is the top document's URL as the last Page.frameNavigated or
// navigatedWithinDocument gave it, without asking the page.
func (t *Page) LastURL() string {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.url
}

// NavSeq returns the count of top-level navigations seen; screenshots and
// observations compare it to tell stale coordinates.
func (t *Page) NavSeq() int {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.navSeq
}

// navEndedLocked forgets the top-level navigation of loader id (a
// document request's id is its loader's) once its request has ended
// without a commit (failed, cancelled, or a response without a document:
// a 204, a download); a committed one is forgotten at its commit. evMu is
// held.
func (t *Page) navEndedLocked(id cdp.LoaderID) {
	if _, ok := t.navStarted[id]; ok {
		delete(t.navStarted, id)
		t.st.wakeLocked()
	}
}

// Past docsMax top-level documents, pruneDocsLocked forgets those first
// requested more than docsAge ago.
const (
	docsMax = 64
	docsAge = 2 * time.Minute
)

// pruneDocsLocked bounds the maps of what the page's top-level documents
// were (docReqAt, postDocs, docStatus; evMu held). It forgets only old
// documents, never the committed one: a navigation in progress asks these
// maps about the documents that committed while it ran, and one that the
// previous page requested must still read as requested before this
// navigation's commit (an earlier bound, which kept the committed document
// alone past 16, forgot a redirect loop's last request, and an open took
// the loop's page, committed after its own, for a redirect of its own).
// A page that starts more than docsMax documents within docsAge keeps them
// all until they age.
func (t *Page) pruneDocsLocked() {
	if len(t.docReqAt) <= max(docsMax, t.docsPruneAt) && len(t.docStatus) <= max(docsMax, t.docsPruneAt) {
		return
	}
	// Pruned again when twice as many are kept: a fast loop's documents
	// cost a scan each only as their number doubles.
	defer func() { t.docsPruneAt = 2 * max(len(t.docReqAt), len(t.docStatus)) }()
	now := time.Now()
	old := func(k cdp.LoaderID) bool {
		r, ok := t.docReqAt[k]
		return k != t.st.doc && (!ok || now.Sub(r.at) > docsAge)
	}
	for k := range t.postDocs {
		if old(k) {
			delete(t.postDocs, k)
		}
	}
	for k := range t.docStatus {
		if old(k) {
			delete(t.docStatus, k)
		}
	}
	for k := range t.docReqAt {
		if old(k) {
			delete(t.docReqAt, k)
		}
	}
}

// childNavEnded forgets the pending navigation of child frame id, which
// committed, stopped or went away.
func (t *Page) childNavEnded(id cdp.FrameID) {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if _, ok := t.framesPending[id]; ok {
		delete(t.framesPending, id)
		t.st.wakeLocked()
	}
}
