package act

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/msg"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

func (t *Actor) mouse(ctx context.Context, typ input.DispatchMouseEventType, x, y float64, clicks int64) error {
	p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y}
	if typ != input.DispatchMouseEventTypeMouseMoved {
		p.Button = input.MouseButtonLeft
		p.ClickCount = clicks
		p.Buttons = 1
		if typ == input.DispatchMouseEventTypeMouseReleased {
			p.Buttons = 0
		}
	}
	_, err := cdp.Call(ctx, t.Target(), input.DispatchMouseEvent, p)
	return err
}

// bgMoveWait bounds the mouseMoved sendMouse sends to a background page
// without waiting for it.
const bgMoveWait = 10 * time.Second

// sendMouse sends a mouse event of a click at x, y over el's page
// (Input.dispatchMouseEvent of typ, with clicks for a button event). With
// early false it returns once Chromium has answered the event; with early
// true it returns as soon as the connection has written it (package
// cdptap), so that the caller's next command follows it on the wire at
// once, and answered waits for the answer.
//
// Chromium delivers a mouse move with the page's next animation frame (at
// once on a page at rest: its first frame request gets a frame without
// waiting for the vsync) and answers the command after it; a mouse button
// event makes the renderer deliver a pending move before it, at once. So
// a press and a release sent behind the move do not wait for the vsync,
// as with Puppeteer's and Playwright's click, and the page still sees the
// move, the press and the release in that order, in one go. Without a tap
// that has seen writes (a transport that has no protocol logger), the
// caller does not ask for early: two calls on two goroutines reach the
// connection in either order.
//
// A hidden page (a background tab of a browser tabpilot attached to,
// el.bg) gets no frames, and a move's answer came only after about 5 s,
// past the click's guard: there a move's answer is never waited for, and
// its visibility and focus are left as the user has them.
func (t *Actor) sendMouse(ctx context.Context, el *element, typ input.DispatchMouseEventType, x, y float64, clicks int64, early bool) (answered func() error, err error) {
	none := func() error { return nil }
	bg := el != nil && el.bg && typ == input.DispatchMouseEventTypeMouseMoved
	tap := t.Tap()
	if !bg && (!early || !tap.Live()) {
		return none, t.mouse(ctx, typ, x, y, clicks)
	}
	var written <-chan struct{}
	if tap.Live() {
		var stop func()
		written, stop = tap.Watch(string(t.Target().SessionID), input.CommandDispatchMouseEvent)
		defer stop()
	}
	mctx, cancel := ctx, context.CancelFunc(func() {})
	if bg {
		mctx, cancel = context.WithTimeout(t.Context(), bgMoveWait)
	}
	errc := make(chan error, 1)
	t.goFn(func() {
		defer cancel()
		err := t.mouse(mctx, typ, x, y, clicks)
		if err != nil && bg && mctx.Err() == nil {
			t.log.Debug("mouse move in a background page", "tab", t.Name(), "err", err)
		}
		errc <- err
	})
	answered = sync.OnceValue(func() error { return <-errc })
	if bg {
		answered = none
	}
	if written == nil {
		return answered, nil // a background page without a tap: as before
	}
	select {
	case <-written:
		return answered, nil
	case err := <-errc:
		// Answered (so written), or failed before it was written.
		errc <- err
		return answered, err
	case <-ctx.Done():
		return none, ctx.Err()
	}
}

// oneGoWait bounds the answers of a click's move, press and release that
// clickInOneGo sent: a dialog the page opens holds them until it is
// answered.
const oneGoWait = 30 * time.Second

// clickInOneGo sends the move, the press and the release of a click at x,
// y one behind the other, each as soon as the one before it is written
// (sendMouse), and then waits for their answers; a dialog that the page
// opens meanwhile returns the *pagecore.DialogPendingError at once
// (Blocking). The three are sent whatever becomes of ctx once the first
// is: the page never gets a press without its release. sentAll is set
// when all three are on their way.
func (t *Actor) clickInOneGo(ctx context.Context, el *element, x, y float64, ph *clickPhases, sentAll *atomic.Bool) error {
	wctx, cancel := context.WithTimeout(t.Context(), oneGoWait)
	answers := make([]func() error, 0, 3)
	for _, ev := range []struct {
		typ    input.DispatchMouseEventType
		clicks int64
		at     *time.Time
	}{
		{input.DispatchMouseEventTypeMouseMoved, 0, &ph.moved},
		{input.DispatchMouseEventTypeMousePressed, 1, &ph.pressed},
		{input.DispatchMouseEventTypeMouseReleased, 1, &ph.released},
	} {
		answered, err := t.sendMouse(wctx, el, ev.typ, x, y, ev.clicks, true)
		if err != nil {
			cancel()
			return err
		}
		*ev.at = time.Now()
		answers = append(answers, answered)
	}
	ph.verified = ph.moved
	sentAll.Store(true)
	return t.Blocking(ctx, func(context.Context) error {
		defer cancel()
		var first error
		for _, answered := range answers {
			if err := answered(); err != nil && first == nil {
				first = err
			}
		}
		return first
	})
}

// Click clicks the element a target names: it waits until the element is
// actionable (attached, visible, stable, enabled, receiving the pointer),
// then dispatches mouseMoved, mousePressed and mouseReleased at its centre
// (Input.dispatchMouseEvent) and checks that the element got the click.
// Errors: element_not_found, stale_element, not_actionable, timeout.
func (t *Actor) Click(ctx context.Context, tg Target) (*ActionResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	// The actionability check arms a one-shot listener, so a click that
	// never reaches the element is reported, not taken for success. When
	// nothing in the document animates, it does not wait a frame for the
	// stability check: the guard checks the element at the press (or,
	// where the guard cannot, a verify call after the mouseMoved's frame),
	// and stops a press that lands on something else.
	// If the element moved off the pointer, went away or got covered, the
	// click starts over with the waiting check.
	o := actOpts{enabled: true, hitTest: true, arm: true, quick: true, iso: true}
	// The action's wait bounds all its tries: each gets what is left.
	deadline := time.Now().Add(actionWait(ctx))
	for {
		left := max(time.Until(deadline), time.Millisecond)
		res, retry, err := t.clickOnce(WithActionTimeout(ctx, left), tg, &o)
		if !retry {
			return res, err
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			// Every try's press was stopped, to the end of the wait.
			if o.stopped == nil {
				return nil, &pagecore.Error{Code: errcode.Timeout, Msg: "click: the wait for the element ended before a try's press reached it"}
			}
			return nil, o.stopped
		}
	}
}

// clickOnce is one try of Click with o. It asks for another try, with the
// waiting check (o.quick false), when the quick try's guard stopped every
// event of the press and release because something else was under the
// pointer: the page saw none of them.
func (t *Actor) clickOnce(ctx context.Context, tg Target, o *actOpts) (*ActionResult, bool, error) {
	var el *element
	var nav pagecore.NavMark
	var err error
	var ph clickPhases
	// sentAll is set once the move, the press and the release are all
	// on their way, none waiting for the answer of the one before.
	var sentAll atomic.Bool
	var x, y float64
	for {
		ph.start = time.Now()
		el, x, y, err = t.locate(ctx, tg, *o)
		o.again = nil
		// The pointer is still where the try before left it when the
		// guard stopped that try's press: a person's press then comes
		// without another move, and another move would run the page's
		// handlers of the move again (one that disables the element for
		// a moment, or puts up a cover, each time the pointer moves).
		still := o.at != nil && math.Abs(o.at[0]-x) <= 0.5 && math.Abs(o.at[1]-y) <= 0.5
		o.at = nil
		if err != nil {
			return nil, false, err
		}
		if o.found == nil {
			label := el.label
			o.found = &label
		}
		nav = t.Mark()
		sentAll.Store(false)
		ph.located = time.Now()
		// The verify call checks the box and the hit test after the
		// frame that delivered the move, so it waits for the move's
		// answer; so does a click whose check scrolled (the page's
		// scroll handlers run with that frame, and may render the
		// element again, as a virtualised list does, which the press
		// must see), and one that starts over after the guard stopped
		// its press (the waiting check). Otherwise (the guard checks the
		// element at the press, el.press) the click goes in one go
		// (clickInOneGo), and the guard stops the press when the page's
		// handlers of the move asked for a frame that has not run
		// (verdict "hover").
		verify := o.quick && !el.press
		if o.quick && el.press && !el.scrolled && !el.bg && t.Tap().Live() {
			if err = t.DialogHolds(); err == nil {
				err = t.clickInOneGo(ctx, el, x, y, &ph, &sentAll)
			}
		} else {
			err = t.Blocking(ctx, func(ctx context.Context) error {
				if !still {
					moved, err := t.sendMouse(ctx, el, input.DispatchMouseEventTypeMouseMoved, x, y, 0, el.bg)
					if err != nil {
						return err
					}
					if err := moved(); err != nil {
						return err
					}
				}
				ph.moved = time.Now()
				if verify {
					if err := t.verify(ctx, el); err != nil {
						return err
					}
				}
				ph.verified = time.Now()
				if err := t.mouse(ctx, input.DispatchMouseEventTypeMousePressed, x, y, 1); err != nil {
					return err
				}
				ph.pressed = time.Now()
				err = t.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
				ph.released = time.Now()
				return err
			})
		}
		// (A selector's element that was replaced meanwhile, say by a
		// virtualised list re-rendering after the scroll, is found again.)
		var e *pagecore.Error
		if errors.Is(err, errGoneByPointer) {
			// Removed by the move: the selector's new element, if
			// there is one now (a row rendered again), else the error.
			if again, rerr := t.resolve(ctx, tg); rerr != nil || again == nil {
				return nil, false, err
			}
		}
		if o.quick && errors.As(err, &e) && ctx.Err() == nil &&
			((e.Code == errcode.NotActionable && !errors.Is(err, errVanished)) || (e.Code == errcode.ElementNotFound && tg.ID == 0)) {
			o.quick = false
			continue
		}
		break
	}
	res := &ActionResult{Target: el.desc}
	var dpe *pagecore.DialogPendingError
	if pagecore.AsDialog(err, &dpe) {
		res.Dialog = dpe.Dialog
		if sentAll.Load() {
			res.Note = "the page opened the dialog while it handled the click; those of the click's events it had not handled yet (the mouse move's, the press's, the release's and the click's handlers run in that order) reach it when the dialog is answered, and tabpilot's guard still stops a press or release that would land on another element then: observe after answering"
		}
		return res, false, nil
	}
	if err != nil {
		t.disarm(ctx, el)
		return nil, false, pagecore.CDPErr("click", err)
	}
	if t.NavSeq() != nav.Seq {
		res.Navigated = true
		t.settleNavigation(ctx, res, true)
		return res, false, nil
	}
	// The check ends the guard actionable.js armed and reads what it saw.
	// When the click started a navigation (the renderer says so before it
	// answers the mouse release), Chromium holds every call to the page,
	// the check's too, until the navigation commits: the check then waits
	// for the commit as long as navigated does, not for the whole timeout.
	checkCtx, cancel := t.HeldByNavigation(ctx, nav)
	defer cancel()
	var got *struct {
		Got     bool   `json:"got"`
		By      string `json:"by"`
		Touched bool   `json:"touched"`
		Pressed bool   `json:"pressed"`
		Moved   bool   `json:"moved"`
		Reached bool   `json:"reached"`
		Label   string `json:"label"`
		// Verdict is what the guard found wrong with the element at
		// the press (actState.Press), before it stopped the press.
		Verdict *actState `json:"verdict"`
	}
	err = t.callOn(checkCtx, el, actionableJS, &got, map[string]any{"done": true})
	ph.log(t, el)
	if err != nil && ctx.Err() != nil && !t.RequestedSince(nav) {
		// The action's time ran out before the guard said what became of
		// the press: no success can be claimed (the guard may have
		// stopped it, or the element refused it). One that started a
		// navigation (Chromium then holds the call until it commits)
		// reached the page, and is reported below.
		return nil, false, &pagecore.Error{Code: errcode.Timeout, Msg: "click on " + el.desc + ": the time ran out before the page said whether the element got the click", Err: ctx.Err(),
			Hint: "Observe to see what the page did; the press may not have reached the element."}
	}
	if checkCtx.Err() != nil && ctx.Err() == nil {
		// The navigation the click started committed (the check's
		// document is gone), or held the check past the commit wait.
		t.disarm(ctx, el)
		res.Navigated = true
		if t.NavSeq() != nav.Seq {
			t.settleNavigation(ctx, res, true)
		} else {
			t.notePending(res)
		}
		return res, false, nil
	}
	if err == nil && got != nil && got.Verdict != nil && !got.Touched && ctx.Err() == nil {
		// The guard stopped the whole press: the page saw none of it.
		// What the verify call would have refused is refused here.
		switch got.Verdict.State {
		case "vanished", "flicker":
			return nil, false, notActionable(el, got.Verdict)
		case "shown":
			// The number's node showed another item at the press (a
			// list that re-rendered its rows in place on hover).
			if el.shown != nil {
				if err := compareShown(el, el.shown, got.Verdict.Shown); err != nil {
					return nil, false, err
				}
			}
		case "detached":
			// Removed since the check (a row rendered again on hover, or
			// by a virtualised list after the scroll): a number names a
			// node that is gone; a selector's new element, if there is
			// one, gets the click.
			if tg.ID > 0 {
				return nil, false, goneByPointer(el)
			}
			if again, rerr := t.resolve(ctx, tg); rerr != nil || again == nil {
				return nil, false, goneByPointer(el)
			}
		}
		// Moved or disabled since the check, or the page's handlers
		// of the move asked for a frame ("hover"): the waiting check
		// tells which, and whether it passes.
		t.log.Debug("click starts over with the waiting check", "tab", t.Name(), "target", el.desc, "verdict", got.Verdict.State)
		o.quick = false
		o.stopped = notActionable(el, got.Verdict)
		o.hovered = got.Verdict.State == "hover" || got.Verdict.State == "disabled"
		if o.hovered {
			o.again = el
		}
		o.at = &[2]float64{x, y}
		return nil, true, nil
	}
	if err == nil && got != nil && !got.Got && t.NavSeq() == nav.Seq {
		switch {
		case got.By != "" && o.quick && !got.Touched && ctx.Err() == nil:
			o.quick = false
			o.at = &[2]float64{x, y}
			o.stopped = notActionable(el, &actState{State: "covered", By: got.By})
			return nil, true, nil
		case got.By != "" && got.Pressed && got.Moved:
			// The press reached the element; then it went away or
			// moved (an autocomplete list that picks on mousedown and
			// closes), and the release went to what was under the
			// pointer, which the guard stopped. The page had the press
			// and may have acted on it: not an error, which a caller
			// would answer by clicking again. (One that stayed where it
			// was, covered after the press, did not get its click: that
			// is the error below.)
			res.Note = el.desc + " got the press (mousedown) and then went away or moved, so the release and the click went to " + got.By + " instead, and tabpilot stopped them there; the page had the press and may have acted on it (menus and autocomplete lists pick on mousedown): observe to see"
		case got.By != "" && got.Moved:
			return nil, false, &pagecore.Error{Code: errcode.NotActionable, Msg: el.desc + " moved away from the pointer as the mouse reached it (a mouseover or pointer handler of the page moved it), so the press would have gone to " + got.By + ", under the pointer; tabpilot stopped the click from reaching it",
				Hint: "Such an element cannot be clicked by a person either; if it moves only once, observe again and click it where it is now."}
		case got.By != "" && got.Pressed:
			// Covered between the press and the release, where it
			// stood (a backdrop a menu puts up on mousedown): no
			// click, but the page had the press.
			return nil, false, &pagecore.Error{Code: errcode.NotActionable, Msg: el.desc + " got the press (mousedown), then " + got.By + " covered it, so the release and the click went there, and tabpilot stopped them; the element's click handlers did not run, but the page had the press and may have acted on it (menus open on mousedown)",
				Hint: "Observe before clicking again: if a menu or list opened, act on it; clicking the element again would go to what covers it now."}
		case got.By != "":
			return nil, false, &pagecore.Error{Code: errcode.NotActionable, Msg: el.desc + " did not receive the click: " + got.By + " was on top of it at that moment, and tabpilot stopped the click from reaching it"}
		case !got.Reached:
			return nil, false, &pagecore.Error{Code: errcode.NotActionable, Msg: el.desc + " did not receive the click event (a page listener stopped it before it got there, or another element took it)",
				Hint: "A listener of the page stopped the click event before it reached the element (one on the window, in the capture phase, runs first), and the page may have acted on it there: observe before clicking again."}
		default:
			// The click went to the element, as a person's would, and a
			// listener of the page on its way (a delegating one on the
			// document or an ancestor; one on the window, which the guard
			// of guard.js's world runs before) stopped it there: the page
			// had it, and may have acted on it. Not an error: a caller
			// that took it for one would click again, and act twice.
			res.Note = "a listener of the page on the click's way to " + el.desc + " (on the window, on the document, such as a delegating one, or on an ancestor) stopped the click event before it reached it; the page had the click and may have handled it there"
		}
	}
	if tg.ID == 0 && err == nil && got != nil && got.Touched && o.found != nil && got.Label != *o.found {
		// A selector names what matches it at the press (the element
		// the page changed, or put in its place, as the pointer
		// arrived); a number's label change is in its description (was,
		// now).
		note := fmt.Sprintf("%s showed %q when it was found and %q at the press (the page changed it, or put another in its place, as the pointer arrived); the click went to what it matched then: observe to see what it did", el.desc, msg.Trim(*o.found, 60), msg.Trim(got.Label, 60))
		if res.Note != "" {
			note = res.Note + "; " + note
		}
		res.Note = note
	}
	// The check's reply, on the top page's session, came after the events
	// the renderer sent before it.
	nav.Ordered = err == nil && el.sess == nil
	if el.sess == nil && el.frame != "" && el.frame != cdp.FrameID(t.Target().TargetID) {
		// A link of a same-process frame: what runs next sees the
		// frame's new document. (A check that failed because the
		// frame's document is gone came after the request.)
		if u := t.AwaitFrameNavigation(ctx, nav, el.frame); u != "" {
			res.Note = "the frame navigated, to " + u + "; observe again for its new elements"
		}
	}
	t.noteNavigation(ctx, nav, res)
	return res, false, nil
}

// clickPhases are the moments a click's phases ended, for the debug log.
type clickPhases struct {
	start, located, moved, verified, pressed, released time.Time
}

// log logs the phases at debug level: resolve (the number or selector
// to a node), check_actionable, move, verify, press, release, and receipt.
func (p *clickPhases) log(t *Actor, el *element) {
	if !t.log.Enabled(context.Background(), slog.LevelDebug) || p.released.IsZero() {
		return
	}
	t.log.Debug("clicked", "tab", t.Name(), "target", el.desc, "resolve", el.resolved.Sub(p.start), "check_actionable", p.located.Sub(el.resolved),
		"move", p.moved.Sub(p.located), "verify", p.verified.Sub(p.moved), "press", p.pressed.Sub(p.verified),
		"release", p.released.Sub(p.pressed), "receipt", time.Since(p.released))
}

// disarm ends the guard of a click that failed before its check, once the
// click has returned (before its element's handle goes: beforeRelease).
func (t *Actor) disarm(ctx context.Context, el *element) {
	t.beforeRelease(ctx, func(ctx context.Context) {
		_ = t.callOn(ctx, el, actionableJS, nil, map[string]any{"done": true})
	})
}

// Hover moves the mouse to the centre of the element (Input.dispatchMouseEvent
// mouseMoved), after the actionability checks.
func (t *Actor) Hover(ctx context.Context, tg Target) (*ActionResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	el, x, y, err := t.locate(ctx, tg, actOpts{hitTest: true})
	if err != nil {
		return nil, err
	}
	if err := t.Blocking(ctx, func(ctx context.Context) error {
		return t.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, x, y, 0)
	}); err != nil {
		return nil, pagecore.CDPErr("hover", err)
	}
	return &ActionResult{Target: el.desc}, nil
}
