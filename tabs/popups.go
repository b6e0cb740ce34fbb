package tabs

import (
	"context"
	"fmt"
	"strings"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

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
	var rec *Popup
	defer func() { opener.AdoptDone(rec) }()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	var name string
	opener.NextPopup(func(n int) int {
		name, n = s.popupName(opener.Name(), n)
		return n
	})
	p := newTab(s, name, opener.key, opener.DialogPolicy())
	p.tryAcquire()
	s.tabs[name] = p
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(s.ctx, popupAttachTimeout)
	defer cancel()
	err := p.startPopup(ctx, opener, info.TargetID)
	pop := Popup{Name: name, Opener: opener.Name(), URL: info.URL, TargetID: info.TargetID}
	if err != nil && opener.DownloadTarget(info.TargetID) {
		// The new tab was a download (Chromium closed it): the download
		// is the opener's, and there is no popup to report.
		s.log.Debug("popup was a download", "tab", name, "opener", opener.Name())
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
		s.log.Warn("attach popup", "tab", name, "opener", opener.Name(), "err", err)
		pop.Error = err.Error()
		s.mu.Lock()
		if s.tabs[name] == p {
			delete(s.tabs, name)
		}
		s.mu.Unlock()
		p.kill("attaching the popup failed")
		s.dispose(p)
	} else {
		switch u, _ := p.CachedURLTitle(); {
		case u != "" && u != "about:blank":
			pop.URL = u
		case p.firstURL != "":
			pop.URL = p.firstURL // held: its first page has not committed yet
		case u != "":
			pop.URL = u
		}
	}
	if err == nil && s.opts.Guard != nil {
		s.vetPopup(ctx, opener, p, info, &pop)
	}
	p.release()
	rec = &pop
}

// vetPopup closes a popup whose page the navigation policy refuses (the
// proxy refused its request: it shows the guard's refusal) and reports it
// to its opener, as a Popup with Blocked set and a Blocked record on the
// opener's page. The page is p's URL, or the URL it was opened with.
func (s *Supervisor) vetPopup(ctx context.Context, opener, p *Tab, info *target.Info, pop *Popup) {
	u := pop.URL
	if strings.HasPrefix(u, "chrome-error:") || u == "" {
		u = info.URL
	}
	if u == "" || u == "about:blank" {
		return // nowhere on the network (window.open() with no URL, or not known yet): the proxy refuses what it goes to
	}
	berr := s.opts.Guard.CheckURL(ctx, u)
	if berr == nil {
		return
	}
	pop.URL = u
	pop.Blocked = pagecore.BlockedReason(u, berr)
	opener.RecordBlockedPopup(u, berr)
	s.log.Info("popup blocked", "tab", pop.Name, "opener", opener.Name(), "url", u, "err", berr)
	s.mu.Lock()
	if s.tabs[pop.Name] == p {
		delete(s.tabs, pop.Name)
	}
	s.mu.Unlock()
	p.kill("the navigation policy refused the popup's page")
	s.dispose(p)
}

// startPopup attaches the tab to an existing page target and installs
// what start installs on a new tab. A popup of a borrowed page (a
// connected or spawned browser) is borrowed too: closing it only detaches.
func (t *Tab) startPopup(ctx context.Context, opener *Tab, id target.ID) error {
	h, err := t.sup.reg.Acquire(ctx, t.key)
	if err != nil {
		return err
	}
	t.SetHandle(h)
	opts := []chromedp.ContextOption{chromedp.WithTargetID(id)}
	if opener.borrowed {
		t.borrowed = true
		opts = append(opts, chromedp.WithDetachOnCancel())
	}
	tctx, cancel, err := h.NewTab(ctx, opts...)
	if err != nil {
		return pagecore.CDPErr("attach popup", err)
	}
	t.cancel = cancel
	// The popup may be held before its first request (see RunPopup):
	// it runs once set up, or as this returns, whatever happened.
	ran := false
	defer func() {
		if !ran && t.Target() != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			t.RunPopup(rctx)
		}
	}()
	if err := t.Attach(ctx, tctx, true); err != nil {
		return err
	}
	if err := t.installGuard(ctx); err != nil {
		return err
	}
	opener.mu.Lock()
	auth := opener.proxyAuth
	opener.mu.Unlock()
	if auth != nil {
		// A popup of a context behind an authenticating proxy.
		t.proxyAuth = auth
		if err := t.router().SetProxyAuth(ctx, auth); err != nil {
			return pagecore.CDPErr("answer the context proxy's authentication", err)
		}
	}
	if t.key.Kind == browser.Headless && !t.sup.opts.NoStealth {
		// A popup that fails its patches keeps working without them.
		if err := installStealth(ctx, t); err != nil {
			t.sup.log.Warn("install stealth on popup", "tab", t.Name(), "err", err)
		}
	}
	if !t.borrowed {
		if err := t.setViewport(ctx, opener.Viewport()); err != nil {
			return err
		}
	}
	t.firstURL = t.RunPopup(ctx)
	ran = true
	t.unsettled.Store(true)
	t.opened.Store(true)
	if sameWindow(ctx, opener, t) {
		// The popup opened as a tab in its opener's window, which hides
		// the opener (no animation frames: its actions would stall). Keep
		// the opener in front; a run on the popup brings it forward.
		t.ShareWindow()
		opener.ShareWindow()
		if _, err := cdp.Call(ctx, opener.Target(), page.BringToFront, cdp.Empty{}); err != nil {
			t.sup.log.Debug("bring opener to front", "tab", opener.Name(), "err", err)
		}
	}
	uctx, ucancel := context.WithTimeout(ctx, 2*time.Second)
	t.URLTitle(uctx)
	ucancel()
	return nil
}

// sameWindow reports whether two tabs' pages are tabs of one browser
// window (Browser.getWindowForTarget).
func sameWindow(ctx context.Context, a, b *Tab) bool {
	c := chromedp.FromContext(b.Context())
	if c == nil || c.Browser == nil || a.Target() == nil || b.Target() == nil {
		return false
	}
	wa, err := cdp.Call(ctx, c.Browser, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: a.Target().TargetID})
	if err != nil {
		return false
	}
	wb, err := cdp.Call(ctx, c.Browser, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: b.Target().TargetID})
	return err == nil && wa.WindowID == wb.WindowID
}
