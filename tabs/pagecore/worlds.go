package pagecore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Frame is a frame to walk.
type Frame struct {
	ID     cdp.FrameID
	Loader cdp.LoaderID
	Sess   *chromedp.Target
	// session is the CDP session id of an out-of-process iframe's target,
	// empty for the page's frames.
	Session   string
	URL, Name string
	Parent    cdp.FrameID
	Owner     cdp.BackendNodeID
	Top       bool
}

// Frames lists the frames of the page: the page target's frame tree, and
// the frame trees of its out-of-process iframes (Target.getTargets:
// iframe targets whose parent frame is one of the page's, in turn),
// leaving out error pages (a frame that failed to load). It returns a func
// that waits for the backend node ids of the child frames' <iframe>s
// (DOM.getFrameOwner in their parents), looked up meanwhile. With drop, it
// detaches from the out-of-process iframes that are gone.
func (t *Page) Frames(ctx context.Context, drop bool) ([]*Frame, func(), error) {
	var infos []*target.Info
	var wg sync.WaitGroup
	if browser := chromedp.FromContext(t.ctx).Browser; browser != nil {
		wg.Go(func() {
			if r, err := cdp.Call(ctx, browser, target.GetTargets, target.GetTargetsParams{}); err == nil {
				infos = r.TargetInfos
			}
		})
	}
	tree, err := cdp.Call(ctx, t.target, page.GetFrameTree, cdp.Empty{})
	wg.Wait()
	if err != nil {
		return nil, nil, CDPErr("get frame tree", err)
	}
	var out []*Frame
	byID := map[cdp.FrameID]*Frame{}
	var add func(ft *page.FrameTree, sess *chromedp.Target, session string, parent cdp.FrameID, top bool)
	add = func(ft *page.FrameTree, sess *chromedp.Target, session string, parent cdp.FrameID, top bool) {
		if ft == nil || ft.Frame == nil {
			return
		}
		f := &Frame{ID: ft.Frame.ID, Loader: ft.Frame.LoaderID, Sess: sess, Session: session, Parent: parent, Top: top}
		if !top {
			f.URL, f.Name = ft.Frame.URL, ft.Frame.Name
		}
		if old := byID[f.ID]; old != nil {
			*old = *f // an out-of-process frame replaces its placeholder
		} else {
			out = append(out, f)
			byID[f.ID] = f
		}
		for _, c := range ft.ChildFrames {
			add(c, sess, session, f.ID, false)
		}
	}
	add(tree.FrameTree, t.target, "", "", true)

	live := map[target.ID]bool{}
	attached := map[target.ID]bool{}
	for progress := true; progress; {
		progress = false
		for _, ti := range infos {
			if ti.Type != "iframe" || attached[ti.TargetID] || strings.HasPrefix(ti.URL, "chrome-error:") {
				continue
			}
			pf := byID[ti.ParentFrameID]
			if pf == nil {
				continue
			}
			attached[ti.TargetID] = true
			progress = true
			of, err := t.attachFrame(ctx, ti, pf.Sess)
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, CDPErr("attach to iframe", ctx.Err())
				}
				t.env.Log.Debug("attach iframe", "tab", t.name, "url", ti.URL, "err", err)
				continue
			}
			live[ti.TargetID] = true
			sub, err := cdp.Call(ctx, of.t, page.GetFrameTree, cdp.Empty{})
			if err != nil {
				continue
			}
			add(sub.FrameTree, of.t, string(of.t.SessionID), ti.ParentFrameID, false)
		}
	}
	if drop {
		t.dropFrames(live)
	}
	kept := out[:0]
	for _, f := range out {
		if f.Top || !strings.HasPrefix(f.URL, "chrome-error:") {
			kept = append(kept, f)
		}
	}
	out = kept

	// The owners of the child frames, concurrently with the walks.
	var owners sync.WaitGroup
	for _, f := range out {
		if f.Top {
			continue
		}
		p := byID[f.Parent]
		if p == nil {
			continue
		}
		owners.Go(func() {
			r, err := cdp.Call(ctx, p.Sess, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: f.ID})
			if err == nil {
				f.Owner = r.BackendNodeID
			}
		})
	}
	return out, owners.Wait, nil
}

// World is the walker's isolated world in a document, and the backend
// node id of that document (for DOMDebugger.getEventListeners, which is
// asked in the document's main world; see listenerNodes).
type World struct {
	CtxID runtime.ExecutionContextID
	Doc   cdp.BackendNodeID
}

// worldGroup is the object group of the kept document objects.
const worldGroup = "tabpilot-world"

// World returns the walker's isolated world in a frame
// (Page.createIsolatedWorld), made once per document.
func (t *Page) World(ctx context.Context, f *Frame, fresh bool) (World, error) {
	k := WorldKey{Session: f.Sess.SessionID, Frame: f.ID, Loader: f.Loader}
	for {
		t.ob.mu.Lock()
		w, ok := t.ob.worlds[k]
		making := t.ob.making[k]
		if ok && !fresh {
			t.ob.mu.Unlock()
			return w, nil
		}
		if making == nil || fresh {
			// This call makes the world; a concurrent one (the
			// preparation at load, an observation) waits for it.
			done := make(chan struct{})
			if t.ob.making == nil {
				t.ob.making = map[WorldKey]chan struct{}{}
			}
			t.ob.making[k] = done
			t.ob.mu.Unlock()
			defer func() {
				t.ob.mu.Lock()
				if t.ob.making[k] == done {
					delete(t.ob.making, k)
				}
				t.ob.mu.Unlock()
				close(done)
			}()
			break
		}
		t.ob.mu.Unlock()
		select {
		case <-making:
		case <-ctx.Done():
			return World{}, ctx.Err()
		}
	}
	r, err := cdp.Call(ctx, f.Sess, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.ID, WorldName: "tabpilot"})
	if err != nil {
		return World{}, err
	}
	// The walker is compiled once per world, where page scripts cannot
	// reach it; each observation then sends a one-line stub.
	// The document comes back deep-serialized, for its backend node id.
	doc, err := cdp.Call(ctx, f.Sess, runtime.Evaluate, runtime.EvaluateParams{Expression: "(globalThis.__tpWalk = (" + t.env.WorldScript + "\n), document)",
		ContextID: r.ExecutionContextID, ObjectGroup: worldGroup, SerializationOptions: docSerialization})
	if err != nil {
		return World{}, err
	}
	var dn struct {
		BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
	}
	if doc.Result == nil || doc.Result.DeepSerializedValue == nil || jsonv2.Unmarshal(doc.Result.DeepSerializedValue.Value, &dn) != nil || dn.BackendNodeID == 0 {
		return World{}, errors.New("no document in the frame")
	}
	w := World{CtxID: r.ExecutionContextID, Doc: dn.BackendNodeID}
	t.ob.mu.Lock()
	if t.ob.worlds == nil {
		t.ob.worlds = map[WorldKey]World{}
	}
	t.ob.worlds[k] = w
	if f.Top {
		t.ob.topWorld = k
	}
	t.ob.mu.Unlock()
	return w, nil
}

// prepareWait bounds prepareObservation.
const prepareWait = 5 * time.Second

// prepareObservation makes, from the top document's DOMContentLoaded, as
// each out-of-process iframe starts (FrameStarted) and loads, and again at
// the top document's load, while the settled wait runs, what the document's
// first observation would otherwise make on its way: the sessions of the
// out-of-process iframes (Target.attachToTarget) and the walker's isolated
// worlds, with the walker compiled in them (Page.createIsolatedWorld,
// Runtime.evaluate), and the held functions of the top frame's main world
// (prepareHeld). Same-origin frames are walked in line from their parent
// and need no world of their own. Nothing here changes the page's main
// world. One preparation runs at a time per tab; a call while one
// runs has it go once more when it ends (the frames that came since). Errors
// are left to the observation.
func (t *Page) prepareObservation() {
	t.ob.again.Store(true)
	for {
		if !t.ob.preparing.CompareAndSwap(false, true) {
			return
		}
		for t.ob.again.Swap(false) {
			t.prepareFrames()
		}
		t.ob.preparing.Store(false)
		if !t.ob.again.Load() {
			return
		}
	}
}

// FrameStarted tells the tab that the out-of-process iframe target id of
// its page has started (its target attached and, when the stealth patches
// held it with waitForDebuggerOnStart, patched and let run): the
// preparation of the next observation attaches to it now, while the page
// loads, instead of after the top document's load (attaching is a dozen
// commands to the frame's renderer, about 35 ms). The auto-attach reports
// the target as its cross-site navigation gets ready to commit, before
// Target.getTargets lists it (the frame's document is still the parent's
// initial one until the commit), so the iframe is also remembered for
// frameCommitted. It returns at once.
func (t *Page) FrameStarted(id target.ID) {
	t.ob.mu.Lock()
	if _, ok := t.ob.oopifs[id]; !ok {
		if t.ob.starting == nil || len(t.ob.starting) >= startingMax {
			t.ob.starting = map[target.ID]bool{}
		}
		t.ob.starting[id] = true
	}
	t.ob.mu.Unlock()
	t.env.Go(t.prepareObservation)
}

// startingMax bounds the started iframes remembered: those that never
// commit (a navigation cancelled) are forgotten when it is reached.
const startingMax = 64

// frameCommitted tells the tab that the target id changed its info
// (Target.targetInfoChanged) to show the document url: for an iframe that
// started before its navigation committed (FrameStarted), that is the
// commit, from which Target.getTargets lists it, so the preparation
// attaches to it now. Other targets are ignored.
func (t *Page) frameCommitted(id target.ID, url string) {
	if url == "" {
		return
	}
	t.ob.mu.Lock()
	started := t.ob.starting[id]
	delete(t.ob.starting, id)
	t.ob.mu.Unlock()
	if started {
		t.env.Go(t.prepareObservation)
	}
}

// prepareFrames is one pass of prepareObservation.
func (t *Page) prepareFrames() {
	ctx, cancel := context.WithTimeout(t.ctx, prepareWait)
	defer cancel()
	frames, _, err := t.Frames(ctx, false)
	if err != nil {
		return
	}
	byID := make(map[cdp.FrameID]*Frame, len(frames))
	for _, f := range frames {
		byID[f.ID] = f
	}
	var wg sync.WaitGroup
	for _, f := range frames {
		if f.Top {
			wg.Go(func() { t.prepareHeld(ctx, f.Loader) })
		}
	}
	for _, f := range frames {
		if p := byID[f.Parent]; f.Top || p == nil || p.Sess != f.Sess {
			wg.Go(func() { _, _ = t.World(ctx, f, false) })
		}
	}
	wg.Wait()
}

// PruneWorlds forgets the worlds of documents not in frames, and returns
// the keys of those in frames.
func (t *Page) PruneWorlds(frames []*Frame) map[WorldKey]bool {
	keep := map[WorldKey]bool{}
	for _, f := range frames {
		keep[WorldKey{Session: f.Sess.SessionID, Frame: f.ID, Loader: f.Loader}] = true
	}
	t.ob.mu.Lock()
	for k := range t.ob.worlds {
		if !keep[k] {
			delete(t.ob.worlds, k)
		}
	}
	t.ob.mu.Unlock()
	return keep
}

// docSerialization asks for a node alone, with its backend node id.
var docSerialization = &runtime.SerializationOptions{
	Serialization:        runtime.SerializationOptionsSerializationDeep,
	MaxDepth:             new(int64(0)),
	AdditionalParameters: jsonv2.Value(`{"maxNodeDepth":0,"includeShadowTree":"none"}`),
}
