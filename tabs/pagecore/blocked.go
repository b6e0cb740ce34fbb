package pagecore

import (
	"fmt"
	"strings"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/msg"
)

// Blocked is a navigation the tab's navigation policy refused before it
// was requested (the Guard, through the Fetch domain: see
// route.Router.SetGuard), whatever started it: a click, a form post, a
// script or a meta refresh, a redirect.
type Blocked struct {
	// URL is the refused destination.
	URL string `json:"url"`
	// Frame is true for a frame's document; false for the page's own
	// (top-level) navigation, after which the tab stays where it was.
	Frame bool `json:"frame,omitempty"`
	// Reason is the refusal's text (the policy's error).
	Reason string `json:"reason"`
	// Popup is set for a popup the policy refused: it was closed.
	Popup bool `json:"popup,omitempty"`

	err error
}

// Err returns the refusal as an error (its code blocked_destination).
func (b Blocked) Err() error {
	if b.err != nil {
		return b.err
	}
	return &Error{Code: errcode.BlockedDestination, Msg: "blocked destination " + b.URL + ": " + b.Reason}
}

// maxBlocked bounds the refusals a page keeps.
const maxBlocked = 64

// RecordBlocked records a refused navigation of the page (see Blocked);
// the Guard's document check calls it before the request is failed.
func (t *Page) RecordBlocked(url string, top bool, err error) {
	b := Blocked{URL: url, Frame: !top, Reason: reasonOf(url, err), err: err}
	t.recordBlocked(b)
	t.env.Log.Info("navigation blocked", "tab", t.name, "url", msg.Trim(url, 200), "frame", !top, "reason", b.Reason)
}

// RecordBlockedPopup records a popup the policy refused (and the
// supervisor closed).
func (t *Page) RecordBlockedPopup(url string, err error) {
	t.recordBlocked(Blocked{URL: url, Reason: reasonOf(url, err), Popup: true, err: err})
}

func (t *Page) recordBlocked(b Blocked) {
	t.evMu.Lock()
	t.blockedSeq++
	t.blocked = append(t.blocked, b)
	if len(t.blocked) > maxBlocked {
		t.blocked = append(t.blocked[:0:0], t.blocked[len(t.blocked)-maxBlocked:]...)
	}
	t.st.wakeLocked()
	t.evMu.Unlock()
}

// BlockedSince returns the refusals recorded since m, oldest first.
func (t *Page) BlockedSince(m NavMark) []Blocked {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	n := t.blockedSeq - m.Blocked
	if n <= 0 {
		return nil
	}
	n = min(n, len(t.blocked))
	return append([]Blocked(nil), t.blocked[len(t.blocked)-n:]...)
}

// BlockedNote says in one sentence what the policy refused during an
// action: "the navigation it started to URL was blocked (reason); the tab
// stayed on its page", and the same for frames and popups; "" for none.
func BlockedNote(bs []Blocked) string {
	var parts []string
	for _, b := range bs {
		what := "the navigation it started to %s was blocked (%s); the tab stayed on its page"
		switch {
		case b.Popup:
			what = "the popup it opened, to %s, was blocked (%s) and closed"
		case b.Frame:
			what = "a frame's navigation to %s was blocked (%s)"
		}
		parts = append(parts, fmt.Sprintf(what, msg.Trim(b.URL, 200), b.Reason))
	}
	return strings.Join(parts, "; ")
}

// BlockedReason is the text of a refusal of url without its head, as
// Blocked.Reason has it.
func BlockedReason(url string, err error) string { return reasonOf(url, err) }

// reasonOf is the text of a refusal of url without its "blocked
// destination URL" head, which the note says already: e.g. "(127.0.0.2):
// origin not in the allow list (--allow-origin)".
func reasonOf(url string, err error) string {
	s := strings.TrimPrefix(err.Error(), "blocked destination "+url)
	return strings.TrimSpace(strings.TrimPrefix(s, ": "))
}
