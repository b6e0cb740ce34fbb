package egress

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Policy is the egress policy, which --egress (TABPILOT_EGRESS) selects
// (the README's "Safety" section).
type Policy string

// The policies.
const (
	// Any lets the browser reach anything; the default, for local
	// development.
	Any Policy = "any"
	// PublicOnly sends all browser traffic through the Proxy and refuses
	// non-public destinations and non-web top-level URLs.
	PublicOnly Policy = "public-only"
)

// ParsePolicy reads "any", "public-only" or "" (Any).
// Errors: an unknown value, naming the valid ones.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(strings.ToLower(strings.TrimSpace(s))); p {
	case "", Any:
		return Any, nil
	case PublicOnly:
		return PublicOnly, nil
	}
	return "", fmt.Errorf("egress policy %q: use any or public-only", s)
}

// Guarded reports whether p is PublicOnly.
func (p Policy) Guarded() bool { return p == PublicOnly }

// CheckURL applies CheckURL under p: nil for Any.
func (p Policy) CheckURL(raw string) error {
	if !p.Guarded() {
		return nil
	}
	return CheckURL(raw)
}

// CheckURL is the public-only check of a top-level navigation, done
// before it is sent. It allows http: and https: URLs and about:blank, and
// refuses (*BlockedError):
//   - any other scheme (file:, chrome:, chrome-extension:, devtools:,
//     javascript:, data:, blob:, view-source:, …): ReasonScheme;
//   - URLs a browser and Go may read differently (a backslash, a control
//     character or a space): ReasonInvalid;
//   - a host that ParseHost rejects (after IDNA mapping of a non-ASCII
//     host, which turns fullwidth digits into ASCII): ReasonInvalid;
//   - numeric hosts other than a dotted quad or an IPv6 literal
//     (2130706433, 0x7f.1, 0177.0.0.1, 127.1): ReasonNumericForm;
//   - a literal address that CheckAddr refuses;
//   - localhost and *.localhost: ReasonLocalName.
//
// It does not resolve names nor check ports: the Proxy does both for every
// request (Proxy.CheckURL does them up front for a friendlier error).
func CheckURL(raw string) error {
	_, host, _, err := parseNavURL(raw)
	if err != nil || host == "" {
		return err
	}
	if be := checkHost(raw, host); be != nil {
		return be
	}
	return nil
}

// parseNavURL applies the URL rules of CheckURL but for the host rules,
// and returns the URL's scheme (http or https), host (ASCII, no brackets)
// and port (explicit or the scheme's default); host "" for about:blank.
func parseNavURL(raw string) (scheme, host string, port int, err error) {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return "", "", 0, blocked(raw, "", netip.Addr{}, ReasonInvalid, "a space, control character or backslash in the URL")
		}
	}
	u, perr := url.Parse(raw)
	if perr != nil {
		return "", "", 0, blocked(raw, "", netip.Addr{}, ReasonInvalid, perr.Error())
	}
	switch scheme = strings.ToLower(u.Scheme); scheme {
	case "http", "https":
	case "about":
		if strings.EqualFold(u.Opaque, "blank") && u.RawQuery == "" {
			return "", "", 0, nil
		}
		return "", "", 0, blocked(raw, "", netip.Addr{}, ReasonScheme, "only about:blank")
	case "":
		return "", "", 0, blocked(raw, "", netip.Addr{}, ReasonInvalid, "not an absolute URL")
	default:
		return "", "", 0, blocked(raw, "", netip.Addr{}, ReasonScheme, scheme+":")
	}
	h := u.Hostname()
	if h == "" {
		return "", "", 0, blocked(raw, "", netip.Addr{}, ReasonInvalid, "no host")
	}
	if strings.IndexByte(h, ':') < 0 && !isASCII(h) {
		a, ierr := idna.Lookup.ToASCII(h)
		if ierr != nil {
			return "", "", 0, blocked(raw, h, netip.Addr{}, ReasonInvalid, ierr.Error())
		}
		h = a
	}
	port = defaultPort(scheme)
	if ps := u.Port(); ps != "" {
		n, aerr := strconv.Atoi(ps)
		if aerr != nil || n < 1 || n > 65535 {
			return "", "", 0, blocked(raw, h, netip.Addr{}, ReasonInvalid, "bad port "+ps)
		}
		port = n
	}
	return scheme, h, port, nil
}

// checkHost applies the host rules of CheckURL to an ASCII host.
func checkHost(dest, h string) *BlockedError {
	addr, numeric, perr := ParseHost(h)
	if perr != nil {
		return blocked(dest, h, netip.Addr{}, ReasonInvalid, perr.Error())
	}
	if numeric {
		if addr.Is4() && addr.String() != h {
			return blocked(dest, h, addr, ReasonNumericForm, "")
		}
		if r, bad := addrReason(addr); bad {
			return blocked(dest, h, addr, r, "")
		}
		return nil
	}
	if isLocalName(h) {
		return blocked(dest, h, netip.Addr{}, ReasonLocalName, "")
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
