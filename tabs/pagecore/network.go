package pagecore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/secrets"
	"github.com/tabpilot/tabpilot/tabs/netlog"
)

// netQueue is how many events wait for the network record's feeder; past
// it events are dropped (and counted), never the event loop held.
const netQueue = 8192

// netState is the page's network and console record (package netlog), fed
// from the event loop through a queue by one goroutine (feedNet).
type netState struct {
	log *netlog.Log
	q   chan any
	// dropped counts events the full queue dropped.
	dropped atomic.Int64
	// harBodies is set while a HAR that keeps content records: the feeder
	// then fetches each body at Network.loadingFinished, before Chromium
	// can evict it.
	harBodies atomic.Bool
}

// newNetState makes the record of the page of tab name; its larger bodies
// go to a 0700 directory of its own under the temp directory, and what it
// writes to files has the values of sec masked.
func newNetState(name string, sec *secrets.Store) *netState {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("tabpilot-net-%d-%s-%d", os.Getpid(), safeName(name), time.Now().UnixNano()))
	var redact func(string) string
	if sec.Len() > 0 {
		redact = sec.Redact
	}
	return &netState{log: netlog.New(&netlog.Options{BodyDir: dir, Redact: redact}), q: make(chan any, netQueue)}
}

// safeName keeps the letters, digits, '-' and '_' of a tab name, for a
// path.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, s)
}

// queueNet hands an event the record keeps to the feeder; it runs in the
// event loop and never blocks.
func (t *Page) queueNet(ev any) {
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent, *network.EventRequestWillBeSentExtraInfo, *network.EventResponseReceived,
		*network.EventResponseReceivedExtraInfo, *network.EventLoadingFinished, *network.EventLoadingFailed,
		*network.EventRequestServedFromCache, *network.EventDataReceived,
		*network.EventWebSocketCreated, *network.EventWebSocketWillSendHandshakeRequest,
		*network.EventWebSocketHandshakeResponseReceived, *network.EventWebSocketFrameSent,
		*network.EventWebSocketFrameReceived, *network.EventWebSocketClosed,
		*runtime.EventConsoleAPICalled, *runtime.EventExceptionThrown,
		*page.EventDomContentEventFired, *page.EventLoadEventFired:
	case *page.EventFrameNavigated:
		if ev.Frame.ParentID != "" {
			return
		}
	default:
		return
	}
	select {
	case t.net.q <- ev:
	default:
		t.net.dropped.Add(1)
	}
}

// feedNet feeds the record until the page is gone, then closes it (its
// body files are removed).
func (t *Page) feedNet() {
	defer func() {
		if err := t.net.log.Close(); err != nil {
			t.env.Log.Debug("close network record", "tab", t.name, "err", err)
		}
	}()
	for {
		var ev any
		select {
		case ev = <-t.net.q:
		case <-t.deadSig:
			return
		}
		switch ev := ev.(type) {
		case *page.EventFrameNavigated:
			t.net.log.Navigated(ev.Frame.URL + ev.Frame.URLFragment)
			continue
		case *network.EventLoadingFinished:
			t.net.log.Handle(ev)
			if t.net.harBodies.Load() && t.net.log.WantBody(ev.RequestID) {
				t.fetchBody(ev.RequestID)
			}
			continue
		}
		t.net.log.Handle(ev)
	}
}

// bodyWait bounds fetching one body.
const bodyWait = 5 * time.Second

// fetchBody attaches the response body of request id to the record
// (Network.getResponseBody); a body Chromium no longer has is left out.
func (t *Page) fetchBody(id network.RequestID) {
	ctx, cancel := context.WithTimeout(t.ctx, bodyWait)
	defer cancel()
	body, b64, err := netlog.FetchBody(ctx, t.target, id)
	if err == nil {
		err = t.net.log.SetBody(id, body, b64)
	}
	if err != nil {
		t.env.Log.Debug("response body", "tab", t.name, "request", id, "err", err)
	}
}

// Requests lists the page's requests a filter selects (netlog.Filter: by
// default those since the last top-level navigation), without headers or
// bodies. Errors: bad_request for a bad filter.
func (t *Page) Requests(f netlog.Filter) ([]netlog.Entry, error) {
	return t.net.log.Requests(f)
}

// Request returns one request of the record in full, id as Requests gave
// it ("r12"): headers, post data and the response body, which it fetches
// (Network.getResponseBody, Network.getRequestPostData) when the record
// has not got it yet and Chromium still holds it. Text bodies up to 64 KiB
// are inline, larger ones up to 1 MiB are written to a 0600 file whose
// path the entry gives. Errors: element_not_found for an unknown id.
func (t *Page) Request(ctx context.Context, id string) (*netlog.Entry, error) {
	e, err := t.net.log.Request(id)
	if err != nil {
		return nil, err
	}
	fetched := false
	if e.HasPostData && e.PostData == "" {
		if data, err := netlog.FetchPostData(ctx, t.target, e.RequestID); err == nil {
			fetched = t.net.log.SetPostData(e.RequestID, data) == nil
		}
	}
	if e.Body == nil && e.Finished && !e.Failed && e.Type != "websocket" && t.net.log.WantBody(e.RequestID) {
		body, b64, err := netlog.FetchBody(ctx, t.target, e.RequestID)
		if err == nil && t.net.log.SetBody(e.RequestID, body, b64) == nil {
			fetched = true
		}
	}
	if fetched {
		return t.net.log.Request(id)
	}
	return e, nil
}

// Console returns the page's console messages a filter selects
// (Runtime.consoleAPICalled, and uncaught errors as error-level messages).
// Errors: bad_request for an unknown level.
func (t *Page) Console(f netlog.ConsoleFilter) ([]netlog.Message, error) {
	return t.net.log.Console(f)
}

// PageErrors returns the page's uncaught exceptions and unhandled
// rejections (Runtime.exceptionThrown) with their stacks: since the last
// top-level navigation, or all.
func (t *Page) PageErrors(all bool) []netlog.PageError { return t.net.log.Errors(all) }

// ErrorCount returns how many uncaught errors the page has thrown since the
// tab opened; it only grows, so a caller diffs it around a run.
func (t *Page) ErrorCount() int { return t.net.log.ErrorCount() }

// StartHAR starts recording a HAR 1.2 of the page's traffic; content is
// "embed" (bodies in the HAR, base64 for binary ones), "omit" (default) or
// "file" (bodies written to files in o.Dir, which the HAR names; without a
// Dir, a new private directory under the temp directory). It returns the
// directory of the body files, "" for the other contents. Errors:
// bad_request when one is recording already or content is unknown.
func (t *Page) StartHAR(o netlog.HAROptions) (string, error) {
	if o.Content == "file" && o.Dir == "" {
		dir, err := os.MkdirTemp("", "tabpilot-har-")
		if err != nil {
			return "", fmt.Errorf("make the HAR's body directory: %w", err)
		}
		o.Dir = dir
	}
	if err := t.net.log.StartHAR(o); err != nil {
		return "", err
	}
	t.net.harBodies.Store(o.Content == "embed" || o.Content == "file")
	if o.Content != "file" {
		return "", nil
	}
	return o.Dir, nil
}

// StopHAR ends the HAR recording and writes it to path (0600), after the
// events already sent are in. Errors: bad_request when none records.
func (t *Page) StopHAR(ctx context.Context, path string) (*netlog.HAR, error) {
	t.drainNet(ctx)
	t.net.harBodies.Store(false)
	h, err := t.net.log.StopHAR()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("write HAR: %v", err), Err: err}
	}
	if _, err := h.WriteTo(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("write HAR %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write HAR %s: %w", path, err)
	}
	return h, nil
}

// drainNet waits (at most 1 s, within ctx) until the feeder has taken the
// events queued so far, so that a query made after an action sees them.
func (t *Page) drainNet(ctx context.Context) {
	deadline := time.Now().Add(time.Second)
	for len(t.net.q) > 0 && time.Now().Before(deadline) {
		if !SleepCtx(ctx, 5*time.Millisecond) {
			return
		}
	}
}

// NetSettle makes sure the record holds what the page sent before the
// call: a round trip on the page's session (its reply comes after the
// events sent before it), then the feeder's queue drained.
func (t *Page) NetSettle(ctx context.Context) {
	_, _ = cdp.Call(ctx, t.target, runtime.Evaluate, runtime.EvaluateParams{Expression: "0"})
	t.drainNet(ctx)
}
