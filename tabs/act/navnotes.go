package act

import (
	"context"
	"fmt"
	"strings"

	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// noteNavigation sets res.Navigated when the action started a top-level
// navigation (navigated), and notes in res.Note one that has not
// committed yet: the page then holds every other call until its server
// answers, which the caller should know before its next call hangs.
func (t *Actor) noteNavigation(ctx context.Context, m pagecore.NavMark, res *ActionResult) {
	res.Navigated = t.Navigated(ctx, m)
	defer t.noteBlocked(m, res)
	if res.Navigated {
		t.settleNavigation(ctx, res, t.NavSeq() != m.Seq)
		return
	}
	routed := t.RouteMoved(m)
	if routed {
		// A route change of a single-page app (history.pushState, then
		// the fetch that renders the new view), or a jump to a fragment:
		// the same document, so the numbers stand, but what it shows is
		// waited for as after a load.
		if note := t.AwaitRouteSettled(ctx); note != "" {
			if res.Note != "" {
				note = res.Note + "; " + note
			}
			res.Note = note
		}
		res.URL, _ = t.CachedURLTitle()
	}
}

// settleNavigation waits, after an action that started a top-level
// navigation, as open's default wait does: when the new document has
// committed, for its load event (at most pagecore.NavLoadWait) and its settle
// (awaitSettled), so that the observation after a navigating click shows
// the new page; a navigation not committed yet is noted instead
// (notePending). When a document committed (committed) and has itself
// started another navigation before its load (a client-side redirect),
// that one is waited for too (AwaitRedirect, at most
// pagecore.NavLoadWait), and then settled; one it starts at load (a meta
// refresh of 0, a form it submits) is the settle's to wait for, as after
// an open. What ran out is noted in res.Note.
func (t *Actor) settleNavigation(ctx context.Context, res *ActionResult, committed bool) {
	if committed {
		t.AwaitRedirect(ctx, pagecore.NavLoadWait)
	}
	if !committed && t.PendingNavigation() != "" {
		// The click's own navigation, still waiting for its server.
		t.notePending(res)
		return
	}
	if note := t.AwaitSettled(ctx, pagecore.NavLoadWait); note != "" {
		if res.Note != "" {
			note = res.Note + "; " + note
		}
		res.Note = note
	}
	// A navigation that failed commits Chromium's error page, and one the
	// server refused commits its answer: the action worked, the page it
	// led to did not, and the caller is told.
	u, fail, status := t.DocOutcome()
	res.URL = u
	note := ""
	switch {
	case strings.HasPrefix(u, "chrome-error:"):
		note = "the navigation failed (" + fail + "); the tab shows Chromium's error page"
	case status >= 400:
		note = fmt.Sprintf("the new page answered HTTP %d", status)
	}
	if note != "" {
		if res.Note != "" {
			note = res.Note + "; " + note
		}
		res.Note = note
	}
}

// notePending notes in res.Note a top-level navigation that has not
// committed yet.
func (t *Actor) notePending(res *ActionResult) {
	if u := t.PendingNavigation(); u != "" {
		// Not "the server has not answered": it may have, a moment ago
		// (a page that sent itself on at once, by a meta refresh).
		note := fmt.Sprintf("the navigation to %s has not committed yet; the page holds other calls until it does", u)
		if res.Note != "" {
			note = res.Note + "; " + note
		}
		res.Note = note
	}
}

// noteBlocked puts in res the navigations since m that the policy refused.
func (t *Actor) noteBlocked(m pagecore.NavMark, res *ActionResult) {
	bs := t.BlockedSince(m)
	if len(bs) == 0 {
		return
	}
	res.Blocked = bs
	note := pagecore.BlockedNote(bs)
	if res.Note != "" {
		note = res.Note + "; " + note
	}
	res.Note = note
}
