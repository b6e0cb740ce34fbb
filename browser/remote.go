package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
)

// RemoteOptions configure a connection to a CDP endpoint on the network
// (a browser pool, a hosted browser, a container).
type RemoteOptions struct {
	// Header is sent on the websocket upgrade and on the /json/version
	// discovery request, e.g. Authorization: Bearer T. Its values are
	// secrets: nothing logs them.
	Header http.Header
	// Timeout bounds the connect: the discovery, the websocket dial and
	// the first exchange. 0 means 10 s (and 5 s of /json/version polling,
	// as for a local endpoint).
	Timeout time.Duration
}

// remoteSpec is the comparable, unexported part of a Key that says how to
// reach a remote browser: the canonical header lines, the connect
// timeout, and a Grid's credentials and session settings.
type remoteSpec struct {
	header    string // "Name: value\n" lines, sorted by name (canonical)
	timeout   time.Duration
	user      string
	password  string
	binary    string
	keepAlive time.Duration
}

func (s remoteSpec) headerCount() int { return strings.Count(s.header, "\n") }

// httpHeader returns the header lines as an http.Header.
func (s remoteSpec) httpHeader() http.Header {
	h := http.Header{}
	for line := range strings.SplitSeq(strings.TrimSuffix(s.header, "\n"), "\n") {
		if name, val, ok := strings.Cut(line, ": "); ok {
			h.Add(name, val)
		}
	}
	if s.user != "" || s.password != "" {
		r := &http.Request{Header: h}
		r.SetBasicAuth(s.user, s.password)
	}
	return h
}

// canonicalHeader encodes h as sorted "Name: value\n" lines. Errors: a
// name or value with a line break, or a header the websocket handshake
// sets itself.
func canonicalHeader(h http.Header) (string, error) {
	var names []string
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		name := http.CanonicalHeaderKey(strings.TrimSpace(k))
		if name == "" || strings.ContainsAny(name, "\r\n: ") {
			return "", fmt.Errorf("invalid header name %q", k)
		}
		switch name {
		case "Connection", "Upgrade", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions":
			return "", fmt.Errorf("header %s is set by the websocket handshake", name)
		}
		for _, v := range h[k] {
			v = strings.TrimSpace(v)
			if strings.ContainsAny(v, "\r\n") {
				return "", fmt.Errorf("the value of header %s has a line break", name)
			}
			b.WriteString(name + ": " + v + "\n")
		}
	}
	return b.String(), nil
}

// ParseHeader parses a "Name: value" header line, as --cdp-header and
// TABPILOT_CDP_HEADERS give them, into h.
func ParseHeader(h http.Header, line string) error {
	name, val, ok := strings.Cut(line, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return fmt.Errorf("invalid header %q: use 'Name: value'", RedactHeaderLine(line))
	}
	h.Add(name, strings.TrimSpace(val))
	return nil
}

// RedactHeaderLine returns the name part of a header line with its value
// replaced, for error messages.
func RedactHeaderLine(line string) string {
	if name, _, ok := strings.Cut(line, ":"); ok {
		return name + ": …"
	}
	if len(line) > 12 {
		return line[:4] + "…"
	}
	return "…"
}

// RemoteKey returns the registry key of a CDP endpoint: http(s)://host:port
// (discovered through /json/version), or ws(s)://… (dialed as given,
// query string intact, unless it is a bare ws://host:port[/], which is
// discovered like http). o may be nil. Errors: *Error with
// errcode.BadRequest for a malformed URL or header.
func RemoteKey(endpoint string, o *RemoteOptions) (Key, error) {
	if _, _, err := remoteEndpoint(endpoint); err != nil {
		return Key{}, &Error{Code: errcode.BadRequest, Msg: err.Error()}
	}
	k := Key{Kind: Connected, Endpoint: endpoint}
	if o != nil {
		hs, err := canonicalHeader(o.Header)
		if err != nil {
			return Key{}, &Error{Code: errcode.BadRequest, Msg: "CDP header: " + err.Error()}
		}
		k.remote.header, k.remote.timeout = hs, o.Timeout
	}
	return k, nil
}

// remoteEndpoint splits a CDP URL into the http(s) base for /json/version
// (discover true) or the websocket URL to dial as given.
func remoteEndpoint(raw string) (base string, discover bool, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false, fmt.Errorf("invalid CDP URL %q: use http://host:port or ws://host:port/devtools/browser/ID", RedactURL(raw))
	}
	switch u.Scheme {
	case "http", "https":
		return u.Scheme + "://" + u.Host, true, nil
	case "ws", "wss":
		if (u.Path == "" || u.Path == "/") && u.RawQuery == "" {
			scheme := "http"
			if u.Scheme == "wss" {
				scheme = "https"
			}
			return scheme + "://" + u.Host, true, nil
		}
		return raw, false, nil
	}
	return "", false, fmt.Errorf("invalid CDP URL %q: the scheme must be http, https, ws or wss", RedactURL(raw))
}

// RedactURL returns raw with its user info and query values replaced by
// "…" (the names stay), for logs and errors: a pool's token is often in
// the query (?token=T).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?@"); i >= 0 {
			return raw[:i] + "…"
		}
		return raw
	}
	if u.User != nil {
		u.User = url.User("…")
	}
	if u.RawQuery != "" {
		var parts []string
		for p := range strings.SplitSeq(u.RawQuery, "&") {
			name, _, _ := strings.Cut(p, "=")
			parts = append(parts, name+"=…")
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	s := u.String()
	return strings.ReplaceAll(s, "%E2%80%A6", "…")
}

// redactErr returns err's text with each of the secret URLs replaced by
// its redacted form (chromedp's dial error quotes the URL it dialed).
func redactErr(err error, urls ...string) string {
	s := err.Error()
	for _, u := range urls {
		if u == "" {
			continue
		}
		r := RedactURL(u)
		s = strings.ReplaceAll(s, u, r)
		if q := strconv.Quote(u); len(q) > 2 {
			s = strings.ReplaceAll(s, q[1:len(q)-1], r)
		}
	}
	return s
}

// lostHint is the hint of a remote handle whose connection dropped.
const lostHint = "The connection to the remote browser dropped (the pool ended the session, or the network failed): open the tab again to reconnect."

// connectKey attaches to the browser of a connected key: it discovers
// the websocket through /json/version for an http(s) or bare ws endpoint
// (polling up to 5 s, or the key's timeout), else dials the websocket as
// given, with the key's headers, within the key's timeout (10 s by
// default). Closing the handle only disconnects. Errors: *Error with
// errcode.BadRequest (URL) or errcode.AttachFailed.
func connectKey(parent, ctx context.Context, key Key, o *Options) (*Handle, error) {
	endpoint := key.Endpoint
	base, discover, err := remoteEndpoint(endpoint)
	if err != nil {
		return nil, &Error{Code: errcode.BadRequest, Msg: err.Error()}
	}
	header := key.remote.httpHeader()
	timeout := key.remote.timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	wsURL := base
	if discover {
		limit := key.remote.timeout
		if limit <= 0 {
			limit = 5 * time.Second
		}
		v, err := waitVersionHeader(ctx, base, header, limit, 150*time.Millisecond)
		if err != nil {
			return nil, &Error{Code: errcode.AttachFailed, Msg: fmt.Sprintf("attach to %s: %s", RedactURL(endpoint), redactErr(err, endpoint)), Err: err}
		}
		wsURL = v.WSURL
	}
	h, err := attachRemote(parent, ctx, wsURL, header, timeout, o)
	if err != nil {
		msg := redactErr(err, endpoint, wsURL)
		return nil, &Error{Code: errcode.AttachFailed, Msg: fmt.Sprintf("attach to %s: %s", RedactURL(endpoint), msg), Err: errors.New(msg)}
	}
	h.kind, h.key, h.hint = Connected, key, lostHint
	go h.watch(h.lost)
	loggerOf(o).Info("connected", "endpoint", RedactURL(endpoint), "headers", key.remote.headerCount(), "version", h.product)
	return h, nil
}
