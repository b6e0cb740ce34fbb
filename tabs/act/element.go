package act

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// Target names an element: an element number from the latest observation
// (ID > 0) or a selector: CSS, or a query-handler
// selector text/…, xpath/…, pierce/…, aria/… (the legacy p-text/,
// p-xpath/, p-pierce/, p-aria/ are accepted), or a scope chain of aria/
// and CSS parts, A >> B, B searched inside what A matches; a CSS part may
// end in :has-text("…") (record.go).
type Target struct {
	ID       int
	Selector string
}

func (t Target) String() string {
	if t.ID > 0 {
		return strconv.Itoa(t.ID)
	}
	return t.Selector
}

// ParseTarget parses a target given as text: a whole number is an element
// number, anything else a selector. Errors: bad_request for an empty
// target or an unknown prefix.
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Target{}, pagecore.Errorf(errcode.BadRequest, "empty target: give an element number or a selector")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 {
			return Target{}, pagecore.Errorf(errcode.BadRequest, "invalid element number %d", n)
		}
		return Target{ID: n}, nil
	}
	if _, _, err := splitEngine(s); err != nil {
		return Target{}, err
	}
	return Target{Selector: s}, nil
}

var prefixRE = regexp.MustCompile(`^([a-zA-Z][a-zA-Z-]*)/`)

// splitEngine returns the engine (css, text, xpath, pierce, aria) and the
// selector proper.
func splitEngine(sel string) (engine, rest string, err error) {
	m := prefixRE.FindStringSubmatch(sel)
	if m == nil {
		return "css", sel, nil
	}
	name := strings.ToLower(strings.TrimPrefix(strings.ToLower(m[1]), "p-"))
	rest = sel[len(m[0]):]
	switch name {
	case "text", "xpath", "pierce", "aria":
		if strings.TrimSpace(rest) == "" {
			return "", "", pagecore.Errorf(errcode.BadRequest, "empty %s selector", name)
		}
		return name, rest, nil
	case "css":
		return "css", rest, nil
	}
	return "", "", pagecore.Errorf(errcode.BadRequest, "unknown selector prefix %q: use text/, xpath/, pierce/, aria/ or a CSS selector", m[0])
}

// element is a resolved element: a remote object in its frame's main world.
type element struct {
	obj     runtime.RemoteObjectID
	desc    string
	number  int // the element number, when the target was one
	backend cdp.BackendNodeID
	sess    *chromedp.Target // the out-of-process iframe it is in; nil: the page (pagecore)
	frame   cdp.FrameID      // the frame of its document: a number's (the observation's), or a same-process frame a selector chain entered
	// box and fx, fy are what the last actionability check saw: the
	// element's border box and the point it hit-tested, in its frame's
	// viewport CSS pixels (for verify).
	box    []float64
	fx, fy float64
	// bg is true when the last check found the page hidden (a background
	// tab): see sendMouse.
	bg bool
	// press is true when the last check's guard checks the element again
	// at the press (actState.Press).
	press bool
	// scrolled is true when the last check scrolled the element into
	// view (actState.Scrolled).
	scrolled bool
	// iso is true when obj is of guard.js's isolated world
	// (resolveInGuardWorld), not of the main world.
	iso bool
	// shown, when set, is what the number showed when it was numbered,
	// for each actionability check, and the guard at the press, to
	// compare (checkShown).
	shown *shownWant
	// text is the string of a text/ selector: the guard checks at the
	// press that the element still shows it, or that no other element
	// does (the page re-labelled its items in place as the pointer
	// arrived).
	text string
	// resolved is when locate had the node (for the click's debug log).
	resolved time.Time
	// label is what the element showed at the check that passed (its
	// text, else its aria-label), for a selector's click to say when the
	// element showed something else at the press.
	label string
}

// resolve finds the element a target names, once. Errors: bad_request,
// element_not_found, stale_element (a number from an older observation or
// whose node is gone).
func (t *Actor) resolve(ctx context.Context, tg Target) (*element, error) {
	return t.resolveIn(ctx, tg, false)
}

// resolveIn is resolve; with iso, a plain or aria/ selector of the top
// document is matched in guard.js's world (pagecore.Page.GuardContext),
// whose element the click's check can leave the verify to the guard with.
func (t *Actor) resolveIn(ctx context.Context, tg Target, iso bool) (*element, error) {
	if tg.ID > 0 {
		return t.resolveNumber(ctx, tg.ID) // number.go
	}
	engine, sel, err := splitEngine(tg.Selector)
	if err != nil {
		return nil, err
	}
	if engine == "aria" || scoped(tg.Selector) {
		if d := t.PendingDialog(); d != nil && t.DialogPolicy() == "" {
			return nil, pagecore.EvalErr(&pagecore.DialogPendingError{Dialog: d})
		}
		if scoped(tg.Selector) || strict(ctx) {
			return t.resolveCounted(ctx, tg.Selector) // record.go
		}
		return t.resolveAria(ctx, sel, tg.Selector, iso)
	}
	if engine == "css" && (strict(ctx) || hasTextRE.MatchString(sel)) {
		if el, err := t.resolveCounted(ctx, sel); err != nil || el != nil {
			return el, err
		}
	}
	expr := fmt.Sprintf("(%s)(%s, %s)", js.Query, jsString(engine), jsString(sel))
	var res runtime.EvaluateResult
	group := t.group(ctx, nil)
	top := cdp.FrameID(t.Target().TargetID)
	var world runtime.ExecutionContextID
	if iso {
		world, _ = t.GuardContext(ctx, top) // 0: the main world
	}
	evaluate := func(c runtime.ExecutionContextID) error {
		return t.Blocking(ctx, func(ctx context.Context) error {
			var err error // not the outer err: blocking can return first
			res, err = cdp.Call(ctx, t.Target(), runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ObjectGroup: group, ContextID: c})
			return err
		})
	}
	err = evaluate(world)
	if err != nil && world != 0 && strings.Contains(err.Error(), "Cannot find context") {
		// The world is gone (its document with it): the main world's
		// answer stands.
		t.ForgetGuardContext(top)
		world = 0
		err = evaluate(0)
	}
	if err != nil {
		return nil, pagecore.EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, pagecore.Errorf(errcode.BadRequest, "invalid selector %q: %s", tg.Selector, pagecore.ExceptionText(res.ExceptionDetails))
	}
	if res.Result == nil || res.Result.ObjectID == "" {
		return nil, nil // not found (yet)
	}
	el := &element{obj: res.Result.ObjectID, desc: fmt.Sprintf("%q", tg.Selector), iso: world != 0}
	if engine == "text" {
		el.text = sel
	}
	return el, nil
}

var ariaRE = regexp.MustCompile(`(?s)^(.*?)(?:\[role=["']?([a-zA-Z]+)["']?\])?$`)

// resolveAria finds the first element by accessible name and role
// (Accessibility.queryAXTree), as Puppeteer's aria/Name[role="button"]:
// text (StaticText, InlineTextBox), whose name is its own text, is no
// element (aria/X on a button labelled "Close dialog" that shows X finds
// nothing). With iso, the element is resolved in guard.js's world
// (resolveIn).
func (t *Actor) resolveAria(ctx context.Context, sel, orig string, iso bool) (*element, error) {
	m := ariaRE.FindStringSubmatch(strings.TrimSpace(sel))
	name, role := strings.TrimSpace(m[1]), m[2]
	doc, err := cdp.Call(ctx, t.Target(), runtime.Evaluate, runtime.EvaluateParams{Expression: "document", ObjectGroup: t.group(ctx, nil)})
	if err != nil || doc.Result == nil {
		return nil, pagecore.EvalErr(err)
	}
	q := accessibility.QueryAXTreeParams{ObjectID: doc.Result.ObjectID, AccessibleName: name, Role: role}
	res, err := cdp.Call(ctx, t.Target(), accessibility.QueryAXTree, q)
	if err != nil {
		return nil, pagecore.CDPErr("aria query", err)
	}
	for _, n := range res.Nodes {
		if n.Ignored || n.BackendDOMNodeID == 0 || (n.Role != nil && (string(n.Role.Value) == `"StaticText"` || string(n.Role.Value) == `"InlineTextBox"`)) {
			continue
		}
		if iso {
			if r, ok := t.resolveInGuardWorld(ctx, "", n.BackendDOMNodeID); ok {
				return &element{obj: r.Object.ObjectID, desc: fmt.Sprintf("%q", orig), backend: n.BackendDOMNodeID, iso: true}, nil
			}
		}
		r, err := cdp.Call(ctx, t.Target(), dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: n.BackendDOMNodeID, ObjectGroup: t.group(ctx, nil)})
		if err != nil || r.Object == nil {
			continue
		}
		return &element{obj: r.Object.ObjectID, desc: fmt.Sprintf("%q", orig), backend: n.BackendDOMNodeID}, nil
	}
	return nil, nil
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// autoWait is how long an action waits for its element to exist and become
// actionable before it fails (within the run's timeout).
const autoWait = 5 * time.Second

// find resolves a target, waiting (up to autoWait, within ctx) for a
// selector to match. A number never waits: it names a node, or is stale.
func (t *Actor) find(ctx context.Context, tg Target, wait time.Duration) (*element, error) {
	return t.findIn(ctx, tg, wait, false)
}

// findIn is find; iso is resolveIn's.
func (t *Actor) findIn(ctx context.Context, tg Target, wait time.Duration, iso bool) (*element, error) {
	deadline := time.Now().Add(wait)
	for {
		el, err := t.resolveIn(ctx, tg, iso)
		if err != nil || el != nil {
			return el, err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			hint := "Selectors search the top document and its open shadow roots; to search inside an iframe, scope by the iframe: `iframe[title=\"Payments\"] >> aria/Pay now[role=\"button\"]`. Or observe, then use the element's number (iframes' elements are numbered too)."
			if strings.HasPrefix(tg.Selector, "aria/") {
				hint = "aria/ matches an element's accessible name (its aria-label, aria-labelledby or label, else its text), not the text it shows when it has a name of its own: observe shows the names. " + hint
			}
			return nil, &pagecore.Error{Code: errcode.ElementNotFound, Msg: fmt.Sprintf("no element matches %q", tg.Selector), Hint: hint}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type actState struct {
	State string `json:"state"`
	By    string `json:"by"`
	Tag   string `json:"tag"`
	// Label is what the element shows (its text, else its aria-label),
	// in a check that passed.
	Label string  `json:"label"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	// Box is the element's border box [left, top, width, height].
	Box []float64 `json:"box"`
	// Top is true when X and Y are already top-level viewport CSS pixels.
	Top bool `json:"top"`
	// Why says what covers the element: "" another element at its
	// centre, "modal" a modal dialog it is outside of, "inert" an inert
	// ancestor, "nopointer" pointer-events: none on it (By is what is
	// behind). Same is true when the last check saw the same cover over
	// the same box; Busy while the document loads or animates.
	Why  string `json:"why"`
	Same bool   `json:"same"`
	Busy bool   `json:"busy"`
	// Bg is true when the page is hidden (document.visibilityState): a
	// background tab, which gets no animation frames.
	Bg bool `json:"bg"`
	// Shown is what the node shows (actionableJS given row and key), nil when it is
	// detached.
	Shown *shownNow `json:"shown"`
	// Press is true when a quick check armed a guard that checks the
	// element again at the press, so the click sends no verify call.
	Press bool `json:"press"`
	// Scrolled is true when the check scrolled the element into view:
	// the page's scroll events come with the next animation frame.
	Scrolled bool `json:"scrolled"`
}

// coverSettle is how long an element may stay covered by the same
// element, or disabled, with the page loaded, no request starting or
// ending, none in flight for less than youngRequest, and nothing
// animating, before an action fails without waiting
// for the rest of its time: a cookie backdrop or a modal dialog does not
// go away by itself, nor does a disabled button enable itself. An element that moves, a page that loads, fetches or animates,
// or a cover that changes keeps the whole wait.
const coverSettle = 1500 * time.Millisecond

// youngRequest is how long a request in flight keeps an action waiting
// for a cover to go or a control to enable: a fetch whose answer does it
// (a slow API) keeps the wait; one in flight longer is taken for a long
// poll or a stream, which never ends.
const youngRequest = 10 * time.Second

// youngInFlight reports whether a request of reqs has been in flight for
// less than youngRequest.
func youngInFlight(reqs map[network.RequestID]pagecore.Request) bool {
	for _, r := range reqs {
		if time.Since(r.Start) < youngRequest {
			return true
		}
	}
	return false
}

// callArg is an argument of Runtime.callFunctionOn. runtime.CallArgument
// omits a value that encodes as empty ("", [], {}), which the function
// then got as undefined: a fill of "" into a date input reached the page
// as undefined, and a color's failed on it.
type callArg struct {
	Value    jsonv2.Value           `json:"value,omitzero"`
	ObjectID runtime.RemoteObjectID `json:"objectId,omitempty"`
}

// callParams are the Runtime.callFunctionOn parameters callOn sends: by
// value, awaiting a promise, as a user gesture.
type callParams struct {
	FunctionDeclaration string                 `json:"functionDeclaration"`
	ObjectID            runtime.RemoteObjectID `json:"objectId"`
	Arguments           []callArg              `json:"arguments,omitempty"`
	ReturnByValue       bool                   `json:"returnByValue"`
	AwaitPromise        bool                   `json:"awaitPromise"`
	UserGesture         bool                   `json:"userGesture"`
}

// callOn calls a function declaration on an element
// (Runtime.callFunctionOn, awaiting promises, result by value) and decodes
// the result into out.
func (t *Actor) callOn(ctx context.Context, el *element, fn string, out any, args ...any) error {
	var cargs []callArg
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode argument: %w", err)
		}
		cargs = append(cargs, callArg{Value: b})
	}
	var res runtime.CallFunctionOnResult
	err := t.Blocking(ctx, func(ctx context.Context) error {
		sess := t.SessionOf(el.sess)
		p := callParams{FunctionDeclaration: fn, ObjectID: el.obj, Arguments: cargs, ReturnByValue: true, AwaitPromise: true, UserGesture: true}
		if f := t.held(ctx, el, fn, len(cargs)); f != "" {
			hp := p
			hp.FunctionDeclaration = pagecore.HeldCall
			hp.Arguments = append([]callArg{{ObjectID: f}}, cargs...)
			var r runtime.CallFunctionOnResult
			err := sess.Call(ctx, runtime.CallFunctionOn.Method, hp, &r)
			if err == nil || ctx.Err() != nil {
				res = r
				return err
			}
			// The held function is gone (its context, or released):
			// the call goes with the source, whose error is the answer.
			t.Forget(el.sess, el.obj, fn)
		}
		return sess.Call(ctx, runtime.CallFunctionOn.Method, p, &res)
	})
	if err != nil {
		if strings.Contains(err.Error(), "Cannot find context") || strings.Contains(err.Error(), "Could not find object") {
			return &pagecore.Error{Code: errcode.StaleElement, Msg: el.desc + " is gone (the page navigated); observe again", Err: pagecore.ErrStale}
		}
		return pagecore.EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		return &pagecore.Error{Code: errcode.ScriptError, Msg: "page error: " + pagecore.ExceptionText(res.ExceptionDetails)}
	}
	if out != nil && res.Result != nil && len(res.Result.Value) > 0 {
		if err := json.Unmarshal(res.Result.Value, out); err != nil {
			return fmt.Errorf("decode result: %w", err)
		}
	}
	return nil
}

type actOpts struct {
	enabled bool
	hitTest bool
	// arm arms the one-shot click listener Click checks afterwards.
	arm bool
	// iso resolves a number, or a plain or aria/ selector of the top
	// document, in guard.js's world (resolveInGuardWorld, resolveIn), where the check
	// can leave the verify to the guard (Click).
	iso bool
	// quick skips the animation frame the stability check waits when
	// nothing in the document animates; the caller must verify the box
	// after a frame has passed (Click: its mouseMoved comes with one, and
	// actionable.js watches for it).
	quick bool
	// hovered: the click started over after its guard stopped the press
	// for the frame the page asked for on the mouse move (verdict
	// "hover"), or because the move disabled the element, so the pointer
	// is on the element; a check that finds it hidden then fails at
	// once, as the guard does (a :hover style or a handler of the move
	// hid it, and it shows again only when the pointer leaves), instead
	// of waiting for it to show.
	hovered bool
	// again is the element of the try the guard stopped so (hovered):
	// the try after it checks that element first, rather than find the
	// selector's again, which a text/ or aria/ selector would not while
	// the hover hides it (it matches what shows), and would wait for
	// until its timeout.
	again *element
	// at is where the try before left the pointer, when its guard
	// stopped the whole press: the next try sends no mouse move when its
	// point is the same.
	at *[2]float64
	// stopped is why the guard stopped the last try's press, for a click
	// whose wait ends with no try let through.
	stopped error
	// found is what the element showed at the first try's check, for a
	// selector's click to say when what it pressed showed other.
	found *string
}

// actionable waits (within wait and ctx) until el is attached, visible,
// stable, enabled (when asked) and receives the pointer at its centre, and
// returns that point in top-level viewport CSS pixels (DOM.getContentQuads).
// Errors: stale_element (detached number), not_actionable naming the
// reason (hidden, disabled, moving, covered by another element, or inert
// under a modal dialog or an inert ancestor). A cover that stays the same
// over a still element of a loaded, unanimated page fails after
// coverSettle, not after wait.
func (t *Actor) actionable(ctx context.Context, el *element, o actOpts, wait time.Duration) (float64, float64, error) {
	deadline := time.Now().Add(wait)
	var st actState
	var coveredSince time.Time // the same cover over a still element, since
	var frameCover string      // what of the parent page covered an out-of-process iframe's element last
	net := t.InFlight()
	for {
		args := map[string]any{"enabled": o.enabled, "hitTest": o.hitTest, "arm": o.arm, "quick": o.quick, "iso": el.iso}
		if el.text != "" {
			args["text"] = el.text
		}
		if w := el.shown; w != nil {
			// Every check also compares what the node shows: a list
			// may re-render its rows in place while the check waits.
			args["row"], args["key"] = w.ref.Row, w.key
			st.Shown = nil
		}
		if err := t.callOn(ctx, el, actionableJS, &st, args); err != nil {
			return 0, 0, err
		}
		if w := el.shown; w != nil {
			if err := compareShown(el, w, st.Shown); err != nil {
				return 0, 0, err
			}
			if st.State == "shown" {
				continue // not reached: compareShown refused it
			}
		}
		if st.State == "ok" {
			x, y, cover, err := t.topPoint(ctx, el, &st)
			if err != nil || cover == "" {
				return x, y, err
			}
			// Something of the parent page's covers the frame there.
			st = actState{State: "covered", By: cover, Same: cover == frameCover, Tag: st.Tag}
			frameCover = cover
		}
		if st.State == "hidden" && o.hovered {
			st.State = "vanished"
			return 0, 0, notActionable(el, &st)
		}
		if st.State == "detached" || st.State == "relabeled" {
			// (Relabeled: a text/ selector's element shows other text
			// now, and another element shows the selector's: locate
			// finds the selector's element again.)
			return 0, 0, gone(el)
		}
		// Requests that start or end, or one in flight for less than
		// youngRequest, mean the page is still loading (a spinner that
		// goes when the data is there, a button a slow answer enables);
		// one that stays in flight longer (a long poll) does not.
		now := t.InFlight()
		if (st.State != "covered" && st.State != "disabled") || !st.Same || st.Busy || !maps.Equal(now, net) || youngInFlight(now) {
			coveredSince = time.Time{}
			net = now
		} else if coveredSince.IsZero() {
			coveredSince = time.Now()
		} else if time.Since(coveredSince) >= coverSettle {
			return 0, 0, notActionable(el, &st)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, 0, notActionable(el, &st)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// topPoint returns the point an actionability check that passed (st)
// tested, in top-level viewport CSS pixels, and remembers what the check
// saw for verify. A point of the top frame at scale 1 needs no mapping;
// others come from the element's first content quad (DOM.getContentQuads),
// mapped through the <iframe>s of an out-of-process iframe (FrameMap).
// For an element in an out-of-process iframe, cover is what the
// top-level page would give the click at that point instead of the
// frame's <iframe> (DOM.getNodeForLocation), "" when nothing covers it:
// the guard actionable.js arms runs in the element's frame and cannot
// see the parent's elements. For a numbered element of another frame of
// the page's renderer, cover is what the hit test finds there when it is
// not in the element's frame. Errors: not_actionable when the element or
// its frame has no box, stale_element when the frame is gone.
func (t *Actor) topPoint(ctx context.Context, el *element, st *actState) (x, y float64, cover string, err error) {
	el.box, el.fx, el.fy, el.bg, el.press, el.scrolled, el.label = st.Box, st.X, st.Y, st.Bg, st.Press, st.Scrolled, st.Label
	if st.Top && el.sess == nil {
		return st.X, st.Y, "", nil
	}
	if el.sess == nil {
		q, err := t.ContentQuads(ctx, nil, el.obj)
		x, y, ok := quadCentre(q, err)
		if !ok {
			x, y = st.X, st.Y
		}
		if el.frame == "" || el.frame == cdp.FrameID(t.Target().TargetID) {
			return x, y, "", nil
		}
		// A numbered element of a frame in the page's renderer: the
		// guard reaches an ancestor's window only when it is of the
		// same origin, so the top page is hit-tested here too.
		cover, err := t.coverAt(ctx, x, y, func(_ cdp.BackendNodeID, frame cdp.FrameID) bool { return frame == el.frame })
		return x, y, cover, err
	}
	// In an out-of-process iframe, scrollIntoView scrolls the
	// ancestors in their own renderers, and the browser routes input
	// by what they last presented: let the top page present first.
	if err := t.AwaitTopFrames(ctx); err != nil {
		t.log.Debug("wait for the top page's frames", "tab", t.Name(), "err", err)
	}
	m, err := t.FrameMap(ctx, el.sess)
	if err != nil {
		return 0, 0, "", err
	}
	q, err := cdp.Call(ctx, el.sess, dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: el.obj})
	fx, fy, ok := quadCentre(q, err)
	if !ok {
		return 0, 0, "", &pagecore.Error{Code: errcode.NotActionable, Msg: el.desc + " has no layout box (hidden or detached)"}
	}
	x, y = m.Point(fx, fy)
	cover, err = t.coverAt(ctx, x, y, func(node cdp.BackendNodeID, _ cdp.FrameID) bool { return node == m.Owner })
	return x, y, cover, err
}

// coverAt hit-tests the top-level page at (x, y) (Page.NodeAt) and
// describes what it finds there, "" when mine says it is the element's
// own (the element's frame, or its out-of-process frame's <iframe>).
func (t *Actor) coverAt(ctx context.Context, x, y float64, mine func(cdp.BackendNodeID, cdp.FrameID) bool) (string, error) {
	node, frame, err := t.NodeAt(ctx, x, y)
	if err != nil || mine(node, frame) {
		return "", err
	}
	return t.DescribeCover(ctx, node, frame), nil
}

// quadCentre is the centre of the first quad of a DOM.getContentQuads
// answer; ok is false when there is none.
func quadCentre(q dom.GetContentQuadsResult, err error) (x, y float64, ok bool) {
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
		return 0, 0, false
	}
	for i := 0; i < 8; i += 2 {
		x += q.Quads[0][i] / 4
		y += q.Quads[0][i+1] / 4
	}
	return x, y, !math.IsNaN(x) && !math.IsNaN(y)
}

// verify checks, just before the mouse goes down, that el still has the
// box the last actionability check saw and still receives the pointer at
// the point it tested, then arms the click's guard (one
// Runtime.callFunctionOn, after the frame of the mouse move). Errors:
// stale_element or element_not_found (detached), not_actionable (moved or
// covered).
func (t *Actor) verify(ctx context.Context, el *element) error {
	box := el.box
	if len(box) != 4 {
		box = []float64{} // no box to compare: the hit test and the arming still run
	}
	var st actState
	if err := t.callOn(ctx, el, actionableJS, &st, map[string]any{"verify": box, "x": el.fx, "y": el.fy, "arm": true, "iso": el.iso}); err != nil {
		return err
	}
	switch st.State {
	case "ok":
		return nil
	case "detached":
		return goneByPointer(el)
	}
	return notActionable(el, &st)
}

// gone is the error for an element that was removed from the page.
func gone(el *element) error {
	if el.number > 0 {
		return &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d was removed from the page; observe again", el.number), Err: pagecore.ErrStale}
	}
	return &pagecore.Error{Code: errcode.ElementNotFound, Msg: el.desc + " was removed from the page"}
}

// goneByPointer is the error for an element that the page removed as the
// click's mouse move reached it (a mouseenter handler that renders the
// row again): a number names that node, which is gone; a selector finds
// the new one (Click tries again).
func goneByPointer(el *element) error {
	if el.number > 0 {
		return &pagecore.Error{Code: errcode.StaleElement, Msg: fmt.Sprintf("element %d was removed from the page as the pointer reached it (a mouseenter or mouseover handler that renders it again does that); observe again", el.number),
			Hint: "Hover the element first (hover N), then observe and click the number the new element gets.", Err: pagecore.ErrStale}
	}
	return &pagecore.Error{Code: errcode.ElementNotFound, Msg: el.desc + " was removed from the page as the pointer reached it (a mouseenter or mouseover handler that renders it again, or swaps it for another element, does that), and nothing matches it now",
		Err: errGoneByPointer}
}

// errGoneByPointer marks the element_not_found error of a selector's
// element that the click's own mouse move removed: Click looks for the
// selector's element once more at once, and fails with this error when
// none matches (the pointer is still there).
var errGoneByPointer = errors.New("removed as the pointer reached it")

func notActionable(el *element, st *actState) error {
	var why, hint string
	var err error
	switch st.State {
	case "hidden":
		why = "is not visible (zero size, display:none or visibility:hidden)"
	case "disabled":
		why = "is disabled"
		hint = "Do first what enables it (fill the required fields, pick an option; hover it first when the page enables it on hover, since a click moves the pointer only to an enabled element); observe shows it as disabled. A control that stays disabled " + coverSettle.String() + " on a page at rest fails the action without waiting for its timeout."
	case "unstable":
		why = "is still moving (animating)"
	case "hover":
		why = "was changing as the pointer reached it (the page's handlers of the mouse move asked for an animation frame, a hover effect), and the time ran out before a press after that frame"
	case "vanished":
		why = "became hidden as the pointer reached it (a :hover style or a mouseenter handler of the page hides it, or swaps it for another element), so a press there would not reach it; tabpilot did not press"
		hint = "A person could not click it either. If another control takes its place on hover, observe again with the pointer there (hover the element first) and click what shows."
		err = errVanished
	case "flicker":
		why = "became hidden or moved away as the pointer reached it (a :hover style or a mouseenter handler of the page hides or moves it), so the press would have gone to what was under the pointer then; tabpilot stopped it before the page saw it"
		hint = "A person could not click it either: it leaves the pointer whenever the pointer reaches it."
		err = errVanished
	case "covered":
		hint = "Click the overlay's own button first (observe lists it: accept, close, dismiss). A cover that stays " + coverSettle.String() + " fails the action without waiting for its timeout."
		switch {
		case st.Why == "modal":
			why = "is outside the open modal dialog " + st.By + ": the rest of the page is inert and gets no clicks while it is open; close the dialog first"
		case st.Why == "inert":
			why = "is inert (inside " + st.By + ", which has the inert attribute): it gets no clicks"
		case st.Why == "nopointer":
			why = "has pointer-events: none (its own style or an ancestor's), so the pointer goes through it to " + st.By + "; a person's click could not reach it either"
			hint = "Pages set pointer-events: none on what they do not want clicked yet (while loading, or until a form is valid): do first what enables it. One that stays so " + coverSettle.String() + " fails the action without waiting for its timeout."
		case st.By == "nothing":
			// The hit test found no element at its centre: it is outside
			// the viewport, where no scrolling brings it (a control
			// parked at left: -9999px).
			why = "is outside the viewport, where no scrolling brings it (the page placed it off-screen), so a person could not click it either"
			hint = "Such a control is usually reached through its label, or another control that stands for it: click that (by its text, text/…, when observe does not list it)."
		default:
			why = "is covered by " + st.By + ", which would receive the click; close or remove it first"
		}
	default:
		why = "is not actionable (" + st.State + ")"
	}
	name := el.desc
	if st.Tag != "" {
		name += " (" + st.Tag + ")"
	}
	return &pagecore.Error{Code: errcode.NotActionable, Msg: name + " " + why, Hint: hint, Err: err}
}

// errVanished marks the not_actionable error of an element that the
// click's own mouse move hid: trying again would hide it again.
var errVanished = errors.New("hidden by the pointer")

// Box is an element's border box in page CSS pixels (from the top-left of
// the document, not the viewport).
type Box struct{ X, Y, W, H float64 }

// PageBox waits (up to autoWait, within ctx) for the element tg names to
// be visible and stable, scrolled into view, and returns its border box
// (Element.getBoundingClientRect plus the scroll offset): what a
// screenshot of the element clips to. Errors: as Click's; not_actionable
// when it has no size.
func (t *Actor) PageBox(ctx context.Context, tg Target) (Box, error) {
	ctx, release := t.withHandles(ctx)
	defer release()
	el, err := t.find(ctx, tg, autoWait)
	if err != nil {
		return Box{}, err
	}
	if _, _, err := t.actionable(ctx, el, actOpts{}, autoWait); err != nil {
		return Box{}, err
	}
	var r Box
	if err := t.callOn(ctx, el, `function(){ const r = this.getBoundingClientRect(); return {X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height}; }`, &r); err != nil {
		return Box{}, err
	}
	if r.W < 1 || r.H < 1 {
		return Box{}, &pagecore.Error{Code: errcode.NotActionable, Msg: "the element has no size to capture"}
	}
	return r, nil
}
