package pagecore

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"

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
	// Blocked says why the navigation policy refused the popup's page;
	// the popup was then closed and is not a tab.
	Blocked string `json:"blocked,omitempty"`
	// Before is set on a popup the page opened between calls: after the
	// last action or run that reported popups ended, before the one that
	// reports it began (a window.open from a timer, say). It is not that
	// call's doing.
	Before bool `json:"before,omitempty"`

	TargetID target.ID `json:"-"`
}

// DrainPopups returns the popups the tab's page opened since the last
// drain, and forgets them. An action or run drains them when it begins
// (PopupsBefore) and when it ends, so that each reports what it opened. It first waits (at most wait) for popups still
// being attached, so that each one it returns is a usable tab.
func (t *Page) DrainPopups(wait time.Duration) []Popup {
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
		if !t.x.dlTargets[p.TargetID] {
			out = append(out, p)
		}
	}
	t.x.popups = nil
	t.x.mu.Unlock()
	return out
}

// PopupsBefore drains, as an action or run begins, the popups the page
// opened since the last drain (between calls), marked Before, for the
// call to report apart from its own. Like DrainPopups, it first waits (at
// most wait) for popups still being attached: they too opened before the
// call.
func (t *Page) PopupsBefore(wait time.Duration) []Popup {
	out := t.DrainPopups(wait)
	for i := range out {
		out[i].Before = true
	}
	return out
}

// DownloadTarget reports whether the page target id, which the tab's page
// opened, turned into a download.
func (t *Page) DownloadTarget(id target.ID) bool {
	t.x.mu.Lock()
	defer t.x.mu.Unlock()
	return t.x.dlTargets[id]
}

// PopupWaiter waits for a popup that opens after it was made (see
// Tab.WatchPopups).
type PopupWaiter struct {
	t    *Page
	seen int
}

// WatchPopups starts watching for the next popup of the tab's page, so a
// script can wait for it and trigger it at once
// (Promise.all([tab.waitForPopup(), tab.click(…)])).
func (t *Page) WatchPopups() *PopupWaiter {
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

// Foreground brings the tab's page to the front of its window
// (Page.bringToFront) when it shares the window with another tab (a popup
// that opened as a tab): a hidden page gets no animation frames, which
// actions and screenshots wait for. Tabs alone in their window are left
// alone. Runs call it first.
func (t *Page) Foreground(ctx context.Context) {
	t.x.mu.Lock()
	shared := t.x.sharedWindow
	t.x.mu.Unlock()
	if !shared || t.target == nil || t.PendingDialog() != nil {
		return
	}
	if _, err := cdp.Call(ctx, t.target, page.BringToFront, cdp.Empty{}); err != nil {
		t.env.Log.Debug("bring to front", "tab", t.name, "err", err)
	}
}

// NextPopup reserves the number of the page's next popup, for its name
// (name returns a free one from n), and counts it as being attached.
func (t *Page) NextPopup(name func(n int) int) {
	t.x.mu.Lock()
	t.x.popupSeq = name(t.x.popupSeq + 1)
	t.x.mu.Unlock()
}

// AdoptDone records a popup the page opened (rec.Error set when it
// could not be attached), or none, and ends its attaching.
func (t *Page) AdoptDone(rec *Popup) {
	t.x.mu.Lock()
	if rec != nil {
		t.x.popups = append(t.x.popups, *rec)
		t.x.allPopups = append(t.x.allPopups, *rec)
	}
	t.x.adopting--
	t.x.signalLocked()
	t.x.mu.Unlock()
}

// ShareWindow records that the page shares its browser window with a
// popup tab (see Foreground).
func (t *Page) ShareWindow() {
	t.x.mu.Lock()
	t.x.sharedWindow = true
	t.x.mu.Unlock()
}
