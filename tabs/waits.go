package tabs

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"

	"github.com/tabpilot/tabpilot/errcode"
)

type actionTimeoutKey struct{}

// WithActionTimeout returns ctx carrying d, the longest that actions under
// it wait for their element to exist and become actionable (Playwright's
// per-action timeout). Without it, actions wait until shortly before ctx's
// deadline (see actionWait).
func WithActionTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, actionTimeoutKey{}, d)
}

// actionWait is how long an action may wait for its element: the action
// timeout of ctx if any, and always within ctx's deadline less a reserve
// (a fifth of what is left, at most 1s) so the action fails with its own
// error before the run times out. With neither, autoWait.
func actionWait(ctx context.Context) time.Duration {
	w, set := ctx.Value(actionTimeoutKey{}).(time.Duration)
	if !set || w <= 0 {
		w, set = autoWait, false
	}
	if dl, ok := ctx.Deadline(); ok {
		rem := time.Until(dl)
		reserve := min(time.Second, rem/5)
		if !set || rem-reserve < w {
			w = rem - reserve
		}
	}
	return max(w, 0)
}

// locate finds the element a target names and waits until it is
// actionable per o, within actionWait(ctx) in all. A selector whose element
// is replaced while it waits (a re-render) is resolved again. It returns
// the element and the point to act at (top-level viewport CSS pixels).
func (t *Tab) locate(ctx context.Context, tg Target, o actOpts) (*element, float64, float64, error) {
	deadline := time.Now().Add(actionWait(ctx))
	for {
		el, err := t.find(ctx, tg, time.Until(deadline))
		if err != nil {
			return nil, 0, 0, err
		}
		x, y, err := t.actionable(ctx, el, o, time.Until(deadline))
		if err == nil {
			return el, x, y, nil
		}
		var e *Error
		if tg.ID == 0 && errors.As(err, &e) && e.Code == errcode.ElementNotFound && time.Now().Before(deadline) && ctx.Err() == nil {
			continue // detached: find the selector's new element
		}
		return nil, 0, 0, err
	}
}

// URLPattern matches URLs for waitForUrl and waitForResponse: a glob (a
// plain URL matches itself only), a regular expression, or a predicate.
//
// Globs follow Playwright: ** matches any characters, * any but '/',
// {a,b} either, and ? is literal (URLs have query strings). A glob that
// starts with one '/' is relative to the origin of Base.
type URLPattern struct {
	Glob   string
	Regexp *regexp.Regexp
	Func   func(url string) bool
	// Base resolves a glob that starts with '/'.
	Base string

	re *regexp.Regexp
}

// ParseGlob returns the URLPattern of a glob. Errors: bad_request for an
// empty glob or unbalanced braces.
func ParseGlob(glob, base string) (URLPattern, error) {
	p := URLPattern{Glob: glob, Base: base}
	if strings.TrimSpace(glob) == "" {
		return p, Errorf(errcode.BadRequest, "empty URL pattern")
	}
	g := glob
	if strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "//") {
		if u, err := url.Parse(base); err == nil && u.Scheme != "" && u.Host != "" {
			g = u.Scheme + "://" + u.Host + g
		}
	}
	if u, err := url.Parse(g); err == nil && u.Scheme != "" && u.Host != "" && u.Path == "" && u.RawQuery == "" && u.Fragment == "" && !strings.ContainsAny(g, "*{") {
		g += "/" // http://h.test is http://h.test/
	}
	re, err := globRegexp(g)
	if err != nil {
		return p, err
	}
	p.re = re
	return p, nil
}

func globRegexp(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && i+1 < len(g) && g[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteString(regexp.QuoteMeta(string(g[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return nil, Errorf(errcode.BadRequest, "URL pattern %q has an unclosed {", g)
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, Errorf(errcode.BadRequest, "invalid URL pattern %q: %v", g, err)
	}
	return re, nil
}

// Match reports whether u matches. A URL without a path matches the same
// URL with "/".
func (p URLPattern) Match(u string) bool {
	switch {
	case p.Func != nil:
		return p.Func(u)
	case p.Regexp != nil:
		return p.Regexp.MatchString(u)
	case p.re != nil:
		if p.re.MatchString(u) {
			return true
		}
		if pu, err := url.Parse(u); err == nil && pu.Path == "" && pu.Host != "" {
			pu.Path = "/"
			return p.re.MatchString(pu.String())
		}
	}
	return false
}

func (p URLPattern) String() string {
	switch {
	case p.Func != nil:
		return "a predicate"
	case p.Regexp != nil:
		return "/" + p.Regexp.String() + "/"
	}
	return fmt.Sprintf("%q", p.Glob)
}

// WaitForURL waits until the top frame's URL matches p (history API
// changes included: Page.navigatedWithinDocument), then, for a
// waitUntil of load (default) or domcontentloaded, until the document
// reached that state; commit returns at once. A URL that matches already
// returns at once. It returns the URL. Errors: timeout (naming the last
// URL seen), bad_request for an unknown waitUntil.
func (t *Tab) WaitForURL(ctx context.Context, p URLPattern, waitUntil string) (string, error) {
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
func (t *Tab) currentURL(ctx context.Context) string {
	if t.PendingDialog() == nil {
		ectx, cancel := context.WithTimeout(ctx, time.Second)
		var u string
		err := t.evalJSON(ectx, `location.href`, &u)
		cancel()
		if err == nil && u != "" {
			t.evMu.Lock()
			t.url = u
			t.evMu.Unlock()
			return u
		}
	}
	u, _ := t.cachedURLTitle()
	return u
}

// waitReadyState polls document.readyState until the document is loaded
// (load: complete; domcontentloaded: interactive or complete).
func (t *Tab) waitReadyState(ctx context.Context, waitUntil string) error {
	for {
		var st string
		if t.PendingDialog() == nil {
			ectx, cancel := context.WithTimeout(ctx, time.Second)
			_ = t.evalJSON(ectx, `document.readyState`, &st)
			cancel()
		}
		if st == "complete" || (waitUntil == "domcontentloaded" && st == "interactive") {
			return nil
		}
		if !sleepCtx(ctx, 50*time.Millisecond) {
			return &Error{Code: errcode.Timeout, Msg: "waitForUrl: the URL matched but the page did not finish loading within the timeout", Err: ctx.Err()}
		}
	}
}

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
	t                     *Tab
	p                     URLPattern
	sent, resp, fin, fail <-chan jsonv2.Value
	stops                 []func()
}

// WatchResponses subscribes to the tab's network events
// (Network.requestWillBeSent, responseReceived, loadingFinished,
// loadingFailed) for a response whose URL matches p. Call Wait, then Stop.
func (t *Tab) WatchResponses(p URLPattern) *ResponseWaiter {
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
func (t *Tab) body(ctx context.Context, id network.RequestID, r *Response) {
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

// WaitForState waits until the target is in state: attached (in the DOM),
// detached (gone), visible (default: attached, non-empty box, not hidden)
// or hidden (gone or not visible), for the whole of ctx. Errors: timeout,
// bad_request for an unknown state, stale_element for a number whose node
// is gone (when waiting for attached or visible).
func (t *Tab) WaitForState(ctx context.Context, tg Target, state string) (*ActionResult, error) {
	switch state {
	case "":
		state = "visible"
	case "attached", "detached", "visible", "hidden":
	default:
		return nil, Errorf(errcode.BadRequest, "invalid state %q: use attached, detached, visible or hidden", state)
	}
	if state == "visible" {
		return t.WaitFor(ctx, tg)
	}
	for {
		el, err := t.resolve(ctx, tg)
		var e *Error
		if err != nil && ctx.Err() != nil {
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitFor %s: not %s within the timeout", tg, state), Err: ctx.Err()}
		}
		if err != nil && !(errors.As(err, &e) && e.Code == errcode.StaleElement && (state == "detached" || state == "hidden")) {
			return nil, err
		}
		present, visible := false, false
		if el != nil {
			var st struct {
				Attached, Visible bool
			}
			if err := t.callOn(ctx, el, `function(){ const e = this.nodeType === 1 ? this : this.parentElement; if (!this.isConnected || !e) return {Attached: false};
 const r = e.getBoundingClientRect(), s = getComputedStyle(e);
 return {Attached: true, Visible: r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'}; }`, &st); err == nil {
				present, visible = st.Attached, st.Visible
			}
		}
		desc := tg.String()
		switch {
		case state == "attached" && present,
			state == "detached" && !present,
			state == "hidden" && !visible:
			return &ActionResult{Target: desc}, nil
		}
		select {
		case <-ctx.Done():
			return nil, &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("waitFor %s: not %s within the timeout", desc, state), Err: ctx.Err()}
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// KnownURL returns the last URL seen for the top frame, without asking the
// page (for resolving relative URL patterns).
func (t *Tab) KnownURL() string {
	u, _ := t.cachedURLTitle()
	return u
}

// DefaultIdle is how long the network must stay quiet for
// WaitForLoadState("networkidle") when no idle time is given.
const DefaultIdle = 500 * time.Millisecond

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
func (t *Tab) WaitForLoadState(ctx context.Context, state string, idle time.Duration) error {
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
			return dialogBlocked(d, "load")
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

// loadStateTimeout is the timeout error of WaitForLoadState after waited,
// saying what the page had not reached.
func (t *Tab) loadStateTimeout(state string, idle, waited time.Duration, loading, dcl, nav bool, cause error) error {
	waited = waited.Round(100 * time.Millisecond)
	var why string
	switch {
	case nav:
		why = fmt.Sprintf("the navigation to %s has not committed", t.pendingNavigation())
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
