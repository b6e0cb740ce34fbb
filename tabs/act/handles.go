package act

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Element handles. The element an action works on is a remote object in
// its frame's main world (DOM.resolveNode, or what a selector's query
// returned), and a remote object keeps its node alive until it is
// released. Never released, every element actions had touched stayed in
// the page's memory until its document went, each removed one with its
// subtree: 30 clicks through a list that replaces its button held 30
// buttons (120 MB where each carried 4 MB). So an action resolves into an
// object group of its own, and releases the group when it returns
// (Runtime.releaseObjectGroup on every session it resolved in), in the
// background.

// handles is the object group of one action.
type handles struct {
	group string
	mu    sync.Mutex
	sess  []*chromedp.Target
	// before run ahead of the release (a failed click's guard to end, on
	// its element).
	before []func(context.Context)
}

type handlesKey struct{}

var handlesSeq atomic.Uint64

// releaseWait bounds the release of an action's handles.
const releaseWait = 2 * time.Second

// withHandles returns ctx with an object group for the action that starts
// with it, and the func that releases the group: call it when the action
// returns. A ctx that has one already (an action inside another) keeps
// it, and the func it returns does nothing.
func (t *Actor) withHandles(ctx context.Context) (context.Context, func()) {
	if _, ok := ctx.Value(handlesKey{}).(*handles); ok {
		return ctx, func() {}
	}
	h := &handles{group: "tabpilot-act-" + strconv.FormatUint(handlesSeq.Add(1), 10)}
	return context.WithValue(ctx, handlesKey{}, h), func() { t.release(h) }
}

// group returns the object group for a remote object that a call on sess
// (nil: the page's own session) creates in ctx's action, "" outside one
// (the session's default group, which only the document's end releases).
func (t *Actor) group(ctx context.Context, sess *chromedp.Target) string {
	h, ok := ctx.Value(handlesKey{}).(*handles)
	if !ok {
		return ""
	}
	s := t.SessionOf(sess)
	h.mu.Lock()
	if !slices.Contains(h.sess, s) {
		h.sess = append(h.sess, s)
	}
	h.mu.Unlock()
	return h.group
}

// beforeRelease runs fn before ctx's action releases its handles, or, outside
// an action, on its own goroutine; either way bounded by releaseWait and the
// tab's life.
func (t *Actor) beforeRelease(ctx context.Context, fn func(context.Context)) {
	h, ok := ctx.Value(handlesKey{}).(*handles)
	if !ok {
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), releaseWait)
			defer cancel()
			fn(ctx)
		}()
		return
	}
	h.mu.Lock()
	h.before = append(h.before, fn)
	h.mu.Unlock()
}

// release ends h: its before funcs, then Runtime.releaseObjectGroup on each
// of its sessions, on a goroutine of the tab's.
func (t *Actor) release(h *handles) {
	h.mu.Lock()
	sess, before := h.sess, h.before
	h.mu.Unlock()
	if len(sess) == 0 && len(before) == 0 {
		return
	}
	t.goFn(func() {
		ctx, cancel := context.WithTimeout(t.Context(), releaseWait)
		defer cancel()
		for _, fn := range before {
			fn(ctx)
		}
		for _, s := range sess {
			if _, err := cdp.Call(ctx, s, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: h.group}); err != nil && ctx.Err() == nil {
				t.log.Debug("release element handles", "tab", t.Name(), "err", err)
			}
		}
	})
}
