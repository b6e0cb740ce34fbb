package pagecore

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Held functions. V8 compiles the declaration of a Runtime.callFunctionOn
// on every call: the actionability check (about 15 KB of source) took
// 1.2 ms more to call than the same function compiled once, twice in every
// click. So the functions the owner names (Env.HeldScripts) are compiled
// once per execution context and kept there as remote objects (in
// heldGroup), which the calls pass as an argument to a one-line
// declaration (HeldCall): such a function is `function(opts, self)`, and
// self is its element. A held function is no global and no property of
// anything: no page script can reach it. It goes with its context, and
// so does the state a closure among them keeps (the click's guard): a
// call that falls back to sending the source (Held returned "") gets a
// fresh closure, without it.

// heldGroup is the object group of the held functions.
const heldGroup = "tabpilot-held"

// HeldCall is the declaration that calls a held function (the first
// argument) with the call's one argument and its object: a held function
// takes its element as its second parameter, not as this. It calls f
// directly, through nothing a page script could replace
// (Function.prototype.call and apply are the page's).
const HeldCall = "function(f, o) { return f(o, this); }"

// heldKey names a held function: the session, the execution context (the
// isolate and context part of a remote object id) and the source.
type heldKey struct {
	sess *chromedp.Target
	ctx  string
	fn   string
}

// heldState is a Page's held functions.
type heldState struct {
	mu sync.Mutex
	m  map[heldKey]runtime.RemoteObjectID
	// prepared is the loader of the top document prepareHeld last
	// compiled in.
	prepared cdp.LoaderID
	// guard is the execution context of guard.js's world, by frame of
	// the page's renderer (GuardContext).
	guard map[cdp.FrameID]runtime.ExecutionContextID
}

// heldMax bounds the held functions remembered: those of the contexts of
// out-of-process iframes that are gone are not told apart from live ones,
// and all are forgotten when it is reached (a top-level commit forgets
// them all too).
const heldMax = 64

// objContext returns the isolate and execution context part of a remote
// object id ("isolate.context.object", V8's inspector), or "" when the id
// has another form.
func objContext(obj runtime.RemoteObjectID) string {
	s := string(obj)
	if strings.Count(s, ".") != 2 {
		return ""
	}
	return s[:strings.LastIndexByte(s, '.')]
}

// reset forgets every held function, at a top-level commit (events.go).
func (h *heldState) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m, h.prepared, h.guard = nil, "", nil
}

func (h *heldState) get(k heldKey) (runtime.RemoteObjectID, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.m[k]
	return f, ok
}

func (h *heldState) put(k heldKey, f runtime.RemoteObjectID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.m[k]; ok {
		return // a concurrent compile won
	}
	if h.m == nil || len(h.m) >= heldMax {
		h.m = map[heldKey]runtime.RemoteObjectID{}
	}
	h.m[k] = f
}

// Held returns the function fn compiled in the execution context of the
// remote object obj of sess (nil: the page's), or "" when fn is not one
// of Env.HeldScripts or cannot be compiled there: the caller then sends
// fn itself. A context the preparation (at DOMContentLoaded and load, in
// the top frame's main world) did not cover gets it here, in one
// Runtime.callFunctionOn on obj that returns the function by reference.
func (t *Page) Held(ctx context.Context, sess *chromedp.Target, obj runtime.RemoteObjectID, fn string) runtime.RemoteObjectID {
	c := objContext(obj)
	if c == "" || !slices.Contains(t.env.HeldScripts, fn) {
		return ""
	}
	sess = t.SessionOf(sess)
	k := heldKey{sess: sess, ctx: c, fn: fn}
	if f, ok := t.held.get(k); ok {
		return f
	}
	r, err := cdp.Call(ctx, sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function() { return (" + fn + "\n); }", ObjectID: obj, ObjectGroup: heldGroup,
	})
	if err != nil || r.ExceptionDetails != nil || r.Result == nil || objContext(r.Result.ObjectID) != c {
		return ""
	}
	t.held.put(k, r.Result.ObjectID)
	f, _ := t.held.get(k)
	return f
}

// Forget drops the held function fn of obj's context, after a call with
// it failed: the next call sends fn itself or compiles it again.
func (t *Page) Forget(sess *chromedp.Target, obj runtime.RemoteObjectID, fn string) {
	k := heldKey{sess: t.SessionOf(sess), ctx: objContext(obj), fn: fn}
	t.held.mu.Lock()
	delete(t.held.m, k)
	t.held.mu.Unlock()
}

// prepareHeld compiles Env.HeldScripts in the top frame's main world
// (Runtime.evaluate with no context), where DOM.resolveNode puts the
// top document's elements, so that the first action on a page does not
// compile them, once per document (loader); and the same in the world of
// guard.js (GuardContext), where a click by number checks its element.
// Evaluating a function expression leaves nothing a page script could
// see.
func (t *Page) prepareHeld(ctx context.Context, loader cdp.LoaderID) {
	t.held.mu.Lock()
	done := loader != "" && t.held.prepared == loader
	t.held.prepared = loader
	t.held.mu.Unlock()
	if done {
		return
	}
	sess := t.Target()
	var wg sync.WaitGroup
	wg.Go(func() { t.compileHeld(ctx, 0) })
	wg.Go(func() {
		if c, err := t.GuardContext(ctx, cdp.FrameID(sess.TargetID)); err == nil {
			t.compileHeld(ctx, c)
		}
	})
	wg.Wait()
}

// compileHeld compiles Env.HeldScripts in the top frame's execution
// context c (0: its main world) and keeps them (Runtime.evaluate).
func (t *Page) compileHeld(ctx context.Context, c runtime.ExecutionContextID) {
	sess := t.Target()
	for _, fn := range t.env.HeldScripts {
		r, err := cdp.Call(ctx, sess, runtime.Evaluate, runtime.EvaluateParams{Expression: "(" + fn + "\n)", ObjectGroup: heldGroup, ContextID: c})
		if err != nil || r.ExceptionDetails != nil || r.Result == nil {
			return
		}
		if k := objContext(r.Result.ObjectID); k != "" {
			t.held.put(heldKey{sess: sess, ctx: k, fn: fn}, r.Result.ObjectID)
		}
	}
}

// GuardContext returns the execution context of the isolated world where
// guard.js ran at the start of the document of frame, a frame of the
// page's own renderer (the top one, or a same-process iframe), from
// Page.createIsolatedWorld, which gives the world of that name the frame
// has. It is remembered until the top document changes; a caller that
// finds it gone (the iframe navigated) calls ForgetGuardContext. A
// document that started before the page installed guard.js gets the
// world without it.
func (t *Page) GuardContext(ctx context.Context, frame cdp.FrameID) (runtime.ExecutionContextID, error) {
	t.held.mu.Lock()
	c, ok := t.held.guard[frame]
	t.held.mu.Unlock()
	if ok {
		return c, nil
	}
	r, err := cdp.Call(ctx, t.Target(), page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: settleWorld})
	if err != nil {
		return 0, CDPErr("guard world", err)
	}
	t.held.mu.Lock()
	defer t.held.mu.Unlock()
	if t.held.guard == nil || len(t.held.guard) >= heldMax {
		t.held.guard = map[cdp.FrameID]runtime.ExecutionContextID{}
	}
	t.held.guard[frame] = r.ExecutionContextID
	return r.ExecutionContextID, nil
}

// ForgetGuardContext forgets frame's GuardContext, after a call in it
// failed.
func (t *Page) ForgetGuardContext(frame cdp.FrameID) {
	t.held.mu.Lock()
	delete(t.held.guard, frame)
	t.held.mu.Unlock()
}
