package egress

import (
	"net/netip"
	"strings"
)

// ParseHost reads host (a URL host or the host of a CONNECT authority,
// ASCII, brackets optional around IPv6) the way browsers and resolvers
// do: the WHATWG URL host parser, whose IPv4 forms are those of inet_aton.
//
// When host is an IP address in any form it returns the address and
// numeric true: "[::1]", "::ffff:7f00:1", "127.0.0.1", and the forms
// resolvers read as IPv4 although they are not dotted quads: "2130706433",
// "0x7f.1", "0177.0.0.1", "127.1", "127.0.0.1.". A host whose last label
// is a number ("1.2.3.04x" is a name, "a.0x10" is not) is numeric or
// invalid, never a name. Otherwise host is a name: it returns numeric
// false and the zero Addr.
//
// Errors (*HostError): an empty or over-long host, a character outside
// [A-Za-z0-9._-], an empty or over-long label, an unparsable IPv6 literal,
// or a numeric form out of range (WHATWG "IPv4 parser" failure, e.g.
// "256.0.0.1", "1.2.3.4.5", "0x1.09").
func ParseHost(host string) (addr netip.Addr, numeric bool, err error) {
	if host == "" {
		return netip.Addr{}, false, &HostError{Host: host, Msg: "empty"}
	}
	if len(host) > 255 {
		return netip.Addr{}, false, &HostError{Host: host[:32] + "…", Msg: "longer than 255 bytes"}
	}
	if host[0] == '[' || strings.IndexByte(host, ':') >= 0 {
		inner := host
		if host[0] == '[' {
			if len(host) < 2 || host[len(host)-1] != ']' {
				return netip.Addr{}, false, &HostError{Host: host, Msg: "unterminated IPv6 literal"}
			}
			inner = host[1 : len(host)-1]
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() {
			return netip.Addr{}, false, &HostError{Host: host, Msg: "invalid IPv6 literal"}
		}
		return a, true, nil
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return netip.Addr{}, false, &HostError{Host: host, Msg: "invalid character " + quoteByte(c)}
		}
	}
	h := strings.ToLower(host)
	labels := strings.Split(h, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1] // one trailing dot: the root
	}
	if endsInNumber(labels[len(labels)-1]) {
		a, ok := parseIPv4(labels)
		if !ok {
			return netip.Addr{}, false, &HostError{Host: host, Msg: "out-of-range or malformed numeric IPv4 form"}
		}
		return a, true, nil
	}
	for _, l := range labels {
		if l == "" {
			return netip.Addr{}, false, &HostError{Host: host, Msg: "empty label"}
		}
		if len(l) > 63 {
			return netip.Addr{}, false, &HostError{Host: host, Msg: "label longer than 63 bytes"}
		}
	}
	return netip.Addr{}, false, nil
}

func quoteByte(c byte) string {
	const hex = "0123456789abcdef"
	if c >= 0x21 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return "0x" + string([]byte{hex[c>>4], hex[c&15]})
}

// endsInNumber is the WHATWG "ends in a number checker" on the last label
// (already lower case): all digits, or 0x followed by hex digits.
func endsInNumber(last string) bool {
	if last == "" {
		return false
	}
	if allIn(last, 10) {
		return true
	}
	return strings.HasPrefix(last, "0x") && allIn(last[2:], 16)
}

func allIn(s string, radix uint64) bool {
	for i := 0; i < len(s); i++ {
		if digit(s[i]) >= radix {
			return false
		}
	}
	return true
}

func digit(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10
	}
	return 99
}

// parseIPv4 is the WHATWG IPv4 parser (inet_aton): one to four parts, each
// decimal, octal (leading 0) or hex (leading 0x); every part but the last
// is one byte, the last fills the remaining bytes.
func parseIPv4(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	const over = 1 << 33
	var nums [4]uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if n > over {
			n = over
		}
		nums[i] = n
	}
	last := len(parts) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i := 0; i < last; i++ {
		v += nums[i] << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number is the WHATWG "IPv4 number parser". Values past 2^33
// saturate (they are out of range anyway).
func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && p[1] == 'x':
		radix, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		radix, p = 8, p[1:]
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		d := digit(p[i])
		if d >= radix {
			return 0, false
		}
		if v < 1<<34 {
			v = v*radix + d
		}
	}
	return v, true
}

// isLocalName reports whether a name is localhost or under .localhost,
// which Chromium and many resolvers answer with loopback without asking
// DNS (RFC 6761).
func isLocalName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "localhost.localdomain"
}

type rangeReason struct {
	p netip.Prefix
	r Reason
}

func mustPrefixes(rs []struct {
	s string
	r Reason
}) []rangeReason {
	out := make([]rangeReason, len(rs))
	for i, x := range rs {
		out[i] = rangeReason{netip.MustParsePrefix(x.s), x.r}
	}
	return out
}

// v4Refused are the IPv4 ranges of the IANA IPv4 Special-Purpose Address
// Registry that are not globally reachable, plus multicast and the
// reserved 240/4. The globally reachable special ranges (AS112, AMT) are
// not listed. Checked in order: the first match wins.
var v4Refused = mustPrefixes([]struct {
	s string
	r Reason
}{
	{"0.0.0.0/8", ReasonUnspecified}, // "this network" (RFC 791)
	{"10.0.0.0/8", ReasonPrivate},
	{"100.64.0.0/10", ReasonCGNAT},
	{"127.0.0.0/8", ReasonLoopback},
	{"169.254.0.0/16", ReasonLinkLocal},
	{"172.16.0.0/12", ReasonPrivate},
	{"192.0.0.0/24", ReasonReserved}, // IETF protocol assignments
	{"192.0.2.0/24", ReasonDocumentation},
	{"192.88.99.0/24", ReasonReserved}, // deprecated 6to4 relay anycast
	{"192.168.0.0/16", ReasonPrivate},
	{"198.18.0.0/15", ReasonBenchmarking},
	{"198.51.100.0/24", ReasonDocumentation},
	{"203.0.113.0/24", ReasonDocumentation},
	{"224.0.0.0/4", ReasonMulticast},
	{"255.255.255.255/32", ReasonBroadcast},
	{"240.0.0.0/4", ReasonReserved},
})

// v6Refused are the IPv6 ranges inside 2000::/3 that are not globally
// reachable (IANA IPv6 Special-Purpose Address Registry). Everything
// outside 2000::/3 is refused too, with the reasons of v6Outside.
var v6Refused = mustPrefixes([]struct {
	s string
	r Reason
}{
	{"2001:db8::/32", ReasonDocumentation},
	{"2001::/23", ReasonReserved}, // IETF protocol assignments: Teredo, ORCHID, benchmarking
	{"3fff::/20", ReasonDocumentation},
	{"5f00::/16", ReasonReserved}, // SRv6 SIDs
})

var v6Outside = mustPrefixes([]struct {
	s string
	r Reason
}{
	{"::/128", ReasonUnspecified},
	{"::1/128", ReasonLoopback},
	{"fc00::/7", ReasonPrivate}, // unique local, RFC 4193
	{"fe80::/10", ReasonLinkLocal},
	{"ff00::/8", ReasonMulticast},
})

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// CheckAddr returns nil when a is a public, globally routable unicast
// address, else a *BlockedError (Reason loopback, private, link-local,
// cgnat, multicast, unspecified, broadcast, documentation, benchmarking or
// reserved). IPv4-mapped IPv6 (::ffff:a.b.c.d) is checked as IPv4;
// NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses are refused when the
// IPv4 address they carry is. A zone is ignored. The ranges are those of
// the IANA special-purpose registries (RFC 6890 and updates).
func CheckAddr(a netip.Addr) error {
	if r, ok := addrReason(a); ok {
		return blocked(a.String(), a.String(), a, r, "")
	}
	return nil
}

func addrReason(a netip.Addr) (Reason, bool) {
	if !a.IsValid() {
		return ReasonInvalid, true
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		for _, x := range v4Refused {
			if x.p.Contains(a) {
				return x.r, true
			}
		}
		return "", false
	}
	if nat64.Contains(a) {
		return addrReason(embedded4(a, 12))
	}
	if sixToFour.Contains(a) {
		return addrReason(embedded4(a, 2))
	}
	if globalUnicast6.Contains(a) {
		for _, x := range v6Refused {
			if x.p.Contains(a) {
				return x.r, true
			}
		}
		return "", false
	}
	for _, x := range v6Outside {
		if x.p.Contains(a) {
			return x.r, true
		}
	}
	return ReasonReserved, true
}

// embedded4 returns the IPv4 address at byte offset off of an IPv6 address.
func embedded4(a netip.Addr, off int) netip.Addr {
	b := a.As16()
	return netip.AddrFrom4([4]byte{b[off], b[off+1], b[off+2], b[off+3]})
}
