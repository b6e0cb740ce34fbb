package egress

import (
	"math/big"
	"net/netip"
	"strings"
	"testing"
)

// FuzzParseHost checks ParseHost against refIPv4, a literal transcription
// of the WHATWG URL standard's IPv4 parser on arbitrary precision numbers,
// and checks that a name is never something netip reads as an address.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{
		"example.com", "127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "127.1", "127.0.0.1.",
		"0x", "0", "00", "09", "0x1g.1", "a.0x10", "1.2.3.04x", "4294967295", "4294967296",
		"1.2.3.4.5", "256.0.0.1", "1..2", ".", "..", "[::1]", "::ffff:127.0.0.1", "[fe80::1%eth0]",
		"0xffffffffffffffffffff", "1.0x1000000", "1.0xffffff", "localhost", "a b", "x.0X7F",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		addr, numeric, err := ParseHost(host)
		_ = CheckURL("http://" + host + "/")
		if err != nil {
			if numeric || addr.IsValid() {
				t.Fatalf("ParseHost(%q) returned an address with an error", host)
			}
			return
		}
		if numeric {
			if !addr.IsValid() {
				t.Fatalf("ParseHost(%q) numeric with an invalid address", host)
			}
			// The canonical form reads back as the same address.
			back, n2, err2 := ParseHost(addr.WithZone("").String())
			if addr.Zone() == "" && (err2 != nil || !n2 || back != addr) {
				t.Fatalf("ParseHost(%q) = %v, but its canonical form reads %v, %v, %v", host, addr, back, n2, err2)
			}
		} else if _, perr := netip.ParseAddr(strings.Trim(host, "[]")); perr == nil {
			t.Fatalf("ParseHost(%q): a name, but netip reads it as an address", host)
		}
		if strings.ContainsAny(host, "[]:") {
			return
		}
		ref, refNumeric, refOK := refIPv4(strings.ToLower(host))
		switch {
		case refNumeric && !refOK:
			t.Fatalf("ParseHost(%q) = %v, %v, nil; the WHATWG parser fails", host, addr, numeric)
		case refNumeric && (!numeric || addr != ref):
			t.Fatalf("ParseHost(%q) = %v, %v; the WHATWG parser gives %v", host, addr, numeric, ref)
		case !refNumeric && numeric:
			t.Fatalf("ParseHost(%q) = %v numeric; the WHATWG parser reads a name", host, addr)
		}
	})
}

// refIPv4 follows https://url.spec.whatwg.org/#concept-ipv4-parser step by
// step: numeric reports whether the host "ends in a number" (so it must be
// an IPv4 address), ok whether it parsed.
func refIPv4(host string) (addr netip.Addr, numeric, ok bool) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last == "" {
		return netip.Addr{}, false, false
	}
	if strings.Trim(last, "0123456789") != "" {
		if _, ok := refNumber(last); !ok {
			return netip.Addr{}, false, false
		}
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, false
	}
	nums := make([]*big.Int, len(parts))
	for i, p := range parts {
		n, ok := refNumber(p)
		if !ok {
			return netip.Addr{}, true, false
		}
		nums[i] = n
	}
	b255 := big.NewInt(255)
	for _, n := range nums[:len(nums)-1] {
		if n.Cmp(b255) > 0 {
			return netip.Addr{}, true, false
		}
	}
	limit := new(big.Int).Exp(big.NewInt(256), big.NewInt(int64(5-len(nums))), nil)
	if nums[len(nums)-1].Cmp(limit) >= 0 {
		return netip.Addr{}, true, false
	}
	v := new(big.Int).Set(nums[len(nums)-1])
	for i, n := range nums[:len(nums)-1] {
		v.Add(v, new(big.Int).Lsh(n, uint(8*(3-i))))
	}
	u := v.Uint64()
	return netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}), true, true
}

// refNumber is the WHATWG IPv4 number parser.
func refNumber(s string) (*big.Int, bool) {
	if s == "" {
		return nil, false
	}
	base := 10
	digits := "0123456789"
	if len(s) >= 2 && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
		s, base, digits = s[2:], 16, "0123456789abcdefABCDEF"
	} else if len(s) >= 2 && s[0] == '0' {
		s, base, digits = s[1:], 8, "01234567"
	}
	if s == "" {
		return new(big.Int), true
	}
	if strings.Trim(s, digits) != "" {
		return nil, false
	}
	n, ok := new(big.Int).SetString(s, base)
	return n, ok
}
