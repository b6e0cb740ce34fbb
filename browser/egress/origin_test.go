package egress

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/errcode"
)

func TestParseOriginPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want OriginPattern
	}{
		{"https://example.com", OriginPattern{Scheme: "https", Host: "example.com"}},
		{"example.com", OriginPattern{Host: "example.com"}},
		{"HTTP://Example.COM.:8080/", OriginPattern{Scheme: "http", Host: "example.com", Port: 8080}},
		{"wss://*.example.com:*", OriginPattern{Scheme: "https", Host: "example.com", Wildcard: true, Port: -1}},
		{"http://127.0.0.1:3000", OriginPattern{Scheme: "http", Host: "127.0.0.1", Port: 3000, Addr: netip.MustParseAddr("127.0.0.1")}},
		{"[::1]:8080", OriginPattern{Host: "::1", Port: 8080, Addr: netip.MustParseAddr("::1")}},
		{"bücher.example", OriginPattern{Host: "xn--bcher-kva.example"}},
	} {
		got, err := ParseOriginPattern(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		got.raw = ""
		if got != c.want {
			t.Errorf("%q = %+v, want %+v", c.in, got, c.want)
		}
	}
	for _, in := range []string{"", "ftp://x.com", "https://x.com/path", "https://u@x.com", "x.com:0", "x.com:99999", "x.com:",
		"*.127.0.0.1", "*", "a*.x.com", "2130706433", "0x7f.1", "[::1", "https://x.com?q"} {
		if p, err := ParseOriginPattern(in); err == nil {
			t.Errorf("%q: parsed as %+v, want an error", in, p)
		} else if !strings.Contains(err.Error(), "origin pattern") {
			t.Errorf("%q: error %v does not say what it is", in, err)
		}
	}
}

func TestOriginPatternMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, scheme, host string
		port                  int
		want                  bool
	}{
		{"https://example.com", "https", "example.com", 443, true},
		{"https://example.com", "http", "example.com", 80, false},
		{"https://example.com", "https", "example.com", 8443, false},
		{"https://example.com", "", "example.com", 443, true}, // a CONNECT tunnel
		{"example.com", "http", "example.com", 80, true},
		{"example.com", "https", "EXAMPLE.com", 443, true},
		{"example.com", "", "example.com", 8080, false},
		{"*.example.com", "https", "a.b.example.com", 443, true},
		{"*.example.com", "https", "example.com", 443, false},
		{"*.example.com", "https", "badexample.com", 443, false},
		{"http://127.0.0.1:3000", "http", "127.0.0.1", 3000, true},
		{"http://127.0.0.1:3000", "", "127.0.0.1", 3000, true}, // ws:// through CONNECT
		{"http://127.0.0.1:3000", "http", "127.0.0.1", 3001, false},
		{"http://localhost:*", "http", "localhost", 5173, true},
		{"[::1]:8080", "http", "::1", 8080, true},
	} {
		p, err := ParseOriginPattern(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(c.scheme, c.host, c.port); got != c.want {
			t.Errorf("%s matches %s://%s:%d = %v, want %v", c.pattern, c.scheme, c.host, c.port, got, c.want)
		}
	}
}

// TestOriginRules: the rules in their order, through the proxy (requests
// and CONNECT tunnels) and its document check.
func TestOriginRules(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules(
		[]string{"http://public.test", "http://127.0.0.1:3000", "http://intranet.test", "http://localhost:*", "https://*.example.test", "http://lab.test", "http://10.0.0.6"},
		[]string{"cdn.public.test", "http://10.0.0.9"},
		[]string{"http://blocked.example.test", "https://blocked.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, func(h *harness, o *Options) {
		h.names["cdn.public.test"] = []netip.Addr{publicIP}
		h.names["other.public.test"] = []netip.Addr{publicIP}
		h.names["blocked.example.test"] = []netip.Addr{publicIP}
		h.names["localhost"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		h.names["dev.public.test"] = []netip.Addr{netip.MustParseAddr("192.168.1.7")}
		h.names["lab.test"] = []netip.Addr{netip.MustParseAddr("10.0.0.6")}
		h.names["a.example.test"] = []netip.Addr{publicIP}
		o.Rules = rules
		o.AllowedPorts = []int{80, 443, 3000, 8080}
	})
	for _, c := range []struct {
		url    string
		code   int
		reason Reason
	}{
		{"http://public.test/", 200, ""},
		{"http://127.0.0.1:3000/", 200, ""},  // a loopback origin the user named
		{"http://localhost:5173/", 200, ""},  // localhost is loopback by definition
		{"http://cdn.public.test/", 200, ""}, // a subresource origin, through the proxy
		{"http://127.0.0.1:8080/", 403, ReasonNotAllowed},
		{"http://other.public.test/", 403, ReasonNotAllowed}, // public, but outside the allow list
		{"http://intranet.test/", 403, ReasonPrivate},        // allowed name, private address: the address is checked
		{"http://blocked.example.test/", 403, ReasonBlockedOrigin},
	} {
		code, _, _ := h.get(c.url)
		if code != c.code {
			t.Errorf("GET %s: %d, want %d", c.url, code, c.code)
			continue
		}
		if c.reason != "" {
			host := strings.Split(strings.TrimPrefix(c.url, "http://"), ":")[0]
			host = strings.TrimSuffix(host, "/")
			h.assertRefusal(host, c.reason)
		}
	}
	if _, _, resp := h.connect("a.example.test:443"); resp.StatusCode != http.StatusOK {
		t.Errorf("CONNECT to an allowed wildcard origin: %s", resp.Status)
	}
	if _, _, resp := h.connect("blocked.example.test:443"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT to a blocked origin: %s", resp.Status)
	}
	h.assertNotDialed("192.168.1.7", "10.0.0.5")

	// Documents: a subresource-only origin is refused as a page; the
	// allowed ones pass, the address of each resolved now.
	ctx := context.Background()
	for _, c := range []struct {
		url    string
		reason Reason
	}{
		{"http://public.test/page", ""},
		{"http://127.0.0.1:3000/", ""},
		{"about:blank", ""},
		{"http://cdn.public.test/", ReasonNotAllowed},
		{"http://10.0.0.9/", ReasonNotAllowed},
		{"http://lab.test/", ""},
		{"http://dev.public.test/", ReasonNotAllowed},
		{"http://intranet.test/", ReasonPrivate},
		{"file:///etc/passwd", ReasonScheme},
		{"data:text/html,x", ReasonScheme},
	} {
		err := h.p.CheckURL(ctx, c.url)
		var be *BlockedError
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("CheckURL %s: %v, want nil", c.url, err)
		case c.reason != "" && (!errors.As(err, &be) || be.Reason != c.reason):
			t.Errorf("CheckURL %s: %v, want %s", c.url, err, c.reason)
		case c.reason == ReasonNotAllowed && c.url == "http://cdn.public.test/" && !strings.Contains(err.Error(), "subresources only"):
			t.Errorf("CheckURL %s: %v does not say the origin is for subresources only", c.url, err)
		}
	}
}

// TestAddressBeforePort: under public-only without rules, a loopback
// address on another port is refused as loopback, not for its port.
func TestAddressBeforePort(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	if code, _, _ := h.get("http://127.0.0.2:8080/"); code != http.StatusForbidden {
		t.Fatalf("GET 127.0.0.2:8080: %d", code)
	}
	h.assertRefusal("127.0.0.2", ReasonLoopback)
}

// TestRulesUnderAny: under the Any policy only the rules apply: a blocked
// origin is refused, a private one is reachable.
func TestRulesUnderAny(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules(nil, nil, []string{"public.test"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, &Options{Policy: Any, Rules: rules})
	if code, _, _ := h.get("http://public.test/"); code != http.StatusForbidden {
		t.Errorf("a blocked origin under any: %d", code)
	}
	if code, _, _ := h.get("http://intranet.test:8080/"); code != http.StatusOK {
		t.Errorf("a private origin under any: %d", code)
	}
}

// TestResolveErrorCode: a name the guard cannot resolve is
// navigation_failed, not an internal error.
func TestResolveErrorCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	err := h.p.CheckURL(context.Background(), "http://nowhere.test/")
	var re *ResolveError
	if !errors.As(err, &re) || errcode.Of(err) != errcode.NavigationFailed {
		t.Fatalf("CheckURL of an unknown name: %v (%s), want a ResolveError coded navigation_failed", err, errcode.Of(err))
	}
}
