package tabs

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

// obsState is a tab's observation state beside its numbering (tab.go):
// the sessions of its out-of-process iframes, the isolated worlds the
// walker runs in, whether a top-level navigation is under way, and the
// element last acted on.
type obsState struct {
	once sync.Once

	mu sync.Mutex
	// oopifs are the attached out-of-process iframe targets, by target
	// id (which is the frame id of their top frame).
	oopifs map[target.ID]*oopif
	// worlds are the walker's isolated worlds, by session, frame and
	// document.
	worlds map[worldKey]obsWorld
	// making are the worlds being made, by key: closed when made (or
	// not), so that a second caller waits instead of making another.
	making map[worldKey]chan struct{}
	// topWorld is the key of the last top-level document's world.
	topWorld worldKey
	// navPending is set when the top frame starts a cross-document
	// navigation, and cleared when it commits or stops.
	navPending bool
	navSignal  chan struct{}
	// unloadAsk is set while a beforeunload dialog of the top frame is
	// open.
	unloadAsk bool
	// preparing is set while prepareObservation runs.
	preparing atomic.Bool
}

// obsTabState is the observation state of a tab beside its numbering.
type obsTabState struct {
	mu sync.Mutex
	// loadGaveUp is the top-level document (Page.navSeq) whose load an
	// observation waited for in vain, when loadGaveUpSet.
	loadGaveUp    int
	loadGaveUpSet bool
	// clickables are, by world, the nodes with click-like listeners as
	// remote objects in that world, kept from one observation to the next
	// (walkArgs).
	clickables map[worldKey]*clickableSet
	// lastActed is the element the latest action by number resolved.
	lastActed observe.Ref
}

// oopif is an attached out-of-process iframe target.
type oopif struct {
	cancel context.CancelFunc
	t      *chromedp.Target
	// parent is the session of the frame that holds its iframe (the page's
	// target or another oopif's), and parentFrame that frame's id.
	parent      *chromedp.Target
	parentFrame cdp.FrameID
}

type worldKey struct {
	session target.SessionID
	frame   cdp.FrameID
	loader  cdp.LoaderID
}

// observeSetup installs the tab's observation listener, once.
func (t *Page) observeSetup() {
	t.ob.once.Do(func() {
		t.ob.mu.Lock()
		t.ob.navSignal = make(chan struct{})
		t.ob.mu.Unlock()
		if err := chromedp.Listen(t.ctx, t.onObserveEvent); err != nil {
			t.env.log.Warn("observe listener", "tab", t.name, "err", err)
		}
	})
}

// onObserveEvent tracks top-level navigations (Page.frameStartedNavigating,
// Page.frameRequestedNavigation, the document request, Page.frameNavigated,
// Page.frameStoppedLoading, and a beforeunload dialog dismissed:
// Page.javascriptDialogClosed with result false). It runs in chromedp's read loop: it returns
// fast and calls no CDP.
func (t *Page) onObserveEvent(ev any) {
	main := cdp.FrameID(t.targetID)
	pending := -1 // -1 no change, 0 clear, 1 set
	switch ev := ev.(type) {
	case *page.EventFrameStartedNavigating:
		if ev.FrameID == main {
			switch ev.NavigationType {
			case page.FrameStartedNavigatingNavigationTypeSameDocument, page.FrameStartedNavigatingNavigationTypeHistorySameDocument:
			default:
				pending = 1
			}
		}
	case *page.EventFrameRequestedNavigation:
		if ev.FrameID == main && ev.Disposition == page.ClientNavigationDispositionCurrentTab {
			pending = 1
		}
	case *network.EventRequestWillBeSent:
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == main && ev.DocumentURL == ev.Request.URL {
			pending = 1
		}
	case *page.EventFrameNavigated:
		if ev.Frame != nil && ev.Frame.ParentID == "" {
			pending = 0
		}
	case *page.EventFrameStoppedLoading:
		if ev.FrameID == main {
			pending = 0
		}
	case *page.EventJavascriptDialogOpening:
		t.ob.mu.Lock()
		t.ob.unloadAsk = ev.Type == page.DialogTypeBeforeunload && ev.FrameID == main
		t.ob.mu.Unlock()
	case *page.EventJavascriptDialogClosed:
		// A dismissed beforeunload cancels the navigation, with no
		// Page.frameStoppedLoading.
		t.ob.mu.Lock()
		if t.ob.unloadAsk && !ev.Result {
			pending = 0
		}
		t.ob.unloadAsk = false
		t.ob.mu.Unlock()
	}
	if pending < 0 {
		return
	}
	t.ob.mu.Lock()
	if t.ob.navPending != (pending == 1) {
		t.ob.navPending = pending == 1
		close(t.ob.navSignal)
		t.ob.navSignal = make(chan struct{})
	}
	t.ob.mu.Unlock()
}

// navWait is how long resolving a number waits for a top-level
// navigation that has started to commit (or stop) before it decides.
const navWait = 3 * time.Second

// resolveNumber resolves an element number from the tab's observations to
// its node: DOM.resolveNode by backend node id on the session of the
// node's frame (the page's, or an out-of-process iframe's). While a
// top-level navigation is under way it waits (up to navWait) for it to
// commit, so a number from the page being left is never used on it.
// Errors: stale_element when the number was never given, its page
// navigated, its frame or node is gone.
func (t *Tab) resolveNumber(ctx context.Context, id int) (*element, error) {
	return t.resolveNumberAs(ctx, id, false)
}

// resolveNumberAs is resolveNumber; with deferShown, what the node shows
// is left in el.shown for the first actionability check to compare, in
// its own call (locate), not in one more round trip.
func (t *Tab) resolveNumberAs(ctx context.Context, id int, deferShown bool) (*element, error) {
	deadline := time.Now().Add(navWait)
	for {
		t.ob.mu.Lock()
		pending, sig := t.ob.navPending, t.ob.navSignal
		t.ob.mu.Unlock()
		if !pending || sig == nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-sig:
		case <-ctx.Done():
			return nil, cdpErr("resolve element", ctx.Err())
		case <-time.After(time.Until(deadline)):
		}
	}
	if d := t.PendingDialog(); d != nil && t.dialogs == "" {
		// The page is held by the dialog: nothing on it answers.
		return nil, evalErr(&dialogPendingError{d})
	}
	t.mu.Lock()
	ref, ok := t.num.Lookup(id)
	t.mu.Unlock()
	if !ok {
		return nil, &Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d is not in the current observation (the page navigated, or the number was never given); observe again", id), Err: ErrStale}
	}
	t.ob.mu.Lock()
	pending := t.ob.navPending
	t.ob.mu.Unlock()
	if pending {
		return nil, &Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d belongs to the page being navigated away from; wait for the new page and observe again", id), Err: ErrStale}
	}
	sess := t.sessionFor(ref)
	if sess == nil {
		return nil, &Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d was in a frame that is gone; observe again", id), Err: ErrStale}
	}
	res, err := cdp.Call(ctx, sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: ref.BackendNodeID})
	if err != nil && ctx.Err() != nil {
		return nil, cdpErr("resolve element", err)
	}
	if err != nil || res.Object == nil || res.Object.ObjectID == "" {
		return nil, &Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d is gone from the page; observe again", id), Err: ErrStale}
	}
	el := &element{obj: res.Object.ObjectID, desc: fmt.Sprintf("element %d", id), number: id, backend: ref.BackendNodeID}
	if sess != t.target {
		el.sess = sess
	}
	if deferShown {
		el.shown = t.wantShown(el, ref)
	} else if err := t.checkShown(ctx, el, ref); err != nil {
		return nil, err
	}
	t.obs.mu.Lock()
	t.obs.lastActed = ref
	t.obs.mu.Unlock()
	return el, nil
}

// sessionFor returns the CDP session of a Ref's frame: the page's target,
// or the out-of-process iframe's; nil when that iframe is gone.
func (t *Page) sessionFor(ref observe.Ref) *chromedp.Target {
	if ref.Session == "" {
		return t.target
	}
	t.ob.mu.Lock()
	defer t.ob.mu.Unlock()
	for _, o := range t.ob.oopifs {
		if string(o.t.SessionID) == ref.Session {
			return o.t
		}
	}
	return nil
}

// sessionOf returns the session of an out-of-process iframe, or the
// page's when sess is nil.
func (t *Page) sessionOf(sess *chromedp.Target) *chromedp.Target {
	if sess != nil {
		return sess
	}
	return t.target
}

// contentQuads returns an element's content quads (DOM.getContentQuads)
// in top-level viewport CSS pixels: the quads of an element in an
// out-of-process iframe are relative to that frame's viewport, so they are
// offset by the iframe's content box, and its parents', in turn.
func (t *Page) contentQuads(ctx context.Context, sess *chromedp.Target, obj runtime.RemoteObjectID) (dom.GetContentQuadsResult, error) {
	q, err := cdp.Call(ctx, t.sessionOf(sess), dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: obj})
	if err != nil || sess == nil {
		return q, err
	}
	dx, dy, err := t.frameOrigin(ctx, sess)
	if err != nil {
		return q, err
	}
	for _, quad := range q.Quads {
		for i := 0; i+1 < len(quad); i += 2 {
			quad[i] += dx
			quad[i+1] += dy
		}
	}
	return q, nil
}

// topFramesJS resolves after two animation frames of its page (at most
// 100 ms: a hidden page gets none).
const topFramesJS = "new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 100); })"

// awaitTopFrames waits until the top-level page has run two animation
// frames (requestAnimationFrame in the walker's isolated world, so the
// page sees nothing), and so presented what changed before the call: an
// element's scrollIntoView in an out-of-process iframe scrolls its
// ancestors in their own renderers, and the browser hit-tests input
// against what they last presented, so a press sent sooner can land where
// the iframe was (TestObserveFrames failed 3 in 30 without it).
func (t *Page) awaitTopFrames(ctx context.Context) error {
	t.evMu.Lock()
	loader := t.st.doc
	t.evMu.Unlock()
	w, err := t.world(ctx, &obsFrame{id: cdp.FrameID(t.targetID), loader: loader, sess: t.target, top: true}, false)
	if err != nil {
		return err
	}
	return t.blocking(ctx, func(ctx context.Context) error {
		_, err := cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{Expression: topFramesJS, ContextID: w.ctxID, AwaitPromise: new(true)})
		return err
	})
}

// frameOrigin returns where the viewport of an out-of-process iframe's
// target starts in the top-level viewport: the content box of its
// <iframe> (DOM.getFrameOwner, DOM.getBoxModel in the parent), plus the
// parent's own origin when the parent is out of process too.
func (t *Page) frameOrigin(ctx context.Context, s *chromedp.Target) (float64, float64, error) {
	var x, y float64
	for depth := 0; s != nil && s != t.target && depth < 16; depth++ {
		t.ob.mu.Lock()
		o := t.ob.oopifs[s.TargetID]
		t.ob.mu.Unlock()
		if o == nil {
			return 0, 0, &Error{Code: errcode.StaleElement, Msg: "the element's frame is gone; observe again", Err: ErrStale}
		}
		owner, err := cdp.Call(ctx, o.parent, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: cdp.FrameID(s.TargetID)})
		if err != nil {
			return 0, 0, cdpErr("find the frame's iframe", err)
		}
		bm, err := cdp.Call(ctx, o.parent, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: owner.BackendNodeID})
		if err != nil || bm.Model == nil || len(bm.Model.Content) < 2 {
			return 0, 0, &Error{Code: errcode.NotActionable, Msg: "the element's frame has no layout box (hidden)"}
		}
		x += bm.Model.Content[0]
		y += bm.Model.Content[1]
		s = o.parent
	}
	return x, y, nil
}

// attachFrame returns the session of an out-of-process iframe target,
// attaching to it (a chromedp context under the tab's, detached, never
// closed, when the tab ends or the iframe goes) the first time.
func (t *Page) attachFrame(ctx context.Context, ti *target.Info, parent *chromedp.Target) (*oopif, error) {
	t.ob.mu.Lock()
	if o := t.ob.oopifs[ti.TargetID]; o != nil {
		o.parent, o.parentFrame = parent, ti.ParentFrameID
		t.ob.mu.Unlock()
		return o, nil
	}
	t.ob.mu.Unlock()
	// The first Do binds the context's life: it has none of ctx's
	// deadline, and ctx only bounds the wait.
	fctx, cancel := chromedp.NewContext(t.ctx, chromedp.WithTargetID(ti.TargetID), chromedp.WithDetachOnCancel())
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(fctx) }()
	select {
	case err := <-done:
		if err != nil {
			go cancel()
			return nil, fmt.Errorf("attach to iframe %s: %w", ti.URL, err)
		}
	case <-ctx.Done():
		go func() { <-done; cancel() }()
		return nil, ctx.Err()
	}
	o := &oopif{cancel: cancel, t: chromedp.FromContext(fctx).Target, parent: parent, parentFrame: ti.ParentFrameID}
	t.ob.mu.Lock()
	if t.ob.oopifs == nil {
		t.ob.oopifs = map[target.ID]*oopif{}
	}
	if old := t.ob.oopifs[ti.TargetID]; old != nil {
		t.ob.mu.Unlock()
		go cancel()
		return old, nil
	}
	t.ob.oopifs[ti.TargetID] = o
	t.ob.mu.Unlock()
	return o, nil
}

// dropFrames detaches from the out-of-process iframes not in live.
func (t *Page) dropFrames(live map[target.ID]bool) {
	t.ob.mu.Lock()
	defer t.ob.mu.Unlock()
	for id, o := range t.ob.oopifs {
		if !live[id] {
			delete(t.ob.oopifs, id)
			go o.cancel()
		}
	}
}

// shownWant is what a number showed when it was numbered: its Ref (whose
// Row is the row key), its name and its label key.
type shownWant struct {
	ref       observe.Ref
	name, key string
}

// wantShown returns what the node behind el must still show, or nil when
// its number was in no list item or row and had no label.
func (t *Tab) wantShown(el *element, ref observe.Ref) *shownWant {
	t.mu.Lock()
	name, key := t.num.Shown(el.number)
	t.mu.Unlock()
	if ref.Row == "" && key == "" {
		return nil
	}
	return &shownWant{ref: ref, name: name, key: key}
}

// checkShown compares what the node behind element el shows with what it
// showed when it was numbered (compareShown), in one call.
func (t *Tab) checkShown(ctx context.Context, el *element, ref observe.Ref) error {
	w := t.wantShown(el, ref)
	if w == nil {
		return nil
	}
	var now *shownNow
	if err := t.callOn(ctx, el, shownJS, &now, w.key); err != nil {
		return err
	}
	return compareShown(el, w, now)
}

// shownNow is what a numbered node shows now (shownJS): its row key, its
// label key, and whether the label it had is now on another node of its
// kind in its document or shadow root.
type shownNow struct {
	Row       string `json:"row"`
	Label     string `json:"label"`
	Elsewhere bool   `json:"elsewhere"`
}

// compareShown compares what a node shows now (nil: detached) with w: a
// node that now shows another list item or row (a virtualised list
// recycled it), or whose old label is now on another node (a list that
// re-rendered its items in place: Delete Alice is now on the third
// button), is stale_element, saying what it shows; a changed label of
// its own (Follow, then Following) goes ahead, and el's description says
// "was X, now Y".
func compareShown(el *element, w *shownWant, now *shownNow) error {
	if now == nil {
		return &Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d is gone from the page; observe again", el.number), Err: ErrStale}
	}
	if now.Row != w.ref.Row {
		shows := now.Row
		if shows == "" {
			shows = now.Label
		}
		shows = strings.TrimPrefix(shows, "=")
		return &Error{Code: errcode.StaleElement, Err: ErrStale, Msg: fmt.Sprintf(
			"element %d showed %q, and its node now shows %q (the list reused it for another item); observe again",
			el.number, trim(strings.TrimPrefix(w.ref.Row, "="), 60), trim(shows, 60))}
	}
	if now.Label != w.key {
		was := w.name
		if was == "" {
			was = w.key
		}
		if now.Elsewhere {
			return &Error{Code: errcode.StaleElement, Err: ErrStale, Msg: fmt.Sprintf(
				"element %d was %q, and its node now shows %q while another element shows %q (the page re-rendered its items in place); observe again",
				el.number, trim(was, 60), trim(now.Label, 60), trim(w.key, 60))}
		}
		el.desc = fmt.Sprintf("element %d (was %q, now %q)", el.number, trim(was, 60), trim(now.Label, 60))
	}
	return nil
}
