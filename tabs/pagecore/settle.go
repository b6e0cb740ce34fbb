package pagecore

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/tabpilot/tabpilot/internal/msg"
	"github.com/tabpilot/tabpilot/tabs/js"
)

// The "settled" wait (the default of open, goto and of actions that
// navigate): the top document's load event, then the first moment with no
// fetch, XHR, script or frame document of the page in flight, settleQuiet
// since a tracked request last started or ended or the DOM last changed
// (counted from DOMContentLoaded: a page that was already quiet for it
// when load fired does not wait it again; a frame's document that started
// and ended before load is no change, see heldByLoad), and two animation
// frames rendered since load (settle.js), or, in a page that renders none
// (a background tab), settleQuiet since load; at most settleMax past load.
// In a visible page, settle.js also confirms the DOM's quiet in the
// page's own time, by a timer that fired on time and idle time after it:
// a renderer that did not run (a busy page, a loaded machine) is no quiet
// page, nor is one kept busy in short slices.
// The frames are the page's own work after load: its load listeners, the
// timers of no delay, promise callbacks and animation-frame callbacks they
// queue, and the fetches they start, which then count as in flight.
// A top document that settle.js finds at load to run no script of its own
// (no script element, frame, object, embed or meta refresh, no handler
// attribute of an event that fires without an action, in the document and
// its open shadow roots), and whose response had no Refresh header, is
// settled at load: no code of its own runs after that. One with scripts
// that has nothing scheduled (settle.js's "untimed": no timer, animation
// frame or idle callback ever asked for, no frame, object or embed, no
// running animation or SVG animation element, no active view transition,
// not cross-origin isolated), with no request of its top frame in flight and no
// WebSocket or EventSource, is settled once settle.js found so, idle after
// the first frame past load, if nothing changed since, and untimedQuiet
// passed, counted as settleQuiet is.
const (
	settleQuiet = 50 * time.Millisecond
	settleMax   = 500 * time.Millisecond
	// untimedQuiet is the quiet a page with nothing scheduled still
	// waits, counted as settleQuiet is: for the work a page hands to
	// other threads (a decode, a digest, a worker), which no count sees.
	untimedQuiet = 25 * time.Millisecond
	// maxSendOn is how many documents a settle follows that the page
	// sent itself on to at load, one after the other, before it returns
	// the tab as it is: a page that keeps doing so (a meta refresh to
	// itself) never settles. Chromium follows as many HTTP redirects.
	maxSendOn = 20
	// NavLoadWait bounds how long an action that navigated waits for the
	// new document's load event before its settle.
	NavLoadWait = 5 * time.Second
	// settleWorld and settleBinding name the isolated world of settle.js
	// and the binding it reports mutations through.
	settleWorld   = "tabpilot-settle"
	settleBinding = "__tabpilotSettle"
)

// settleState is what the tab's CDP listener records for the settled wait;
// Tab.evMu guards it.
type settleState struct {
	doc     cdp.LoaderID // loader of the committed top document (Page.frameNavigated)
	ready   cdp.LoaderID // loader of the last top document that fired DOMContentLoaded (Page.lifecycleEvent)
	readyAt time.Time    // when it did
	loaded  cdp.LoaderID // loader of the last top document that fired load (Page.lifecycleEvent)
	loadAt  time.Time    // when it did
	framed  cdp.LoaderID // loader of the last top document that rendered two frames past load (settle.js)
	last    time.Time    // the last change past DOMContentLoaded: a tracked request started or ended, a mutation
	mutated time.Time    // the last DOM mutation past load (settle.js)
	routeAt time.Time    // the last top-level navigation within the document (Page.navigatedWithinDocument)
	// batch is the last mutation batch settle.js reported for the
	// document, quietAfter the last batch it then saw settleQuiet of the
	// page's own time pass after (-1: none yet). The page is quiet in its
	// own time when quietAfter >= batch.
	batch, quietAfter int
	// static is the loader of the last top document settle.js found at
	// its load to run no script of its own; refresh that of the last one
	// whose response had a Refresh header (which settle.js cannot see:
	// such a document navigates on its own, as a meta refresh does).
	static, refresh cdp.LoaderID
	// untimed is the loader of the last top document settle.js found,
	// after load, with nothing of the page's scheduled, and untimedAt
	// when that report came; streams that of the last one that opened a
	// WebSocket or an EventSource (a page can render what they bring).
	// others are the top frame's requests in flight that busy does not
	// hold (images, media, fonts, style sheets, preloads…): their load
	// events can run the page's code; otherAt is when the last ended.
	untimed, streams cdp.LoaderID
	untimedAt        time.Time
	others           map[network.RequestID]bool
	otherAt          time.Time
	// scripted is the loader of the last top document settle.js reported
	// its visibility in, at DOMContentLoaded (before that document's load
	// event); hidden whether that document was hidden at the last report.
	scripted cdp.LoaderID
	hidden   bool
	// mutations and requests count the mutation batches and the tracked
	// requests started past load, for the debug log.
	mutations, requests int
	// busy are the fetch, XHR and document requests of the page's frames
	// in flight (Network.requestWillBeSent until loadingFinished or
	// loadingFailed, or until their frame detaches: the document request
	// of an iframe that moves to another process ends in that process's
	// session), by request id.
	busy    map[network.RequestID]busyRequest
	changed chan struct{} // closed at each change
}

// busyRequest is a request the settle waits for.
type busyRequest struct {
	url    string
	frame  cdp.FrameID
	loader cdp.LoaderID
	kind   network.ResourceType
	// size is a fetch's body length as its response gave it
	// (Content-Length, with no Content-Encoding), -1 before the response
	// or when it gave none; got the body bytes received so far
	// (Network.dataReceived).
	size, got int64
}

// bodyLength returns the body length a response's headers give, or -1:
// its Content-Length, when no Content-Encoding makes the bytes received
// (Network.dataReceived's dataLength, decoded) differ from it.
func bodyLength(h network.Headers) int64 {
	n := int64(-1)
	for k, v := range h {
		s, _ := v.(string)
		switch strings.ToLower(k) {
		case "content-encoding":
			if !strings.EqualFold(strings.TrimSpace(s), "identity") {
				return -1
			}
		case "content-length":
			if l, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && l >= 0 {
				n = l
			}
		}
	}
	return n
}

// heldByLoad reports whether a request of kind that starts or ends now is
// one the top document's load event waits for, with what it brings: a
// frame's document, before the top document's load. A frame loads before
// its parent does (HTML: an iframe delays its parent's load event), so by
// the time load fires the frame's document has been parsed and run in its
// frame; and the top document's DOM, which the settle watches, does not
// change with it. Such a request is no change for the settle's quiet.
// (A script that ended before load counts: a timer it set may render into
// the top document after load. So does a fetch or XHR, whose response is
// handled after it ends.)
func (s *settleState) heldByLoad(kind network.ResourceType) bool {
	return kind == network.ResourceTypeDocument && s.loaded != s.doc
}

// requestLocked records a tracked request's start or end: a change, unless
// the load event still waits for it (heldByLoad); evMu is held.
func (s *settleState) requestLocked(now time.Time, kind network.ResourceType) {
	if s.heldByLoad(kind) {
		s.wakeLocked()
		return
	}
	s.kickLocked(now)
}

// bodyLocked ends the fetch id, r, once its whole body has come (the
// length its response gave): the page has all of it to read, and what it
// does with it is its own work, which the quiet sees; evMu is held.
func (s *settleState) bodyLocked(now time.Time, id network.RequestID, r busyRequest) {
	if r.size >= 0 && r.got >= r.size {
		delete(s.busy, id)
		s.requestLocked(now, r.kind)
	}
}

// endedLocked records the end of request id (Network.loadingFinished or
// loadingFailed), tracked or other; evMu is held.
func (s *settleState) endedLocked(now time.Time, id network.RequestID) {
	if s.others[id] {
		delete(s.others, id)
		s.otherAt = now
	}
	if r, ok := s.busy[id]; ok {
		delete(s.busy, id)
		s.requestLocked(now, r.kind)
	}
}

// kickLocked records a change and wakes the settle waiters; evMu is held.
func (s *settleState) kickLocked(now time.Time) {
	if s.ready != "" && s.ready == s.doc {
		s.last = now
	}
	s.wakeLocked()
}

// wakeLocked wakes the waiters on changed (the settle's and navigated's);
// evMu is held.
func (s *settleState) wakeLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

func (s *settleState) waitLocked() <-chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// installSettle exposes the settle binding to the isolated world
// (Runtime.addBinding with executionContextName) and has settle.js run
// there at the start of every document
// (Page.addScriptToEvaluateOnNewDocument with worldName), after
// guard.js, the click guard's listeners, in the same script.
func (t *Page) installSettle(ctx context.Context) error {
	if _, err := cdp.Call(ctx, t.target, runtime.AddBinding, runtime.AddBindingParams{Name: settleBinding, ExecutionContextName: settleWorld}); err != nil {
		return CDPErr("install settle binding", err)
	}
	src := strings.NewReplacer(
		"__MAX__", strconv.Itoa(int(settleMax/time.Millisecond)),
		"__QUIET__", strconv.Itoa(int(settleQuiet/time.Millisecond)),
	).Replace(js.Guard + "\n" + js.Settle)
	if _, err := cdp.Call(ctx, t.target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src, WorldName: settleWorld}); err != nil {
		return CDPErr("install settle script", err)
	}
	return nil
}

// onSettleEventLocked records, from the tab's CDP listener (evMu held),
// what the settled wait needs.
func (t *Page) onSettleEventLocked(ev any) {
	s := &t.st
	now := time.Now()
	switch ev := ev.(type) {
	case *page.EventFrameNavigated:
		if ev.Frame.ParentID == "" {
			s.doc = ev.Frame.LoaderID
			// The old document's requests end with it. A document the
			// back/forward cache restores runs its pageshow listeners
			// before Chromium reports the restore: their fetches, of
			// the document's own loader, stay.
			for id, r := range s.busy {
				if r.loader != s.doc || r.kind == network.ResourceTypeDocument {
					delete(s.busy, id)
				}
			}
			clear(s.others)
			s.batch, s.quietAfter = 0, -1
			if ev.Type == page.NavigationTypeBackForwardCacheRestore {
				// A page restored from the back/forward cache loaded
				// before; it fires no load again, and settle.js, whose
				// observer ended, reports no quiet again.
				s.ready, s.readyAt = s.doc, now
				s.loaded, s.loadAt, s.mutated = s.doc, now, time.Time{}
				s.scripted, s.hidden = "", false
			}
			s.kickLocked(now)
		}
	case *page.EventLifecycleEvent:
		if ev.Name == "DOMContentLoaded" && ev.FrameID == cdp.FrameID(t.targetID) {
			s.ready, s.readyAt = ev.LoaderID, now
			t.env.Go(t.prepareObservation)
		}
		if ev.Name == "load" && ev.FrameID == cdp.FrameID(t.targetID) {
			s.loaded, s.loadAt, s.mutated = ev.LoaderID, now, time.Time{}
			s.mutations, s.requests = 0, 0
			s.wakeLocked() // load is no change of the page
			t.env.Go(t.prepareObservation)
		}
	case *network.EventWebSocketCreated:
		s.streams = s.doc
	case *network.EventRequestWillBeSent:
		if ev.Type == network.ResourceTypeEventSource {
			s.streams = s.doc
		}
		if workerScript(ev) {
			// Its end is the worker's to report, and what the worker
			// then does is work on another thread, which no count sees.
			break
		}
		switch ev.Type {
		case network.ResourceTypePing, network.ResourceTypeCSPViolationReport, network.ResourceTypePreflight:
			// No event of the page's comes of these.
		case network.ResourceTypeDocument:
			if ev.FrameID == cdp.FrameID(t.targetID) && ev.LoaderID == s.doc && s.doc != "" {
				// The request of the top document that has committed
				// already, reported after its commit (Network events come
				// on the browser's pipe, Page.frameNavigated on the
				// renderer's): nothing is navigating.
				break
			}
			fallthrough
		case network.ResourceTypeFetch, network.ResourceTypeXHR, network.ResourceTypeScript:
			if s.busy == nil {
				s.busy = map[network.RequestID]busyRequest{}
			}
			if len(s.busy) < 10000 {
				s.busy[ev.RequestID] = busyRequest{url: ev.Request.URL, frame: ev.FrameID, loader: ev.LoaderID, kind: ev.Type, size: -1}
			}
			if s.loaded == s.doc {
				s.requests++
			}
			s.requestLocked(now, ev.Type)
		default:
			// The favicon is the browser's (type Other, initiator
			// other): no event of the page's comes of it either.
			browsers := ev.Type == network.ResourceTypeOther && ev.Initiator != nil && ev.Initiator.Type == network.InitiatorTypeOther
			if ev.FrameID == cdp.FrameID(t.targetID) && !browsers && len(s.others) < 10000 {
				if s.others == nil {
					s.others = map[network.RequestID]bool{}
				}
				s.others[ev.RequestID] = true
			}
		}
	case *page.EventFrameDetached:
		// With reason swap when the iframe moves to another process (the
		// end of its document request is then reported in that process's
		// session), remove when it goes: its requests end here.
		n, held := len(s.busy), true
		for id, r := range s.busy {
			if r.frame == ev.FrameID {
				delete(s.busy, id)
				held = held && s.heldByLoad(r.kind)
			}
		}
		switch {
		case len(s.busy) == n:
		case held:
			s.wakeLocked()
		default:
			s.kickLocked(now)
		}
	case *network.EventResponseReceived:
		// A fetch's promise resolves with its response; its body is
		// the page's to read. Of a response whose body the page never
		// reads, Chromium may never send Network.loadingFinished (seen
		// with a server that closes the connection after it): such a
		// fetch would stay in flight until the settle's bound, and be
		// named as pending. It is done once its whole body has come
		// (below).
		if r, ok := s.busy[ev.RequestID]; ok && r.kind == network.ResourceTypeFetch && ev.Response != nil {
			r.size = bodyLength(ev.Response.Headers)
			s.busy[ev.RequestID] = r
			s.bodyLocked(now, ev.RequestID, r)
		}
	case *network.EventDataReceived:
		if r, ok := s.busy[ev.RequestID]; ok && r.size >= 0 {
			r.got += ev.DataLength
			s.busy[ev.RequestID] = r
			s.bodyLocked(now, ev.RequestID, r)
		}
	case *network.EventLoadingFinished:
		s.endedLocked(now, ev.RequestID)
	case *network.EventLoadingFailed:
		s.endedLocked(now, ev.RequestID)
	case *runtime.EventBindingCalled:
		if ev.Name != settleBinding {
			break
		}
		if ev.Payload == "visible" || ev.Payload == "hidden" {
			// From settle.js's DOMContentLoaded listener, which runs
			// before that Page.lifecycleEvent is sent.
			s.scripted, s.hidden = s.doc, ev.Payload == "hidden"
			s.wakeLocked()
			break
		}
		if s.ready == "" || s.ready != s.doc {
			break
		}
		if ev.Payload == "static" {
			// settle.js, first of the load listeners: the document
			// runs no script of its own.
			s.static = s.doc
			s.wakeLocked()
			break
		}
		if ev.Payload == "untimed" {
			// settle.js, idle after the first frame past load: the
			// page has nothing scheduled.
			if s.loaded == s.doc {
				s.untimed, s.untimedAt = s.doc, now
				s.wakeLocked()
			}
			break
		}
		if ev.Payload == "frames" {
			// settle.js: two animation frames rendered since load.
			if s.loaded == s.doc {
				s.framed = s.doc
				s.wakeLocked()
			}
			break
		}
		if n, ok := strings.CutPrefix(ev.Payload, "quiet "); ok {
			// settle.js: settleQuiet of the page's time after batch n.
			if n, err := strconv.Atoi(n); err == nil && n > s.quietAfter {
				s.quietAfter = n
				s.wakeLocked()
			}
			break
		}
		// settle.js: mutation batch n.
		if n, err := strconv.Atoi(ev.Payload); err == nil && n > s.batch {
			s.batch = n
		}
		if s.loaded == s.doc {
			s.mutated = now
			s.mutations++
		}
		s.kickLocked(now)
	}
}

// AwaitSettled waits until the committed top document has fired load
// (at most loadLimit from the call) and then settled: no fetch, XHR,
// script or frame document in flight, settleQuiet since such a request
// started or ended or the DOM changed (settle.js), counted from
// DOMContentLoaded, confirmed in the page's own time by settle.js in a
// visible page, and two animation frames rendered since load (or
// settleQuiet since load in a hidden page, which renders none); at most
// settleMax past load; a document without scripts of its own, at load,
// and one with nothing scheduled, untimedQuiet after the change or
// DOMContentLoaded once idle after its first frame. A
// document that commits meanwhile (a redirect by script) is
// waited for in its turn, and so is one that a navigation the page asked
// for (Page.frameRequestedNavigation: a meta refresh, a form it submits at
// load) commits: that request holds the settle until it commits or stops.
// It returns early, with no note, when a dialog no policy
// handles opens, the tab dies or ctx ends; and with a note naming what
// was still busy when a limit ran out. Everything it waits on is an event
// (Network.*, Page.lifecycleEvent, Runtime.bindingCalled).
func (t *Page) AwaitSettled(ctx context.Context, loadLimit time.Duration) string {
	return t.awaitQuiet(ctx, loadLimit, false)
}

// AwaitRouteSettled waits, after an action that navigated within the top
// document (a single-page app's route change), as awaitSettled does, but
// counted from the route change (Page.navigatedWithinDocument) instead of
// load: settleQuiet with nothing in flight, starting, ending or mutating
// (settle.js reports mutations for settleMax after each click, key press
// or submit), at most settleMax past the route change.
func (t *Page) AwaitRouteSettled(ctx context.Context) string {
	return t.awaitQuiet(ctx, NavLoadWait, true)
}

// awaitQuiet is awaitSettled, counted from load, or with route from the
// last route change when it came after load.
func (t *Page) awaitQuiet(ctx context.Context, loadLimit time.Duration, route bool) string {
	loadBy := time.NewTimer(loadLimit)
	defer loadBy.Stop()
	quiet := time.NewTimer(time.Hour)
	defer quiet.Stop()
	var capC <-chan time.Time
	var capFor cdp.LoaderID
	docs := 0 // the documents loaded during the settle, one after the other
	sig := t.dialogSignal()
	for {
		now := time.Now()
		t.evMu.Lock()
		if t.dialog != nil && t.dialogs == "" {
			t.evMu.Unlock()
			return ""
		}
		s := &t.st
		loaded := s.doc != "" && s.loaded == s.doc
		if !loaded && t.unloadedRun > MaxClientRedirects {
			// A page that sends itself on before it loads, over and
			// over (a client-side redirect loop after a click): ended
			// there, as an open ends one.
			t.evMu.Unlock()
			t.endLoop()
			return sentOnTooOften(t.LastURL())
		}
		start := s.loadAt
		if route && s.routeAt.After(start) {
			start = s.routeAt
		}
		changed := s.waitLocked()
		wait := time.Duration(-1)
		if loaded && capFor != s.doc {
			capFor = s.doc
			capC = time.After(time.Until(start.Add(settleMax)))
			if docs++; docs > maxSendOn {
				u := t.url
				t.evMu.Unlock()
				return fmt.Sprintf("the page kept sending itself on at load (%d times, the last to %s); returned it as it was", docs-1, msg.Trim(u, 120))
			}
		}
		// A navigation of the top frame that the page asked for (a meta
		// refresh, a form it submits or a redirect it makes at load)
		// holds the settle: the document it commits is waited for in its
		// turn, and one that stops ends the hold. Chromium reports the
		// request (Page.frameRequestedNavigation) from the renderer as it
		// starts the navigation, so before settle.js's reports of the
		// frames and quiet that came after it.
		if loaded && !t.navPending {
			if len(s.busy) == 0 && !route && s.static == s.doc && s.refresh != s.doc {
				// A document without scripts of its own has nothing
				// left to do after load.
				after := now.Sub(start)
				t.evMu.Unlock()
				t.env.Log.Debug("settled", "tab", t.name, "static", true, "after", after)
				return ""
			}
			// The quiet is counted from the last change, or from
			// DOMContentLoaded (for a route change, from the route
			// change).
			from := start
			if !route && s.ready == s.doc && s.readyAt.Before(from) {
				from = s.readyAt
			}
			last := s.last
			if last.Before(from) {
				last = from
			}
			q := now.Sub(last)
			if len(s.busy) == 0 && len(s.others) == 0 && !route && s.untimed == s.doc && s.untimedAt.After(s.last) && s.untimedAt.After(s.otherAt) &&
				s.refresh != s.doc && s.streams != s.doc {
				// Nothing of the page's is scheduled or in flight, and
				// nothing changed since settle.js saw so: untimedQuiet
				// of quiet is enough.
				if q >= untimedQuiet {
					after := now.Sub(start)
					t.evMu.Unlock()
					t.env.Log.Debug("settled", "tab", t.name, "untimed", true, "after", after)
					return ""
				}
				wait = untimedQuiet - q
			}
			if len(s.busy) == 0 {
				// Past load, the page must have rendered two frames
				// too, or, rendering none, been quiet since load.
				// A visible page in which settle.js runs renders frames
				// and runs its timers on time: it has settled when it
				// rendered two frames past load and settle.js saw
				// settleQuiet of the page's own time pass with no DOM
				// change. A renderer that did not run (a loaded
				// machine), or a report still on its way, is no quiet
				// page. A hidden page (a background tab) renders no
				// frames and has its timers throttled; there, and in a
				// document settle.js does not run in, the quiet is
				// counted here, from load too.
				watched := s.scripted == s.doc && !s.hidden
				framed := route || s.framed == s.doc
				pageQuiet := true
				if watched {
					pageQuiet = framed && s.quietAfter >= s.batch
				} else if !framed {
					q = min(q, now.Sub(start))
				}
				if q >= settleQuiet && pageQuiet {
					after, muts, reqs := now.Sub(start), s.mutations, s.requests
					ready := start.Sub(from)
					t.evMu.Unlock()
					t.env.Log.Debug("settled", "tab", t.name, "route", route, "after", after, "framed", framed, "mutations", muts, "requests", reqs, "quiet_before_load", ready)
					return ""
				}
				w := max(settleQuiet-q, 0)
				if q >= settleQuiet {
					w = -1 // until settle.js reports the quiet
				}
				if wait < 0 || (w >= 0 && w < wait) {
					wait = w
				}
			}
		}
		t.evMu.Unlock()
		var quietC <-chan time.Time
		if wait >= 0 {
			quiet.Reset(wait)
			quietC = quiet.C
		}
		var loadC <-chan time.Time
		if !loaded {
			loadC = loadBy.C
		}
		select {
		case <-changed:
		case <-quietC:
		case <-capC:
			if route {
				return strings.Replace(t.settleNote(), "after load", "after the route change", 1)
			}
			return t.settleNote()
		case <-loadC:
			if docs > 1 {
				return fmt.Sprintf("the page was still sending itself on %v after the call (%d times, the last not loaded yet); returned it as it was", loadLimit, docs)
			}
			return fmt.Sprintf("the new page had not fired load within %v; returned it as it was", loadLimit)
		case <-sig:
			sig = t.dialogSignal()
		case <-t.deadSig:
			return ""
		case <-ctx.Done():
			return ""
		}
	}
}

// settleNote says what kept the page busy when the settle ran out.
func (t *Page) settleNote() string {
	t.evMu.Lock()
	urls := make([]string, 0, len(t.st.busy))
	var nav string
	for _, r := range t.st.busy {
		if r.kind == network.ResourceTypeDocument && r.frame == cdp.FrameID(t.targetID) {
			// The page's own navigation (a meta refresh, a redirect by
			// script) whose server has not answered.
			nav = msg.Trim(r.url, 120)
			continue
		}
		urls = append(urls, msg.Trim(r.url, 120))
	}
	if nav == "" && t.navPending {
		// One requested, whose request has not been reported yet.
		nav = msg.Trim(t.navURL, 120)
	}
	mutating := !t.st.mutated.IsZero() && time.Since(t.st.mutated) < settleQuiet
	// A visible page that rendered no frame since load: something holds
	// its rendering (a view transition whose update waits, a
	// render-blocking resource).
	watched := t.st.scripted == t.st.doc && !t.st.hidden
	frameless := watched && t.st.framed != t.st.doc
	// One whose quiet settle.js has not confirmed in the page's own time:
	// its timer came late, or no idle time came after it.
	busy := watched && !frameless && t.st.quietAfter < t.st.batch
	t.evMu.Unlock()
	if nav != "" {
		return fmt.Sprintf("%v after load the page was still navigating to %s (a navigation of its own: a redirect, a refresh or a form it sent; the server had not answered)", settleMax, nav)
	}
	sort.Strings(urls)
	var what []string
	if n := len(urls); n > 0 {
		what = append(what, fmt.Sprintf("%d pending: %s", n, strings.Join(urls[:min(n, 5)], ", ")))
	}
	if mutating {
		what = append(what, "the DOM still changing")
	}
	if frameless {
		what = append(what, "no frame rendered since load")
	}
	if busy && !mutating {
		what = append(what, "its main thread not idle")
	}
	if len(what) == 0 {
		what = append(what, "still changing")
	}
	return fmt.Sprintf("page not settled %v after load (%s); returned it as it was", settleMax, strings.Join(what, "; "))
}
