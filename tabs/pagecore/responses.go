package pagecore

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/network"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/urlpattern"
)

// Response is a network response of the tab's page (Network.responseReceived
// and Network.getResponseBody).
type Response struct {
	URL        string            `json:"url"`
	Method     string            `json:"method,omitempty"`
	Status     int               `json:"status"`
	StatusText string            `json:"statusText"`
	Headers    map[string]string `json:"headers"`
	MimeType   string            `json:"mimeType"`
	// Body is the body as text; BodyBase64 holds it instead when it is not
	// UTF-8 text. Both are empty when the body is unavailable (BodyError
	// says why).
	Body       string `json:"body"`
	BodyBase64 string `json:"bodyBase64,omitempty"`
	BodyError  string `json:"bodyError,omitempty"`
	// Truncated is true when the body was cut at MaxResponseBody bytes.
	Truncated bool `json:"truncated,omitempty"`
}

// MaxResponseBody caps the body WaitForResponse returns.
const MaxResponseBody = 4 << 20

// ResponseWaiter waits for a response; it is subscribed from its creation,
// so a response that the next action causes is not missed.
type ResponseWaiter struct {
	t                     *Page
	p                     urlpattern.Pattern
	sent, resp, fin, fail <-chan jsonv2.Value
	stops                 []func()
}

// WatchResponses subscribes to the tab's network events
// (Network.requestWillBeSent, responseReceived, loadingFinished,
// loadingFailed) for a response whose URL matches p. Call Wait, then Stop.
func (t *Page) WatchResponses(p urlpattern.Pattern) *ResponseWaiter {
	w := &ResponseWaiter{t: t, p: p}
	sub := func(m string) <-chan jsonv2.Value {
		ch, stop := t.target.Subscribe(m)
		w.stops = append(w.stops, stop)
		return ch
	}
	w.sent = sub(network.RequestWillBeSent.Method)
	w.resp = sub(network.ResponseReceived.Method)
	w.fin = sub(network.LoadingFinished.Method)
	w.fail = sub(network.LoadingFailed.Method)
	return w
}

// Stop ends the subscriptions.
func (w *ResponseWaiter) Stop() {
	for _, s := range w.stops {
		s()
	}
	w.stops = nil
}

// Wait returns the first matching response, with its body once it has
// loaded (at most MaxResponseBody bytes). Errors: timeout when ctx ends
// first; navigation_failed when the matching request failed.
func (w *ResponseWaiter) Wait(ctx context.Context) (*Response, error) {
	defer w.Stop()
	methods := map[network.RequestID]string{}
	// The four subscriptions are separate channels, so a request's
	// loadingFinished can be read before its responseReceived: remember
	// which requests ended.
	ended := map[network.RequestID]string{}
	var got *Response
	var id network.RequestID
	for {
		select {
		case raw, ok := <-w.sent:
			if !ok {
				return nil, &Error{Code: errcode.NotAlive, Msg: "waitForResponse: the tab went away", Err: ErrNotAlive}
			}
			var ev network.EventRequestWillBeSent
			if jsonv2.Unmarshal(raw, &ev) == nil && ev.Request != nil && len(methods) < 10000 {
				methods[ev.RequestID] = ev.Request.Method
			}
		case raw, ok := <-w.resp:
			if !ok {
				return nil, &Error{Code: errcode.NotAlive, Msg: "waitForResponse: the tab went away", Err: ErrNotAlive}
			}
			if got != nil {
				continue
			}
			var ev network.EventResponseReceived
			if jsonv2.Unmarshal(raw, &ev) != nil || ev.Response == nil || !w.p.Match(ev.Response.URL) {
				continue
			}
			r := ev.Response
			got = &Response{URL: r.URL, Method: methods[ev.RequestID], Status: int(r.Status), StatusText: r.StatusText, MimeType: r.MimeType, Headers: map[string]string{}}
			if got.StatusText == "" {
				got.StatusText = statusText(got.Status)
			}
			for k, v := range r.Headers {
				got.Headers[strings.ToLower(k)] = fmt.Sprint(v)
			}
			id = ev.RequestID
			if why, done := ended[id]; done {
				if why != "" {
					got.BodyError = why
				} else {
					w.t.body(ctx, id, got)
				}
				return got, nil
			}
		case raw, ok := <-w.fin:
			if !ok {
				return nil, &Error{Code: errcode.NotAlive, Msg: "waitForResponse: the tab went away", Err: ErrNotAlive}
			}
			var ev network.EventLoadingFinished
			if jsonv2.Unmarshal(raw, &ev) != nil {
				continue
			}
			if got == nil || ev.RequestID != id {
				if len(ended) < 10000 {
					ended[ev.RequestID] = ""
				}
				continue
			}
			w.t.body(ctx, id, got)
			return got, nil
		case raw, ok := <-w.fail:
			if !ok {
				return nil, &Error{Code: errcode.NotAlive, Msg: "waitForResponse: the tab went away", Err: ErrNotAlive}
			}
			var ev network.EventLoadingFailed
			if jsonv2.Unmarshal(raw, &ev) != nil {
				continue
			}
			if got != nil && ev.RequestID == id {
				got.BodyError = "loading failed: " + ev.ErrorText
				return got, nil
			}
			if len(ended) < 10000 {
				ended[ev.RequestID] = "loading failed: " + ev.ErrorText
			}
		case <-w.t.deadSig:
			return nil, &Error{Code: errcode.NotAlive, Msg: "waitForResponse: the tab died: " + w.t.DeadReason(), Err: ErrNotAlive}
		case <-ctx.Done():
			if got != nil {
				got.BodyError = "the body did not finish loading within the timeout"
				return got, nil
			}
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitForResponse %s: no matching response within the timeout", w.p), Err: ctx.Err()}
		}
	}
}

// body fills r's body (Network.getResponseBody).
func (t *Page) body(ctx context.Context, id network.RequestID, r *Response) {
	res, err := cdp.Call(ctx, t.target, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
	if err != nil {
		r.BodyError = err.Error()
		return
	}
	data := res.Body
	if len(data) > MaxResponseBody {
		data, r.Truncated = data[:MaxResponseBody], true
	}
	if utf8.Valid(data) {
		r.Body = string(data)
	} else {
		r.BodyBase64 = base64.StdEncoding.EncodeToString(data)
	}
}

func statusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 204:
		return "No Content"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Found"
	case 304:
		return "Not Modified"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 500:
		return "Internal Server Error"
	}
	return ""
}
