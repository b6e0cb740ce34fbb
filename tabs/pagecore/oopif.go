package pagecore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
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
	// attaching are the out-of-process iframes being attached, by target
	// id: closed when done (or not), so that a second caller (the
	// preparation, an observation) waits instead of attaching again.
	attaching map[target.ID]chan struct{}
	// starting are the out-of-process iframes that started (FrameStarted)
	// before the navigation to their document committed: Target.getTargets
	// lists such a target only from that commit, which
	// Target.targetInfoChanged announces (frameCommitted).
	starting map[target.ID]bool
	// worlds are the walker's isolated worlds, by session, frame and
	// document.
	worlds map[WorldKey]World
	// making are the worlds being made, by key: closed when made (or
	// not), so that a second caller waits instead of making another.
	making map[WorldKey]chan struct{}
	// topWorld is the key of the last top-level document's world.
	topWorld WorldKey
	// navPending is set when the top frame starts a cross-document
	// navigation, and cleared when it commits or stops.
	navPending bool
	navSignal  chan struct{}
	// unloadAsk is set while a beforeunload dialog of the top frame is
	// open.
	unloadAsk bool
	// preparing is set while prepareObservation runs; again asks it for
	// one more pass.
	preparing, again atomic.Bool
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

// WorldKey names the walker's isolated world of one document: its
// session, frame and loader.
type WorldKey struct {
	Session target.SessionID
	Frame   cdp.FrameID
	Loader  cdp.LoaderID
}

// WatchNavigations installs the tab's observation listener, once.
func (t *Page) WatchNavigations() {
	t.ob.once.Do(func() {
		t.ob.mu.Lock()
		t.ob.navSignal = make(chan struct{})
		t.ob.mu.Unlock()
		if err := chromedp.Listen(t.ctx, t.onObserveEvent); err != nil {
			t.env.Log.Warn("observe listener", "tab", t.name, "err", err)
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

// SessionFor returns the CDP session with id session (an out-of-process
// iframe's, as an observation's Ref names it), or the page's target for
// ""; nil when that iframe is gone.
func (t *Page) SessionFor(session string) *chromedp.Target {
	if session == "" {
		return t.target
	}
	t.ob.mu.Lock()
	defer t.ob.mu.Unlock()
	for _, o := range t.ob.oopifs {
		if string(o.t.SessionID) == session {
			return o.t
		}
	}
	return nil
}

// SessionOf returns the session of an out-of-process iframe, or the
// page's when sess is nil.
func (t *Page) SessionOf(sess *chromedp.Target) *chromedp.Target {
	if sess != nil {
		return sess
	}
	return t.target
}

// ContentQuads returns an element's content quads (DOM.getContentQuads)
// in top-level viewport CSS pixels: the quads of an element in an
// out-of-process iframe are relative to that frame's viewport, so they are
// mapped onto its <iframe>'s content box, and its parents', in turn
// (FrameMap).
func (t *Page) ContentQuads(ctx context.Context, sess *chromedp.Target, obj runtime.RemoteObjectID) (dom.GetContentQuadsResult, error) {
	q, err := cdp.Call(ctx, t.SessionOf(sess), dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: obj})
	if err != nil || sess == nil {
		return q, err
	}
	m, err := t.FrameMap(ctx, sess)
	if err != nil {
		return q, err
	}
	for _, quad := range q.Quads {
		for i := 0; i+1 < len(quad); i += 2 {
			quad[i], quad[i+1] = m.Point(quad[i], quad[i+1])
		}
	}
	return q, nil
}

// FrameMap maps points of an out-of-process iframe's viewport to the
// top-level viewport, both in CSS pixels. Each level is the affine map
// that takes the frame's viewport (its innerWidth × innerHeight, read in
// the walker's isolated world of the frame) onto the content quad of its
// <iframe> in the parent (DOM.getFrameOwner, DOM.getBoxModel): so a
// frame under a CSS transform (scaled, rotated) maps as the browser
// draws it, not only by its offset. Owner is the outermost <iframe>'s
// backend node id, in the page target's renderer: what a hit test of the
// top-level page (DOM.getNodeForLocation) finds over the frame when
// nothing covers it.
type FrameMap struct {
	levels []frameLevel // innermost first
	Owner  cdp.BackendNodeID
}

// frameLevel maps (x, y) to origin + x·u + y·v.
type frameLevel struct{ ox, oy, ux, uy, vx, vy float64 }

// Point maps (x, y) from the frame's viewport to the top-level one.
func (m FrameMap) Point(x, y float64) (float64, float64) {
	for _, l := range m.levels {
		x, y = l.ox+x*l.ux+y*l.vx, l.oy+x*l.uy+y*l.vy
	}
	return x, y
}

// FrameMap returns the map of the out-of-process iframe whose session is
// s (see FrameMap). Errors: stale_element when the frame is gone,
// not_actionable when its <iframe> has no box.
func (t *Page) FrameMap(ctx context.Context, s *chromedp.Target) (FrameMap, error) {
	var m FrameMap
	for depth := 0; s != nil && s != t.target && depth < 16; depth++ {
		o, owner, c, err := t.ownerBox(ctx, s)
		if err != nil {
			return m, err
		}
		w, h, err := t.frameViewport(ctx, s)
		if err != nil {
			return m, err
		}
		// c is clockwise from the frame's top left.
		m.levels = append(m.levels, frameLevel{
			ox: c[0], oy: c[1],
			ux: (c[2] - c[0]) / w, uy: (c[3] - c[1]) / w,
			vx: (c[6] - c[0]) / h, vy: (c[7] - c[1]) / h,
		})
		m.Owner = owner
		s = o.parent
	}
	return m, nil
}

// ownerBox returns, for the out-of-process iframe whose session is s, its
// record, its <iframe>'s backend node id in the parent (DOM.getFrameOwner)
// and that <iframe>'s content quad there (DOM.getBoxModel, 8 numbers).
// Errors: stale_element when the frame is gone, not_actionable when its
// <iframe> has no box.
func (t *Page) ownerBox(ctx context.Context, s *chromedp.Target) (*oopif, cdp.BackendNodeID, dom.Quad, error) {
	t.ob.mu.Lock()
	o := t.ob.oopifs[s.TargetID]
	t.ob.mu.Unlock()
	if o == nil {
		return nil, 0, nil, &Error{Code: errcode.StaleElement, Msg: "the element's frame is gone; observe again", Err: ErrStale}
	}
	owner, err := cdp.Call(ctx, o.parent, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: cdp.FrameID(s.TargetID)})
	if err != nil {
		return nil, 0, nil, CDPErr("find the frame's iframe", err)
	}
	bm, err := cdp.Call(ctx, o.parent, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: owner.BackendNodeID})
	if err != nil || bm.Model == nil || len(bm.Model.Content) != 8 {
		return nil, 0, nil, &Error{Code: errcode.NotActionable, Msg: "the element's frame has no layout box (hidden)"}
	}
	return o, owner.BackendNodeID, bm.Model.Content, nil
}

// NodeAt returns the node that a hit test of the top-level page finds
// at (x, y), in top-level viewport CSS pixels (DOM.getNodeForLocation at
// that point plus the scroll offset, Page.getLayoutMetrics, which
// descends into the page renderer's own frames and stops at an
// out-of-process iframe's <iframe>), and the frame of its document.
// Errors: not_actionable when the page has nothing there (outside its
// viewport).
func (t *Page) NodeAt(ctx context.Context, x, y float64) (cdp.BackendNodeID, cdp.FrameID, error) {
	// DOM.getNodeForLocation takes document coordinates.
	lm, err := cdp.Call(ctx, t.target, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return 0, "", CDPErr("hit-test the page", err)
	}
	if v := lm.CSSLayoutViewport; v != nil {
		x, y = x+float64(v.PageX), y+float64(v.PageY)
	}
	n, err := cdp.Call(ctx, t.target, dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(math.Floor(x)), Y: int64(math.Floor(y))})
	if err != nil && strings.Contains(err.Error(), "No node found") {
		return 0, "", &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("nothing of the page is at (%.0f, %.0f), where the element shows: it is outside the page's viewport", x, y)}
	}
	if err != nil {
		return 0, "", CDPErr("hit-test the page", err)
	}
	return n.BackendNodeID, n.FrameID, nil
}

// DescribeCover names what a hit test of the top-level page found over
// an element of another frame: the node, or, when it is in a frame of its
// own other than the top one (an iframe over the element), that frame's
// <iframe> (DOM.getFrameOwner).
func (t *Page) DescribeCover(ctx context.Context, id cdp.BackendNodeID, frame cdp.FrameID) string {
	if frame != "" && frame != cdp.FrameID(t.targetID) {
		if o, err := cdp.Call(ctx, t.target, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: frame}); err == nil {
			id = o.BackendNodeID
		}
	}
	return t.DescribeNode(ctx, id)
}

// DescribeNode names a node of the top-level page for a message:
// tag#id.class (DOM.describeNode), "an element" when it cannot.
func (t *Page) DescribeNode(ctx context.Context, id cdp.BackendNodeID) string {
	d, err := cdp.Call(ctx, t.target, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: id})
	if err != nil || d.Node == nil {
		return "an element"
	}
	desc := strings.ToLower(d.Node.LocalName)
	if desc == "" {
		desc = strings.ToLower(d.Node.NodeName)
	}
	var ident, cls string
	for i := 0; i+1 < len(d.Node.Attributes); i += 2 {
		switch v := d.Node.Attributes[i+1]; d.Node.Attributes[i] {
		case "id":
			if v != "" {
				ident = "#" + v
			}
		case "class":
			f := strings.Fields(v)
			for _, c := range f[:min(2, len(f))] {
				cls += "." + c
			}
		}
	}
	return desc + ident + cls
}

// frameViewport returns an out-of-process iframe's viewport size in its
// own CSS pixels (innerWidth, innerHeight: the content box of its
// <iframe> before transforms, scrollbars included), read in the walker's
// isolated world (Page.createIsolatedWorld gives the frame's existing
// one), where page scripts cannot replace them.
func (t *Page) frameViewport(ctx context.Context, s *chromedp.Target) (float64, float64, error) {
	r, err := cdp.Call(ctx, s, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: cdp.FrameID(s.TargetID), WorldName: "tabpilot"})
	if err != nil {
		return 0, 0, CDPErr("the frame's viewport", err)
	}
	v, err := cdp.Call(ctx, s, runtime.Evaluate, runtime.EvaluateParams{Expression: "[innerWidth, innerHeight]", ContextID: r.ExecutionContextID, ReturnByValue: new(true)})
	if err != nil {
		return 0, 0, CDPErr("the frame's viewport", err)
	}
	var wh [2]float64
	if v.Result == nil || json.Unmarshal(v.Result.Value, &wh) != nil || wh[0] <= 0 || wh[1] <= 0 {
		return 0, 0, &Error{Code: errcode.NotActionable, Msg: "the element's frame has no viewport (zero size)"}
	}
	return wh[0], wh[1], nil
}

// topFramesJS resolves after two animation frames of its page (at most
// 100 ms: a hidden page gets none).
const topFramesJS = "new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 100); })"

// AwaitTopFrames waits until the top-level page has run two animation
// frames (requestAnimationFrame in the walker's isolated world, so the
// page sees nothing), and so presented what changed before the call: an
// element's scrollIntoView in an out-of-process iframe scrolls its
// ancestors in their own renderers, and the browser hit-tests input
// against what they last presented, so a press sent sooner can land where
// the iframe was (TestObserveFrames failed 3 in 30 without it).
func (t *Page) AwaitTopFrames(ctx context.Context) error {
	t.evMu.Lock()
	loader := t.st.doc
	t.evMu.Unlock()
	w, err := t.World(ctx, &Frame{ID: cdp.FrameID(t.targetID), Loader: loader, Sess: t.target, Top: true}, false)
	if err != nil {
		return err
	}
	return t.Blocking(ctx, func(ctx context.Context) error {
		_, err := cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{Expression: topFramesJS, ContextID: w.CtxID, AwaitPromise: new(true)})
		return err
	})
}

// FrameOrigin returns where the viewport of an out-of-process iframe's
// target starts in the top-level viewport: the content box of its
// <iframe> (DOM.getFrameOwner, DOM.getBoxModel in the parent), plus the
// parent's own origin when the parent is out of process too.
func (t *Page) FrameOrigin(ctx context.Context, s *chromedp.Target) (float64, float64, error) {
	var x, y float64
	for depth := 0; s != nil && s != t.target && depth < 16; depth++ {
		o, _, c, err := t.ownerBox(ctx, s)
		if err != nil {
			return 0, 0, err
		}
		x += c[0]
		y += c[1]
		s = o.parent
	}
	return x, y, nil
}

// attachFrame returns the session of an out-of-process iframe target,
// attaching to it (a chromedp context under the tab's, detached, never
// closed, when the tab ends or the iframe goes) the first time.
func (t *Page) attachFrame(ctx context.Context, ti *target.Info, parent *chromedp.Target) (*oopif, error) {
	for {
		t.ob.mu.Lock()
		if o := t.ob.oopifs[ti.TargetID]; o != nil {
			o.parent, o.parentFrame = parent, ti.ParentFrameID
			t.ob.mu.Unlock()
			return o, nil
		}
		busy := t.ob.attaching[ti.TargetID]
		if busy == nil {
			busy = make(chan struct{})
			if t.ob.attaching == nil {
				t.ob.attaching = map[target.ID]chan struct{}{}
			}
			t.ob.attaching[ti.TargetID] = busy
			t.ob.mu.Unlock()
			defer func() {
				t.ob.mu.Lock()
				delete(t.ob.attaching, ti.TargetID)
				t.ob.mu.Unlock()
				close(busy)
			}()
			break
		}
		t.ob.mu.Unlock()
		// Another call attaches it (each attach is a dozen commands to
		// the frame's renderer): wait for it, then take its session.
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
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
	delete(t.ob.starting, ti.TargetID)
	if t.ob.oopifs == nil {
		t.ob.oopifs = map[target.ID]*oopif{}
	}
	t.ob.oopifs[ti.TargetID] = o
	t.ob.mu.Unlock()
	// The frame's world is made when its document loads, which is before
	// the top document's load: the top's first observation finds it.
	if err := chromedp.Listen(fctx, func(ev any) {
		if e, ok := ev.(*page.EventLifecycleEvent); ok && e.Name == "load" && e.FrameID == cdp.FrameID(ti.TargetID) {
			t.env.Go(t.prepareObservation)
		}
	}); err != nil {
		t.env.Log.Debug("listen to iframe", "tab", t.name, "url", ti.URL, "err", err)
	}
	return o, nil
}

// AttachedFrames returns the number of out-of-process iframes whose
// sessions the observation holds: attached as they start (FrameStarted),
// or by the first observation that found them (Frames).
func (t *Page) AttachedFrames() int {
	t.ob.mu.Lock()
	defer t.ob.mu.Unlock()
	return len(t.ob.oopifs)
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

// FrameSession returns the session of the out-of-process iframe whose top
// frame is frame (its target id is the frame id), attaching to the page's
// iframes (Frames) when it is not attached yet; nil when no out-of-process
// iframe shows that frame. Errors: CDP failures of the frame listing.
func (t *Page) FrameSession(ctx context.Context, frame cdp.FrameID) (*chromedp.Target, error) {
	lookup := func() *chromedp.Target {
		t.ob.mu.Lock()
		defer t.ob.mu.Unlock()
		if o := t.ob.oopifs[target.ID(frame)]; o != nil {
			return o.t
		}
		return nil
	}
	if s := lookup(); s != nil {
		return s, nil
	}
	if _, _, err := t.Frames(ctx, false); err != nil {
		return nil, err
	}
	return lookup(), nil
}
