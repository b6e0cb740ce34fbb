package tabs

import (
	"context"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/act"
	"github.com/tabpilot/tabpilot/tabs/record"
	"github.com/tabpilot/tabpilot/urlpattern"
)

// This file records a session's actions (package tabs/record). The Tab
// methods below shadow the layers' methods of the same name, so every
// door (the service, a run's script, a Go program) goes through them:
// each calls the layer's method, and while a recording that wants the tab
// is in progress it also records the step, with the node hook in the
// action's context so element numbers get their locators before the
// action acts.

// StartRecording starts recording the actions of every tab, or only those
// of the tab named tab when it is not "". Errors: bad_request when a
// recording is already in progress.
func (s *Supervisor) StartRecording(tab string) error {
	if !s.rec.CompareAndSwap(nil, record.New(tab)) {
		return Errorf(errcode.BadRequest, "a recording is already in progress: stop it first (record stop FILE.js)")
	}
	return nil
}

// StopRecording ends the recording in progress and returns it (its Steps,
// and record.Script to write them). Errors: bad_request when none is in
// progress.
func (s *Supervisor) StopRecording() (*record.Recorder, error) {
	r := s.rec.Swap(nil)
	if r == nil {
		return nil, Errorf(errcode.BadRequest, "no recording in progress: start one with record start")
	}
	return r, nil
}

// Recording returns the recording in progress, or nil.
func (s *Supervisor) Recording() *record.Recorder { return s.rec.Load() }

// recordOpen records an open that navigated the tab named name to url.
func (s *Supervisor) recordOpen(name, url string) {
	if r := s.rec.Load(); r != nil && r.Wants(name) {
		r.Begin(name, "open", "", "", nil, url).End(nil)
	}
}

// begin starts recording an action of t, or returns nil (and ctx) when
// nothing records it. target and to are element targets ("" for none).
func (t *Tab) begin(ctx context.Context, action, target, to string, args ...any) (*record.Pending, context.Context) {
	if t.sup == nil {
		return nil, ctx
	}
	r := t.sup.rec.Load()
	if r == nil || !r.Wants(t.Name()) {
		return nil, ctx
	}
	p := r.Begin(t.Name(), action, target, to, t.Actor, args...)
	return p, act.WithNodeHook(ctx, p.Hook())
}

// end ends p (nil: nothing recorded) with err and returns err.
func end(p *record.Pending, err error) error {
	if p != nil {
		p.End(err)
	}
	return err
}

// Goto is pagecore.Page.Goto, recorded.
func (t *Tab) Goto(ctx context.Context, rawURL, waitUntil string) (*NavResult, error) {
	p, ctx := t.begin(ctx, "goto", "", "", rawURL)
	r, err := t.Page.Goto(ctx, rawURL, waitUntil)
	return r, end(p, err)
}

// Back is pagecore.Page.Back, recorded.
func (t *Tab) Back(ctx context.Context) (*NavResult, error) {
	p, ctx := t.begin(ctx, "back", "", "")
	r, err := t.Page.Back(ctx)
	return r, end(p, err)
}

// Forward is pagecore.Page.Forward, recorded.
func (t *Tab) Forward(ctx context.Context) (*NavResult, error) {
	p, ctx := t.begin(ctx, "forward", "", "")
	r, err := t.Page.Forward(ctx)
	return r, end(p, err)
}

// Reload is pagecore.Page.Reload, recorded.
func (t *Tab) Reload(ctx context.Context) (*NavResult, error) {
	p, ctx := t.begin(ctx, "reload", "", "")
	r, err := t.Page.Reload(ctx)
	return r, end(p, err)
}

// HandleDialog is pagecore.Page.HandleDialog, recorded as acceptDialog or
// dismissDialog.
func (t *Tab) HandleDialog(ctx context.Context, accept bool, promptText *string) error {
	var p *record.Pending
	switch {
	case !accept:
		p, ctx = t.begin(ctx, "dismissDialog", "", "")
	case promptText != nil:
		p, ctx = t.begin(ctx, "acceptDialog", "", "", *promptText)
	default:
		p, ctx = t.begin(ctx, "acceptDialog", "", "")
	}
	return end(p, t.Page.HandleDialog(ctx, accept, promptText))
}

// WaitForURL is pagecore.Page.WaitForURL, recorded when the pattern is a
// glob (a regular expression or a predicate has no source to write).
func (t *Tab) WaitForURL(ctx context.Context, pat urlpattern.Pattern, waitUntil string) (string, error) {
	var p *record.Pending
	if pat.Glob != "" {
		p, ctx = t.begin(ctx, "waitForUrl", "", "", pat.Glob)
	}
	u, err := t.Page.WaitForURL(ctx, pat, waitUntil)
	return u, end(p, err)
}

// Click is act.Actor.Click, recorded.
func (t *Tab) Click(ctx context.Context, tg Target) (*ActionResult, error) {
	p, ctx := t.begin(ctx, "click", tg.String(), "")
	r, err := t.Actor.Click(ctx, tg)
	return r, end(p, err)
}

// Hover is act.Actor.Hover, recorded.
func (t *Tab) Hover(ctx context.Context, tg Target) (*ActionResult, error) {
	p, ctx := t.begin(ctx, "hover", tg.String(), "")
	r, err := t.Actor.Hover(ctx, tg)
	return r, end(p, err)
}

// Type is act.Actor.Type, recorded with the text as given (a
// {{secret:NAME}} placeholder stays one).
func (t *Tab) Type(ctx context.Context, tg Target, text string) (*ActionResult, error) {
	p, ctx := t.begin(ctx, "type", tg.String(), "", text)
	r, err := t.Actor.Type(ctx, tg, text)
	return r, end(p, err)
}

// Fill is act.Actor.Fill, recorded with the value as given.
func (t *Tab) Fill(ctx context.Context, tg Target, value string) (*ActionResult, error) {
	p, ctx := t.begin(ctx, "fill", tg.String(), "", value)
	r, err := t.Actor.Fill(ctx, tg, value)
	return r, end(p, err)
}

// Press is act.Actor.Press, recorded.
func (t *Tab) Press(ctx context.Context, key string, tg *Target) (*ActionResult, error) {
	target := ""
	if tg != nil {
		target = tg.String()
	}
	p, ctx := t.begin(ctx, "press", target, "", key)
	r, err := t.Actor.Press(ctx, key, tg)
	return r, end(p, err)
}

// Select is act.Actor.Select, recorded.
func (t *Tab) Select(ctx context.Context, tg Target, values []string) (*SelectResult, error) {
	p, ctx := t.begin(ctx, "select", tg.String(), "", values)
	r, err := t.Actor.Select(ctx, tg, values)
	return r, end(p, err)
}

// Scroll is act.Actor.Scroll, recorded.
func (t *Tab) Scroll(ctx context.Context, dx, dy float64) (*ScrollResult, error) {
	p, ctx := t.begin(ctx, "scroll", "", "", dx, dy)
	r, err := t.Actor.Scroll(ctx, dx, dy)
	return r, end(p, err)
}

// ScrollAt is act.Actor.ScrollAt, recorded as scroll(dx, dy, {selector}).
func (t *Tab) ScrollAt(ctx context.Context, tg Target, dx, dy float64) (*ScrollResult, error) {
	p, ctx := t.begin(ctx, "scroll", tg.String(), "", dx, dy)
	r, err := t.Actor.ScrollAt(ctx, tg, dx, dy)
	return r, end(p, err)
}

// ScrollIntoView is act.Actor.ScrollIntoView, recorded.
func (t *Tab) ScrollIntoView(ctx context.Context, tg Target) (*ActionResult, error) {
	p, ctx := t.begin(ctx, "scrollIntoView", tg.String(), "")
	r, err := t.Actor.ScrollIntoView(ctx, tg)
	return r, end(p, err)
}

// Drag is act.Actor.Drag, recorded.
func (t *Tab) Drag(ctx context.Context, from, to DragEnd, o DragOptions) (*ActionResult, error) {
	var ft, tt string
	var args []any
	if from.Target != nil {
		ft = from.Target.String()
	} else if from.Point != nil {
		args = append(args, *from.Point)
	}
	if to.Target != nil {
		tt = to.Target.String()
	} else if to.Point != nil {
		args = append(args, *to.Point)
	}
	opts := map[string]any{}
	if o.Steps > 0 {
		opts["steps"] = o.Steps
	}
	if o.Position != "" {
		opts["position"] = o.Position
	}
	if o.Offset != nil {
		opts["offset"] = *o.Offset
	}
	if len(opts) > 0 {
		args = append(args, opts)
	}
	p, ctx := t.begin(ctx, "drag", ft, tt, args...)
	r, err := t.Actor.Drag(ctx, from, to, o)
	return r, end(p, err)
}

// UploadFile is act.Actor.UploadFile, recorded with the paths as given.
func (t *Tab) UploadFile(ctx context.Context, tg Target, paths []string) (*UploadResult, error) {
	p, ctx := t.begin(ctx, "uploadFile", tg.String(), "", paths)
	r, err := t.Actor.UploadFile(ctx, tg, paths)
	return r, end(p, err)
}

// WaitFor is act.Actor.WaitFor, recorded.
func (t *Tab) WaitFor(ctx context.Context, tg Target) (*ActionResult, error) {
	p, ctx := t.begin(ctx, "waitFor", tg.String(), "")
	r, err := t.Actor.WaitFor(ctx, tg)
	return r, end(p, err)
}

// WaitForState is act.Actor.WaitForState, recorded as waitFor(T, {state}).
func (t *Tab) WaitForState(ctx context.Context, tg Target, state string) (*ActionResult, error) {
	var args []any
	if state != "" && state != "visible" {
		args = append(args, map[string]any{"state": state})
	}
	p, ctx := t.begin(ctx, "waitFor", tg.String(), "", args...)
	var r *ActionResult
	var err error
	if state == "" || state == "visible" {
		r, err = t.Actor.WaitFor(ctx, tg)
	} else {
		r, err = t.Actor.WaitForState(ctx, tg, state)
	}
	return r, end(p, err)
}

// WithStrict is act.WithStrict: under it an aria/, CSS or scoped selector
// that matches more than one element fails (a replay's rule).
func WithStrict(ctx context.Context) context.Context { return act.WithStrict(ctx) }
