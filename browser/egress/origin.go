package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// OriginPattern is one origin pattern of --allow-origin, --block-origin
// or --allow-subresource-origin: [scheme://]host[:port].
//
//   - scheme: http or https (ws and wss are read as http and https: a
//     WebSocket's handshake is an HTTP request of that scheme). Without
//     one, the pattern matches both.
//   - host: a name (IDNA-mapped to ASCII, compared without case), "*." and
//     a name for its subdomains (not the name itself), an IPv4 address or
//     a bracketed IPv6 address.
//   - port: a number, or "*" for any. Without one, the default port of
//     the scheme: 80 for http, 443 for https.
//
// Examples: https://example.com, *.example.com, http://127.0.0.1:3000,
// http://localhost:*, [::1]:8080.
type OriginPattern struct {
	// Scheme is "http", "https" or "" (both).
	Scheme string
	// Host is the ASCII host, lower case, without brackets; for a
	// wildcard pattern, the suffix after "*.".
	Host string
	// Wildcard makes Host match its subdomains only.
	Wildcard bool
	// Port is the port; 0 the scheme's default; -1 any.
	Port int
	// Addr is Host as an address when it is a literal.
	Addr netip.Addr
	raw  string
}

// ParseOriginPattern reads a pattern as OriginPattern describes it.
// Errors: a path, query or credentials in it, another scheme, a bad host
// or port; the message names the pattern.
func ParseOriginPattern(s string) (OriginPattern, error) {
	raw := strings.TrimSpace(s)
	bad := func(why string) (OriginPattern, error) {
		return OriginPattern{}, fmt.Errorf("origin pattern %q: %s (want [scheme://]host[:port], e.g. https://*.example.com or http://127.0.0.1:3000)", s, why)
	}
	if raw == "" {
		return bad("empty")
	}
	p := OriginPattern{raw: raw}
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		switch sc := strings.ToLower(rest[:i]); sc {
		case "http", "ws":
			p.Scheme = "http"
		case "https", "wss":
			p.Scheme = "https"
		default:
			return bad("scheme " + sc + ": only http, https, ws and wss")
		}
		rest = rest[i+3:]
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.ContainsAny(rest, "/?#@\\ ") {
		return bad("only an origin: no path, query, fragment or credentials")
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return bad("an unclosed [")
		}
		host, port = rest[1:end], strings.TrimPrefix(rest[end+1:], ":")
		if rest[end+1:] != "" && !strings.HasPrefix(rest[end+1:], ":") {
			return bad("text after ]")
		}
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		host, port = rest[:i], rest[i+1:]
	}
	switch {
	case port == "*":
		p.Port = -1
	case port != "":
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return bad("bad port " + port)
		}
		p.Port = n
	case strings.HasSuffix(rest, ":"):
		return bad("an empty port")
	}
	if strings.HasPrefix(host, "*.") {
		p.Wildcard = true
		host = host[2:]
	}
	if host == "" || strings.Contains(host, "*") {
		return bad("a host is needed; * only as a leading \"*.\"")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if p.Wildcard {
			return bad("*. before an address")
		}
		p.Addr = a.Unmap()
		p.Host = p.Addr.String()
		return p, nil
	}
	if !isASCII(host) {
		a, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return bad(err.Error())
		}
		host = a
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if _, numeric, err := ParseHost(host); err != nil || numeric {
		return bad("an address must be a dotted quad or a bracketed IPv6 address")
	}
	p.Host = host
	return p, nil
}

// String returns the pattern as it was given.
func (p OriginPattern) String() string { return p.raw }

// Match reports whether the origin scheme://host:port (host ASCII
// without brackets, port explicit) matches. scheme is "http", "https" or
// "" for a CONNECT tunnel, which carries either (https, or a ws:
// WebSocket): then the pattern's scheme is not compared, and a pattern
// without a port matches the default port of its scheme (80 or 443 for a
// pattern without one).
func (p OriginPattern) Match(scheme, host string, port int) bool {
	if scheme != "" && p.Scheme != "" && p.Scheme != scheme {
		return false
	}
	switch {
	case p.Port == -1:
	case p.Port == 0:
		s := p.Scheme
		if s == "" {
			s = scheme
		}
		if s == "" {
			if port != 80 && port != 443 {
				return false
			}
		} else if port != defaultPort(s) {
			return false
		}
	case p.Port != port:
		return false
	}
	host = normHost(host)
	if p.Addr.IsValid() {
		a, err := netip.ParseAddr(host)
		return err == nil && a.Unmap() == p.Addr
	}
	if p.Wildcard {
		return strings.HasSuffix(host, "."+p.Host)
	}
	return host == p.Host
}

// allowsLoopback reports whether the pattern names a host that is
// loopback by definition (localhost and *.localhost, RFC 6761), whose
// answers are then loopback addresses the user allowed.
func (p OriginPattern) allowsLoopback() bool { return !p.Addr.IsValid() && isLocalName(p.Host) }

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// Rules are the origin rules of a Proxy, applied before the address rules
// of its Policy (the README's "Navigation policy" section):
//
//  1. an origin Block matches is refused (ReasonBlockedOrigin);
//  2. an origin Allow matches (or, for a subresource, AllowSubresource) is
//     allowed on any port, and its host may be a local name; under
//     PublicOnly its addresses must still be public, unless an allowed
//     pattern names the address itself (http://127.0.0.1:3000) or the
//     host is localhost (loopback by definition);
//  3. with an allow list given (Allow or AllowSubresource not empty),
//     any other origin is refused (ReasonNotAllowed);
//  4. else the Policy decides: PublicOnly's address and port rules, or
//     Any.
//
// The proxy cannot tell a page from a subresource, so it applies Allow and
// AllowSubresource alike; the tab refuses documents (top-level pages and
// frames) of subresource-only origins before they are requested (see
// Proxy.CheckURL).
type Rules struct {
	Allow            []OriginPattern
	AllowSubresource []OriginPattern
	Block            []OriginPattern
}

// ParseRules parses the three lists of patterns (ParseOriginPattern).
// Errors: the first bad pattern, naming its flag.
func ParseRules(allow, allowSub, block []string) (Rules, error) {
	var r Rules
	for _, l := range []struct {
		flag string
		in   []string
		out  *[]OriginPattern
	}{{"--allow-origin", allow, &r.Allow}, {"--allow-subresource-origin", allowSub, &r.AllowSubresource}, {"--block-origin", block, &r.Block}} {
		for _, s := range l.in {
			// An empty pattern is refused (ParseOriginPattern), not
			// skipped: from an unset shell variable it would leave no
			// rule at all.
			p, err := ParseOriginPattern(s)
			if err != nil {
				return Rules{}, fmt.Errorf("%s: %w", l.flag, err)
			}
			*l.out = append(*l.out, p)
		}
	}
	return r, nil
}

// Empty reports whether there are no rules.
func (r Rules) Empty() bool {
	return len(r.Allow) == 0 && len(r.AllowSubresource) == 0 && len(r.Block) == 0
}

// HasAllowList reports whether an allow list was given, which refuses
// every origin it does not name.
func (r Rules) HasAllowList() bool { return len(r.Allow)+len(r.AllowSubresource) > 0 }

// verdict is what the origin rules say of an origin.
type verdict int

const (
	undecided verdict = iota // no rule names it: the policy decides
	allowed                  // an allow pattern names it
	refused                  // blocked, or outside the allow list
)

// decide applies the origin rules to scheme://host:port; document
// restricts the allow list to Allow (a page or a frame). It returns the
// verdict, the matching allow pattern, and for refused the error.
func (r Rules) decide(dest, scheme, host string, port int, document bool) (verdict, *OriginPattern, *BlockedError) {
	for i := range r.Block {
		if r.Block[i].Match(scheme, host, port) {
			return refused, nil, blocked(dest, host, netip.Addr{}, ReasonBlockedOrigin, r.Block[i].String())
		}
	}
	for i := range r.Allow {
		if r.Allow[i].Match(scheme, host, port) {
			return allowed, &r.Allow[i], nil
		}
	}
	for i := range r.AllowSubresource {
		if r.AllowSubresource[i].Match(scheme, host, port) {
			if document {
				return refused, nil, blocked(dest, host, netip.Addr{}, ReasonNotAllowed, "allowed for subresources only (--allow-subresource-origin), not as a page or frame")
			}
			return allowed, &r.AllowSubresource[i], nil
		}
	}
	if r.HasAllowList() {
		return refused, nil, blocked(dest, host, netip.Addr{}, ReasonNotAllowed, "")
	}
	return undecided, nil, nil
}

// addrAllowed reports whether a non-public address a that an allowed
// origin's host resolved to is allowed too: by a pattern naming the
// address itself, or by the matched pattern's host being localhost.
func (r Rules) addrAllowed(m *OriginPattern, scheme string, a netip.Addr, port int) bool {
	if m != nil && m.allowsLoopback() && a.Unmap().IsLoopback() {
		return true
	}
	for _, l := range [][]OriginPattern{r.Allow, r.AllowSubresource} {
		for i := range l {
			if l[i].Addr.IsValid() && l[i].Match(scheme, a.Unmap().String(), port) {
				return true
			}
		}
	}
	return false
}
