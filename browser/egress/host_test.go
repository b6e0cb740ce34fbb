package egress

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/tabpilot/tabpilot/errcode"
)

func TestParseHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		addr    string // "" for a name
		wantErr bool
	}{
		// Names.
		{in: "example.com"}, {in: "EXAMPLE.com."}, {in: "a-b_c.test"}, {in: "1.2.3.04x"},
		{in: "0x7f.1.foo"}, {in: "xn--mnchen-3ya.de"}, {in: "localhost"},
		// Dotted quads and inet_aton forms.
		{in: "127.0.0.1", addr: "127.0.0.1"},
		{in: "127.0.0.1.", addr: "127.0.0.1"},
		{in: "2130706433", addr: "127.0.0.1"},
		{in: "0x7f.1", addr: "127.0.0.1"},
		{in: "0X7F.1", addr: "127.0.0.1"},
		{in: "0177.0.0.1", addr: "127.0.0.1"},
		{in: "0177.1", addr: "127.0.0.1"},
		{in: "127.1", addr: "127.0.0.1"},
		{in: "127.0.1", addr: "127.0.0.1"},
		{in: "0x7f000001", addr: "127.0.0.1"},
		{in: "017700000001", addr: "127.0.0.1"},
		{in: "0xa9.0xfe.0xa9.0xfe", addr: "169.254.169.254"},
		{in: "169.254.43518", addr: "169.254.169.254"},
		{in: "0", addr: "0.0.0.0"},
		{in: "0x", addr: "0.0.0.0"},
		{in: "00", addr: "0.0.0.0"},
		{in: "10.0x0.00.1", addr: "10.0.0.1"},
		{in: "4294967295", addr: "255.255.255.255"},
		{in: "1.2.65535", addr: "1.2.255.255"},
		{in: "1.16777215", addr: "1.255.255.255"},
		// IPv6 literals.
		{in: "[::1]", addr: "::1"},
		{in: "::1", addr: "::1"},
		{in: "[::ffff:127.0.0.1]", addr: "::ffff:127.0.0.1"},
		{in: "[fe80::1%eth0]", addr: "fe80::1%eth0"},
		// Errors.
		{in: "", wantErr: true},
		{in: "256.0.0.1", wantErr: true},
		{in: "1.2.3.4.5", wantErr: true},
		{in: "4294967296", wantErr: true},
		{in: "1.2.65536", wantErr: true},
		{in: "09.1.1.1", wantErr: true},
		{in: "0x1g.1", wantErr: true}, // ends in a number, so 0x1g must be one
		{in: "a.0x10", wantErr: true},
		{in: "1..2", wantErr: true},
		{in: "a..b", wantErr: true},
		{in: ".", wantErr: true},
		{in: "exa mple.com", wantErr: true},
		{in: "exa%2fmple.com", wantErr: true},
		{in: "ex\x00.com", wantErr: true},
		{in: "münchen.de", wantErr: true},
		{in: "[::1", wantErr: true},
		{in: "[127.0.0.1]", wantErr: true},
		{in: "1.2.3.4:80", wantErr: true},
		{in: "99999999999999999999999", wantErr: true},
	}
	for _, c := range cases {
		a, numeric, err := ParseHost(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("ParseHost(%q) err = %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if err != nil {
			var he *HostError
			if !errors.As(err, &he) {
				t.Errorf("ParseHost(%q) err %T, want *HostError", c.in, err)
			}
			continue
		}
		if numeric != (c.addr != "") {
			t.Errorf("ParseHost(%q) numeric = %v, want %v", c.in, numeric, c.addr != "")
			continue
		}
		if c.addr != "" && a != netip.MustParseAddr(c.addr) {
			t.Errorf("ParseHost(%q) = %v, want %v", c.in, a, c.addr)
		}
	}
}

// addrCases are one or more addresses per class, boundaries included.
var addrCases = []struct {
	addr   string
	reason Reason // "" for public
}{
	// Public.
	{"8.8.8.8", ""}, {"1.1.1.1", ""}, {"93.184.216.34", ""},
	{"9.255.255.255", ""}, {"11.0.0.0", ""}, {"100.63.255.255", ""}, {"100.128.0.0", ""},
	{"126.255.255.255", ""}, {"128.0.0.0", ""}, {"169.253.255.255", ""}, {"169.255.0.0", ""},
	{"172.15.255.255", ""}, {"172.32.0.0", ""}, {"192.167.255.255", ""}, {"192.169.0.0", ""},
	{"192.31.196.1", ""}, {"192.175.48.1", ""}, {"198.17.255.255", ""}, {"198.20.0.0", ""},
	{"223.255.255.255", ""},
	{"2606:4700:4700::1111", ""}, {"2001:4860:4860::8888", ""}, {"2a00:1450::1", ""},
	{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
	{"2002:808:808::1", ""},  // 6to4 of 8.8.8.8
	// Loopback.
	{"127.0.0.1", ReasonLoopback}, {"127.255.255.254", ReasonLoopback}, {"::1", ReasonLoopback},
	{"::ffff:127.0.0.1", ReasonLoopback}, {"::ffff:7f00:1", ReasonLoopback},
	// Private: RFC 1918 and RFC 4193.
	{"10.0.0.1", ReasonPrivate}, {"10.255.255.255", ReasonPrivate}, {"172.16.0.0", ReasonPrivate},
	{"172.31.255.255", ReasonPrivate}, {"192.168.1.1", ReasonPrivate}, {"::ffff:10.1.2.3", ReasonPrivate},
	{"fc00::1", ReasonPrivate}, {"fd12:3456:789a::1", ReasonPrivate}, {"fd00:ec2::254", ReasonPrivate},
	{"64:ff9b::a00:1", ReasonPrivate},   // NAT64 of 10.0.0.1
	{"2002:c0a8:101::1", ReasonPrivate}, // 6to4 of 192.168.1.1
	// Link-local, cloud metadata included.
	{"169.254.169.254", ReasonLinkLocal}, {"169.254.0.0", ReasonLinkLocal}, {"::ffff:169.254.169.254", ReasonLinkLocal},
	{"fe80::1", ReasonLinkLocal}, {"febf::1", ReasonLinkLocal}, {"fe80::1%eth0", ReasonLinkLocal},
	// CGNAT.
	{"100.64.0.0", ReasonCGNAT}, {"100.100.100.200", ReasonCGNAT}, {"100.127.255.255", ReasonCGNAT},
	// Multicast.
	{"224.0.0.1", ReasonMulticast}, {"239.255.255.250", ReasonMulticast}, {"ff02::1", ReasonMulticast}, {"ff05::c", ReasonMulticast},
	// Unspecified.
	{"0.0.0.0", ReasonUnspecified}, {"0.1.2.3", ReasonUnspecified}, {"::", ReasonUnspecified}, {"::ffff:0.0.0.0", ReasonUnspecified},
	// Broadcast, documentation, benchmarking, reserved.
	{"255.255.255.255", ReasonBroadcast},
	{"192.0.2.1", ReasonDocumentation}, {"198.51.100.7", ReasonDocumentation}, {"203.0.113.9", ReasonDocumentation},
	{"2001:db8::1", ReasonDocumentation}, {"3fff::1", ReasonDocumentation},
	{"198.18.0.1", ReasonBenchmarking}, {"198.19.255.255", ReasonBenchmarking},
	{"240.0.0.1", ReasonReserved}, {"255.255.255.254", ReasonReserved}, {"192.0.0.8", ReasonReserved}, {"192.88.99.1", ReasonReserved},
	{"2001::1", ReasonReserved},           // Teredo
	{"2001:2::1", ReasonReserved},         // benchmarking
	{"100::1", ReasonReserved},            // discard-only
	{"::7f00:1", ReasonReserved},          // IPv4-compatible (deprecated)
	{"fec0::1", ReasonReserved},           // site-local (deprecated)
	{"64:ff9b:1::1", ReasonReserved},      // local-use NAT64
	{"4000::1", ReasonReserved},           // unassigned, outside 2000::/3
	{"5f00::1", ReasonReserved},           // SRv6 SIDs
	{"64:ff9b::7f00:1", ReasonLoopback},   // NAT64 of 127.0.0.1
	{"2002:a9fe:a9fe::", ReasonLinkLocal}, // 6to4 of 169.254.169.254
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	for _, c := range addrCases {
		err := CheckAddr(netip.MustParseAddr(c.addr))
		if c.reason == "" {
			if err != nil {
				t.Errorf("CheckAddr(%s) = %v, want nil", c.addr, err)
			}
			continue
		}
		var be *BlockedError
		if !errors.As(err, &be) || be.Reason != c.reason {
			t.Errorf("CheckAddr(%s) = %v, want reason %s", c.addr, err, c.reason)
			continue
		}
		if !errors.Is(err, ErrBlocked) || be.ErrorCode() != errcode.BlockedDestination || be.ErrorHint() == "" {
			t.Errorf("CheckAddr(%s): not a blocked_destination error with a hint: %#v", c.addr, err)
		}
	}
	if err := CheckAddr(netip.Addr{}); err == nil {
		t.Error("CheckAddr(zero Addr) = nil")
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url    string
		reason Reason // "" for allowed
	}{
		{"https://example.com/", ""},
		{"http://example.com:8080/path?q=1#f", ""},
		{"HTTPS://EXAMPLE.COM/", ""},
		{"http://93.184.216.34/", ""},
		{"http://[2606:4700:4700::1111]/", ""},
		{"https://münchen.de/", ""},
		{"about:blank", ""},
		{"ABOUT:BLANK", ""},
		{"file:///etc/passwd", ReasonScheme},
		{"FILE:///etc/passwd", ReasonScheme},
		{"chrome://settings", ReasonScheme},
		{"chrome-extension://abc/x.html", ReasonScheme},
		{"devtools://devtools/bundled/inspector.html", ReasonScheme},
		{"javascript:alert(1)", ReasonScheme},
		{"data:text/html,<h1>x</h1>", ReasonScheme},
		{"blob:https://example.com/uuid", ReasonScheme},
		{"view-source:http://example.com/", ReasonScheme},
		{"about:config", ReasonScheme},
		{"ws://example.com/", ReasonScheme},
		{"http://127.0.0.1/", ReasonLoopback},
		{"http://127.0.0.1:9222/json/version", ReasonLoopback},
		{"http://[::1]:8080/", ReasonLoopback},
		{"http://[::ffff:127.0.0.1]/", ReasonLoopback},
		{"http://10.0.0.1/", ReasonPrivate},
		{"http://user:pw@192.168.0.1/", ReasonPrivate},
		{"http://169.254.169.254/latest/meta-data/", ReasonLinkLocal},
		{"http://[fe80::1%25eth0]/", ReasonLinkLocal},
		{"http://100.100.100.200/", ReasonCGNAT},
		{"http://0.0.0.0:8080/", ReasonUnspecified},
		{"http://2130706433/", ReasonNumericForm},
		{"http://0x7f.1/", ReasonNumericForm},
		{"http://0177.0.0.1/", ReasonNumericForm},
		{"http://127.1/", ReasonNumericForm},
		{"http://127.0.0.1./", ReasonNumericForm},
		{"http://1572395042/", ReasonNumericForm},     // 93.184.216.34, still obfuscated
		{"http://%31%32%37.0.0.1/", ReasonInvalid},    // Go refuses ASCII escapes in a host
		{"http://127%E3%80%820.0.1/", ReasonLoopback}, // U+3002 ideographic full stop
		{"http://１２７．０．０．１/", ReasonLoopback},         // fullwidth: Chromium's IDNA maps it
		{"http://localhost:3000/", ReasonLocalName},
		{"http://LOCALHOST./", ReasonLocalName},
		{"http://app.localhost/", ReasonLocalName},
		{"http://example.com\\@127.0.0.1/", ReasonInvalid},
		{"http://exa mple.com/", ReasonInvalid},
		{"http:///path", ReasonInvalid},
		{"example.com", ReasonInvalid},
		{"http://256.1.1.1/", ReasonInvalid},
		{"http://a..b/", ReasonInvalid},
		{"http://[::1/", ReasonInvalid},
	}
	for _, c := range cases {
		err := CheckURL(c.url)
		if c.reason == "" {
			if err != nil {
				t.Errorf("CheckURL(%q) = %v, want nil", c.url, err)
			}
			continue
		}
		var be *BlockedError
		if !errors.As(err, &be) || be.Reason != c.reason {
			t.Errorf("CheckURL(%q) = %v, want reason %s", c.url, err, c.reason)
			continue
		}
		if be.Dest != c.url {
			t.Errorf("CheckURL(%q): Dest = %q", c.url, be.Dest)
		}
	}
	if err := Any.CheckURL("file:///etc/passwd"); err != nil {
		t.Errorf("Any.CheckURL(file:) = %v, want nil", err)
	}
	if err := PublicOnly.CheckURL("file:///etc/passwd"); !errors.Is(err, ErrBlocked) {
		t.Errorf("PublicOnly.CheckURL(file:) = %v, want blocked", err)
	}
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Policy{"": Any, "any": Any, "ANY": Any, " public-only ": PublicOnly} {
		if p, err := ParsePolicy(in); err != nil || p != want {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", in, p, err, want)
		}
	}
	if _, err := ParsePolicy("private"); err == nil {
		t.Error("ParsePolicy(private) succeeded")
	}
}

func TestBlockedErrorText(t *testing.T) {
	t.Parallel()
	be := blocked("intranet.test:80", "intranet.test", netip.MustParseAddr("10.0.0.5"), ReasonPrivate, "")
	if got, want := be.Error(), "blocked destination intranet.test:80 (10.0.0.5): private address (RFC 1918 / RFC 4193)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := CheckAddr(netip.MustParseAddr("127.0.0.1")).Error(), "blocked destination 127.0.0.1: loopback address"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
