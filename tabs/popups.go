package tabs

import (
	"context"
	"fmt"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
)

// Popup is a page that a tab's page opened (window.open, a target=_blank
// link, a form with a target), registered as a named tab of its own.
type Popup struct {
	// Name is the popup's tab name: "<opener>-popup-<n>", n from 1.
	Name string `json:"name"`
	// Opener is the name of the tab whose page opened it.
	Opener string `json:"opener"`
	// URL is the popup's URL when it was opened (often about:blank for a
	// window.open that navigates next).
	URL string `json:"url"`
	// Error says why the popup could not be attached; the tab is then not
	// listed.
	Error string `json:"error,omitempty"`

	targetID target.ID
}

// popupAttachTimeout bounds attaching to a popup.
const popupAttachTimeout = 15 * time.Second

// popupName returns a free tab name for the n-th popup of opener; s.mu is
// held. Names stay valid (at most 64 characters).
func (s *Supervisor) popupName(opener string, n int) (string, int) {
	for ; ; n++ {
		suffix := fmt.Sprintf("-popup-%d", n)
		base := opener
		if len(base)+len(suffix) > 64 {
			base = base[:64-len(suffix)]
		}
		name := base + suffix
		if _, taken := s.tabs[name]; !taken {
			return name, n
		}
	}
}

// adoptPopup registers the page target info, opened by opener's page, as
// a named tab (Target.attachToTarget through chromedp.WithTargetID), with
// the opener's browser, dialog policy and viewport. The name is reserved
// (and the tab busy) while it attaches. Runs on its own goroutine.
func (s *Supervisor) adoptPopup(opener *Tab, info *target.Info) {
	defer func() {
		opener.x.mu.Lock()
		opener.x.adopting--
		opener.x.signalLocked()
		opener.x.mu.Unlock()
	}()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	opener.x.mu.Lock()
	name, n := s.popupName(opener.name, opener.x.popupSeq+1)
	opener.x.popupSeq = n
	opener.x.mu.Unlock()
	p := newTab(s, name, opener.key, opener.dialogs)
	p.tryAcquire()
	s.tabs[name] = p
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(s.ctx, popupAttachTimeout)
	defer cancel()
	err := p.startPopup(ctx, opener, info.TargetID)
	rec := Popup{Name: name, Opener: opener.name, URL: info.URL, targetID: info.TargetID}
	if err != nil && opener.downloadTarget(info.TargetID) {
		// The new tab was a download (Chromium closed it): the download
		// is the opener's, and there is no popup to report.
		s.log.Debug("popup was a download", "tab", name, "opener", opener.name)
		s.mu.Lock()
		if s.tabs[name] == p {
			delete(s.tabs, name)
		}
		s.mu.Unlock()
		p.kill("the new tab was a download")
		s.dispose(p)
		p.release()
		return
	}
	if err != nil {
		s.log.Warn("attach popup", "tab", name, "opener", opener.name, "err", err)
		rec.Error = err.Error()
		s.mu.Lock()
		if s.tabs[name] == p {
			delete(s.tabs, name)
		}
		s.mu.Unlock()
		p.kill("attaching the popup failed")
		s.dispose(p)
	} else if u, _ := p.cachedURLTitle(); u != "" {
		rec.URL = u
	}
	p.release()
	opener.x.mu.Lock()
	opener.x.popups = append(opener.x.popups, rec)
	opener.x.allPopups = append(opener.x.allPopups, rec)
	opener.x.mu.Unlock()
}

// startPopup attaches the tab to an existing page target and installs
// what start installs on a new tab. A popup of a borrowed page (a
// connected or spawned browser) is borrowed too: closing it only detaches.
func (t *Tab) startPopup(ctx context.Context, opener *Tab, id target.ID) error {
	h, err := t.sup.reg.Acquire(ctx, t.key)
	if err != nil {
		return err
	}
	t.setHandle(h)
	opts := []chromedp.ContextOption{chromedp.WithTargetID(id)}
	if opener.borrowed {
		t.borrowed = true
		opts = append(opts, chromedp.WithDetachOnCancel())
	}
	tctx, cancel, err := h.NewTab(ctx, opts...)
	if err != nil {
		return cdpErr("attach popup", err)
	}
	t.ctx, t.cancel = tctx, cancel
	t.target = chromedp.FromContext(tctx).Target
	t.evMu.Lock()
	t.targetID = id
	t.evMu.Unlock()
	// A popup created while an auto-attach with waitForDebuggerOnStart is
	// on (the stealth patches' worker watch) starts paused, and a paused
	// popup blocks its opener's renderer: let it run.
	if _, err := cdp.Call(ctx, t.target, runtime.RunIfWaitingForDebugger, cdp.Empty{}); err != nil {
		t.sup.log.Debug("run popup", "tab", t.name, "err", err)
	}
	if err := chromedp.Listen(tctx, t.onEvent); err != nil {
		return cdpErr("listen", err)
	}
	t.watchDetach()
	if err := t.installHooks(ctx); err != nil {
		return err
	}
	if err := t.installSettle(ctx); err != nil {
		t.sup.log.Warn("install settle on popup", "tab", t.name, "err", err)
	}
	t.sup.wg.Go(t.dialogLoop)
	if t.key.Kind == browser.Headless && !t.sup.opts.NoStealth {
		// A popup can inherit its opener's overrides (Chrome answers
		// "Another locale override is already in effect"); it keeps
		// working without the rest.
		if err := installStealth(ctx, t); err != nil {
			t.sup.log.Warn("install stealth on popup", "tab", t.name, "err", err)
		}
	}
	if !t.borrowed {
		if err := t.setViewport(ctx, opener.Viewport()); err != nil {
			return err
		}
	}
	t.opened.Store(true)
	if sameWindow(ctx, opener, t) {
		// The popup opened as a tab in its opener's window, which hides
		// the opener (no animation frames: its actions would stall). Keep
		// the opener in front; a run on the popup brings it forward.
		t.x.mu.Lock()
		t.x.sharedWindow = true
		t.x.mu.Unlock()
		opener.x.mu.Lock()
		opener.x.sharedWindow = true
		opener.x.mu.Unlock()
		if _, err := cdp.Call(ctx, opener.target, page.BringToFront, cdp.Empty{}); err != nil {
			t.sup.log.Debug("bring opener to front", "tab", opener.name, "err", err)
		}
	}
	uctx, ucancel := context.WithTimeout(ctx, 2*time.Second)
	t.urlTitle(uctx)
	ucancel()
	return nil
}

// DrainPopups returns the popups the tab's page opened since the last
// drain, and forgets them. It first waits (at most wait) for popups still
// being attached, so that each one it returns is a usable tab.
func (t *Tab) DrainPopups(wait time.Duration) []Popup {
	deadline := time.Now().Add(wait)
	t.x.mu.Lock()
	for t.x.adopting > 0 && time.Now().Before(deadline) {
		ch := t.x.waitLocked()
		t.x.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		}
		t.x.mu.Lock()
	}
	var out []Popup
	for _, p := range t.x.popups {
		// One attached before its navigation turned into a download.
		if !t.x.dlTargets[p.targetID] {
			out = append(out, p)
		}
	}
	t.x.popups = nil
	t.x.mu.Unlock()
	return out
}

// downloadTarget reports whether the page target id, which the tab's page
// opened, turned into a download.
func (t *Tab) downloadTarget(id target.ID) bool {
	t.x.mu.Lock()
	defer t.x.mu.Unlock()
	return t.x.dlTargets[id]
}

// PopupWaiter waits for a popup that opens after it was made (see
// Tab.WatchPopups).
type PopupWaiter struct {
	t    *Tab
	seen int
}

// WatchPopups starts watching for the next popup of the tab's page, so a
// script can wait for it and trigger it at once
// (Promise.all([tab.waitForPopup(), tab.click(…)])).
func (t *Tab) WatchPopups() *PopupWaiter {
	t.x.mu.Lock()
	defer t.x.mu.Unlock()
	return &PopupWaiter{t: t, seen: len(t.x.allPopups) + t.x.adopting}
}

// Wait returns the first popup opened after WatchPopups, once it is an
// attached tab. Errors: timeout when ctx ends first; not_alive when the
// popup could not be attached.
func (w *PopupWaiter) Wait(ctx context.Context) (*Popup, error) {
	x := &w.t.x
	for {
		x.mu.Lock()
		if len(x.allPopups) > w.seen {
			p := x.allPopups[w.seen]
			x.mu.Unlock()
			if p.Error != "" {
				return nil, &Error{Code: errcode.NotAlive, Msg: fmt.Sprintf("popup %s opened but could not be attached: %s", p.Name, p.Error)}
			}
			return &p, nil
		}
		ch := x.waitLocked()
		x.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, &Error{Code: errcode.Timeout, Msg: "waitForPopup: no popup opened within the timeout", Err: ctx.Err()}
		}
	}
}

// sameWindow reports whether two tabs' pages are tabs of one browser
// window (Browser.getWindowForTarget).
func sameWindow(ctx context.Context, a, b *Tab) bool {
	c := chromedp.FromContext(b.ctx)
	if c == nil || c.Browser == nil || a.target == nil || b.target == nil {
		return false
	}
	wa, err := cdp.Call(ctx, c.Browser, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: a.target.TargetID})
	if err != nil {
		return false
	}
	wb, err := cdp.Call(ctx, c.Browser, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: b.target.TargetID})
	return err == nil && wa.WindowID == wb.WindowID
}

// Foreground brings the tab's page to the front of its window
// (Page.bringToFront) when it shares the window with another tab (a popup
// that opened as a tab): a hidden page gets no animation frames, which
// actions and screenshots wait for. Tabs alone in their window are left
// alone. Runs call it first.
func (t *Tab) Foreground(ctx context.Context) {
	t.x.mu.Lock()
	shared := t.x.sharedWindow
	t.x.mu.Unlock()
	if !shared || t.target == nil || t.PendingDialog() != nil {
		return
	}
	if _, err := cdp.Call(ctx, t.target, page.BringToFront, cdp.Empty{}); err != nil {
		t.sup.log.Debug("bring to front", "tab", t.name, "err", err)
	}
}
