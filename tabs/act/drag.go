package act

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// Point is a position in the tab's viewport, in CSS pixels.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// DragEnd is one end of a drag: an element (Target) or a point.
type DragEnd struct {
	Target *Target
	Point  *Point
}

func (e DragEnd) String() string {
	if e.Target != nil {
		return e.Target.String()
	}
	if e.Point != nil {
		return fmt.Sprintf("(%g, %g)", e.Point.X, e.Point.Y)
	}
	return "nothing"
}

// DefaultDragSteps is the number of mouse moves of a drag when none is
// given.
const DefaultDragSteps = 10

// DragOptions tune a drag.
type DragOptions struct {
	// Steps is the number of mouse moves between the press and the
	// release (default DefaultDragSteps).
	Steps int
	// Position is where on a to element the drag ends: "" or "center" its
	// centre; "before" in its first part along the list it is in (25% of
	// its height in a vertical list, of its width in a horizontal one),
	// "after" in its last part (75%), past the midpoint sortable lists
	// reorder on. The list's axis is where the element's nearest visible
	// sibling is: beside it, horizontal; else vertical.
	Position string
	// Offset, when set, is the end point relative to the to element's
	// top-left corner, in CSS pixels; it overrides Position.
	Offset *Point
}

// Drag drags from one end to the other with the left mouse button: move
// to from, press, move in o.Steps steps (default 10), release at to. An
// element end is its centre, or for to the point o.Position or o.Offset
// names; the from element must be actionable (visible, stable, receiving
// the pointer) and is scrolled into view, and the to element is scrolled
// into view when it is not, so that both are in the viewport at once.
// Pages that listen to pointer and mouse events (sliders, sortable lists)
// get them, one mousemove per step; HTML5 drag and drop (draggable,
// dragstart, drop) gets the drag events with a DataTransfer
// (chromedp.DragAndDropXY: Input.setInterceptDrags,
// Input.dispatchDragEvent).
//
// Errors: element_not_found, stale_element, not_actionable (covered,
// hidden, or the two ends do not fit in the viewport together),
// bad_request for a point outside the viewport, an unknown position, or a
// position or offset with a point as to.
func (t *Actor) Drag(ctx context.Context, from, to DragEnd, o DragOptions) (*ActionResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	steps := o.Steps
	if steps <= 0 {
		steps = DefaultDragSteps
	}
	if (from.Target == nil && from.Point == nil) || (to.Target == nil && to.Point == nil) {
		return nil, pagecore.Errorf(errcode.BadRequest, "drag needs two ends: element targets or {x, y} points")
	}
	switch o.Position {
	case "", "center", "before", "after":
	default:
		return nil, pagecore.Errorf(errcode.BadRequest, "drag: unknown position %q: use \"before\", \"after\" or \"center\"", o.Position)
	}
	if to.Target == nil && (o.Offset != nil || (o.Position != "" && o.Position != "center")) {
		return nil, pagecore.Errorf(errcode.BadRequest, "drag: position and offset place the end on a to element, not on a point")
	}
	var fx, fy, tx, ty float64
	var fromEl *element
	if from.Target != nil {
		el, x, y, err := t.locate(ctx, *from.Target, actOpts{hitTest: true})
		if err != nil {
			return nil, fmt.Errorf("drag from %s: %w", from, err)
		}
		fromEl, fx, fy = el, x, y
	} else {
		fx, fy = from.Point.X, from.Point.Y
	}
	vw, vh := t.viewportSize(ctx)
	if to.Target != nil {
		el, err := t.find(ctx, *to.Target, actionWait(ctx))
		if err != nil {
			return nil, fmt.Errorf("drag to %s: %w", to, err)
		}
		x, y, err := t.dropPoint(ctx, el, o)
		if err != nil {
			return nil, err
		}
		if !inside(x, y, vw, vh) {
			if err := t.callOn(ctx, el, `function(){ (this.nodeType === 1 ? this : this.parentElement).scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'}); }`, nil); err != nil {
				return nil, err
			}
			if x, y, err = t.dropPoint(ctx, el, o); err != nil {
				return nil, err
			}
			if fromEl != nil {
				if fx, fy, err = t.center(ctx, fromEl); err != nil {
					return nil, err
				}
			}
		}
		tx, ty = x, y
	} else {
		tx, ty = to.Point.X, to.Point.Y
	}
	for _, p := range [][2]float64{{fx, fy}, {tx, ty}} {
		if !inside(p[0], p[1], vw, vh) {
			if from.Point != nil || to.Point != nil {
				return nil, pagecore.Errorf(errcode.BadRequest, "drag from %s to %s: the point (%g, %g) is outside the %gx%g viewport", from, to, p[0], p[1], vw, vh)
			}
			return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("drag from %s to %s: the two do not fit in the viewport at once; scroll or use points", from, to)}
		}
	}
	nav := t.Mark()
	err = t.Blocking(ctx, func(ctx context.Context) error {
		// The pointer comes to the element before the button goes down,
		// as a person's does (pointerover/enter, hover states).
		if err := t.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, fx, fy, 0); err != nil {
			return err
		}
		_, err := chromedp.DragAndDropXY(fx, fy, tx, ty, steps)(ctx, t.Target())
		return err
	})
	res := &ActionResult{Target: fmt.Sprintf("%s → %s", from, to)}
	var dpe *pagecore.DialogPendingError
	if pagecore.AsDialog(err, &dpe) {
		res.Dialog = dpe.Dialog
		return res, nil
	}
	if err != nil {
		return nil, pagecore.CDPErr("drag", err)
	}
	t.noteNavigation(ctx, nav, res)
	return res, nil
}

// dropPoint is where a drag onto el ends, in top-level viewport CSS
// pixels: the centre of its first content quad (DOM.getContentQuads), or
// the point o.Position or o.Offset names in that quad's bounding box.
// Errors: not_actionable when el has no box.
func (t *Actor) dropPoint(ctx context.Context, el *element, o DragOptions) (float64, float64, error) {
	x0, y0, x1, y1, err := t.bounds(ctx, el)
	if err != nil {
		return 0, 0, err
	}
	if o.Offset != nil {
		return x0 + o.Offset.X, y0 + o.Offset.Y, nil
	}
	cx, cy := (x0+x1)/2, (y0+y1)/2
	frac := map[string]float64{"before": 0.25, "after": 0.75}[o.Position]
	if frac == 0 {
		return cx, cy, nil
	}
	var horizontal bool
	const axis = `function(){
  const e = this.nodeType === 1 ? this : this.parentElement;
  const r = e.getBoundingClientRect();
  const sibs = [];
  for (let s = e.previousElementSibling; s && sibs.length < 3; s = s.previousElementSibling) sibs.push(s);
  for (let s = e.nextElementSibling; s && sibs.length < 6; s = s.nextElementSibling) sibs.push(s);
  for (const s of sibs) {
    const b = s.getBoundingClientRect();
    if (b.width === 0 || b.height === 0) continue;
    return Math.abs((b.left + b.width / 2) - (r.left + r.width / 2)) > Math.abs((b.top + b.height / 2) - (r.top + r.height / 2));
  }
  return false;
}`
	if err := t.callOn(ctx, el, axis, &horizontal); err != nil {
		return 0, 0, err
	}
	if horizontal {
		return x0 + (x1-x0)*frac, cy, nil
	}
	return cx, y0 + (y1-y0)*frac, nil
}

func inside(x, y, w, h float64) bool { return x >= 0 && y >= 0 && x <= w && y <= h }

// viewportSize returns the layout viewport's client size in CSS pixels
// (Page.getLayoutMetrics), or the tab's viewport when that fails.
func (t *Actor) viewportSize(ctx context.Context) (float64, float64) {
	m, err := cdp.Call(ctx, t.Target(), page.GetLayoutMetrics, cdp.Empty{})
	if err == nil && m.CSSLayoutViewport != nil && m.CSSLayoutViewport.ClientWidth > 0 {
		return float64(m.CSSLayoutViewport.ClientWidth), float64(m.CSSLayoutViewport.ClientHeight)
	}
	w, h := t.viewport()
	return float64(w), float64(h)
}

// center returns the centre of an element's first content quad in
// top-level viewport CSS pixels (DOM.getContentQuads). Errors:
// not_actionable when it has no box.
func (t *Actor) center(ctx context.Context, el *element) (float64, float64, error) {
	x, y, ok := quadCentre(t.ContentQuads(ctx, el.sess, el.obj))
	if !ok {
		return 0, 0, &pagecore.Error{Code: errcode.NotActionable, Msg: el.desc + " has no layout box (hidden or detached)"}
	}
	return x, y, nil
}

// bounds returns the bounding box (left, top, right, bottom) of an
// element's first content quad in top-level viewport CSS pixels
// (DOM.getContentQuads). Errors: not_actionable when it has no box.
func (t *Actor) bounds(ctx context.Context, el *element) (x0, y0, x1, y1 float64, err error) {
	q, err := t.ContentQuads(ctx, el.sess, el.obj)
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
		return 0, 0, 0, 0, &pagecore.Error{Code: errcode.NotActionable, Msg: el.desc + " has no layout box (hidden or detached)"}
	}
	b := q.Quads[0]
	x0, y0, x1, y1 = b[0], b[1], b[0], b[1]
	for i := 2; i < 8; i += 2 {
		x0, x1 = min(x0, b[i]), max(x1, b[i])
		y0, y1 = min(y0, b[i+1]), max(y1, b[i+1])
	}
	if math.IsNaN(x0+y0+x1+y1) || x1 <= x0 || y1 <= y0 {
		return 0, 0, 0, 0, &pagecore.Error{Code: errcode.NotActionable, Msg: el.desc + " has no layout box"}
	}
	return x0, y0, x1, y1, nil
}

// ScrollIntoView scrolls the element into the middle of the viewport,
// through every scroll container it is nested in, and waits until it is
// visible and stable (no hit test: it may be covered).
func (t *Actor) ScrollIntoView(ctx context.Context, tg Target) (*ActionResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	el, _, _, err := t.locate(ctx, tg, actOpts{})
	if err != nil {
		return nil, err
	}
	return &ActionResult{Target: el.desc}, nil
}

// ScrollResult is a scroll position in CSS pixels.
type ScrollResult struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	// Target is the element scrolled over, when one was given. X and Y
	// are the scroll offsets of the container that moved (of the page
	// when none did).
	Target string `json:"target,omitempty"`
	// Container is the scroll container that moved: "page", or the
	// element (tag#id.class); "" when nothing moved. Position is where it
	// stands now: "40%/1200px below" (the share scrolled, and the CSS
	// pixels left), or "… right" for one that scrolls sideways.
	Container string `json:"container,omitempty"`
	Position  string `json:"position,omitempty"`
	Note      string `json:"note,omitempty"`
}

// ScrollAt scrolls by (dx, dy) CSS pixels with a mouse wheel over the
// centre of the element (Input.dispatchMouseEvent mouseWheel), so the
// scroll container under the pointer scrolls as it would for a person (a
// virtualised list renders its next rows). The element is first scrolled
// into view.
func (t *Actor) ScrollAt(ctx context.Context, tg Target, dx, dy float64) (*ScrollResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	el, x, y, err := t.locate(ctx, tg, actOpts{})
	if err != nil {
		return nil, err
	}
	var snap runtime.CallFunctionOnResult
	err = t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		snap, err = cdp.Call(ctx, t.SessionOf(el.sess), runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: js.Scrolled, ObjectID: el.obj, Arguments: []*runtime.CallArgument{{Value: []byte("null")}}})
		return err
	})
	if err != nil {
		return nil, pagecore.EvalErr(err)
	}
	if snap.Result == nil || snap.Result.ObjectID == "" {
		return nil, pagecore.Errorf(errcode.ScriptError, "scroll: the page's scroll positions could not be read")
	}
	err = t.Blocking(ctx, func(ctx context.Context) error { return t.wheel(ctx, x, y, dx, dy) })
	var dpe *pagecore.DialogPendingError
	if pagecore.AsDialog(err, &dpe) {
		return nil, pagecore.EvalErr(err)
	}
	if err != nil {
		return nil, pagecore.CDPErr("scroll", err)
	}
	pos, err := t.scrolled(ctx, t.SessionOf(el.sess), snap.Result.ObjectID)
	if err != nil {
		return nil, err
	}
	pos.Target = el.desc
	return pos, nil
}

// ClickAtResult reports a click at a point.
type ClickAtResult struct {
	// X and Y are the point clicked, in viewport CSS pixels.
	X float64 `json:"x"`
	Y float64 `json:"y"`
	// Element describes the element that was at the point.
	Element   string           `json:"element"`
	Dialog    *pagecore.Dialog `json:"dialog,omitempty"`
	Navigated bool             `json:"navigated,omitempty"`
}

// ClickPoint clicks at a point of the viewport, in CSS pixels
// (Input.dispatchMouseEvent), and says what the point landed on
// (DOM.getNodeForLocation) and whether the click navigated. Errors:
// bad_request for a point outside the viewport; not_actionable when a
// dialog blocks the page.
func (t *Actor) ClickPoint(ctx context.Context, x, y float64) (*ClickAtResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	vw, vh := t.viewportSize(ctx)
	if !inside(x, y, vw, vh) {
		return nil, pagecore.Errorf(errcode.BadRequest, "clickAt: (%g, %g) is outside the %gx%g viewport", x, y, vw, vh)
	}
	res := &ClickAtResult{X: x, Y: y}
	// Hit-test before clicking (DOM.getNodeForLocation), so the result says
	// what the point landed on.
	res.Element = t.hitTest(ctx, x, y)
	nav := t.Mark()
	err = t.Blocking(ctx, func(ctx context.Context) error {
		if err := t.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, x, y, 0); err != nil {
			return err
		}
		if err := t.mouse(ctx, input.DispatchMouseEventTypeMousePressed, x, y, 1); err != nil {
			return err
		}
		return t.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
	})
	var dpe *pagecore.DialogPendingError
	if pagecore.AsDialog(err, &dpe) {
		res.Dialog = dpe.Dialog
		return res, nil
	}
	if err != nil {
		return nil, pagecore.CDPErr("clickAt", err)
	}
	var ar ActionResult
	t.noteNavigation(ctx, nav, &ar)
	res.Navigated = ar.Navigated
	return res, nil
}

// wheel dispatches a mouse wheel event at (x, y) (Input.dispatchMouseEvent
// mouseWheel). The parameters are sent raw: the protocol requires deltaX
// and deltaY even when zero, which cdproto's params omit.
func (t *Actor) wheel(ctx context.Context, x, y, dx, dy float64) error {
	return t.Target().Call(ctx, input.CommandDispatchMouseEvent, map[string]any{
		"type": input.DispatchMouseEventTypeMouseWheel, "x": x, "y": y, "deltaX": dx, "deltaY": dy,
	}, nil)
}

// hitTest describes the element at a viewport point
// (DOM.getNodeForLocation, then DOM.describeNode).
func (t *Actor) hitTest(ctx context.Context, x, y float64) string {
	loc, err := cdp.Call(ctx, t.Target(), dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(x), Y: int64(y), IgnorePointerEventsNone: new(true)})
	if err != nil || loc.BackendNodeID == 0 {
		return "nothing"
	}
	el := &element{desc: "the hit element", backend: loc.BackendNodeID}
	r, err := cdp.Call(ctx, t.Target(), dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: loc.BackendNodeID, ObjectGroup: t.group(ctx, nil)})
	if err != nil || r.Object == nil {
		return "a node"
	}
	el.obj = r.Object.ObjectID
	var d string
	_ = t.callOn(ctx, el, `function(){ let e = this.nodeType === 1 ? this : this.parentElement; if (!e) return 'a node';
  let s = e.tagName.toLowerCase(); if (e.id) s += '#' + e.id;
  const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim();
  if (t) s += ' "' + (t.length > 40 ? t.slice(0, 40) + '…' : t) + '"'; return s; }`, &d)
	if strings.TrimSpace(d) == "" {
		return "a node"
	}
	return d
}
