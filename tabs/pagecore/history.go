package pagecore

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/tabpilot/tabpilot/errcode"
)

// Back goes one entry back in the tab's session history, as the browser's
// back button does (Page.getNavigationHistory, Page.navigateToHistoryEntry),
// and waits until the page it lands on has loaded (document.readyState
// complete; at once for an entry of the same document, such as one that
// history.pushState made) and settled as open's default wait has it
// (Tab.Goto; a note says what was still busy when the settle ran out). As
// an action that navigates, it waits at most 5 s for the load: past that
// it returns the page as it is, with a note. It returns the URL and HTTP
// status of the page.
// Errors: bad_request when there is no earlier entry (the blank page a
// tab starts on does not count), timeout when the page
// does not commit or load in time, not_alive when the tab dies.
func (t *Page) Back(ctx context.Context) (*NavResult, error) { return t.history(ctx, "back", -1) }

// Forward goes one entry forward in the tab's session history, as Back
// goes back. Errors: bad_request when there is no later entry, timeout,
// not_alive.
func (t *Page) Forward(ctx context.Context) (*NavResult, error) {
	return t.history(ctx, "forward", 1)
}

// Reload reloads the tab's page (Page.reload, from the cache where it is
// fresh, as the reload button does) and waits until the new document has
// loaded, as Back does. Errors: timeout, not_alive.
func (t *Page) Reload(ctx context.Context) (*NavResult, error) {
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	return t.historyNav(ctx, "reload", t.currentURL(ctx), func(ctx context.Context) error {
		_, err := cdp.Call(ctx, t.target, page.Reload, page.ReloadParams{})
		return err
	})
}

func (t *Page) history(ctx context.Context, what string, delta int) (*NavResult, error) {
	if err := t.DialogBlock(); err != nil {
		return nil, err
	}
	h, err := cdp.Call(ctx, t.target, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return nil, CDPErr(what, err)
	}
	i := int(h.CurrentIndex) + delta
	// The blank page a tab starts on (its first entry, about:blank) is
	// not a page it visited: going back to it leaves the page it opened.
	if i == 0 && delta < 0 && len(h.Entries) > 0 && h.Entries[0].URL == "about:blank" {
		i = -1
	}
	if i < 0 || i >= len(h.Entries) {
		side := "earlier"
		if delta > 0 {
			side = "later"
		}
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("%s: the tab's history has no %s page (entry %d of %d)", what, side, h.CurrentIndex+1, len(h.Entries)),
			Hint: "Back and forward move through the pages this tab visited; open a URL instead."}
	}
	e := h.Entries[i]
	return t.historyNav(ctx, what, e.URL, func(ctx context.Context) error {
		_, err := cdp.Call(ctx, t.target, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: e.ID})
		return err
	})
}

// historyNav runs start, a navigation the browser starts (history, reload),
// waits for the top frame to commit a document (Page.frameNavigated) or
// move within its document (Page.navigatedWithinDocument), then for the
// document to load. dest names the destination in errors.
func (t *Page) historyNav(ctx context.Context, what, dest string, start func(ctx context.Context) error) (*NavResult, error) {
	// Subscribed before the command, so its events are not missed.
	navs, stop1 := t.target.Subscribe(page.FrameNavigated.Method)
	defer stop1()
	within, stop2 := t.target.Subscribe(page.NavigatedWithinDocument.Method)
	defer stop2()
	out := &NavResult{URL: dest}
	err := t.Blocking(ctx, start)
	var dpe *DialogPendingError
	switch {
	case AsDialog(err, &dpe):
		out.Dialog = dpe.Dialog // a beforeunload prompt holds the navigation
		return out, nil
	case err != nil && ctx.Err() != nil:
		return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("%s to %s: no response within the timeout", what, dest), Err: ctx.Err()}
	case err != nil:
		return nil, &Error{Code: errcode.NavigationFailed, Msg: fmt.Sprintf("%s to %s: %v", what, dest, err), Err: err}
	}
	var loader cdp.LoaderID
	sig := t.dialogSignal()
wait:
	for {
		select {
		case raw, ok := <-navs:
			if !ok {
				navs = nil
				continue
			}
			var ev page.EventFrameNavigated
			if UnmarshalEvent(raw, &ev) == nil && ev.Frame != nil && ev.Frame.ParentID == "" {
				loader = ev.Frame.LoaderID
				break wait
			}
		case raw, ok := <-within:
			if !ok {
				within = nil
				continue
			}
			var ev page.EventNavigatedWithinDocument
			if UnmarshalEvent(raw, &ev) == nil && ev.FrameID == cdp.FrameID(t.targetID) {
				break wait
			}
		case <-sig:
			if d := t.PendingDialog(); d != nil && t.dialogs == "" {
				out.Dialog = d
				return out, nil
			}
			sig = t.dialogSignal()
		case <-t.deadSig:
			return nil, &Error{Code: errcode.NotAlive, Msg: what + ": the tab died: " + t.DeadReason(), Err: ErrNotAlive}
		case <-ctx.Done():
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("%s to %s: the page did not commit within the timeout", what, dest), Err: ctx.Err()}
		}
	}
	// The load is waited for as long as an action that navigates waits
	// for it (navLoadWait): a page whose image never ends is returned as
	// it is, with a note, not after the whole timeout.
	lctx, cancel := context.WithTimeout(ctx, NavLoadWait)
	err = t.waitReadyState(lctx, "load")
	cancel()
	if err != nil {
		if ctx.Err() != nil || lctx.Err() == nil {
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("%s to %s: the page did not finish loading within the timeout", what, dest), Err: ctx.Err()}
		}
		t.evMu.Lock()
		out.Status = t.docStatus[loader]
		t.evMu.Unlock()
		out.Notes = append(out.Notes, fmt.Sprintf("the page had not fired load within %v; returned it as it was", NavLoadWait))
		out.URL = t.currentURL(ctx)
		return out, nil
	}
	if loader != "" {
		t.evMu.Lock()
		out.Status = t.docStatus[loader]
		t.evMu.Unlock()
		if note := t.AwaitSettled(ctx, NavLoadWait); note != "" {
			out.Notes = append(out.Notes, note)
		}
	}
	out.URL = t.currentURL(ctx)
	return out, nil
}
