package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/tabpilot/tabpilot/errcode"
)

// ErrBlocked is matched by errors.Is for every *BlockedError.
var ErrBlocked = errors.New("blocked destination")

// Reason says why a destination is refused. The values are stable; callers
// may branch on them and put them in run details.
type Reason string

// The reasons.
const (
	// Address classes (CheckAddr).
	ReasonLoopback      Reason = "loopback"      // 127.0.0.0/8, ::1
	ReasonPrivate       Reason = "private"       // RFC 1918, RFC 4193 (fc00::/7)
	ReasonLinkLocal     Reason = "link-local"    // 169.254.0.0/16 (cloud metadata), fe80::/10
	ReasonCGNAT         Reason = "cgnat"         // 100.64.0.0/10, RFC 6598
	ReasonMulticast     Reason = "multicast"     // 224.0.0.0/4, ff00::/8
	ReasonUnspecified   Reason = "unspecified"   // 0.0.0.0/8, ::
	ReasonBroadcast     Reason = "broadcast"     // 255.255.255.255
	ReasonDocumentation Reason = "documentation" // TEST-NET-1..3, 2001:db8::/32, 3fff::/20
	ReasonBenchmarking  Reason = "benchmarking"  // 198.18.0.0/15
	ReasonReserved      Reason = "reserved"      // any other not globally routable range
	// Request forms (ParseHost, CheckURL, the proxy).
	ReasonPort        Reason = "port"         // a port outside Options.AllowedPorts
	ReasonScheme      Reason = "scheme"       // file:, chrome:, devtools:, javascript:, data:, …
	ReasonNumericForm Reason = "numeric-form" // 2130706433, 0x7f.1, 0177.0.0.1, 127.1
	ReasonLocalName   Reason = "local-name"   // localhost and *.localhost
	ReasonInvalid     Reason = "invalid"      // an unparsable URL or host

	ReasonBlockedOrigin Reason = "blocked-origin" // an origin --block-origin names
	ReasonNotAllowed    Reason = "not-allowed"    // an origin outside the allow list (--allow-origin)
)

var reasonText = map[Reason]string{
	ReasonLoopback:      "loopback address",
	ReasonPrivate:       "private address (RFC 1918 / RFC 4193)",
	ReasonLinkLocal:     "link-local address (cloud metadata lives here)",
	ReasonCGNAT:         "shared address space (CGNAT, RFC 6598)",
	ReasonMulticast:     "multicast address",
	ReasonUnspecified:   "unspecified address",
	ReasonBroadcast:     "broadcast address",
	ReasonDocumentation: "documentation address, not routable",
	ReasonBenchmarking:  "benchmarking address, not routable",
	ReasonReserved:      "reserved address, not globally routable",
	ReasonPort:          "port not allowed",
	ReasonScheme:        "scheme not allowed",
	ReasonNumericForm:   "numeric host form that resolvers read as an IPv4 address",
	ReasonLocalName:     "local host name",
	ReasonInvalid:       "invalid URL or host",
	ReasonBlockedOrigin: "origin blocked by --block-origin",
	ReasonNotAllowed:    "origin not in the allow list (--allow-origin)",
}

// Text is a short human description of r, e.g. "private address (RFC 1918
// / RFC 4193)".
func (r Reason) Text() string {
	if t, ok := reasonText[r]; ok {
		return t
	}
	return string(r)
}

// BlockedError is a destination the egress policy refuses. Its code is
// errcode.BlockedDestination; it matches ErrBlocked.
type BlockedError struct {
	// Dest is what was asked for: a URL (CheckURL) or host:port (the proxy).
	Dest string
	// Host is the host of Dest, without brackets.
	Host string
	// Addr is the refused address, when the refusal is about an address
	// (a literal or a resolver answer); else the zero Addr.
	Addr netip.Addr
	// Reason is why.
	Reason Reason
	// Detail adds specifics, e.g. the scheme or the port; may be empty.
	Detail string
}

// Error returns e.g. "blocked destination intranet.test:80 (10.0.0.5):
// private address (RFC 1918 / RFC 4193)".
func (e *BlockedError) Error() string {
	s := "blocked destination " + e.Dest
	if e.Host != "" && !strings.Contains(e.Dest, e.Host) {
		s += " → " + e.Host // e.g. the target of a redirect
	}
	if e.Addr.IsValid() && e.Addr.String() != e.Host {
		s += " (" + e.Addr.String() + ")"
	}
	s += ": " + e.Reason.Text()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is reports whether target is ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// ErrorCode returns errcode.BlockedDestination.
func (e *BlockedError) ErrorCode() errcode.Code { return errcode.BlockedDestination }

// ErrorHint returns a hint an agent can act on.
func (e *BlockedError) ErrorHint() string {
	switch e.Reason {
	case ReasonScheme:
		return "Only http, https and about:blank pages may be opened under the public-only egress policy."
	case ReasonPort:
		return "Only the allowed ports (80 and 443 by default) are reachable under the public-only egress policy; --allow-origin http://HOST:PORT allows one more."
	case ReasonBlockedOrigin:
		return "The navigation policy blocks this origin (--block-origin); the tab stays on the page it was on."
	case ReasonNotAllowed:
		return "The navigation policy allows only the origins of --allow-origin (pages and frames) and --allow-subresource-origin (scripts, styles, fonts, fetches); the tab stays on the page it was on."
	}
	return "The public-only egress policy refuses private, loopback and other non-public destinations; use a public address."
}

func blocked(dest, host string, addr netip.Addr, r Reason, detail string) *BlockedError {
	return &BlockedError{Dest: dest, Host: host, Addr: addr, Reason: r, Detail: detail}
}

// HostError is a host that cannot be parsed (ParseHost).
type HostError struct {
	Host string
	Msg  string
}

func (e *HostError) Error() string { return fmt.Sprintf("invalid host %q: %s", e.Host, e.Msg) }

// ResolveError is a name the guard could not resolve (it resolves every
// name itself). Its code is errcode.NavigationFailed: the destination is
// not refused, it does not exist (for the guard's resolver).
type ResolveError struct {
	Host string
	Err  error
}

func (e *ResolveError) Error() string {
	return fmt.Sprintf("egress proxy: resolve %s: %v", e.Host, e.Err)
}

// Unwrap returns the resolver's error.
func (e *ResolveError) Unwrap() error { return e.Err }

// ErrorCode returns errcode.NavigationFailed.
func (e *ResolveError) ErrorCode() errcode.Code { return errcode.NavigationFailed }
