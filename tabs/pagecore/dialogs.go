package pagecore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/tabpilot/tabpilot/errcode"
)

// Dialog is a JavaScript dialog (alert, confirm, prompt, beforeunload)
// reported by Page.javascriptDialogOpening.
type Dialog struct {
	Type         string `json:"type"`
	Message      string `json:"message"`
	DefaultValue string `json:"defaultValue,omitempty"`
	// Handled says how the tab's policy handled it: "accepted",
	// "dismissed", or "" while it is pending.
	Handled string `json:"handled,omitempty"`
}

// Article is the dialog's type with its indefinite article, for messages:
// "an alert", "a confirm", "a prompt", "a beforeunload".
func (d *Dialog) Article() string {
	if d.Type != "" && strings.ContainsRune("aeiou", rune(d.Type[0])) {
		return "an " + d.Type
	}
	return "a " + d.Type
}

// dialogLoop applies the tab's dialog policy (Page.handleJavaScriptDialog)
// outside the event loop.
func (t *Page) dialogLoop() {
	for {
		select {
		case <-t.deadSig:
			return
		case <-t.dialogQ:
		}
		t.evMu.Lock()
		d := t.dialog
		t.evMu.Unlock()
		if d == nil {
			continue
		}
		accept := t.dialogs == "accept"
		ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
		_, err := cdp.Call(ctx, t.target, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept, PromptText: d.DefaultValue})
		cancel()
		if err != nil {
			t.env.Log.Warn("handle dialog", "tab", t.name, "err", err)
			continue
		}
		h := *d
		h.Handled = map[bool]string{true: "accepted", false: "dismissed"}[accept]
		t.evMu.Lock()
		if t.dialog == d {
			t.dialog = nil
		}
		t.handled = append(t.handled, h)
		t.evMu.Unlock()
	}
}

// PendingDialog returns the dialog waiting for the script, or nil.
func (t *Page) PendingDialog() *Dialog {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if t.dialog == nil {
		return nil
	}
	d := *t.dialog
	return &d
}

// HandledDialogs returns and forgets the dialogs the policy handled.
func (t *Page) HandledDialogs() []Dialog {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	h := t.handled
	t.handled = nil
	return h
}

// HandleDialog accepts or dismisses the pending dialog
// (Page.handleJavaScriptDialog); promptText answers a prompt. Errors:
// bad_request when no dialog is pending, or when promptText is given for
// a dialog that is not a prompt (Chromium would drop the text, and the
// caller meant to answer another dialog); the dialog stays open then.
func (t *Page) HandleDialog(ctx context.Context, accept bool, promptText *string) error {
	d := t.PendingDialog()
	if d == nil {
		return &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("no dialog is open on tab %q", t.name),
			Hint: "Answer a dialog only while one is open: tab.dialog() returns it, or null; an action that opens one returns it in its result (dialog)."}
	}
	if promptText != nil && d.Type != "prompt" {
		return &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("the dialog open on tab %q is %s (%q), which takes no text: only a prompt's answer is typed; it is still open", t.name, d.Article(), d.Message),
			Hint: "Accept or dismiss it without a text."}
	}
	p := page.HandleJavaScriptDialogParams{Accept: accept}
	if promptText != nil {
		p.PromptText = *promptText
	} else if accept {
		p.PromptText = d.DefaultValue
	}
	if _, err := cdp.Call(ctx, t.target, page.HandleJavaScriptDialog, p); err != nil {
		return CDPErr("handle dialog", err)
	}
	t.evMu.Lock()
	t.dialog = nil
	t.evMu.Unlock()
	return nil
}

func (t *Page) dialogSignal() <-chan struct{} {
	t.evMu.Lock()
	defer t.evMu.Unlock()
	return t.dialogSig
}

// DialogPendingError is returned by blocking when a dialog opened and no
// policy handles it; the action's effect happened, and the dialog waits.
type DialogPendingError struct{ Dialog *Dialog }

func (e *DialogPendingError) Error() string {
	return fmt.Sprintf("%s dialog is open: %q", e.Dialog.Article(), e.Dialog.Message)
}

// DialogHolds returns the *DialogPendingError that Blocking returns at
// once, before it runs anything: a dialog is open and the tab has no
// dialog policy to answer it. Else it returns nil.
func (t *Page) DialogHolds() error {
	if d := t.PendingDialog(); d != nil && t.dialogs == "" {
		return &DialogPendingError{d}
	}
	return nil
}

// Blocking runs a CDP call that a JavaScript dialog can block (input
// events, evaluation, navigation). If a dialog opens while it waits and the
// tab has no dialog policy, it returns at once with *dialogPendingError;
// the call finishes when the dialog is handled. If the tab dies (closed,
// crashed) while it waits, it returns not_alive at once: a call the
// page held (a navigation waiting for its server) gets no answer then.
func (t *Page) Blocking(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := t.DialogHolds(); err != nil {
		return err
	}
	sig := t.dialogSignal()
	errc := make(chan error, 1)
	go func() { errc <- fn(ctx) }()
	for {
		select {
		case err := <-errc:
			return err
		case <-sig:
			if t.dialogs != "" {
				sig = t.dialogSignal() // the policy handles it; keep waiting
				continue
			}
			if d := t.PendingDialog(); d != nil {
				return &DialogPendingError{d}
			}
			sig = t.dialogSignal()
		case <-t.deadSig:
			return &Error{Code: errcode.NotAlive, Msg: "the tab is gone: " + t.DeadReason(), Err: ErrNotAlive}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// dialogHint says how to answer a pending JavaScript dialog.
const dialogHint = "Answer the dialog first: tab.acceptDialog(text?) or tab.dismissDialog() in a run (CLI: tabpilot dialog accept [TEXT], or dialog dismiss), or open the tab with a dialog policy (dialogs: accept or dismiss)."

// DialogBlocked is the not_actionable error of an action (what it could
// not do: "be acted on", "be observed") that a pending JavaScript dialog
// blocks.
func DialogBlocked(d *Dialog, doing string) *Error {
	return &Error{Code: errcode.NotActionable, Msg: fmt.Sprintf("%s dialog is open (%q), and the page cannot %s until it is answered", d.Article(), d.Message, doing), Hint: dialogHint}
}

// AsDialog reports whether err is, or wraps, a *DialogPendingError, and
// sets target to it.
func AsDialog(err error, target **DialogPendingError) bool { return errors.As(err, target) }
