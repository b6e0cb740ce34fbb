package act

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/msg"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// SelectResult reports what Select chose.
type SelectResult struct {
	Target string `json:"target"`
	// Selected are the labels of the chosen options, and Values their
	// values (native selects only).
	Selected []string `json:"selected"`
	Values   []string `json:"values,omitempty"`
	// Dialog is a JavaScript dialog the pick opened and left pending.
	Dialog *pagecore.Dialog `json:"dialog,omitempty"`
}

type selectReply struct {
	Native   *bool  `json:"native"`
	Error    string `json:"error"`
	Missing  *string
	Options  []string `json:"options"`
	Selected []struct {
		Label string `json:"label"`
		Value string `json:"value"`
	} `json:"selected"`
	Found  *bool    `json:"found"`
	Picked int      `json:"picked"`
	Names  []string `json:"names"`
}

// selectWidgetWait bounds the wait for a custom widget's options to show
// after it was opened or typed into.
const selectWidgetWait = 2 * time.Second

// Select chooses options in the element a target names, by visible label
// first, then by value.
//
// A native <select> (or a label or wrapper of one) gets all the values at
// once: the options are selected, the others deselected, and input and
// change fire. A custom ARIA widget (combobox, listbox, or a button that
// opens one) is used as a person would: it is clicked open when no option
// shows, a text combobox is typed into when the value is not listed, and
// each option is clicked (Input.dispatchMouseEvent).
//
// Errors: bad_request without values; element_not_found when a value
// matches no option (the message names it and lists the options; nothing
// was changed, and a widget that was opened is closed again);
// not_actionable for a disabled select or option, several values on a
// single select, or a pick that had no visible effect.
func (t *Actor) Select(ctx context.Context, tg Target, values []string) (*SelectResult, error) {
	ctx, done, err := t.inputTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, release := t.withHandles(ctx)
	defer release()
	if len(values) == 0 {
		return nil, pagecore.Errorf(errcode.BadRequest, "select needs at least one value (an option's label or value)")
	}
	deadline := time.Now().Add(actionWait(ctx))
	el, err := t.find(ctx, tg, time.Until(deadline))
	if err != nil {
		return nil, err
	}
	var r selectReply
	if err := t.callOn(ctx, el, js.Select, &r, "native", values); err != nil {
		return nil, err
	}
	if r.Native != nil && *r.Native || r.Error != "" || r.Missing != nil {
		if err := selectErr(el, &r); err != nil {
			return nil, err
		}
		res := &SelectResult{Target: el.desc}
		for _, s := range r.Selected {
			res.Selected = append(res.Selected, s.Label)
			res.Values = append(res.Values, s.Value)
		}
		return res, nil
	}
	return t.selectWidget(ctx, el, values, deadline)
}

func selectErr(el *element, r *selectReply) error {
	switch {
	case r.Error != "":
		return &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("cannot select in %s: %s", el.desc, r.Error)}
	case r.Missing != nil:
		opts := r.Options
		more := ""
		if len(opts) > 20 {
			opts, more = opts[:20], ", …"
		}
		q := make([]string, len(opts))
		for i, o := range opts {
			q[i] = fmt.Sprintf("%q", o)
		}
		return &pagecore.Error{Code: errcode.ElementNotFound, Msg: fmt.Sprintf("select in %s: no option matches %q; nothing was selected (options: %s%s)", el.desc, *r.Missing, strings.Join(q, ", "), more)}
	}
	return nil
}

// selectWidget picks values in a custom ARIA widget.
func (t *Actor) selectWidget(ctx context.Context, el *element, values []string, deadline time.Time) (*SelectResult, error) {
	if _, _, err := t.actionable(ctx, el, actOpts{enabled: true}, time.Until(deadline)); err != nil {
		return nil, err
	}
	var before struct {
		Shown string `json:"shown"`
	}
	if err := t.callOn(ctx, el, js.Select, &before, "state", nil); err != nil {
		return nil, err
	}
	// Open the widget (when no option shows) and check every value before
	// changing anything.
	opened := false
	r, err := t.widgetOptions(ctx, el, values, false)
	if err != nil {
		return nil, err
	}
	if r.Found != nil && !*r.Found {
		if err := t.clickElement(ctx, el, time.Until(deadline)); err != nil {
			return nil, fmt.Errorf("open %s: %w", el.desc, err)
		}
		opened = true
		if r, err = t.widgetOptions(ctx, el, values, true); err != nil {
			return nil, err
		}
	}
	typed := false
	if (r.Found != nil && !*r.Found || r.Missing != nil) && len(values) == 1 && t.isTextInput(ctx, el) {
		// A filtering combobox: type the value and look again.
		if err := t.typeInto(ctx, el, values[0]); err != nil {
			return nil, err
		}
		typed = true
		if r, err = t.widgetOptions(ctx, el, values, true); err != nil {
			return nil, err
		}
	}
	if r.Found != nil && !*r.Found {
		t.undoWidget(ctx, el, opened, typed, before.Shown)
		return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("cannot select in %s: it is not a <select>, and no [role=option] showed after clicking it", el.desc)}
	}
	if err := selectErr(el, r); err != nil {
		t.undoWidget(ctx, el, opened, typed, before.Shown)
		return nil, err
	}
	res := &SelectResult{Target: el.desc}
	var lastOpt *element // the option clicked last
	for i, v := range values {
		if i > 0 {
			// The widget may have closed or re-rendered: match again, and
			// reopen it when needed.
			if r, err = t.widgetOptions(ctx, el, []string{v}, false); err != nil {
				return nil, err
			}
			if r.Found != nil && !*r.Found {
				if err := t.clickElement(ctx, el, time.Until(deadline)); err != nil {
					return nil, fmt.Errorf("reopen %s: %w", el.desc, err)
				}
				if r, err = t.widgetOptions(ctx, el, []string{v}, true); err != nil {
					return nil, err
				}
			}
			if err := selectErr(el, r); err != nil {
				return nil, err
			}
			if r.Found != nil && !*r.Found {
				return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("select in %s: the options did not show again for %q", el.desc, v)}
			}
		}
		// The option the last widgetOptions call matched for v, by
		// reference.
		opt, err := t.objOn(ctx, el, js.Select, "pick", []string{v})
		if err != nil {
			return nil, err
		}
		lastOpt = opt
		name := v
		if len(r.Names) > 0 {
			name = r.Names[0]
		}
		opt.desc = fmt.Sprintf("option %q of %s", name, el.desc)
		if err := t.clickElement(ctx, opt, time.Until(deadline)); err != nil {
			var dpe *pagecore.DialogPendingError
			if pagecore.AsDialog(err, &dpe) {
				res.Dialog = dpe.Dialog
				res.Selected = append(res.Selected, name)
				return res, nil
			}
			return nil, fmt.Errorf("pick option %q: %w", name, err)
		}
		res.Selected = append(res.Selected, name)
	}
	// Verify: the options are aria-selected, or the widget shows the pick.
	var after struct {
		Shown string `json:"shown"`
	}
	if err := t.callOn(ctx, el, js.Select, &after, "state", nil); err != nil {
		var e *pagecore.Error
		if errors.As(err, &e) && e.Code == errcode.StaleElement {
			return res, nil // the pick navigated
		}
		return nil, err
	}
	last := res.Selected[len(res.Selected)-1]
	ok := after.Shown != before.Shown || strings.Contains(norm(after.Shown), norm(last))
	if !ok && lastOpt != nil {
		_ = t.callOn(ctx, lastOpt, `function(){ return this.isConnected && this.getAttribute('aria-selected') === 'true'; }`, &ok)
	}
	if !ok {
		return nil, &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("select %q in %s had no effect: the option was clicked but the widget still shows %q and the option is not aria-selected", last, el.desc, msg.Trim(after.Shown, 80))}
	}
	return res, nil
}

// widgetOptions matches values against the widget's visible options;
// with wait, it retries until options show (selectWidgetWait).
func (t *Actor) widgetOptions(ctx context.Context, el *element, values []string, wait bool) (*selectReply, error) {
	deadline := time.Now().Add(selectWidgetWait)
	for {
		var r selectReply
		if err := t.callOn(ctx, el, js.Select, &r, "widget", values); err != nil {
			return nil, err
		}
		if !wait || (r.Found == nil && r.Missing == nil) || time.Now().After(deadline) {
			return &r, nil
		}
		if !pagecore.SleepCtx(ctx, 100*time.Millisecond) {
			return &r, nil
		}
	}
}

// undoWidget closes a widget that select opened (Escape) and restores
// text it typed, so a failed select changes nothing.
func (t *Actor) undoWidget(ctx context.Context, el *element, opened, typed bool, shown string) {
	if typed {
		_ = t.callOn(ctx, el, `function(v){ let el = this; if (el.tagName === 'LABEL' && el.control) el = el.control;
 const set = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value').set; set.call(el, v);
 el.dispatchEvent(new Event('input', {bubbles: true})); }`, nil, shown)
	}
	if opened || typed {
		_ = t.Blocking(ctx, func(ctx context.Context) error { return t.sendKey(ctx, keyNames["Escape"], 0) })
	}
}

func (t *Actor) isTextInput(ctx context.Context, el *element) bool {
	var ok bool
	_ = t.callOn(ctx, el, `function(){ let el = this; if (el.tagName === 'LABEL' && el.control) el = el.control;
 return (el.tagName === 'INPUT' && !['checkbox','radio','button','submit','file','hidden','range','color'].includes(el.type)) || el.tagName === 'TEXTAREA'; }`, &ok)
	return ok
}

// typeInto replaces the text of a text field with value (Input.insertText
// after selecting the content), as fill does.
func (t *Actor) typeInto(ctx context.Context, el *element, value string) error {
	var r struct {
		Error string `json:"error"`
	}
	if err := t.callOn(ctx, el, js.Editable, &r, value, "fill"); err != nil {
		return err
	}
	if r.Error != "" {
		return &pagecore.Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("cannot type into %s: %s", el.desc, r.Error)}
	}
	return t.Blocking(ctx, func(ctx context.Context) error {
		_, err := cdp.Call(ctx, t.Target(), input.InsertText, input.InsertTextParams{Text: value})
		return err
	})
}

// clickElement clicks a resolved element at its centre once it is
// actionable (within wait): mouseMoved, mousePressed, mouseReleased.
// A dialog the click opens is returned as *pagecore.DialogPendingError.
func (t *Actor) clickElement(ctx context.Context, el *element, wait time.Duration) error {
	x, y, err := t.actionable(ctx, el, actOpts{enabled: true, hitTest: true}, wait)
	if err != nil {
		return err
	}
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
	if err != nil && !pagecore.AsDialog(err, &dpe) {
		return pagecore.CDPErr("click", err)
	}
	return err
}

// objOn calls fn on el (Runtime.callFunctionOn) and returns the element it
// returns, as a remote object. Errors: element_not_found when it returns
// no element.
func (t *Actor) objOn(ctx context.Context, el *element, fn string, args ...any) (*element, error) {
	var cargs []*runtime.CallArgument
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode argument: %w", err)
		}
		cargs = append(cargs, &runtime.CallArgument{Value: b})
	}
	var res runtime.CallFunctionOnResult
	err := t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, t.SessionOf(el.sess), runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn, ObjectID: el.obj, Arguments: cargs,
		})
		return err
	})
	if err != nil {
		return nil, pagecore.EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, &pagecore.Error{Code: errcode.ScriptError, Msg: "page error: " + pagecore.ExceptionText(res.ExceptionDetails)}
	}
	if res.Result == nil || res.Result.ObjectID == "" || res.Result.Subtype != "node" {
		return nil, &pagecore.Error{Code: errcode.ElementNotFound, Msg: "no element for " + el.desc}
	}
	return &element{obj: res.Result.ObjectID, desc: el.desc, sess: el.sess}, nil
}
