package pagecore

import (
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// extras is the state a tab keeps about what its page did on its own: the
// popups it opened, its downloads and its frames (for telling its
// downloads apart). The hook listeners update it; runs drain it.
type extras struct {
	mu sync.Mutex
	// frames are the page's frame ids (the main frame's id is the target's).
	frames map[cdp.FrameID]bool
	// popupSeq numbers the popups, from 1.
	popupSeq int
	// popups are the tabs opened by the page, not yet drained.
	popups []Popup
	// allPopups are every popup the page opened, for WaitForPopup.
	allPopups []Popup
	// adopting counts popups being attached; adopted is closed and
	// replaced when one finishes.
	adopting int
	changed  chan struct{}
	// downloads by GUID, and their order.
	downloads map[string]*download
	dlOrder   []string
	// opened are the page targets the page opened (Target.targetCreated
	// with it as opener), and dlTargets those of them whose navigation
	// turned into a download (a target=_blank link to an attachment):
	// Chromium closes such a tab, and the download is the page's.
	opened    map[target.ID]bool
	dlTargets map[target.ID]bool
	// sharedWindow is true when the page shares its browser window with a
	// popup tab (see Tab.Foreground).
	sharedWindow bool
	// storageScripts are the Page.addScriptToEvaluateOnNewDocument ids of
	// restored local storage.
	storageScripts []page.ScriptIdentifier
}

// signalLocked wakes the waiters on x.changed; x.mu is held.
func (x *extras) signalLocked() {
	if x.changed != nil {
		close(x.changed)
	}
	x.changed = make(chan struct{})
}

// wait returns the channel closed at the next change; x.mu is held.
func (x *extras) waitLocked() <-chan struct{} {
	if x.changed == nil {
		x.changed = make(chan struct{})
	}
	return x.changed
}

// installHooks adds the tab's second listener (popups, frames) and, on a
// headless browser, routes downloads to the session's download directory
// (Browser.setDownloadBehavior) and listens to the browser's download
// events. It is called once the tab's target is attached.
func (t *Page) installHooks(ctx context.Context) error {
	if err := chromedp.Listen(t.ctx, t.onHookEvent); err != nil {
		return CDPErr("listen", err)
	}
	if t.env.Headless {
		if err := t.enableDownloads(ctx); err != nil {
			t.env.Log.Warn("enable downloads", "tab", t.name, "err", err)
		}
	}
	return nil
}

// onHookEvent runs in chromedp's read loop for the tab: it must return fast
// and never call CDP.
func (t *Page) onHookEvent(ev any) {
	switch ev := ev.(type) {
	case *target.EventTargetCreated:
		info := ev.TargetInfo
		if info == nil || info.Type != "page" || info.OpenerID == "" || t.target == nil || info.OpenerID != t.target.TargetID || !t.Alive() {
			return
		}
		t.x.mu.Lock()
		t.x.adopting++
		if t.x.opened == nil {
			t.x.opened = map[target.ID]bool{}
		}
		t.x.opened[info.TargetID] = true
		t.x.mu.Unlock()
		if t.env.Popup != nil {
			t.env.Popup(info)
		}
	case *page.EventFrameAttached:
		t.x.mu.Lock()
		if t.x.frames == nil {
			t.x.frames = map[cdp.FrameID]bool{}
		}
		t.x.frames[ev.FrameID] = true
		t.x.mu.Unlock()
	case *page.EventFrameDetached:
		t.x.mu.Lock()
		delete(t.x.frames, ev.FrameID)
		t.x.mu.Unlock()
	}
}

// ownsFrame reports whether id is a frame of the tab's page.
func (t *Page) ownsFrame(id cdp.FrameID) bool {
	if t.target != nil && string(id) == string(t.target.TargetID) {
		return true
	}
	t.x.mu.Lock()
	defer t.x.mu.Unlock()
	return t.x.frames[id]
}

// SleepCtx waits d or until ctx ends; it reports whether d passed.
func SleepCtx(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// UnmarshalEvent decodes the raw parameters of a subscribed event.
func UnmarshalEvent(raw jsonv2.Value, v any) error { return jsonv2.Unmarshal(raw, v) }

// DialogBlock returns not_actionable when a dialog that no policy handles
// blocks the page (renderer-side CDP calls would hang), else nil.
func (t *Page) DialogBlock() error {
	if d := t.PendingDialog(); d != nil && t.dialogs == "" {
		return EvalErr(&DialogPendingError{d})
	}
	return nil
}
