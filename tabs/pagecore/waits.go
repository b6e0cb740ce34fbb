package pagecore

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/urlpattern"
)

// WaitForURL waits until the top frame's URL matches p (history API
// changes included: Page.navigatedWithinDocument), then, for a
// waitUntil of load (default) or domcontentloaded, until the document
// reached that state; commit returns at once. A URL that matches already
// returns at once. It returns the URL. Errors: timeout (naming the last
// URL seen), bad_request for an unknown waitUntil.
func (t *Page) WaitForURL(ctx context.Context, p urlpattern.Pattern, waitUntil string) (string, error) {
	switch waitUntil {
	case "":
		waitUntil = "load"
	case "load", "domcontentloaded", "commit":
	default:
		return "", Errorf(errcode.BadRequest, "invalid waitUntil %q: use load, domcontentloaded or commit", waitUntil)
	}
	navs, stop1 := t.target.Subscribe(page.FrameNavigated.Method)
	defer stop1()
	within, stop2 := t.target.Subscribe(page.NavigatedWithinDocument.Method)
	defer stop2()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		u := t.currentURL(ctx)
		last = u
		if p.Match(u) {
			if waitUntil == "commit" {
				return u, nil
			}
			if err := t.waitReadyState(ctx, waitUntil); err != nil {
				return "", err
			}
			return t.currentURL(ctx), nil
		}
		select {
		case _, ok := <-navs:
			if !ok {
				navs = nil
			}
		case _, ok := <-within:
			if !ok {
				within = nil
			}
		case <-tick.C:
		case <-t.deadSig:
			return "", &Error{Code: errcode.NotAlive, Msg: "waitForUrl: the tab died: " + t.DeadReason(), Err: ErrNotAlive}
		case <-ctx.Done():
			return "", &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitForUrl %s: the URL is still %s after the timeout", p, last), Err: ctx.Err()}
		}
	}
}

// currentURL is location.href of the top frame, or the last URL seen when
// the page cannot answer (a dialog is open, a navigation is committing).
func (t *Page) currentURL(ctx context.Context) string {
	ectx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	u, _ := t.URLTitle(ectx) // the committed page's, while a navigation holds the page
	return u
}

// waitReadyState polls document.readyState until the document is loaded
// (load: complete; domcontentloaded: interactive or complete).
func (t *Page) waitReadyState(ctx context.Context, waitUntil string) error {
	for {
		var st string
		if t.PendingDialog() == nil {
			ectx, cancel := context.WithTimeout(ctx, time.Second)
			_ = t.EvalJSON(ectx, `document.readyState`, &st)
			cancel()
		}
		if st == "complete" || (waitUntil == "domcontentloaded" && st == "interactive") {
			return nil
		}
		if !SleepCtx(ctx, 50*time.Millisecond) {
			return &Error{Code: errcode.Timeout, Msg: "waitForUrl: the URL matched but the page did not finish loading within the timeout", Err: ctx.Err()}
		}
	}
}

// KnownURL returns the last URL seen for the top frame, without asking the
// page (for resolving relative URL patterns).
func (t *Page) KnownURL() string {
	u, _ := t.CachedURLTitle()
	return u
}

// WaitForLoadState waits, on the page as it is (it neither navigates nor
// reloads), until the top-level document has reached state:
//   - "load": its load event fired (Page.loadEventFired since the document
//     committed, Page.frameNavigated);
//   - "domcontentloaded": its DOMContentLoaded fired
//     (Page.domContentEventFired), or load;
//   - "networkidle": it loaded, and none of the page's requests has been
//     in flight (Network.requestWillBeSent without loadingFinished or
//     loadingFailed) for idle; idle <= 0 means DefaultIdle.
//
// A state reached already returns at once. While a top-level navigation
// is requested and not yet committed, the state is that of the document
// it brings. Errors: bad_request for another state; timeout when ctx ends
// first, saying what was missing (for networkidle, how many requests were
// pending and the first of their URLs); not_actionable while a JavaScript
// dialog that no policy answers holds the page; not_alive when the tab
// dies.
func (t *Page) WaitForLoadState(ctx context.Context, state string, idle time.Duration) error {
	switch state {
	case "load", "domcontentloaded", "networkidle":
	default:
		return Errorf(errcode.BadRequest, "invalid load state %q: use load, domcontentloaded or networkidle", state)
	}
	if idle <= 0 {
		idle = DefaultIdle
	}
	start := time.Now()
	var quietSince time.Time
	for {
		t.evMu.Lock()
		loading, dcl, nav, busy := t.loading, t.dclPending, t.navPending, len(t.inflight) > 0
		t.evMu.Unlock()
		now := time.Now()
		switch state {
		case "load":
			if !loading && !nav {
				return nil
			}
		case "domcontentloaded":
			if !dcl && !nav {
				return nil
			}
		case "networkidle":
			if loading || nav || busy {
				quietSince = time.Time{}
			} else if quietSince.IsZero() {
				quietSince = now
			} else if now.Sub(quietSince) >= idle {
				return nil
			}
		}
		if d := t.PendingDialog(); d != nil && t.dialogs == "" {
			return DialogBlocked(d, "load")
		}
		select {
		case <-ctx.Done():
			return t.loadStateTimeout(state, idle, time.Since(start), loading, dcl, nav, ctx.Err())
		case <-t.deadSig:
			return &Error{Code: errcode.NotAlive, Msg: "waitForLoadState: the tab died: " + t.DeadReason(), Err: ErrNotAlive}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// awaitNetIdle waits, after the top document's load, until at most
// maxBusy of the page's requests (Network.requestWillBeSent without
// loadingFinished or loadingFailed) have been in flight for DefaultIdle,
// as Playwright's networkidle and Puppeteer's networkidle0 and
// networkidle2 count it, or until the deadline, ctx or a dialog no policy
// answers ends the wait. It reports whether the network was idle. Errors:
// not_alive when the tab dies.
func (t *Page) awaitNetIdle(ctx context.Context, maxBusy int, deadline time.Time) (bool, error) {
	var quietSince time.Time
	for {
		t.evMu.Lock()
		busy, nav := len(t.inflight), t.navPending
		t.evMu.Unlock()
		now := time.Now()
		if busy > maxBusy || nav {
			quietSince = time.Time{}
		} else if quietSince.IsZero() {
			quietSince = now
		} else if now.Sub(quietSince) >= DefaultIdle {
			return true, nil
		}
		if d := t.PendingDialog(); d != nil && t.dialogs == "" {
			return false, nil
		}
		if !now.Before(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-t.deadSig:
			return false, &Error{Code: errcode.NotAlive, Msg: "navigate: the tab died: " + t.DeadReason(), Err: ErrNotAlive}
		case <-time.After(min(20*time.Millisecond, time.Until(deadline))):
		}
	}
}

// loadStateTimeout is the timeout error of WaitForLoadState after waited,
// saying what the page had not reached.
func (t *Page) loadStateTimeout(state string, idle, waited time.Duration, loading, dcl, nav bool, cause error) error {
	waited = waited.Round(100 * time.Millisecond)
	var why string
	switch {
	case nav:
		why = fmt.Sprintf("the navigation to %s has not committed", t.PendingNavigation())
	case state == "domcontentloaded" && dcl, state != "domcontentloaded" && loading:
		why = "the document has not fired " + map[bool]string{true: "DOMContentLoaded", false: "load"}[state == "domcontentloaded"]
	default:
		n, list := t.pendingRequests()
		if n == 0 {
			why = fmt.Sprintf("requests kept starting: the network was never quiet for %v", idle)
		} else {
			why = fmt.Sprintf("%d request(s) still pending: %s", n, list)
		}
	}
	return &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitForLoadState %s: not reached after %v: %s", state, waited, why), Err: cause}
}

// DefaultIdle is how long the network must stay quiet for
// WaitForLoadState("networkidle") when no idle time is given.
const DefaultIdle = 500 * time.Millisecond
