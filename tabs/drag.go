package tabs

import (
	"context"
	"fmt"
	"math"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
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

// Drag drags from one end to the other with the left mouse button: press
// at from, move in steps (default 10), release at to. An element end is
// its centre; the from element must be actionable (visible, stable,
// receiving the pointer) and is scrolled into view, and the to element is
// scrolled into view when it is not, so that both are in the viewport at
// once. Pages that listen to mouse events (sliders, sortable lists) get
// them; HTML5 drag and drop (draggable, dragstart, drop) gets the drag
// events with a DataTransfer (chromedp.DragAndDropXY: Input.setInterceptDrags,
// Input.dispatchDragEvent).
//
// Errors: element_not_found, stale_element, not_actionable (covered,
// hidden, or the two ends do not fit in the viewport together),
// bad_request for a point outside the viewport.
func (t *Tab) Drag(ctx context.Context, from, to DragEnd, steps int) (*ActionResult, error) {
	if err := t.dialogBlock(); err != nil {
		return nil, err
	}
	if steps <= 0 {
		steps = DefaultDragSteps
	}
	if (from.Target == nil && from.Point == nil) || (to.Target == nil && to.Point == nil) {
		return nil, Errorf(CodeBadRequest, "drag needs two ends: element targets or {x, y} points")
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
		x, y, err := t.center(ctx, el)
		if err != nil {
			return nil, err
		}
		if !inside(x, y, vw, vh) {
			if err := t.callOn(ctx, el, `function(){ (this.nodeType === 1 ? this : this.parentElement).scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'}); }`, nil); err != nil {
				return nil, err
			}
			if x, y, err = t.center(ctx, el); err != nil {
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
				return nil, Errorf(CodeBadRequest, "drag from %s to %s: the point (%g, %g) is outside the %gx%g viewport", from, to, p[0], p[1], vw, vh)
			}
			return nil, &Error{Code: CodeNotActionable, Msg: fmt.Sprintf("drag from %s to %s: the two do not fit in the viewport at once; scroll or use points", from, to)}
		}
	}
	nav := t.navMark()
	err := t.blocking(ctx, func(ctx context.Context) error {
		_, err := chromedp.DragAndDropXY(fx, fy, tx, ty, steps)(ctx, t.target)
		return err
	})
	res := &ActionResult{Target: fmt.Sprintf("%s → %s", from, to)}
	var dpe *dialogPendingError
	if asDialog(err, &dpe) {
		res.Dialog = dpe.d
		return res, nil
	}
	if err != nil {
		return nil, cdpErr("drag", err)
	}
	t.noteNavigation(ctx, nav, res)
	return res, nil
}

func inside(x, y, w, h float64) bool { return x >= 0 && y >= 0 && x <= w && y <= h }

// viewportSize returns the layout viewport's client size in CSS pixels
// (Page.getLayoutMetrics), or the tab's viewport when that fails.
func (t *Tab) viewportSize(ctx context.Context) (float64, float64) {
	m, err := cdp.Call(ctx, t.target, page.GetLayoutMetrics, cdp.Empty{})
	if err == nil && m.CSSLayoutViewport != nil && m.CSSLayoutViewport.ClientWidth > 0 {
		return float64(m.CSSLayoutViewport.ClientWidth), float64(m.CSSLayoutViewport.ClientHeight)
	}
	vp := t.Viewport()
	return float64(vp.Width), float64(vp.Height)
}

// center returns the centre of an element's first content quad in
// top-level viewport CSS pixels (DOM.getContentQuads). Errors:
// not_actionable when it has no box.
func (t *Tab) center(ctx context.Context, el *element) (float64, float64, error) {
	q, err := t.contentQuads(ctx, el)
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
		return 0, 0, &Error{Code: CodeNotActionable, Msg: el.desc + " has no layout box (hidden or detached)"}
	}
	var x, y float64
	for i := 0; i < 8; i += 2 {
		x += q.Quads[0][i] / 4
		y += q.Quads[0][i+1] / 4
	}
	if math.IsNaN(x) || math.IsNaN(y) {
		return 0, 0, &Error{Code: CodeNotActionable, Msg: el.desc + " has no layout box"}
	}
	return x, y, nil
}

// ScrollIntoView scrolls the element into the middle of the viewport,
// through every scroll container it is nested in, and waits until it is
// visible and stable (no hit test: it may be covered).
func (t *Tab) ScrollIntoView(ctx context.Context, tg Target) (*ActionResult, error) {
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
func (t *Tab) ScrollAt(ctx context.Context, tg Target, dx, dy float64) (*ScrollResult, error) {
	el, x, y, err := t.locate(ctx, tg, actOpts{})
	if err != nil {
		return nil, err
	}
	var snap runtime.CallFunctionOnResult
	err = t.blocking(ctx, func(ctx context.Context) error {
		var err error
		snap, err = cdp.Call(ctx, t.sessionOf(el), runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: scrolledJS, ObjectID: el.obj, Arguments: []*runtime.CallArgument{{Value: []byte("null")}}})
		return err
	})
	if err != nil {
		return nil, evalErr(err)
	}
	if snap.Result == nil || snap.Result.ObjectID == "" {
		return nil, Errorf(CodeScriptError, "scroll: the page's scroll positions could not be read")
	}
	err = t.blocking(ctx, func(ctx context.Context) error { return t.wheel(ctx, x, y, dx, dy) })
	var dpe *dialogPendingError
	if asDialog(err, &dpe) {
		return nil, evalErr(err)
	}
	if err != nil {
		return nil, cdpErr("scroll", err)
	}
	pos, err := t.scrolled(ctx, t.sessionOf(el), snap.Result.ObjectID)
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
	Element   string  `json:"element"`
	Dialog    *Dialog `json:"dialog,omitempty"`
	Navigated bool    `json:"navigated,omitempty"`
}

// ClickAt clicks at a point (Input.dispatchMouseEvent). Without shot, x
// and y are viewport CSS pixels; with shot (a screenshot's ID, or -1 for
// the latest), they are pixels of that screenshot's model image, mapped
// back through its scale and origin. Errors: bad_request for a point
// outside the viewport or an unknown screenshot; stale_element when the
// page navigated since that screenshot.
func (t *Tab) ClickAt(ctx context.Context, x, y float64, shot int) (*ClickAtResult, error) {
	if err := t.dialogBlock(); err != nil {
		return nil, err
	}
	if shot != 0 {
		t.mu.Lock()
		s := t.lastShot
		t.mu.Unlock()
		if s == nil || (shot > 0 && s.ID != shot) {
			return nil, Errorf(CodeBadRequest, "clickAt: screenshot %d is not the tab's latest; take a screenshot and use its coordinates", shot)
		}
		if s.NavSeq != t.NavSeq() {
			return nil, &Error{Code: CodeStaleElement, Msg: fmt.Sprintf("clickAt: the page navigated since screenshot %d; take a new one", s.ID), Err: ErrStale}
		}
		var sc struct{ X, Y float64 }
		if err := t.evalJSON(ctx, `({X: scrollX, Y: scrollY})`, &sc); err != nil {
			return nil, err
		}
		if !s.Full && (math.Abs(sc.X-s.ScrollX) > 1 || math.Abs(sc.Y-s.ScrollY) > 1) {
			return nil, &Error{Code: CodeStaleElement, Msg: fmt.Sprintf("clickAt: the page scrolled since screenshot %d; take a new one", s.ID), Err: ErrStale}
		}
		scale := s.Scale
		if scale <= 0 {
			scale = 1
		}
		x, y = s.ClipX+x/scale-sc.X, s.ClipY+y/scale-sc.Y
	}
	vw, vh := t.viewportSize(ctx)
	if !inside(x, y, vw, vh) {
		return nil, Errorf(CodeBadRequest, "clickAt: (%g, %g) is outside the %gx%g viewport", x, y, vw, vh)
	}
	res := &ClickAtResult{X: x, Y: y}
	// Hit-test before clicking (DOM.getNodeForLocation), so the result says
	// what the point landed on.
	res.Element = t.hitTest(ctx, x, y)
	nav := t.navMark()
	err := t.blocking(ctx, func(ctx context.Context) error {
		if err := t.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, x, y, 0); err != nil {
			return err
		}
		if err := t.mouse(ctx, input.DispatchMouseEventTypeMousePressed, x, y, 1); err != nil {
			return err
		}
		return t.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
	})
	var dpe *dialogPendingError
	if asDialog(err, &dpe) {
		res.Dialog = dpe.d
		return res, nil
	}
	if err != nil {
		return nil, cdpErr("clickAt", err)
	}
	res.Navigated = t.navigated(ctx, nav)
	return res, nil
}

// wheel dispatches a mouse wheel event at (x, y) (Input.dispatchMouseEvent
// mouseWheel). The parameters are sent raw: the protocol requires deltaX
// and deltaY even when zero, which cdproto's params omit.
func (t *Tab) wheel(ctx context.Context, x, y, dx, dy float64) error {
	return t.target.Call(ctx, input.CommandDispatchMouseEvent, map[string]any{
		"type": input.DispatchMouseEventTypeMouseWheel, "x": x, "y": y, "deltaX": dx, "deltaY": dy,
	}, nil)
}
