package act

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

type actionTimeoutKey struct{}

// WithActionTimeout returns ctx carrying d, the longest that actions under
// it wait for their element to exist and become actionable (Playwright's
// per-action timeout). Without it, actions wait until shortly before ctx's
// deadline (see actionWait).
func WithActionTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, actionTimeoutKey{}, d)
}

// actionWait is how long an action may wait for its element: the action
// timeout of ctx if any, and always within ctx's deadline less a reserve
// (a fifth of what is left, at most 1s) so the action fails with its own
// error before the run times out. With neither, autoWait.
func actionWait(ctx context.Context) time.Duration {
	w, set := ctx.Value(actionTimeoutKey{}).(time.Duration)
	if !set || w <= 0 {
		w, set = autoWait, false
	}
	if dl, ok := ctx.Deadline(); ok {
		rem := time.Until(dl)
		reserve := min(time.Second, rem/5)
		if !set || rem-reserve < w {
			w = rem - reserve
		}
	}
	return max(w, 0)
}

// locate finds the element a target names and waits until it is
// actionable per o, within actionWait(ctx) in all. A selector whose element
// is replaced while it waits (a re-render) is resolved again. It returns
// the element and the point to act at (top-level viewport CSS pixels).
func (t *Actor) locate(ctx context.Context, tg Target, o actOpts) (*element, float64, float64, error) {
	deadline := time.Now().Add(actionWait(ctx))
	for {
		var el *element
		var err error
		if o.again != nil {
			el, o.again = o.again, nil
		} else if tg.ID > 0 {
			// A number never waits; what its node shows is compared in
			// the first actionability check's call.
			el, err = t.resolveNumberAs(ctx, tg.ID, true, o.iso)
		} else {
			el, err = t.findIn(ctx, tg, time.Until(deadline), o.iso)
		}
		if err != nil {
			return nil, 0, 0, err
		}
		el.resolved = time.Now()
		x, y, err := t.actionable(ctx, el, o, time.Until(deadline))
		if err == nil {
			return el, x, y, nil
		}
		var e *pagecore.Error
		if tg.ID == 0 && errors.As(err, &e) && e.Code == errcode.ElementNotFound && time.Now().Before(deadline) && ctx.Err() == nil {
			continue // detached: find the selector's new element
		}
		return nil, 0, 0, err
	}
}

// WaitForState waits until the target is in state: attached (in the DOM),
// detached (gone), visible (default: attached, non-empty box, not hidden)
// or hidden (gone or not visible), for the whole of ctx. Errors: timeout,
// bad_request for an unknown state, stale_element for a number whose node
// is gone (when waiting for attached or visible).
func (t *Actor) WaitForState(ctx context.Context, tg Target, state string) (*ActionResult, error) {
	ctx, release := t.withHandles(ctx)
	defer release()
	switch state {
	case "":
		state = "visible"
	case "attached", "detached", "visible", "hidden":
	default:
		return nil, pagecore.Errorf(errcode.BadRequest, "invalid state %q: use attached, detached, visible or hidden", state)
	}
	if state == "visible" {
		return t.WaitFor(ctx, tg)
	}
	for {
		el, err := t.resolve(ctx, tg)
		var e *pagecore.Error
		if err != nil && ctx.Err() != nil {
			return nil, &pagecore.Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitFor %s: not %s within the timeout", tg, state), Err: ctx.Err()}
		}
		if err != nil && !(errors.As(err, &e) && e.Code == errcode.StaleElement && (state == "detached" || state == "hidden")) {
			return nil, err
		}
		present, visible := false, false
		if el != nil {
			var st struct {
				Attached, Visible bool
			}
			if err := t.callOn(ctx, el, `function(){ const e = this.nodeType === 1 ? this : this.parentElement; if (!this.isConnected || !e) return {Attached: false};
 const r = e.getBoundingClientRect(), s = getComputedStyle(e);
 return {Attached: true, Visible: r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'}; }`, &st); err == nil {
				present, visible = st.Attached, st.Visible
			}
		}
		desc := tg.String()
		switch {
		case state == "attached" && present,
			state == "detached" && !present,
			state == "hidden" && !visible:
			return &ActionResult{Target: desc}, nil
		}
		select {
		case <-ctx.Done():
			return nil, &pagecore.Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitFor %s: not %s within the timeout", desc, state), Err: ctx.Err()}
		case <-time.After(100 * time.Millisecond):
		}
	}
}
