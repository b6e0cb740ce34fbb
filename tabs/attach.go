package tabs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/capture"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
	"github.com/tabpilot/tabpilot/tabs/route"
)

// start creates the tab's browser (via the registry) and page target, and
// installs the listener, stealth patches and viewport. On a connected or
// spawned browser it attaches to an existing page (o.App.Target, or the
// default rules of browser.PickPage) and never closes it: closing only
// detaches.
func (t *Tab) start(ctx context.Context, o *OpenOptions) error {
	var args []string
	if o.App != nil {
		args = o.App.Args
	}
	t0 := time.Now()
	h, err := t.sup.reg.Acquire(ctx, t.key, args...)
	if err != nil {
		return err
	}
	t.SetHandle(h)
	tBrowser := time.Now()
	var tctx context.Context
	var cancel context.CancelFunc
	var proxyAuth *route.Credentials
	switch {
	case t.context != "":
		// A page of its own in the named context, on any kind of browser.
		var id cdp.BrowserContextID
		if id, proxyAuth, err = t.sup.ctxs.acquire(ctx, h, t.context, o.Proxy); err != nil {
			return err
		}
		t.ctxHeld.Store(true)
		tctx, cancel, err = h.NewTab(ctx, chromedp.WithExistingBrowserContext(id))
	case t.owned():
		tctx, cancel, err = h.NewTab(ctx)
	default:
		tctx, cancel, err = t.attachPage(ctx, h, o)
	}
	if err != nil {
		return pagecore.CDPErr("create tab", err)
	}
	t.cancel = cancel
	tTarget := time.Now()
	if err := t.Attach(ctx, tctx, false); err != nil {
		return err
	}
	if err := t.installGuard(ctx); err != nil {
		return err
	}
	if proxyAuth != nil {
		t.mu.Lock()
		t.proxyAuth = proxyAuth
		t.mu.Unlock()
		if err := t.router().SetProxyAuth(ctx, proxyAuth); err != nil {
			return pagecore.CDPErr("answer the context proxy's authentication", err)
		}
	}
	tHooks := time.Now()
	if len(o.StorageState) > 0 {
		if err := t.SetStorageState(ctx, o.StorageState); err != nil {
			return err
		}
	}
	if t.stealthy() {
		if err := installStealth(ctx, t); err != nil {
			return pagecore.CDPErr("install stealth", err)
		}
	}
	t.sup.log.Debug("tab started", "tab", t.Name(), "browser", tBrowser.Sub(t0), "target", tTarget.Sub(tBrowser),
		"hooks", tHooks.Sub(tTarget), "stealth", time.Since(tHooks))
	if t.borrowed {
		t.settleBorrowed(ctx, 5*time.Second)
	}
	if t.borrowed && o.Viewport == nil {
		// Leave a page we did not open as it is; report its size.
		var info capture.PageInfo
		if err := t.EvalJSON(ctx, capture.PageInfoJS, &info); err == nil {
			t.mu.Lock()
			t.viewport = Viewport{Width: int(info.VW), Height: int(info.VH), Scale: 1}
			t.mu.Unlock()
		}
		return nil
	}
	vp := t.sup.opts.Viewport
	if o.Viewport != nil {
		vp = *o.Viewport
	}
	return t.setViewport(ctx, vp)
}

// attachPage attaches to the page of a connected or spawned browser that
// o selects, skipping pages other tabs hold. With no page at all and no
// app.target, or on a connected browser with a URL and no app.target, it
// opens a new tab that it owns. The page is probed first
// (browser.ProbePage): one a JavaScript dialog holds is not_actionable at
// once, where the attach would hang until the open's timeout.
func (t *Tab) attachPage(ctx context.Context, h *browser.Handle, o *OpenOptions) (context.Context, context.CancelFunc, error) {
	pages, err := h.Pages(ctx)
	if err != nil {
		return nil, nil, &Error{Code: errcode.NotAlive, Msg: "list pages: " + err.Error(), Err: err}
	}
	want := ""
	if o.App != nil {
		want = o.App.Target
	}
	if want == "" && (len(pages) == 0 || (o.URL != "" && t.key.Kind == browser.Connected)) {
		// An open with a URL never navigates a page of the user's: it
		// opens one of its own.
		return h.NewTab(ctx)
	}
	p, err := browser.PickPage(pages, want, t.sup.heldTargets(h))
	if err != nil {
		return nil, nil, err
	}
	if err := h.ProbePage(ctx, p.ID, attachProbeWait); err != nil {
		return nil, nil, heldErr(p, err)
	}
	t.borrowed = true
	return h.NewTab(ctx, chromedp.WithTargetID(p.ID), chromedp.WithDetachOnCancel())
}

// attachProbeWait bounds how long a page of a connected or spawned browser
// has to answer the probe before tabpilot attaches to it.
const attachProbeWait = 2 * time.Second

// heldErr is the error of an attach to page p that the probe refused.
func heldErr(p browser.Page, err error) error {
	var he *browser.HeldError
	if !errors.As(err, &he) {
		return err
	}
	page := fmt.Sprintf("page %q (%s, target %s)", p.Title, p.URL, p.ID)
	hint := "Answer the dialog in the browser window (or wait for the page's script), then open the tab again; or pick another page: tabpilot tabs lists the browser's pages with their target ids, and tabpilot open --cdp-url URL --target ID attaches to one."
	if he.Dialog != nil {
		d := &Dialog{Type: he.Dialog.Type, Message: he.Dialog.Message}
		return &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("%s is blocked by %s dialog (%q): it answers nothing until the dialog is closed", page, d.Article(), d.Message), Hint: hint, Err: err}
	}
	return &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("%s is blocked: it did not answer within %v, which is what a JavaScript dialog (alert, confirm, prompt) open on it does (or a script that never yields); tabpilot did not attach to it", page, he.Wait), Hint: hint, Err: err}
}

// settleBorrowed waits, at most limit, for a page we attached to in the
// middle of a navigation (its target URL, from Target.getTargetInfo, is not
// yet the document's location, or document.readyState is not "complete"),
// so that open reports the page a person sees rather than the initial
// about:blank. A page that never finishes loading is left as it is.
func (t *Tab) settleBorrowed(ctx context.Context, limit time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		info, err := cdp.Call(ctx, chromedp.FromContext(t.Context()).Browser, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.TargetID()})
		var st struct{ Href, State string }
		if err == nil && t.PendingDialog() == nil {
			err = t.EvalJSON(ctx, `({Href: location.href, State: document.readyState})`, &st)
		}
		if err != nil || (st.State == "complete" && info.TargetInfo != nil && info.TargetInfo.URL == st.Href) {
			return
		}
		if !pagecore.SleepCtx(ctx, 50*time.Millisecond) {
			return
		}
	}
}

// owned reports whether tabpilot made the tab's browser for itself (a
// launched one, or a Grid session): its tabs are new pages, never
// borrowed ones (a Grid session's own window belongs to chromedriver).
func (t *Tab) owned() bool {
	return t.key.Kind == browser.Headless || t.key.Kind == browser.Grid
}

// stealthy reports whether the tab has the stealth patches: on the
// browsers tabpilot makes (launched, Grid sessions).
func (t *Tab) stealthy() bool {
	return t.owned() && !t.sup.opts.NoStealth
}

// setViewport applies a viewport with Emulation.setDeviceMetricsOverride.
func (t *Tab) setViewport(ctx context.Context, vp Viewport) error {
	if vp.Scale <= 0 {
		vp.Scale = 1
	}
	_, err := cdp.Call(ctx, t.Target(), emulation.SetDeviceMetricsOverride, t.metrics(vp))
	if err != nil {
		return pagecore.CDPErr("set viewport", err)
	}
	t.mu.Lock()
	t.viewport, t.viewportSet = vp, true
	t.emu.viewport = nil // the tab's own viewport replaces an emulated one
	t.mu.Unlock()
	return nil
}
