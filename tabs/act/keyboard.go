package act

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp/kb"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/msg"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// prepareText focuses the field (clicking it first if focusing alone does
// not work) and, for fill, selects its content. It returns the field's text
// before the edit, or set=true when the value was set directly (date and
// similar inputs).
func (t *Actor) prepareText(ctx context.Context, tg Target, value, mode string) (*element, string, bool, error) {
	el, _, _, err := t.locate(ctx, tg, actOpts{enabled: true})
	if err != nil {
		return nil, "", false, err
	}
	var r struct {
		Error     string `json:"error"`
		Malformed bool   `json:"malformed"`
		Set       bool   `json:"set"`
		Value     string `json:"value"`
		Select    bool   `json:"select"`
	}
	if err := t.callOn(ctx, el, js.Editable, &r, value, mode); err != nil {
		return nil, "", false, err
	}
	if r.Select {
		return el, "", false, errIsSelect
	}
	if r.Error != "" {
		e := &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("cannot %s %s: %s", mode, el.desc, r.Error)}
		switch {
		case r.Malformed:
			// The value is the caller's to fix; the field is untouched.
			e.Code = errcode.BadRequest
			e.Hint = "Give the value in the format the message names."
		case strings.HasPrefix(r.Error, "element is not an input"):
			e.Hint = "Target the field itself: an input, a textarea, a select or a contenteditable element (observe lists them as textbox, searchbox, combobox)."
		case strings.HasPrefix(r.Error, "element is disabled"), strings.HasPrefix(r.Error, "element is read-only"):
			e.Hint = "The field takes no text now; observe to see whether something else must be done first (a box to check, a step before it)."
		case strings.HasPrefix(r.Error, "element did not take focus"):
			e.Hint = "Something took the focus back (a script, a dialog); observe and try again, or click the field first."
		default:
			// The message says what to use instead (click, upload,
			// select, fill): the code's default hint (hidden, covered)
			// would mislead.
			e.Hint = "Use the action the message names instead."
		}
		return nil, "", false, e
	}
	return el, r.Value, r.Set, nil
}

func (t *Actor) fieldValue(ctx context.Context, el *element) (string, error) {
	var v string
	err := t.callOn(ctx, el, js.Value, &v)
	return v, err
}

// Type types text into the element as a person would: it focuses it, puts
// the caret at the end, and sends each character as key events
// (Input.dispatchKeyEvent keyDown/char/keyUp from the US layout) or, for
// characters no key produces, Input.insertText. A newline is Enter: when
// it submits a form (or the typing otherwise navigates, or changes a
// single-page app's route), the new page or view is waited for as after
// Press. A field whose text did not change, with no navigation, is
// reported as not_actionable, never as success (newlines aside: Enter
// adds nothing to an input).
//
// Each {{secret:NAME}} in text is replaced by the secret's value only here,
// as the keys are sent, and in one Input.insertText (secrets.Store.Split); the result and
// errors have the value masked. Errors: bad_request for an unknown secret
// or none given (--secrets).
func (t *Actor) Type(ctx context.Context, tg Target, text string) (*ActionResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	parts, err := t.Secrets().Split(text)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	sent := sb.String()
	el, before, _, err := t.prepareText(ctx, tg, sent, "type")
	if err != nil {
		return t.masked(nil, err)
	}
	nav := t.Mark()
	left := utf8.RuneCountInString(sent) // the characters not typed yet
	err = t.Blocking(ctx, func(ctx context.Context) error {
		for _, p := range parts {
			if p.Secret {
				// A secret goes in one piece (one input event), as a
				// password manager fills it: typed key by key, every
				// prefix of it would reach the page's input handlers,
				// and their logs, unmasked.
				if _, err := cdp.Call(ctx, t.Target(), input.InsertText, input.InsertTextParams{Text: p.Text}); err != nil {
					return err
				}
				left -= utf8.RuneCountInString(p.Text)
				continue
			}
			for _, r := range p.Text {
				if err := t.typeRune(ctx, r); err != nil {
					return err
				}
				left--
				if r == '\n' && left > 0 && t.LeavingSince(ctx, nav) {
					// The Enter submitted a form (or the page went
					// elsewhere on it): the rest would go to a page
					// on its way out, and be lost.
					return nil
				}
			}
		}
		return nil
	})
	// A newline is Enter: in a form it submits it, as press Enter does.
	// The navigation or route change it started is waited for, and a
	// field the page then left as it was (Enter adds nothing to an
	// input) is no failure.
	var navRes ActionResult
	if err == nil {
		t.noteNavigation(ctx, nav, &navRes)
		if navRes.Navigated {
			navRes.Target = el.desc
			skipped(&navRes, left)
			return t.masked(&navRes, nil)
		}
	}
	typed := sent
	if err == nil && left > 0 {
		rs := []rune(sent)
		typed = string(rs[:len(rs)-left])
	}
	res, err := t.afterEdit(ctx, el, before, strings.ReplaceAll(typed, "\n", ""), "type", err)
	if res != nil {
		res.Note, res.Blocked = navRes.Note, navRes.Blocked
		if err == nil {
			skipped(res, left)
		}
	}
	return t.masked(res, err)
}

// masked returns res and err with the session's secrets masked in the
// field's value, the note and a coded error's message (secrets.Store.Redact),
// for the actions that may have sent a secret.
func (t *Actor) masked(res *ActionResult, err error) (*ActionResult, error) {
	sec := t.Secrets()
	if sec.Len() == 0 {
		return res, err
	}
	if res != nil {
		if res.Value != nil {
			v := sec.Redact(*res.Value)
			res.Value = &v
		}
		res.Note = sec.Redact(res.Note)
	}
	var e *pagecore.Error
	if err != nil && asError(err, &e) && sec.Contains(e.Msg) {
		cp := *e
		cp.Msg = sec.Redact(e.Msg)
		cp.Err = nil // its text may quote the value too
		err = &cp
	} else if err != nil && sec.Contains(err.Error()) {
		err = &pagecore.Error{Code: errcode.Of(err), Msg: sec.Redact(err.Error())}
	}
	return res, err
}

func (t *Actor) afterEdit(ctx context.Context, el *element, before, text, mode string, err error) (*ActionResult, error) {
	res := &ActionResult{Target: el.desc}
	var dpe *pagecore.DialogPendingError
	if pagecore.AsDialog(err, &dpe) {
		res.Dialog = dpe.Dialog
		return res, nil
	}
	if err != nil {
		return nil, pagecore.CDPErr(mode, err)
	}
	after, err := t.fieldValue(ctx, el)
	if err != nil {
		var e *pagecore.Error
		if ok := asError(err, &e); ok && e.Code == errcode.StaleElement {
			res.Navigated = true // the edit submitted the form
			return res, nil
		}
		return nil, err
	}
	res.Value = &after
	if text != "" && after == before {
		return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("%s into %s had no effect: its text is still %q (a page script may reject or reset it)", mode, el.desc, msg.Trim(after, 80))}
	}
	return res, nil
}

func (t *Actor) typeRune(ctx context.Context, r rune) error {
	if r == '\n' {
		r = '\r'
	}
	k, ok := kb.Keys[r]
	if !ok || r > unicode.MaxASCII {
		_, err := cdp.Call(ctx, t.Target(), input.InsertText, input.InsertTextParams{Text: string(r)})
		return err
	}
	return t.sendKey(ctx, k, 0)
}

// sendKey dispatches keyDown (with text when printable and no command
// modifier) and keyUp for one key.
func (t *Actor) sendKey(ctx context.Context, k *kb.Key, mods int64) error {
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
	if _, err := cdp.Call(ctx, t.Target(), input.DispatchKeyEvent, down); err != nil {
		return err
	}
	up := down
	up.Type, up.Text, up.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
	_, err := cdp.Call(ctx, t.Target(), input.DispatchKeyEvent, up)
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
//
// Each {{secret:NAME}} in value is replaced by the secret's value only
// here, as the text is sent (Input.insertText, or the argument of the
// Runtime.callFunctionOn that sets a date-like input); the result and
// errors have the value masked. Errors: bad_request for an unknown secret
// or none given (--secrets).
func (t *Actor) Fill(ctx context.Context, tg Target, value string) (*ActionResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	sent, err := t.Secrets().Expand(value)
	if err != nil {
		return nil, err
	}
	return t.masked(t.fill(ctx, tg, sent))
}

func (t *Actor) fill(ctx context.Context, tg Target, value string) (*ActionResult, error) {
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
		err = t.Blocking(ctx, func(ctx context.Context) error {
			if value == "" {
				return t.sendKey(ctx, kb.Keys['\b'], 0)
			}
			_, err := cdp.Call(ctx, t.Target(), input.InsertText, input.InsertTextParams{Text: value})
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
	case set && strings.EqualFold(after, norm(value)):
		// A color input keeps #rrggbb in lower case.
	case cut(after, norm(value)):
		var max int
		_ = t.callOn(ctx, el, `function(){ return this.maxLength > 0 ? this.maxLength : 0; }`, &max)
		why := "the page cut it (an input mask or a length limit)"
		if max > 0 {
			why = fmt.Sprintf("the field takes at most %d characters (maxlength)", max)
		}
		return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("fill %s was cut short: the field holds %q, not %q: %s", el.desc, msg.Trim(*res.Value, 80), msg.Trim(value, 80), why),
			Hint: "Give a value the field takes whole (shorter, or in the form the page expects), or check that the part it kept is enough."}
	case after == norm(before) || after == "":
		return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("fill %s had no effect: its text is %q, not %q (the page rejected the new text, or reformatted it to what it was)", el.desc, msg.Trim(*res.Value, 80), msg.Trim(value, 80)),
			Hint: "The page keeps or reformats what is typed (validation, an input mask): check the value, and give it as the page expects."}
	default:
		res.Note = fmt.Sprintf("the page changed the text to %q", msg.Trim(*res.Value, 80))
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
		return nil, 0, pagecore.Errorf(errcode.BadRequest, "empty key")
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
			return nil, 0, pagecore.Errorf(errcode.BadRequest, "unknown modifier %q in %q: use Alt, Control, Meta or Shift", p, s)
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
		return nil, 0, pagecore.Errorf(errcode.BadRequest, "unknown key %q: use a key name such as Enter, Tab, Escape, ArrowDown, PageDown, F5, or one character", name)
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
func (t *Actor) Press(ctx context.Context, key string, tg *Target) (*ActionResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	k, mods, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	if err := t.DialogBlock(); err != nil {
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
	nav := t.Mark()
	err = t.Blocking(ctx, func(ctx context.Context) error {
		return t.sendKey(ctx, k, mods)
	})
	var dpe *pagecore.DialogPendingError
	if pagecore.AsDialog(err, &dpe) {
		res.Dialog = dpe.Dialog
		return res, nil
	}
	if err != nil {
		return nil, pagecore.CDPErr("press", err)
	}
	t.noteNavigation(ctx, nav, res)
	return res, nil
}

// skipped notes in res the n characters of a type's text left untyped
// after a newline whose Enter started a navigation.
func skipped(res *ActionResult, n int) {
	if n <= 0 {
		return
	}
	res.Skipped = n
	note := fmt.Sprintf("the Enter of a newline started a navigation, so the %d characters after it were not typed", n)
	if res.Note != "" {
		note += "; " + res.Note
	}
	res.Note = note
}
