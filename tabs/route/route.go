// Package route owns a page's request routes: the requests of the page
// that a route's URL glob (and resource types) match are paused in the
// Fetch domain and fulfilled with a response of the route's, failed with a
// network error, or continued with changes (Fetch.enable with patterns,
// Fetch.requestPaused, Fetch.fulfillRequest, Fetch.failRequest,
// Fetch.continueRequest).
//
// Only what some route may match is paused: Fetch.enable gets one pattern
// per route (its glob in Fetch's wildcard form, and its resource types),
// and a paused request no route matches after all is continued at once,
// so a route never stalls a request it does not match. While a page has
// routes its cache is off, so that a route sees what the page loaded
// before too. The routes of a
// page live until they are removed or the page goes; the last removal
// disables the domain.
//
// A router also holds the page's navigation guard, when a navigation
// policy is set (SetGuard): every document request (a top-level page or a
// frame, redirects included) is paused and vetted before it is sent; a
// refused one is failed (net::ERR_ABORTED for the top frame, so the page
// stays as it was and no error page commits; net::ERR_BLOCKED_BY_CLIENT
// for a frame) and reported to the owner. Both share the one Fetch.enable
// a session has.
//
// It must not know of tabs or observations; it acts on one CDP session
// (the page target's: requests of out-of-process iframes, made in their
// own sessions, are not routed) and takes its goroutines from its owner.
package route

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/urlpattern"
)

// Spec is what a route does with a request it matches: abort it (Abort),
// fulfill it (Status, Headers, Body), or continue it with changes (URL,
// Method, PostData, SetHeaders). A Spec with none of them continues the
// request unchanged (a route that only counts).
type Spec struct {
	// Abort fails the request with a network error reason, as
	// Network.ErrorReason names them, case-insensitive: failed, aborted,
	// timedout, accessdenied, connectionclosed, connectionreset,
	// connectionrefused, connectionaborted, connectionfailed,
	// namenotresolved, internetdisconnected, addressunreachable,
	// blockedbyclient, blockedbyresponse. "" does not abort.
	Abort string `json:"abort,omitempty"`
	// Status fulfills the request with this HTTP status (100-599).
	Status int `json:"status,omitempty"`
	// Headers are the fulfilled response's headers.
	Headers map[string]string `json:"headers,omitempty"`
	// ContentType sets the fulfilled response's Content-Type header.
	ContentType string `json:"contentType,omitempty"`
	// Body is the fulfilled response's body, as text; BodyBase64 as
	// base64 (a binary body). A Body without a Status is a 200.
	Body       string `json:"body,omitempty"`
	BodyBase64 string `json:"bodyBase64,omitempty"`
	// URL, Method and PostData change the request before it goes on;
	// SetHeaders sets (or, with an empty value, removes) request headers.
	URL        string            `json:"url,omitempty"`
	Method     string            `json:"method,omitempty"`
	PostData   string            `json:"postData,omitempty"`
	SetHeaders map[string]string `json:"setHeaders,omitempty"`
	// Types limits the route to these resource types (document,
	// stylesheet, image, media, font, script, xhr, fetch, …,
	// case-insensitive); empty: every type.
	Types []string `json:"types,omitempty"`
}

// Kind says what a Spec does: "abort", "fulfill" or "continue".
func (s *Spec) Kind() string {
	switch {
	case s.Abort != "":
		return "abort"
	case s.Status != 0 || s.Body != "" || s.BodyBase64 != "":
		return "fulfill"
	}
	return "continue"
}

// Info describes a route: its pattern, what it does, and how many
// requests it handled.
type Info struct {
	Pattern string   `json:"pattern"`
	Action  string   `json:"action"`
	Types   []string `json:"types,omitempty"`
	Hits    int      `json:"hits"`
}

// Error is a route failure with a stable code.
type Error struct {
	Code errcode.Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// ErrorCode returns the stable code, e.g. errcode.BadRequest.
func (e *Error) ErrorCode() errcode.Code { return e.Code }

func badRequest(format string, args ...any) error {
	return &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf(format, args...)}
}

var reasons = []network.ErrorReason{network.ErrorReasonFailed, network.ErrorReasonAborted, network.ErrorReasonTimedOut,
	network.ErrorReasonAccessDenied, network.ErrorReasonConnectionClosed, network.ErrorReasonConnectionReset,
	network.ErrorReasonConnectionRefused, network.ErrorReasonConnectionAborted, network.ErrorReasonConnectionFailed,
	network.ErrorReasonNameNotResolved, network.ErrorReasonInternetDisconnected, network.ErrorReasonAddressUnreachable,
	network.ErrorReasonBlockedByClient, network.ErrorReasonBlockedByResponse}

var types = []network.ResourceType{network.ResourceTypeDocument, network.ResourceTypeStylesheet, network.ResourceTypeImage,
	network.ResourceTypeMedia, network.ResourceTypeFont, network.ResourceTypeScript, network.ResourceTypeTextTrack,
	network.ResourceTypeXHR, network.ResourceTypeFetch, network.ResourceTypePrefetch, network.ResourceTypeEventSource,
	network.ResourceTypeWebSocket, network.ResourceTypeManifest, network.ResourceTypeSignedExchange,
	network.ResourceTypePing, network.ResourceTypeCSPViolationReport, network.ResourceTypePreflight, network.ResourceTypeOther}

// route is one route, checked.
type route struct {
	pattern string
	glob    urlpattern.Pattern
	spec    Spec
	reason  network.ErrorReason
	types   []network.ResourceType
	hits    int
}

// check validates s into a route of pattern (a urlpattern glob; one that
// starts with '/' is relative to base's origin).
func check(pattern, base string, s Spec) (*route, error) {
	g, err := urlpattern.ParseGlob(pattern, base)
	if err != nil {
		return nil, err
	}
	r := &route{pattern: pattern, glob: g, spec: s}
	if s.Abort != "" {
		for _, x := range reasons {
			if strings.EqualFold(string(x), s.Abort) {
				r.reason = x
			}
		}
		if r.reason == "" {
			return nil, badRequest("route %s: unknown abort reason %q: use failed, aborted, timedout, accessdenied, connectionrefused, blockedbyclient, …", pattern, s.Abort)
		}
		if s.Status != 0 || s.Body != "" || s.BodyBase64 != "" || s.URL != "" || s.Method != "" || s.PostData != "" || len(s.SetHeaders) > 0 {
			return nil, badRequest("route %s: abort takes no response or request changes", pattern)
		}
	}
	if s.Status != 0 && (s.Status < 100 || s.Status > 599) {
		return nil, badRequest("route %s: status %d is not an HTTP status (100-599)", pattern, s.Status)
	}
	if s.Kind() == "fulfill" && (s.URL != "" || s.Method != "" || s.PostData != "" || len(s.SetHeaders) > 0) {
		return nil, badRequest("route %s: a fulfilled request is not sent: it takes no url, method, postData or setHeaders", pattern)
	}
	if s.Body != "" && s.BodyBase64 != "" {
		return nil, badRequest("route %s: give body or bodyBase64, not both", pattern)
	}
	if s.BodyBase64 != "" {
		if _, err := base64.StdEncoding.DecodeString(s.BodyBase64); err != nil {
			return nil, badRequest("route %s: bodyBase64 is not base64: %v", pattern, err)
		}
	}
	for _, t := range s.Types {
		i := slices.IndexFunc(types, func(x network.ResourceType) bool { return strings.EqualFold(string(x), t) })
		if i < 0 {
			return nil, badRequest("route %s: unknown resource type %q: use document, stylesheet, image, media, font, script, xhr, fetch, websocket, other, …", pattern, t)
		}
		r.types = append(r.types, types[i])
	}
	return r, nil
}

// fetchGlob is a glob's Fetch.RequestPattern urlPattern: Fetch's '*'
// matches any characters, so '**' and '*' become '*', and a pattern with
// braces or a relative one (resolved by the Pattern only) becomes '*'; the
// paused request is then matched by the Pattern itself.
func fetchGlob(p string) string {
	if strings.ContainsAny(p, "{}\\") || strings.HasPrefix(p, "/") {
		return "*"
	}
	for strings.Contains(p, "**") {
		p = strings.ReplaceAll(p, "**", "*")
	}
	return strings.ReplaceAll(p, "?", "\\?")
}

// Router holds the routes of one page session. Its methods are safe for
// concurrent use.
type Router struct {
	ctx  context.Context // the page target's chromedp context
	sess *chromedp.Target
	log  *slog.Logger
	goFn func(func())

	mu        sync.Mutex
	routes    []*route
	guard     *Guard
	auth      *Credentials
	authTries map[fetch.RequestID]int
	listening bool
	q         chan *fetch.EventRequestPaused
}

// New returns the router of the page whose chromedp target context is ctx;
// goFn runs a function on a goroutine its owner waits for.
func New(ctx context.Context, log *slog.Logger, goFn func(func())) *Router {
	return &Router{ctx: ctx, sess: chromedp.FromContext(ctx).Target, log: log, goFn: goFn}
}

// Guard vets a page's document requests; see SetGuard.
type Guard struct {
	// Check returns an error for a document URL the policy refuses.
	Check func(ctx context.Context, url string) error
	// Blocked is told of each refused document request before it is
	// failed (so before the page's events of its end): its URL, whether
	// it was the top frame's, and Check's error.
	Blocked func(url string, top bool, err error)
}

// SetGuard installs g as the page's navigation guard (nil removes it) and
// enables the Fetch domain for document requests (resource type
// Document, request stage) besides the routes' patterns. Call it before
// the page's first navigation to vet that one too.
func (r *Router) SetGuard(ctx context.Context, g *Guard) error {
	r.mu.Lock()
	if err := r.listenLocked(); err != nil {
		r.mu.Unlock()
		return err
	}
	r.guard = g
	r.mu.Unlock()
	return r.enable(ctx)
}

// Credentials answer an upstream proxy's authentication challenge.
type Credentials struct {
	User, Password string
}

// SetProxyAuth makes the router answer the page's proxy authentication
// challenges (Fetch.authRequired with source Proxy) with c, once per
// request (a second challenge of the same request, wrong credentials, is
// cancelled, and the page gets the proxy's 407). A server's own challenge
// (WWW-Authenticate) is cancelled: the page shows its 401. Fetch.authRequired
// comes only for paused requests, so with credentials every request is
// paused (Fetch.enable with handleAuthRequests and the pattern "*") and
// continued at once unless a route or the guard takes it, as Playwright
// does for proxy credentials.
func (r *Router) SetProxyAuth(ctx context.Context, c *Credentials) error {
	r.mu.Lock()
	if err := r.listenLocked(); err != nil {
		r.mu.Unlock()
		return err
	}
	r.auth = c
	r.authTries = map[fetch.RequestID]int{}
	r.mu.Unlock()
	return r.enable(ctx)
}

// listenLocked starts serving paused requests, once; r.mu is held.
func (r *Router) listenLocked() error {
	if r.listening {
		return nil
	}
	r.q = make(chan *fetch.EventRequestPaused, 1024)
	if err := chromedp.Listen(r.ctx, r.onEvent); err != nil {
		return fmt.Errorf("listen for paused requests: %w", err)
	}
	r.listening = true
	r.goFn(r.serve)
	return nil
}

// Add adds a route (after those there; the last added that matches wins,
// as in Playwright) or replaces the one of the same pattern, and enables
// the Fetch domain for the routes' patterns. base resolves a pattern that
// starts with '/'. Errors: bad_request for a bad pattern or spec.
func (r *Router) Add(ctx context.Context, pattern, base string, s Spec) error {
	rt, err := check(pattern, base, s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if err := r.listenLocked(); err != nil {
		r.mu.Unlock()
		return err
	}
	r.routes = slices.DeleteFunc(r.routes, func(x *route) bool { return x.pattern == pattern })
	r.routes = append(r.routes, rt)
	r.mu.Unlock()
	return r.enable(ctx)
}

// Remove removes the route of pattern ("" every route) and reports how
// many it removed; with none left the Fetch domain is disabled.
func (r *Router) Remove(ctx context.Context, pattern string) (int, error) {
	r.mu.Lock()
	n := len(r.routes)
	if pattern == "" {
		r.routes = nil
	} else {
		r.routes = slices.DeleteFunc(r.routes, func(x *route) bool { return x.pattern == pattern })
	}
	n -= len(r.routes)
	r.mu.Unlock()
	return n, r.enable(ctx)
}

// List describes the routes, in the order they were added.
func (r *Router) List() []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Info, 0, len(r.routes))
	for _, x := range r.routes {
		out = append(out, Info{Pattern: x.pattern, Action: x.spec.Kind(), Types: x.spec.Types, Hits: x.hits})
	}
	return out
}

// enable sets the Fetch domain's patterns to the routes' and, with a
// guard, documents' (Fetch.enable), or disables it (Fetch.disable) when
// there are none. While routes exist
// the page's cache is off (Network.setCacheDisabled): a resource the
// memory cache serves never reaches the Fetch domain, so a route would
// silently miss what the page loaded before (Playwright does the same).
func (r *Router) enable(ctx context.Context) error {
	r.mu.Lock()
	var ps []*fetch.RequestPattern
	seen := map[string]bool{}
	for _, x := range r.routes {
		g := fetchGlob(x.pattern)
		ts := x.types
		if len(ts) == 0 {
			ts = []network.ResourceType{""}
		}
		for _, t := range ts {
			k := g + "\x00" + string(t)
			if !seen[k] {
				seen[k] = true
				ps = append(ps, &fetch.RequestPattern{URLPattern: g, ResourceType: t, RequestStage: fetch.RequestStageRequest})
			}
		}
	}
	routing := len(ps) > 0
	if r.guard != nil {
		ps = append(ps, &fetch.RequestPattern{URLPattern: "*", ResourceType: network.ResourceTypeDocument, RequestStage: fetch.RequestStageRequest})
	}
	auth := r.auth != nil
	if auth {
		ps = []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}}
	}
	r.mu.Unlock()
	var err error
	if len(ps) == 0 {
		_, err = cdp.Call(ctx, r.sess, fetch.Disable, cdp.Empty{})
	} else {
		_, err = cdp.Call(ctx, r.sess, fetch.Enable, fetch.EnableParams{Patterns: ps, HandleAuthRequests: &auth})
	}
	if err != nil {
		return fmt.Errorf("set the routes (Fetch.enable): %w", err)
	}
	if _, err := cdp.Call(ctx, r.sess, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: routing}); err != nil {
		return fmt.Errorf("turn the cache off while routing (Network.setCacheDisabled): %w", err)
	}
	return nil
}

// onEvent hands paused requests to serve; it runs in chromedp's event
// loop, so it never blocks: a full queue continues the request from a
// goroutine of its own.
func (r *Router) onEvent(ev any) {
	if a, ok := ev.(*fetch.EventAuthRequired); ok {
		r.goFn(func() { r.answerAuth(a) })
		return
	}
	e, ok := ev.(*fetch.EventRequestPaused)
	if !ok {
		return
	}
	select {
	case r.q <- e:
	default:
		go r.handle(e)
	}
}

// serve answers paused requests until the page goes.
func (r *Router) serve() {
	for {
		select {
		case e := <-r.q:
			r.handle(e)
		case <-r.ctx.Done():
			return
		}
	}
}

// handleWait bounds the answer to one paused request.
const handleWait = 10 * time.Second

// handle answers one paused request with the last route that matches it,
// or continues it.
func (r *Router) handle(e *fetch.EventRequestPaused) {
	ctx, cancel := context.WithTimeout(r.ctx, handleWait)
	defer cancel()
	var rt *route
	var spec Spec
	r.mu.Lock()
	g := r.guard
	r.mu.Unlock()
	if g != nil && e.ResourceType == network.ResourceTypeDocument && e.Request != nil {
		if cerr := g.Check(ctx, e.Request.URL); cerr != nil {
			top := e.FrameID == cdp.FrameID(r.sess.TargetID)
			g.Blocked(e.Request.URL, top, cerr)
			// Aborted commits no error page: the top frame keeps its page.
			reason := network.ErrorReasonAborted
			if !top {
				reason = network.ErrorReasonBlockedByClient
			}
			if _, err := cdp.Call(ctx, r.sess, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: reason}); err != nil && r.ctx.Err() == nil {
				r.log.Debug("fail a refused document request", "url", e.Request.URL, "err", err)
			}
			return
		}
	}
	r.mu.Lock()
	for i := len(r.routes) - 1; i >= 0; i-- {
		x := r.routes[i]
		if e.Request != nil && x.glob.Match(e.Request.URL) && (len(x.types) == 0 || slices.Contains(x.types, e.ResourceType)) {
			rt = x
			x.hits++
			spec = x.spec
			break
		}
	}
	r.mu.Unlock()
	var err error
	switch {
	case rt == nil:
		_, err = cdp.Call(ctx, r.sess, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
	case rt.reason != "":
		_, err = cdp.Call(ctx, r.sess, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: rt.reason})
	case spec.Kind() == "fulfill":
		_, err = cdp.Call(ctx, r.sess, fetch.FulfillRequest, fulfill(e.RequestID, &spec))
	default:
		_, err = cdp.Call(ctx, r.sess, fetch.ContinueRequest, continued(e, &spec))
	}
	if err != nil && r.ctx.Err() == nil {
		r.log.Debug("answer paused request", "url", urlOf(e), "err", err)
	}
}

// answerAuth answers an authentication challenge (see SetProxyAuth).
func (r *Router) answerAuth(a *fetch.EventAuthRequired) {
	ctx, cancel := context.WithTimeout(r.ctx, handleWait)
	defer cancel()
	resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
	r.mu.Lock()
	if r.auth != nil && a.AuthChallenge != nil && a.AuthChallenge.Source == fetch.AuthChallengeSourceProxy {
		r.authTries[a.RequestID]++
		if r.authTries[a.RequestID] == 1 {
			resp = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials,
				Username: r.auth.User, Password: r.auth.Password}
		}
		if len(r.authTries) > 4096 {
			clear(r.authTries)
		}
	}
	r.mu.Unlock()
	if _, err := cdp.Call(ctx, r.sess, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: a.RequestID, AuthChallengeResponse: resp}); err != nil && r.ctx.Err() == nil {
		r.log.Debug("answer an authentication challenge", "err", err)
	}
}

func urlOf(e *fetch.EventRequestPaused) string {
	if e.Request == nil {
		return ""
	}
	return e.Request.URL
}

// fulfill is the Fetch.fulfillRequest of a spec: its status (200 when
// only a body is given), headers sorted by name, and body.
func fulfill(id fetch.RequestID, s *Spec) fetch.FulfillRequestParams {
	p := fetch.FulfillRequestParams{RequestID: id, ResponseCode: int64(s.Status)}
	if p.ResponseCode == 0 {
		p.ResponseCode = http.StatusOK
	}
	h := map[string]string{}
	for k, v := range s.Headers {
		h[k] = v
	}
	if s.ContentType != "" {
		h["Content-Type"] = s.ContentType
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p.ResponseHeaders = append(p.ResponseHeaders, &fetch.HeaderEntry{Name: k, Value: h[k]})
	}
	if s.BodyBase64 != "" {
		p.Body, _ = base64.StdEncoding.DecodeString(s.BodyBase64)
	} else if s.Body != "" {
		p.Body = []byte(s.Body)
	}
	return p
}

// continued is the Fetch.continueRequest of a spec: the request's headers
// with SetHeaders applied (an empty value removes one), and its URL,
// method and post data changed as the spec says.
func continued(e *fetch.EventRequestPaused, s *Spec) fetch.ContinueRequestParams {
	p := fetch.ContinueRequestParams{RequestID: e.RequestID, URL: s.URL, Method: s.Method}
	if s.PostData != "" {
		p.PostData = []byte(s.PostData)
	}
	if len(s.SetHeaders) > 0 && e.Request != nil {
		h := map[string]string{}
		for k, v := range e.Request.Headers {
			h[http.CanonicalHeaderKey(k)] = fmt.Sprint(v)
		}
		for k, v := range s.SetHeaders {
			if v == "" {
				delete(h, http.CanonicalHeaderKey(k))
			} else {
				h[http.CanonicalHeaderKey(k)] = v
			}
		}
		names := make([]string, 0, len(h))
		for k := range h {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			p.Headers = append(p.Headers, &fetch.HeaderEntry{Name: k, Value: h[k]})
		}
	}
	return p
}
