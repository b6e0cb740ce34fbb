package act

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/msg"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/observe"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

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
func (t *Actor) resolveNumber(ctx context.Context, id int) (*element, error) {
	return t.resolveNumberAs(ctx, id, false, false)
}

// resolveNumberAs is resolveNumber; with deferShown, what the node shows
// is left in el.shown for each actionability check to compare, in
// its own call (locate), not in one more round trip; with iso, a node of
// the page's own renderer is resolved in guard.js's world
// (resolveInGuardWorld).
func (t *Actor) resolveNumberAs(ctx context.Context, id int, deferShown, iso bool) (*element, error) {
	deadline := time.Now().Add(navWait)
	for {
		pending, sig := t.CrossDocPending()
		if !pending || sig == nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-sig:
		case <-ctx.Done():
			return nil, pagecore.CDPErr("resolve element", ctx.Err())
		case <-time.After(time.Until(deadline)):
		}
	}
	if d := t.PendingDialog(); d != nil && t.DialogPolicy() == "" {
		// The page is held by the dialog: nothing on it answers.
		return nil, pagecore.EvalErr(&pagecore.DialogPendingError{Dialog: d})
	}
	ref, ok := t.Lookup(id)
	if !ok {
		return nil, &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d is not in the current observation (the page navigated, or the number was never given); observe again", id), Err: pagecore.ErrStale}
	}
	pending, _ := t.CrossDocPending()
	if pending {
		return nil, &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d belongs to the page being navigated away from; wait for the new page and observe again", id), Err: pagecore.ErrStale}
	}
	sess := t.SessionFor(ref.Session)
	if sess == nil {
		return nil, &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d was in a frame that is gone; observe again", id), Err: pagecore.ErrStale}
	}
	var res dom.ResolveNodeResult
	var err error
	world := false
	if iso && sess == t.Target() {
		res, world = t.resolveInGuardWorld(ctx, ref.FrameID, ref.BackendNodeID)
	}
	if !world {
		res, err = cdp.Call(ctx, sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: ref.BackendNodeID, ObjectGroup: t.group(ctx, sess)})
	}
	if err != nil && ctx.Err() != nil {
		return nil, pagecore.CDPErr("resolve element", err)
	}
	if err != nil || res.Object == nil || res.Object.ObjectID == "" {
		return nil, &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d is gone from the page; observe again", id), Err: pagecore.ErrStale}
	}
	el := &element{obj: res.Object.ObjectID, desc: fmt.Sprintf("element %d", id), number: id, backend: ref.BackendNodeID, frame: ref.FrameID, iso: world}
	if sess != t.Target() {
		el.sess = sess
	}
	if deferShown {
		el.shown = t.wantShown(el, ref)
	} else if err := t.checkShown(ctx, el, ref); err != nil {
		return nil, err
	}
	t.Acted(ref)
	t.hookNode(ctx, el) // record.go
	return el, nil
}

// shownWant is what a number showed when it was numbered: its Ref (whose
// Row is the row key), its name and its label key.
type shownWant struct {
	ref       observe.Ref
	name, key string
}

// wantShown returns what the node behind el must still show, or nil when
// its number was in no list item or row and had no label.
func (t *Actor) wantShown(el *element, ref observe.Ref) *shownWant {
	name, key := t.Shown(el.number)
	if ref.Row == "" && key == "" {
		return nil
	}
	return &shownWant{ref: ref, name: name, key: key}
}

// checkShown compares what the node behind element el shows with what it
// showed when it was numbered (compareShown), in one call.
func (t *Actor) checkShown(ctx context.Context, el *element, ref observe.Ref) error {
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
		return &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d is gone from the page; observe again", el.number), Err: pagecore.ErrStale}
	}
	if now.Row != w.ref.Row {
		shows := now.Row
		if shows == "" {
			shows = now.Label
		}
		shows = strings.TrimPrefix(shows, "=")
		return &pagecore.Error{Code: errcode.StaleElement, Err: pagecore.ErrStale, Msg: fmt.Sprintf(
			"element %d showed %q, and its node now shows %q (the list reused it for another item); observe again",
			el.number, msg.Trim(strings.TrimPrefix(w.ref.Row, "="), 60), msg.Trim(shows, 60))}
	}
	if now.Label != w.key {
		was := w.name
		if was == "" {
			was = w.key
		}
		if now.Elsewhere {
			return &pagecore.Error{Code: errcode.StaleElement, Err: pagecore.ErrStale, Msg: fmt.Sprintf(
				"element %d was %q, and its node now shows %q while another element shows %q (the page re-rendered its items in place); observe again",
				el.number, msg.Trim(was, 60), msg.Trim(now.Label, 60), msg.Trim(w.key, 60))}
		}
		el.desc = fmt.Sprintf("element %d (was %q, now %q)", el.number, msg.Trim(was, 60), msg.Trim(now.Label, 60))
	}
	return nil
}

// shownNowJS is the body that computes what a node shows now
// (shownNow's fields), given the label key it had (key). Whether that
// label is elsewhere is asked only of a node in no list item or row,
// whose label is all that tells it apart: in a row, the row key does.
const shownNowJS = `const shownNow = (node, key) => {
  if (!node.isConnected) return null;
  const row = rowKey(node);
  const label = labelKey(node);
  let elsewhere = false;
  if (row === '' && key && label !== key) {
    for (const n of node.getRootNode().querySelectorAll(node.localName)) {
      if (n !== node && labelKey(n) === key) { elsewhere = true; break; }
    }
  }
  return { row, label, elsewhere };
};`

// shownJS returns what an element's item shows and its own label (the
// keys of js/rowkey.js), in the element's main world (checkShown).
var shownJS = "function(key) {\n" + js.RowKey + "\n" + shownNowJS + "\nreturn shownNow(this, key);\n}"

// actionableJS is the actionability check (an expression that evaluates
// to it, js/actionable.js) with the area box function and checkShown's
// comparison in place: given opts.row and opts.key, it returns {state:
// "shown"} for a node that no longer shows the list item or row it was
// numbered in, or whose old label (opts.key) is now on another node,
// before the check touches anything; else the check's result, with what
// the node shows now (shown, as shownJS).
var actionableJS = strings.NewReplacer("/*AREABOX*/", js.AreaBox, "/*SHOWN*/", js.RowKey+"\n"+shownNowJS).Replace(js.Actionable)

// HeldScripts are the function sources every click calls on its element
// (the actionability check), for the page core to compile once per
// execution context (pagecore.Env.HeldScripts, pagecore.Page.Held). Each
// is `function(opts, self)`, self (else this) the element; the check
// keeps its state between calls in its closure, so the calls of one
// click must reach the same compiled function (they do: the click's
// element stays in one context).
var HeldScripts = []string{actionableJS}

// held returns the held function of fn in el's context for a call with
// nargs arguments, or "": a held function takes one (pagecore.HeldCall).
func (t *Actor) held(ctx context.Context, el *element, fn string, nargs int) runtime.RemoteObjectID {
	if nargs != 1 {
		return ""
	}
	return t.Held(ctx, el.sess, el.obj, fn)
}

// resolveInGuardWorld resolves node, of frame ("": the top one) of the
// page's own renderer, in the isolated world of guard.js
// (pagecore.Page.GuardContext,
// DOM.resolveNode with its executionContextId), where the click's check
// can use the guard listeners guard.js put on the window before the page
// could. ok is false when that world is not to be had, is gone (an
// iframe that navigated: it is forgotten) or has no such node: the caller
// resolves in the main world, whose answer says whether the node is
// there.
func (t *Actor) resolveInGuardWorld(ctx context.Context, frame cdp.FrameID, node cdp.BackendNodeID) (res dom.ResolveNodeResult, ok bool) {
	if frame == "" {
		frame = cdp.FrameID(t.Target().TargetID)
	}
	c, err := t.GuardContext(ctx, frame)
	if err != nil {
		return res, false
	}
	res, err = cdp.Call(ctx, t.Target(), dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: node, ObjectGroup: t.group(ctx, nil), ExecutionContextID: c})
	if err != nil && strings.Contains(err.Error(), "Cannot find context") {
		t.ForgetGuardContext(frame)
	}
	if err != nil || res.Object == nil || res.Object.ObjectID == "" {
		return res, false
	}
	return res, true
}
