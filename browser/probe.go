package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// ErrPageHeld is wrapped by ProbePage's error for a page that does not
// answer: a JavaScript dialog open on it (or a script that never yields)
// holds every command to it, and attaching to it would hang.
var ErrPageHeld = errors.New("the page does not answer")

// PageDialog is a JavaScript dialog open on a page target, as
// Page.javascriptDialogOpening reports it.
type PageDialog struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// HeldError is ProbePage's error for a page that did not answer within
// the probe's wait. Dialog is the dialog that holds it when Chromium said
// so (Page.javascriptDialogOpening), else nil: a dialog that opened before
// any client attached is not reported to a new session, and Chromium
// holds even Page.enable while it is open.
type HeldError struct {
	ID     target.ID
	Wait   time.Duration
	Dialog *PageDialog
}

func (e *HeldError) Error() string {
	if e.Dialog != nil {
		return fmt.Sprintf("page %s is held by a JavaScript %s dialog (%q)", e.ID, e.Dialog.Type, e.Dialog.Message)
	}
	return fmt.Sprintf("page %s did not answer within %v", e.ID, e.Wait)
}

// Unwrap returns ErrPageHeld.
func (e *HeldError) Unwrap() error { return ErrPageHeld }

// ProbePage checks, within wait and over a session of its own that it
// closes after, that a page target answers commands, before a client
// attaches to it for good. chromedp's attach evaluates in the page
// (Runtime.evaluate "self"), which a JavaScript dialog open on it holds
// until the dialog is answered: attaching to such a page hung until the
// open's timeout. The probe attaches without flattening
// (Target.attachToTarget flatten=false: its messages go through the
// browser session, Target.sendMessageToTarget and
// Target.receivedMessageFromTarget), enables Page (which reports a dialog
// that opens, Page.javascriptDialogOpening) and evaluates 1. It returns
// nil when the page answered, *HeldError (wrapping ErrPageHeld) when a
// dialog opened or the page did not answer within wait, or the error of
// the attach.
func (h *Handle) ProbePage(ctx context.Context, id target.ID, wait time.Duration) error {
	b := chromedp.FromContext(h.ctx).Browser
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	msgs, stop := b.Subscribe(target.ReceivedMessageFromTarget.Method)
	defer stop()
	var att target.AttachToTargetResult
	if err := b.Call(ctx, target.AttachToTarget.Method, target.AttachToTargetParams{TargetID: id, Flatten: new(false)}, &att); err != nil {
		return fmt.Errorf("probe page %s: %w", id, err)
	}
	sess := att.SessionID
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer dcancel()
		_ = b.Call(dctx, target.DetachFromTarget.Method, target.DetachFromTargetParams{SessionID: sess}, nil)
	}()
	for _, msg := range []string{
		`{"id":1,"method":"Page.enable"}`,
		`{"id":2,"method":"Runtime.evaluate","params":{"expression":"1","returnByValue":true}}`,
	} {
		// Target.sendMessageToTarget is deprecated and gone from cdproto,
		// but Chromium serves it.
		if err := b.Call(ctx, "Target.sendMessageToTarget", map[string]any{"sessionId": sess, "message": msg}, nil); err != nil {
			return fmt.Errorf("probe page %s: %w", id, err)
		}
	}
	held := &HeldError{ID: id, Wait: wait}
	for {
		select {
		case raw, ok := <-msgs:
			if !ok {
				return fmt.Errorf("probe page %s: the connection to the browser closed", id)
			}
			var ev target.EventReceivedMessageFromTarget
			if json.Unmarshal(raw, &ev) != nil || ev.SessionID != sess {
				continue
			}
			var m struct {
				ID     int64      `json:"id"`
				Method string     `json:"method"`
				Params PageDialog `json:"params"`
			}
			if json.Unmarshal([]byte(ev.Message), &m) != nil {
				continue
			}
			switch {
			case m.Method == "Page.javascriptDialogOpening":
				held.Dialog = &PageDialog{Type: m.Params.Type, Message: m.Params.Message}
				return held
			case m.ID == 2:
				return nil
			}
		case <-ctx.Done():
			return held
		}
	}
}

// Answers reports whether the browser answers a command on its connection
// (Browser.getVersion on the browser session) within wait: false when the
// call fails, or the connection is lost (Done) before the answer. It tells
// a page another client closed from one that went with its browser (a
// pool that ended the session, a crash), whose targets detach before the
// connection drops.
func (h *Handle) Answers(ctx context.Context, wait time.Duration) bool {
	c := chromedp.FromContext(h.ctx)
	if c == nil || c.Browser == nil || !h.Alive() {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return c.Browser.Call(ctx, "Browser.getVersion", nil, nil) == nil && h.Alive()
}
