package tabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/tabpilot/tabpilot/errcode"
)

// ActionResult reports what an action did.
type ActionResult struct {
	// Target describes the element acted on.
	Target string `json:"target,omitempty"`
	// Value is a field's text after type or fill.
	Value *string `json:"value,omitempty"`
	// Dialog is a JavaScript dialog the action opened and left pending.
	Dialog *Dialog `json:"dialog,omitempty"`
	// Navigated is true when the action started a top-level navigation.
	Navigated bool `json:"navigated,omitempty"`
	// Note tells what the page did that the caller may not expect, such
	// as reformatting the text a fill put in.
	Note string `json:"note,omitempty"`
}

func (t *Tab) mouse(ctx context.Context, typ input.DispatchMouseEventType, x, y float64, clicks int64) error {
	p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y}
	if typ != input.DispatchMouseEventTypeMouseMoved {
		p.Button = input.MouseButtonLeft
		p.ClickCount = clicks
		p.Buttons = 1
		if typ == input.DispatchMouseEventTypeMouseReleased {
			p.Buttons = 0
		}
	}
	_, err := cdp.Call(ctx, t.target, input.DispatchMouseEvent, p)
	return err
}

// bgMoveWait bounds the mouseMoved moveMouse sends to a background page
// without waiting for it.
const bgMoveWait = 10 * time.Second

// moveMouse moves the mouse to x, y over el's page (Input.dispatchMouseEvent
// mouseMoved). Chromium delivers a mouse move with the page's next
// animation frame and answers the command after it; a hidden page (a
// background tab of a browser tabpilot attached to, el.bg) gets no frames,
// and the answer came only after about 5 s, past the click's guard. There
// the move is sent without waiting for its answer: the renderer delivers
// the pending move before the next mouse button event, so the page still
// sees mousemove before mousedown, at once, and its visibility and focus
// are left as the user has them.
func (t *Tab) moveMouse(ctx context.Context, el *element, x, y float64) error {
	if el == nil || !el.bg {
		return t.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, x, y, 0)
	}
	mctx, cancel := context.WithTimeout(t.ctx, bgMoveWait)
	t.sup.wg.Go(func() {
		defer cancel()
		if err := t.mouse(mctx, input.DispatchMouseEventTypeMouseMoved, x, y, 0); err != nil && mctx.Err() == nil {
			t.sup.log.Debug("mouse move in a background page", "tab", t.name, "err", err)
		}
	})
	return nil
}

// Click clicks the element a target names: it waits until the element is
// actionable (attached, visible, stable, enabled, receiving the pointer),
// then dispatches mouseMoved, mousePressed and mouseReleased at its centre
// (Input.dispatchMouseEvent) and checks that the element got the click.
// Errors: element_not_found, stale_element, not_actionable, timeout.
func (t *Tab) Click(ctx context.Context, tg Target) (*ActionResult, error) {
	// The actionability check arms a one-shot listener, so a click that
	// never reaches the element is reported, not taken for success. When
	// nothing in the document animates, it does not wait a frame for the
	// stability check: the mouseMoved does (Chromium aligns mouse moves
	// with animation frames), and verify checks the box again while it
	// waits; the guard stops a press that lands on something else.
	// If the element moved or got covered in that frame, the click starts
	// over with the waiting check.
	o := actOpts{enabled: true, hitTest: true, arm: true, quick: true}
	for {
		res, retry, err := t.clickOnce(ctx, tg, &o)
		if !retry {
			return res, err
		}
	}
}

// clickOnce is one try of Click with o. It asks for another try, with the
// waiting check (o.quick false), when the quick try's guard stopped every
// event of the press and release because something else was under the
// pointer: the page saw none of them.
func (t *Tab) clickOnce(ctx context.Context, tg Target, o *actOpts) (*ActionResult, bool, error) {
	var el *element
	var nav navMark
	var err error
	for {
		var x, y float64
		el, x, y, err = t.locate(ctx, tg, *o)
		if err != nil {
			return nil, false, err
		}
		nav = t.navMark()
		err = t.blocking(ctx, func(ctx context.Context) error {
			if o.quick {
				// The move waits for the page's next animation frame;
				// the check of the box and the hit test runs meanwhile,
				// not one more round trip after it.
				moved := make(chan error, 1)
				go func() { moved <- t.moveMouse(ctx, el, x, y) }()
				verr := t.verify(ctx, el)
				if err := <-moved; err != nil {
					return err
				}
				if verr != nil {
					return verr
				}
			} else if err := t.moveMouse(ctx, el, x, y); err != nil {
				return err
			}
			if err := t.mouse(ctx, input.DispatchMouseEventTypeMousePressed, x, y, 1); err != nil {
				return err
			}
			return t.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
		})
		// (A selector's element that was replaced meanwhile, say by a
		// virtualised list re-rendering after the scroll, is found again.)
		var e *Error
		if o.quick && errors.As(err, &e) && ctx.Err() == nil &&
			(e.Code == errcode.NotActionable || (e.Code == errcode.ElementNotFound && tg.ID == 0)) {
			o.quick = false
			continue
		}
		break
	}
	res := &ActionResult{Target: el.desc}
	var dpe *dialogPendingError
	if asDialog(err, &dpe) {
		res.Dialog = dpe.d
		return res, false, nil
	}
	if err != nil {
		t.disarm(el)
		return nil, false, cdpErr("click", err)
	}
	if t.NavSeq() != nav.seq {
		res.Navigated = true
		t.settleNavigation(ctx, res)
		return res, false, nil
	}
	// The check ends the guard actionable.js armed and reads what it saw.
	// When the click started a navigation (the renderer says so before it
	// answers the mouse release), Chromium holds every call to the page,
	// the check's too, until the navigation commits: the check then waits
	// for the commit as long as navigated does, not for the whole timeout.
	checkCtx, cancel := t.heldByNavigation(ctx, nav)
	defer cancel()
	var got *struct {
		Got     bool   `json:"got"`
		By      string `json:"by"`
		Touched bool   `json:"touched"`
	}
	const check = `function(){
  const c = this.__tpClick;
  if (!c) return null;
  return c.done();
}`
	err = t.callOn(checkCtx, el, check, &got)
	if checkCtx.Err() != nil && ctx.Err() == nil {
		// Held past the commit wait by the navigation the click started.
		t.disarm(el)
		res.Navigated = true
		t.notePending(res)
		return res, false, nil
	}
	if err == nil && got != nil && !got.Got && t.NavSeq() == nav.seq {
		if got.By != "" && o.quick && !got.Touched && ctx.Err() == nil {
			o.quick = false
			return nil, true, nil
		}
		if got.By != "" {
			return nil, false, &Error{Code: errcode.NotActionable, Msg: el.desc + " did not receive the click: " + got.By + " was on top of it at that moment, and tabpilot stopped the click from reaching it"}
		}
		return nil, false, &Error{Code: errcode.NotActionable, Msg: el.desc + " did not receive the click event (a page listener stopped it before it got there, or another element took it)"}
	}
	t.noteNavigation(ctx, nav, res)
	return res, false, nil
}

// disarm ends, in the background (bounded by the tab's life and 2 s), the
// guard of a click that failed before its check.
func (t *Tab) disarm(el *element) {
	go func() {
		ctx, cancel := context.WithTimeout(t.ctx, 2*time.Second)
		defer cancel()
		_ = t.callOn(ctx, el, `function(){ if (this.__tpClick) this.__tpClick.done(); }`, nil)
	}()
}

// Hover moves the mouse to the centre of the element (Input.dispatchMouseEvent
// mouseMoved), after the actionability checks.
func (t *Tab) Hover(ctx context.Context, tg Target) (*ActionResult, error) {
	el, x, y, err := t.locate(ctx, tg, actOpts{hitTest: true})
	if err != nil {
		return nil, err
	}
	if err := t.blocking(ctx, func(ctx context.Context) error {
		return t.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, x, y, 0)
	}); err != nil {
		return nil, cdpErr("hover", err)
	}
	return &ActionResult{Target: el.desc}, nil
}

// prepareText focuses the field (clicking it first if focusing alone does
// not work) and, for fill, selects its content. It returns the field's text
// before the edit, or set=true when the value was set directly (date and
// similar inputs).
func (t *Tab) prepareText(ctx context.Context, tg Target, value, mode string) (*element, string, bool, error) {
	el, _, _, err := t.locate(ctx, tg, actOpts{enabled: true})
	if err != nil {
		return nil, "", false, err
	}
	var r struct {
		Error  string `json:"error"`
		Set    bool   `json:"set"`
		Value  string `json:"value"`
		Select bool   `json:"select"`
	}
	if err := t.callOn(ctx, el, editableJS, &r, value, mode); err != nil {
		return nil, "", false, err
	}
	if r.Select {
		return el, "", false, errIsSelect
	}
	if r.Error != "" {
		e := &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("cannot %s %s: %s", mode, el.desc, r.Error)}
		if strings.HasPrefix(r.Error, "element is not an input") {
			e.Hint = "Target the field itself: an input, a textarea, a select or a contenteditable element (observe lists them as textbox, searchbox, combobox)."
		}
		return nil, "", false, e
	}
	return el, r.Value, r.Set, nil
}

func (t *Tab) fieldValue(ctx context.Context, el *element) (string, error) {
	var v string
	err := t.callOn(ctx, el, valueJS, &v)
	return v, err
}

// Type types text into the element as a person would: it focuses it, puts
// the caret at the end, and sends each character as key events
// (Input.dispatchKeyEvent keyDown/char/keyUp from the US layout) or, for
// characters no key produces, Input.insertText. A field whose text did not
// change is reported as not_actionable, never as success.
func (t *Tab) Type(ctx context.Context, tg Target, text string) (*ActionResult, error) {
	el, before, _, err := t.prepareText(ctx, tg, text, "type")
	if err != nil {
		return nil, err
	}
	err = t.blocking(ctx, func(ctx context.Context) error {
		for _, r := range text {
			if err := t.typeRune(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	return t.afterEdit(ctx, el, before, text, "type", err)
}

func (t *Tab) afterEdit(ctx context.Context, el *element, before, text, mode string, err error) (*ActionResult, error) {
	res := &ActionResult{Target: el.desc}
	var dpe *dialogPendingError
	if asDialog(err, &dpe) {
		res.Dialog = dpe.d
		return res, nil
	}
	if err != nil {
		return nil, cdpErr(mode, err)
	}
	after, err := t.fieldValue(ctx, el)
	if err != nil {
		var e *Error
		if ok := asError(err, &e); ok && e.Code == errcode.StaleElement {
			res.Navigated = true // the edit submitted the form
			return res, nil
		}
		return nil, err
	}
	res.Value = &after
	if text != "" && after == before {
		return nil, &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("%s into %s had no effect: its text is still %q (a page script may reject or reset it)", mode, el.desc, trim(after, 80))}
	}
	return res, nil
}

func trim(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func (t *Tab) typeRune(ctx context.Context, r rune) error {
	if r == '\n' {
		r = '\r'
	}
	k, ok := kb.Keys[r]
	if !ok || r > unicode.MaxASCII {
		_, err := cdp.Call(ctx, t.target, input.InsertText, input.InsertTextParams{Text: string(r)})
		return err
	}
	return t.sendKey(ctx, k, 0)
}

// sendKey dispatches keyDown (with text when printable and no command
// modifier) and keyUp for one key.
func (t *Tab) sendKey(ctx context.Context, k *kb.Key, mods int64) error {
	if k.Shift {
		mods |= 8
	}
	down := input.DispatchKeyEventParams{
		Type: input.DispatchKeyEventTypeKeyDown, Key: k.Key, Code: k.Code, Modifiers: mods,
		WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Native,
	}
	if k.Print && mods&^8 == 0 {
		down.Text, down.UnmodifiedText = k.Text, k.Unmodified
	} else {
		down.Type = input.DispatchKeyEventTypeRawKeyDown
	}
	if _, err := cdp.Call(ctx, t.target, input.DispatchKeyEvent, down); err != nil {
		return err
	}
	up := down
	up.Type, up.Text, up.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
	_, err := cdp.Call(ctx, t.target, input.DispatchKeyEvent, up)
	return err
}

// Fill replaces the content of a field with value: it focuses and selects
// the content, then inserts the text (Input.insertText) or, for an empty
// value, deletes it. Inputs without typed text (date, time, color, range)
// get the value set with input and change events. A field whose text does
// not end up as value is reported as not_actionable: one the page kept,
// emptied, or cut short (maxlength, a mask), the message quoting what the
// field holds; one the page reformatted (a phone mask) is a success with
// a Note. A native <select> (or its label) gets the option whose label,
// else value, is value, as Select does; Value is then the chosen label.
func (t *Tab) Fill(ctx context.Context, tg Target, value string) (*ActionResult, error) {
	el, before, set, err := t.prepareText(ctx, tg, value, "fill")
	if err == errIsSelect {
		// A native <select>: pick the option by label, then value, as
		// tab.select does (what a person means by filling it in).
		sr, err := t.Select(ctx, tg, []string{value})
		if err != nil {
			return nil, err
		}
		v := strings.Join(sr.Selected, ", ")
		return &ActionResult{Target: sr.Target, Value: &v, Dialog: sr.Dialog}, nil
	}
	if err != nil {
		return nil, err
	}
	if !set {
		err = t.blocking(ctx, func(ctx context.Context) error {
			if value == "" {
				return t.sendKey(ctx, kb.Keys['\b'], 0)
			}
			_, err := cdp.Call(ctx, t.target, input.InsertText, input.InsertTextParams{Text: value})
			return err
		})
	}
	res, err := t.afterEdit(ctx, el, before, "", "fill", err)
	if err != nil || res.Value == nil {
		return res, err
	}
	// A page may reformat what it is given (a phone or card mask): that
	// is the fill taking effect. It failed only when the field kept its
	// old text, or was emptied.
	after := norm(*res.Value)
	switch {
	case after == norm(value):
	case cut(after, norm(value)):
		var max int
		_ = t.callOn(ctx, el, `function(){ return this.maxLength > 0 ? this.maxLength : 0; }`, &max)
		why := "the page cut it (an input mask or a length limit)"
		if max > 0 {
			why = fmt.Sprintf("the field takes at most %d characters (maxlength)", max)
		}
		return nil, &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("fill %s was cut short: the field holds %q, not %q: %s", el.desc, trim(*res.Value, 80), trim(value, 80), why),
			Hint: "Give a value the field takes whole (shorter, or in the form the page expects), or check that the part it kept is enough."}
	case after == norm(before) || after == "":
		return nil, &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("fill %s had no effect: its text is %q, not %q (the page rejected the new text, or reformatted it to what it was)", el.desc, trim(*res.Value, 80), trim(value, 80)),
			Hint: "The page keeps or reformats what is typed (validation, an input mask): check the value, and give it as the page expects."}
	default:
		res.Note = fmt.Sprintf("the page changed the text to %q", trim(*res.Value, 80))
	}
	return res, nil
}

// cut reports whether the field's text after is what a length limit or
// a mask left of value: a shorter beginning of it, also when only letters
// and digits are compared (a mask's own separators aside).
func cut(after, value string) bool {
	if after == "" || len(after) >= len(value) {
		return false
	}
	if strings.HasPrefix(value, after) {
		return true
	}
	alnum := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return -1
		}, s)
	}
	a, v := alnum(after), alnum(value)
	return a != "" && len(a) < len(v) && strings.HasPrefix(v, a)
}

// errIsSelect tells Fill that its target is a native <select>.
var errIsSelect = errors.New("a select")

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

var keyNames map[string]*kb.Key

func init() {
	keyNames = map[string]*kb.Key{}
	for r, k := range kb.Keys {
		if _, ok := keyNames[k.Key]; !ok || r < 128 {
			keyNames[k.Key] = k
		}
	}
	alias := map[string]string{"Esc": "Escape", "Return": "Enter", "Space": " ", "Up": "ArrowUp", "Down": "ArrowDown",
		"Left": "ArrowLeft", "Right": "ArrowRight", "Del": "Delete", "Spacebar": " "}
	for a, k := range alias {
		if v, ok := keyNames[k]; ok {
			keyNames[a] = v
		}
	}
	keyNames["Enter"] = kb.Keys['\r']
}

var modBits = map[string]int64{"alt": 1, "control": 2, "ctrl": 2, "meta": 4, "cmd": 4, "command": 4, "shift": 8}

// ParseKey parses a key or chord such as "Enter", "a", "Control+A",
// "Shift+Tab". Errors: bad_request naming the unknown key.
func ParseKey(s string) (*kb.Key, int64, error) {
	if s == "" {
		return nil, 0, Errorf(errcode.BadRequest, "empty key")
	}
	parts := strings.Split(s, "+")
	if strings.HasSuffix(s, "++") || s == "+" {
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
		if s == "+" {
			parts = []string{"+"}
		}
	}
	var mods int64
	for _, p := range parts[:len(parts)-1] {
		b, ok := modBits[strings.ToLower(p)]
		if !ok {
			return nil, 0, Errorf(errcode.BadRequest, "unknown modifier %q in %q: use Alt, Control, Meta or Shift", p, s)
		}
		mods |= b
	}
	name := parts[len(parts)-1]
	k, ok := keyNames[name]
	if !ok && len([]rune(name)) == 1 {
		k, ok = kb.Keys[[]rune(name)[0]]
	}
	if !ok {
		// Case-insensitive names ("enter", "pagedown").
		for n, v := range keyNames {
			if len(n) > 1 && strings.EqualFold(n, name) {
				k, ok = v, true
				break
			}
		}
	}
	if !ok {
		return nil, 0, Errorf(errcode.BadRequest, "unknown key %q: use a key name such as Enter, Tab, Escape, ArrowDown, PageDown, F5, or one character", name)
	}
	if mods != 0 && len(name) == 1 && unicode.IsUpper([]rune(name)[0]) && mods&8 == 0 {
		// "Control+A" means the A key, not Shift+A.
		if lk, ok := kb.Keys[unicode.ToLower([]rune(name)[0])]; ok {
			k = lk
		}
	}
	return k, mods, nil
}

// Press presses a key or chord (see ParseKey), after focusing the element
// of target when one is given (Input.dispatchKeyEvent).
func (t *Tab) Press(ctx context.Context, key string, tg *Target) (*ActionResult, error) {
	k, mods, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	if err := t.dialogBlock(); err != nil {
		return nil, err
	}
	res := &ActionResult{}
	if tg != nil {
		el, _, _, err := t.locate(ctx, *tg, actOpts{})
		if err != nil {
			return nil, err
		}
		if err := t.callOn(ctx, el, `function(){ this.focus(); }`, nil); err != nil {
			return nil, err
		}
		res.Target = el.desc
	}
	nav := t.navMark()
	err = t.blocking(ctx, func(ctx context.Context) error {
		return t.sendKey(ctx, k, mods)
	})
	var dpe *dialogPendingError
	if asDialog(err, &dpe) {
		res.Dialog = dpe.d
		return res, nil
	}
	if err != nil {
		return nil, cdpErr("press", err)
	}
	t.noteNavigation(ctx, nav, res)
	return res, nil
}

// Scroll scrolls by (dx, dy) CSS pixels with a mouse wheel event at the
// centre of the viewport (Input.dispatchMouseEvent mouseWheel), as a
// person's wheel would: the scroll container under the pointer moves, or
// the page. It says which one moved and where it stands now
// (ScrollResult.Container and Position; Container is "" and Note says so
// when nothing moved, as at the end of the page).
func (t *Tab) Scroll(ctx context.Context, dx, dy float64) (*ScrollResult, error) {
	if err := t.dialogBlock(); err != nil {
		return nil, err
	}
	vp := t.Viewport()
	cx, cy := float64(vp.Width)/2, float64(vp.Height)/2
	var snap runtime.EvaluateResult
	err := t.blocking(ctx, func(ctx context.Context) error {
		var err error
		snap, err = cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{
			Expression: fmt.Sprintf("(%s).call(document.elementFromPoint(%g, %g), null)", scrolledJS, cx, cy)})
		return err
	})
	if err != nil {
		return nil, evalErr(err)
	}
	err = t.blocking(ctx, func(ctx context.Context) error { return t.wheel(ctx, cx, cy, dx, dy) })
	if err != nil {
		return nil, cdpErr("scroll", err)
	}
	if snap.Result == nil || snap.Result.ObjectID == "" {
		return nil, Errorf(errcode.ScriptError, "scroll: the page's scroll positions could not be read")
	}
	return t.scrolled(ctx, t.target, snap.Result.ObjectID)
}

// scrolled reads, a frame after a wheel, which of the scroll containers
// of snapshot snap (js/scrolled.js) moved, and releases the snapshot.
func (t *Tab) scrolled(ctx context.Context, sess *chromedp.Target, snap runtime.RemoteObjectID) (*ScrollResult, error) {
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_, _ = cdp.Call(rctx, sess, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: snap})
	}()
	fn := "async function(s) { await new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 250); });\nreturn (" + scrolledJS + ").call(null, s); }"
	var res runtime.CallFunctionOnResult
	err := t.blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn, ObjectID: snap, Arguments: []*runtime.CallArgument{{ObjectID: snap}},
			ReturnByValue: new(true), AwaitPromise: new(true)})
		return err
	})
	if err != nil {
		return nil, evalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, Errorf(errcode.ScriptError, "scroll: %s", exceptionText(res.ExceptionDetails))
	}
	var r ScrollResult
	if res.Result != nil {
		if err := json.Unmarshal(res.Result.Value, &r); err != nil {
			return nil, fmt.Errorf("scroll: decode result: %w", err)
		}
	}
	if r.Container == "" {
		r.Note = "nothing scrolled: the page and the container under the pointer are at their end in that direction (the page is " + r.Position + ")"
	}
	return &r, nil
}

// WaitFor waits until the target exists and is visible, for the whole of
// ctx's deadline. Errors: timeout (element_not_found when ctx has no
// deadline), stale_element for a number whose node is gone.
func (t *Tab) WaitFor(ctx context.Context, tg Target) (*ActionResult, error) {
	for {
		el, err := t.resolve(ctx, tg)
		if err != nil {
			if ctx.Err() != nil {
				break // the time ran out during the query
			}
			return nil, err
		}
		if el != nil {
			var st actState
			if err := t.callOn(ctx, el, actionableJS, &st, map[string]any{"scroll": false}); err == nil && st.State == "ok" {
				return &ActionResult{Target: el.desc}, nil
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}
	return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitFor %s: not visible within the timeout", tg), Err: ctx.Err()}
}

// Evaluate runs JavaScript source in the page's main world and returns its
// JSON-serialisable result, awaiting a returned promise (Runtime.evaluate,
// returnByValue). The source is one of:
//   - an expression whose value is a function ("(a, b) => a + b",
//     "function () {…}", "async x => …"): it is called with args, each
//     passed as JSON;
//   - any other expression ("document.title", "(() => 1)()"): its value;
//   - statements ("let a = 1; a + 1"): the completion value, as the
//     console gives it.
//
// The source is told apart by parsing it (goja's ECMAScript parser), not
// by how it starts. Errors: script_error with the page's exception;
// bad_request for arguments that are not JSON-serialisable.
func (t *Tab) Evaluate(ctx context.Context, fnSource string, args []any) (json.RawMessage, error) {
	expr, repl, err := evalExpression(fnSource, args)
	if err != nil {
		return nil, err
	}
	var res runtime.EvaluateResult
	err = t.blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{
			Expression: expr, ReturnByValue: new(true), AwaitPromise: new(true), UserGesture: new(true), ReplMode: new(repl),
		})
		return err
	})
	if err != nil {
		if m := err.Error(); strings.Contains(m, "Object reference chain is too long") || strings.Contains(m, "could not be returned by value") || strings.Contains(m, "couldn't be returned by value") {
			return nil, &Error{Code: errcode.ScriptError, Msg: "evaluate: the result cannot be returned as JSON: it holds a cycle, or a DOM object such as window or an element; return plain data (el.textContent, {x: r.x})"}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &Error{Code: errcode.Timeout, Msg: "evaluate: the page's script had not returned (a promise that never settles, or code still running)", Err: err}
		}
		return nil, evalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, &Error{Code: errcode.ScriptError, Msg: "evaluate: " + exceptionText(res.ExceptionDetails)}
	}
	if res.Result == nil || len(res.Result.Value) == 0 {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(res.Result.Value), nil
}

// evalExpression is the expression Evaluate sends for src and args, and
// whether to send it in REPL mode, decided by parsing src (without
// trailing semicolons) with goja's ECMAScript parser:
//   - a function expression is called with args: (src)(...args);
//   - another expression is its value, in an async arrow so that it may
//     await;
//   - statements are sent as they are, in REPL mode (Runtime.evaluate
//     replMode, as the DevTools console does: top-level await, and let
//     and const that a later call may declare again), and args are an
//     error;
//   - source the parser refuses is left to the page's parser, called
//     with args when there are any (goja may lag V8 on new syntax).
//
// The source keeps its first line, so the line numbers of the page's
// exceptions are the caller's.
func evalExpression(src string, args []any) (expr string, repl bool, err error) {
	a := []byte("[]")
	if args != nil {
		if a, err = json.Marshal(args); err != nil {
			return "", false, Errorf(errcode.BadRequest, "evaluate: arguments are not JSON-serialisable: %v", err)
		}
	}
	body := strings.TrimRight(src, "; \t\r\n")
	kind := "unknown"
	if prog, err := parser.ParseFile(nil, "", "(async () => (\n"+body+"\n))", 0); err == nil {
		kind = "expression"
		if len(prog.Body) == 1 {
			if st, ok := prog.Body[0].(*ast.ExpressionStatement); ok {
				if fn, ok := st.Expression.(*ast.ArrowFunctionLiteral); ok {
					if b, ok := fn.Body.(*ast.ExpressionBody); ok {
						switch b.Expression.(type) {
						case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
							kind = "function"
						}
					}
				}
			}
		}
	} else if _, err := parser.ParseFile(nil, "", "(async () => {\n"+src+"\n})", 0); err == nil {
		kind = "statements"
	}
	switch {
	case kind == "function" || kind == "unknown" && len(args) > 0:
		return fmt.Sprintf("(%s\n)(...%s)", body, a), false, nil
	case len(args) > 0:
		return "", false, Errorf(errcode.BadRequest, "evaluate: %d argument(s) given, but the source is not a function; give one such as (a, b) => …", len(args))
	case kind == "expression":
		return fmt.Sprintf("(async () => (%s\n))()", body), false, nil
	}
	return src, true, nil
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

// Value returns the whole current text of a field: an input's or a
// textarea's value, a contenteditable element's innerText, or that of the
// first field inside a label or wrapper (js/value.js, with
// Runtime.callFunctionOn). tab.observe shows a value cut at 2000
// characters; this reads all of it. It waits up to wait for a selector to
// match. Errors: element_not_found, stale_element.
func (t *Tab) Value(ctx context.Context, tg Target, wait time.Duration) (string, error) {
	el, err := t.find(ctx, tg, wait)
	if err != nil {
		return "", err
	}
	v, err := t.fieldValue(ctx, el)
	if err != nil {
		return "", cdpErr("read the value of "+el.desc, err)
	}
	return v, nil
}
