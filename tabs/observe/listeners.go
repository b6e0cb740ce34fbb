package observe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domdebugger"
	"github.com/chromedp/cdproto/runtime"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// listenersGroup prefixes the object group of an observation's
// DOMDebugger.getEventListeners call in a frame (one group per frame, so
// that concurrent walks of a session's frames do not release each other's).
const listenersGroup = "tabpilot-listeners-"

// listenerNodes returns the backend node ids of the nodes of frame f with
// click-like listeners (click, mouse and pointer down/up, touch start/end,
// dblclick), at most maxClickables: DOMDebugger.getEventListeners on the
// frame's document (the whole subtree, piercing shadow roots), asked in
// the document's main world (DOM.resolveNode of w.doc with no execution
// context) in an object group of its own, released right after.
//
// Never ask it with an object of the walker's isolated world: Blink then
// wraps every listener's handler, a function of the page's main world
// (an inline onclick="" one compiled on the spot), as a remote object of
// the isolated world. Chromium 156 does not survive that for long: after
// a few observations of pages with inline handlers, a later
// getEventListeners, walk or navigation crashes the renderer (SIGSEGV,
// Inspector.targetCrashed), with or without the stealth patches (the
// chaos test, TestChaos, found it). Released at once, the wrappers of the
// main world leave nothing behind.
func (t *Observer) listenerNodes(ctx context.Context, f *pagecore.Frame, w pagecore.World) ([]cdp.BackendNodeID, error) {
	group := listenersGroup + string(f.ID)
	doc, err := cdp.Call(ctx, f.Sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: w.Doc, ObjectGroup: group})
	if err != nil {
		return nil, err
	}
	if doc.Object == nil || doc.Object.ObjectID == "" {
		return nil, errors.New("observe: the document did not resolve in its main world")
	}
	defer func() {
		// In the background, bounded by the tab's life and 5 s: the
		// result is read already.
		go func() {
			rctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, _ = cdp.Call(rctx, f.Sess, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
		}()
	}()
	ls, err := cdp.Call(ctx, f.Sess, domdebugger.GetEventListeners, domdebugger.GetEventListenersParams{ObjectID: doc.Object.ObjectID, Depth: new(int64(-1)), Pierce: new(true)})
	if err != nil {
		return nil, err
	}
	seen := map[cdp.BackendNodeID]bool{}
	var ids []cdp.BackendNodeID
	for _, l := range ls.Listeners {
		switch l.Type {
		case "click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend", "dblclick":
		default:
			continue
		}
		if l.BackendNodeID == 0 || seen[l.BackendNodeID] || len(ids) >= maxClickables {
			continue
		}
		seen[l.BackendNodeID] = true
		ids = append(ids, l.BackendNodeID)
	}
	return ids, nil
}

// clickableSet is a world's nodes with click-like listeners, by backend
// node id, as remote objects in the group clickGroup of that world.
type clickableSet struct {
	ctxID runtime.ExecutionContextID
	objs  map[cdp.BackendNodeID]runtime.RemoteObjectID
}

// clickGroup is the object group of the kept clickable nodes.
const clickGroup = "tabpilot-clickables"

// clickableObjects returns the nodes ids as remote objects in world w
// (DOM.resolveNode, up to 16 at a time), reusing those the previous
// observation of the same world resolved, and releasing (in the
// background) the ones no longer listed. An id that does not resolve gives
// "".
func (t *Observer) clickableObjects(ctx context.Context, f *pagecore.Frame, w pagecore.World, ids []cdp.BackendNodeID) []runtime.RemoteObjectID {
	k := pagecore.WorldKey{Session: f.Sess.SessionID, Frame: f.ID, Loader: f.Loader}
	t.obs.mu.Lock()
	prev := t.obs.clickables[k]
	t.obs.mu.Unlock()
	if prev != nil && prev.ctxID != w.CtxID {
		prev = nil // a new world: its objects are gone with the old one
	}
	objs := make([]runtime.RemoteObjectID, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, id := range ids {
		if prev != nil {
			if o, ok := prev.objs[id]; ok {
				objs[i] = o
				continue
			}
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r, err := cdp.Call(ctx, f.Sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ExecutionContextID: w.CtxID, ObjectGroup: clickGroup})
			if err == nil && r.Object != nil && r.Object.Subtype == "node" {
				objs[i] = r.Object.ObjectID
			}
		})
	}
	wg.Wait()
	next := &clickableSet{ctxID: w.CtxID, objs: make(map[cdp.BackendNodeID]runtime.RemoteObjectID, len(ids))}
	for i, id := range ids {
		if objs[i] != "" {
			next.objs[id] = objs[i]
		}
	}
	var gone []runtime.RemoteObjectID
	if prev != nil {
		for id, o := range prev.objs {
			if _, ok := next.objs[id]; !ok {
				gone = append(gone, o)
			}
		}
	}
	t.obs.mu.Lock()
	if t.obs.clickables == nil {
		t.obs.clickables = map[pagecore.WorldKey]*clickableSet{}
	}
	t.obs.clickables[k] = next
	t.obs.mu.Unlock()
	if len(gone) > 0 {
		// Let the page collect the nodes it removed.
		go func() {
			rctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			for _, o := range gone {
				_, _ = cdp.Call(rctx, f.Sess, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: o})
			}
		}()
	}
	return objs
}
