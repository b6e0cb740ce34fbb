package egress

import (
	"bufio"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// publicIP is what the test resolver answers for public-looking names. No
// traffic goes there: the test dialer sends every vetted address to a
// local test server.
var publicIP = netip.MustParseAddr("93.184.216.34")

// harness is a proxy whose resolver maps names to addresses from a table
// and whose dialer connects every vetted address to a local test server
// (the TLS one for port 443). Traffic only goes to 127.0.0.1.
type harness struct {
	t     testing.TB
	p     *Proxy
	addr  string
	plain *httptest.Server
	tls   *httptest.Server

	mu      sync.Mutex
	names   map[string][]netip.Addr
	answer  func(host string, n int) []netip.Addr // optional, before names
	lookups map[string]int
	dials   []string
	hijacks []net.Conn
	page    string          // served at /page
	down    map[string]bool // addresses whose dial fails
}

func newHarness(t testing.TB, o *Options) *harness {
	t.Helper()
	return newHarnessWith(t, func(_ *harness, x *Options) {
		if o != nil {
			*x = *o
		}
	})
}

// newHarnessWith lets configure set the options once the test servers run.
func newHarnessWith(t testing.TB, configure func(h *harness, o *Options)) *harness {
	t.Helper()
	h := &harness{t: t, lookups: map[string]int{}, names: map[string][]netip.Addr{
		"public.test":     {publicIP},
		"api.public.test": {netip.MustParseAddr("2606:4700:4700::1111")},
		"intranet.test":   {netip.MustParseAddr("10.0.0.5")},
		"metadata.test":   {netip.MustParseAddr("169.254.169.254")},
		"mixed.test":      {publicIP, netip.MustParseAddr("192.168.1.10")},
		"mapped.test":     {netip.MustParseAddr("::ffff:127.0.0.1")},
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		buf := make([]byte, 32<<10)
		for n > 0 {
			k := min(n, len(buf))
			if _, err := w.Write(buf[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	mux.HandleFunc("/ws", h.serveWebSocket)
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		io.WriteString(w, "secret-data")
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		page := h.page
		h.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	h.plain = httptest.NewServer(mux)
	h.tls = httptest.NewUnstartedServer(mux)
	h.tls.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut by the tests
	h.tls.StartTLS()
	t.Cleanup(func() {
		h.mu.Lock()
		for _, c := range h.hijacks {
			c.Close()
		}
		h.mu.Unlock()
		h.plain.Close()
		h.tls.Close()
	})
	var opts Options
	configure(h, &opts)
	opts.Resolver = h.resolve
	opts.Dialer = h.dial
	h.p = New(&opts)
	addr, err := h.p.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h.addr = addr
	t.Cleanup(func() {
		if err := h.p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

func (h *harness) resolve(_ context.Context, network, host string) ([]netip.Addr, error) {
	if network != "ip" {
		return nil, fmt.Errorf("network %q", network)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lookups[host]++
	if h.answer != nil {
		if a := h.answer(host, h.lookups[host]); a != nil {
			return a, nil
		}
	}
	if a, ok := h.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (h *harness) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if _, err := netip.ParseAddrPort(address); err != nil {
		h.t.Errorf("the proxy dialled %q, not a vetted ip:port", address)
		return nil, err
	}
	h.mu.Lock()
	h.dials = append(h.dials, address)
	down := h.down[address]
	h.mu.Unlock()
	if down {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
	}
	target := h.plain.Listener.Addr().String()
	if strings.HasSuffix(address, ":443") {
		target = h.tls.Listener.Addr().String()
	}
	var d net.Dialer
	return d.DialContext(ctx, network, target) // always 127.0.0.1
}

func (h *harness) dialed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.dials)
}

func (h *harness) lookupCount(host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lookups[host]
}

// serveWebSocket answers a WebSocket handshake (RFC 6455) and sends one
// text frame, "hello HOST".
func (h *harness) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		http.Error(w, "not a websocket", http.StatusBadRequest)
		return
	}
	sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	h.mu.Lock()
	h.hijacks = append(h.hijacks, c)
	h.mu.Unlock()
	defer c.Close()
	msg := "hello " + r.Host
	fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		base64.StdEncoding.EncodeToString(sum[:]))
	brw.Write([]byte{0x81, byte(len(msg))})
	brw.WriteString(msg)
	brw.Flush()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	io.Copy(io.Discard, brw)
}

// client is an HTTP client that uses the proxy (CONNECT for https).
func (h *harness) client() *http.Client {
	pu, _ := url.Parse("http://" + h.addr)
	return &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		Timeout: 20 * time.Second,
	}
}

// get fetches u through the proxy and returns the status, the body and
// the X-Tabpilot-Egress header.
func (h *harness) get(u string) (int, string, string) {
	h.t.Helper()
	resp, err := h.client().Get(u)
	if err != nil {
		h.t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("GET %s: read: %v", u, err)
	}
	return resp.StatusCode, string(b), resp.Header.Get("X-Tabpilot-Egress")
}

// raw sends a request head to the proxy as written and returns the
// connection, its reader and the parsed response.
func (h *harness) raw(head string) (net.Conn, *bufio.Reader, *http.Response) {
	h.t.Helper()
	c, err := net.Dial("tcp", h.addr)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, head); err != nil {
		h.t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		h.t.Fatalf("%q: %v", head, err)
	}
	return c, br, resp
}

// connect opens a CONNECT tunnel and returns its status.
func (h *harness) connect(target string) (net.Conn, *bufio.Reader, *http.Response) {
	h.t.Helper()
	return h.raw(fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target))
}

func body(r *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	return string(b)
}

func (h *harness) assertNotDialed(addrs ...string) {
	h.t.Helper()
	for _, d := range h.dialed() {
		ap := netip.MustParseAddrPort(d)
		for _, a := range addrs {
			if ap.Addr() == netip.MustParseAddr(a).Unmap() {
				h.t.Errorf("the proxy dialled refused address %s", d)
			}
		}
	}
}

func (h *harness) assertRefusal(host string, reason Reason) Refusal {
	h.t.Helper()
	r, ok := h.p.LastRefusal(host)
	if !ok {
		h.t.Fatalf("no refusal of %s in %+v", host, h.p.Stats().Recent)
	}
	if r.Reason != reason {
		h.t.Errorf("refusal of %s: reason %s, want %s (%+v)", host, r.Reason, reason, r)
	}
	return r
}

func TestPublicAllowed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	code, b, _ := h.get("http://public.test/x")
	if code != 200 || b != "hello from public.test" {
		t.Fatalf("http: %d %q", code, b)
	}
	code, b, _ = h.get("https://public.test/")
	if code != 200 || b != "hello from public.test" {
		t.Fatalf("https: %d %q", code, b)
	}
	code, b, _ = h.get("http://api.public.test/")
	if code != 200 || b != "hello from api.public.test" {
		t.Fatalf("ipv6 name: %d %q", code, b)
	}
	code, b, _ = h.get("http://8.8.8.8/")
	if code != 200 || b != "hello from 8.8.8.8" {
		t.Fatalf("literal: %d %q", code, b)
	}
	want := []string{"93.184.216.34:80", "93.184.216.34:443", "[2606:4700:4700::1111]:80", "8.8.8.8:80"}
	if got := h.dialed(); !slices.Equal(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
	s := h.p.Stats()
	if s.Allowed != 4 || s.Refused != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestAddressClasses sends every address class of addrCases through the
// proxy three ways: a literal in a forwarded request, a literal in a
// CONNECT, and a name that resolves to it.
func TestAddressClasses(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	refused := 0
	for i, c := range addrCases {
		if c.reason == "" || c.addr == "fe80::1%eth0" {
			continue
		}
		a := netip.MustParseAddr(c.addr)
		lit := a.String()
		if a.Is6() {
			lit = "[" + lit + "]"
		}
		name := fmt.Sprintf("class%d.test", i)
		h.mu.Lock()
		h.names[name] = []netip.Addr{a}
		h.mu.Unlock()

		code, b, hdr := h.get("http://" + lit + "/")
		if code != http.StatusForbidden || !strings.Contains(b, c.reason.Text()) || hdr != "refused; reason="+string(c.reason) {
			t.Errorf("GET http://%s/: %d %q %q, want 403 naming %s", lit, code, b, hdr, c.reason)
		}
		if !strings.Contains(b, a.String()) {
			t.Errorf("GET http://%s/: body %q does not name the host", lit, b)
		}
		_, _, resp := h.connect(lit + ":443")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("CONNECT %s:443: %s", lit, resp.Status)
		}
		code, b, _ = h.get("http://" + name + "/")
		if code != http.StatusForbidden || !strings.Contains(b, name) || !strings.Contains(b, c.reason.Text()) {
			t.Errorf("GET http://%s/ (%s): %d %q", name, a, code, b)
		}
		r := h.assertRefusal(name, c.reason)
		if r.Addr != a || r.Kind != "http" || r.Port != 80 {
			t.Errorf("refusal %+v, want addr %s kind http port 80", r, a)
		}
		h.assertNotDialed(c.addr)
		refused += 3
	}
	if s := h.p.Stats(); s.Refused != uint64(refused) || s.Allowed != 0 {
		t.Errorf("stats: refused %d allowed %d, want %d and 0", s.Refused, s.Allowed, refused)
	}
	if len(h.dialed()) != 0 {
		t.Errorf("dialled %v", h.dialed())
	}
}

func TestNumericFormsAndNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for _, c := range []struct {
		host   string
		reason Reason
	}{
		{"2130706433", ReasonNumericForm}, {"0x7f.1", ReasonNumericForm}, {"0177.0.0.1", ReasonNumericForm},
		{"127.1", ReasonNumericForm}, {"1572395042", ReasonNumericForm}, {"localhost", ReasonLocalName},
		{"db.localhost", ReasonLocalName}, {"mapped.test", ReasonLoopback}, {"mixed.test", ReasonPrivate},
		{"metadata.test", ReasonLinkLocal},
	} {
		code, b, _ := h.get("http://" + c.host + "/")
		if code != http.StatusForbidden {
			t.Errorf("GET http://%s/: %d %q", c.host, code, b)
		}
		_, _, resp := h.connect(c.host + ":443")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body(resp), c.reason.Text()) {
			t.Errorf("CONNECT %s:443: %s", c.host, resp.Status)
		}
		r := h.assertRefusal(c.host, c.reason)
		if r.Kind != "connect" || r.Port != 443 {
			t.Errorf("refusal %+v", r)
		}
	}
	if h.lookupCount("localhost") != 0 || h.lookupCount("2130706433") != 0 {
		t.Error("the proxy resolved a local name or a numeric form")
	}
	if d := h.dialed(); len(d) != 0 {
		t.Errorf("dialled %v", d)
	}
	// A name that does not resolve is a 502, not a refusal.
	code, b, _ := h.get("http://nxdomain.test/")
	if code != http.StatusBadGateway || !strings.Contains(b, "no such host") {
		t.Errorf("nxdomain: %d %q", code, b)
	}
	if s := h.p.Stats(); s.Failed != 1 {
		t.Errorf("failed = %d", s.Failed)
	}
}

// TestRebinding: the first answer is public, the second private. The
// first request reaches the vetted address; the second is refused; the
// dialer only ever sees the vetted literal, and each request resolves
// once.
func TestRebinding(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.answer = func(host string, n int) []netip.Addr {
		if host != "rebind.test" {
			return nil
		}
		if n == 1 || n == 3 {
			return []netip.Addr{publicIP}
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	code, b, _ := h.get("http://rebind.test/")
	if code != 200 || b != "hello from rebind.test" {
		t.Fatalf("first: %d %q", code, b)
	}
	code, b, _ = h.get("http://rebind.test/")
	if code != http.StatusForbidden || !strings.Contains(b, "loopback") {
		t.Fatalf("second: %d %q", code, b)
	}
	if n := h.lookupCount("rebind.test"); n != 2 {
		t.Errorf("resolved %d times for 2 requests", n)
	}
	// The same over CONNECT.
	_, _, resp := h.connect("rebind.test:443")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT 3: %s", resp.Status)
	}
	_, _, resp = h.connect("rebind.test:443")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("CONNECT 4: %s", resp.Status)
	}
	if got, want := h.dialed(), []string{"93.184.216.34:80", "93.184.216.34:443"}; !slices.Equal(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
	h.assertRefusal("rebind.test", ReasonLoopback)
}

// TestRedirects: a public page redirects to private places; the client
// follows, and the proxy refuses the redirected request on its own.
func TestRedirects(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for _, c := range []struct {
		to     string
		host   string
		reason Reason
	}{
		{"http://intranet.test/secret", "intranet.test", ReasonPrivate},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254", ReasonLinkLocal},
		{"http://[::1]/", "::1", ReasonLoopback},
		{"http://0x7f.1/", "0x7f.1", ReasonNumericForm},
	} {
		code, b, _ := h.get("http://public.test/redirect?to=" + url.QueryEscape(c.to))
		if code != http.StatusForbidden || !strings.Contains(b, c.host) {
			t.Errorf("redirect to %s: %d %q", c.to, code, b)
		}
		h.assertRefusal(c.host, c.reason)
	}
	// HTTPS: the redirect target's CONNECT is refused.
	_, err := h.client().Get("https://public.test/redirect?to=" + url.QueryEscape("https://intranet.test/"))
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("https redirect: err = %v, want a refused CONNECT", err)
	}
	h.assertRefusal("intranet.test", ReasonPrivate)
	h.assertNotDialed("10.0.0.5", "169.254.169.254", "::1", "127.0.0.1")
	// RefusalFor does not take the refusal of another host (here a
	// redirect's target; in a browser, as often its own background
	// requests) for the navigation's: the tab vets redirects itself.
	since := h.p.Stats().Refused
	h.get("http://public.test/redirect?to=" + url.QueryEscape("http://metadata.test/"))
	if r, ok := h.p.RefusalFor("http://public.test/redirect", since); ok {
		t.Errorf("RefusalFor = %+v, want none: the refusal was of another host", r)
	}
	if r, ok := h.p.RefusalFor("http://metadata.test/", since); !ok || r.Reason != ReasonLinkLocal {
		t.Errorf("RefusalFor by host = %+v, %v", r, ok)
	} else if be := r.Err("http://metadata.test/"); be.Error() != "blocked destination http://metadata.test/ (169.254.169.254): link-local address (cloud metadata lives here)" {
		t.Errorf("Err = %v", be)
	}
	if _, ok := h.p.RefusalFor("http://public.test/", h.p.Stats().Refused); ok {
		t.Error("RefusalFor found a refusal older than since")
	}
	if r, ok := h.p.RefusalFor("http://intranet.test/", 0); !ok || r.Host != "intranet.test" {
		t.Errorf("RefusalFor by host = %+v", r)
	}
	if s := h.p.Stats(); s.Allowed != 6 || s.Refused != 6 {
		t.Errorf("stats allowed %d refused %d, want 6 and 6", s.Allowed, s.Refused)
	}
}

const wsHandshake = "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

// readFrame reads one unmasked short text frame.
func readFrame(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		t.Fatalf("frame: %v", err)
	}
	if hdr[0] != 0x81 || hdr[1] > 125 {
		t.Fatalf("frame header %x", hdr)
	}
	b := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWebSocket(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	// Over CONNECT, as Chromium sends ws:// through an HTTP proxy.
	c, br, resp := h.connect("public.test:80")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	fmt.Fprintf(c, wsHandshake, "/ws", "public.test")
	up, err := http.ReadResponse(br, nil)
	if err != nil || up.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", up, err)
	}
	if got := readFrame(t, br); got != "hello public.test" {
		t.Errorf("frame %q", got)
	}
	_, _, resp = h.connect("intranet.test:80")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT intranet: %s", resp.Status)
	}
	h.assertRefusal("intranet.test", ReasonPrivate)

	// As a forwarded request with Upgrade.
	_, br, resp = h.raw(fmt.Sprintf(wsHandshake, "http://public.test/ws", "public.test"))
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("forwarded upgrade: %s %q", resp.Status, body(resp))
	}
	if got := readFrame(t, br); got != "hello public.test" {
		t.Errorf("forwarded frame %q", got)
	}
	_, _, resp = h.raw(fmt.Sprintf(wsHandshake, "http://metadata.test/ws", "metadata.test"))
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("forwarded upgrade to metadata: %s", resp.Status)
	}
	if r := h.assertRefusal("metadata.test", ReasonLinkLocal); r.Kind != "upgrade" {
		t.Errorf("kind %q, want upgrade", r.Kind)
	}
	h.assertNotDialed("10.0.0.5", "169.254.169.254")
}

func TestPorts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, _, resp := h.connect("public.test:22")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body(resp), "port not allowed") {
		t.Errorf("CONNECT :22: %s", resp.Status)
	}
	code, _, hdr := h.get("http://public.test:8080/")
	if code != http.StatusForbidden || hdr != "refused; reason=port" {
		t.Errorf("GET :8080: %d %q", code, hdr)
	}
	if h.lookupCount("public.test") != 0 {
		t.Error("resolved a name for a refused port")
	}

	h2 := newHarness(t, &Options{AllowedPorts: []int{8080}})
	if code, b, _ := h2.get("http://public.test:8080/"); code != 200 || b != "hello from public.test:8080" {
		t.Errorf("GET :8080 allowed: %d %q", code, b)
	}
	if code, _, _ := h2.get("http://public.test/"); code != http.StatusForbidden {
		t.Errorf("GET :80 with only 8080 allowed: %d", code)
	}
}

func TestNotAProxyRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, _, resp := h.raw("GET / HTTP/1.1\r\nHost: public.test\r\n\r\n")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("origin-form: %s", resp.Status)
	}
	_, _, resp = h.raw("GET ftp://public.test/ HTTP/1.1\r\nHost: public.test\r\n\r\n")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("ftp: %s", resp.Status)
	}
	_, _, resp = h.connect("public.test")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT without a port: %s", resp.Status)
	}
}

func TestMaxConns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &Options{MaxConns: 2})
	var held []net.Conn
	for i := 0; i < 2; i++ {
		c, br, resp := h.raw("GET http://public.test/ HTTP/1.1\r\nHost: public.test\r\n\r\n")
		if resp.StatusCode != 200 {
			t.Fatalf("conn %d: %s", i, resp.Status)
		}
		io.Copy(io.Discard, resp.Body)
		_ = br
		held = append(held, c)
	}
	if a := h.p.Stats().Active; a != 2 {
		t.Errorf("active = %d, want 2", a)
	}
	c, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third connection: %v %v", resp, err)
	}
	held[0].Close()
	deadline := time.Now().Add(20 * time.Second)
	for h.p.Stats().Active != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, _, resp := h.raw("GET http://public.test/ HTTP/1.1\r\nHost: public.test\r\n\r\n"); resp.StatusCode != 200 {
		t.Errorf("after a slot freed: %s", resp.Status)
	}
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &Options{IdleTimeout: 300 * time.Millisecond})
	c, br, resp := h.connect("public.test:80")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	// Say nothing: the proxy must end the tunnel, well before the client's
	// own 20 s deadline.
	_, err := br.ReadByte()
	if err == nil {
		t.Fatal("read a byte from a silent tunnel")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the client's deadline fired first: %v", err)
	}
	_ = c
	deadline := time.Now().Add(20 * time.Second)
	for h.p.Stats().Active != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if a := h.p.Stats().Active; a != 0 {
		t.Errorf("active = %d after the tunnel ended", a)
	}
}

func TestMaxBytes(t *testing.T) {
	t.Parallel()
	const max = 100_000
	h := newHarness(t, &Options{MaxBytes: max})
	resp, err := h.client().Get("http://public.test/big?n=1000000")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil || n >= max {
		t.Errorf("forwarded: read %d bytes, err %v; want fewer than %d and an error", n, err, max)
	}
	if code, b, _ := h.get("http://public.test/big?n=1000"); code != 200 || len(b) != 1000 {
		t.Errorf("small response: %d, %d bytes", code, len(b))
	}
	c, br, cresp := h.connect("public.test:80")
	if cresp.StatusCode != 200 {
		t.Fatal(cresp.Status)
	}
	io.WriteString(c, "GET /big?n=1000000 HTTP/1.1\r\nHost: public.test\r\n\r\n")
	n, _ = io.Copy(io.Discard, br)
	if n >= max || n < max/2 {
		t.Errorf("tunnel: read %d bytes, want about %d", n, max)
	}
}

func TestProxyCheckURL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	for _, c := range []struct {
		url    string
		reason Reason
	}{
		{"https://public.test/", ""},
		{"about:blank", ""},
		{"http://intranet.test/", ReasonPrivate},
		{"https://mixed.test/", ReasonPrivate},
		{"http://public.test:22/", ReasonPort},
		{"file:///etc/passwd", ReasonScheme},
		{"http://127.0.0.1/", ReasonLoopback},
	} {
		err := h.p.CheckURL(ctx, c.url)
		var be *BlockedError
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("CheckURL(%s) = %v", c.url, err)
		case c.reason != "" && (!errors.As(err, &be) || be.Reason != c.reason || be.Dest != c.url):
			t.Errorf("CheckURL(%s) = %v, want %s", c.url, err, c.reason)
		}
	}
	if err := h.p.CheckURL(ctx, "http://nxdomain.test/"); err == nil || errors.Is(err, ErrBlocked) {
		t.Errorf("CheckURL(nxdomain) = %v, want a resolution error", err)
	}
	if s := h.p.Stats(); s.Refused != 0 || len(h.dialed()) != 0 {
		t.Errorf("CheckURL counted or dialled: %+v %v", s, h.dialed())
	}
}

func TestRecentBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for i := 0; i < 100; i++ {
		h.connect(fmt.Sprintf("10.0.0.%d:443", i))
	}
	s := h.p.Stats()
	if s.Refused != 100 || len(s.Recent) != recentMax || s.Recent[0].Seq != 100-recentMax+1 || s.Recent[recentMax-1].Host != "10.0.0.99" {
		t.Fatalf("refused %d, recent %d, first seq %d", s.Refused, len(s.Recent), s.Recent[0].Seq)
	}
	since := h.p.RefusalsSince(90)
	if len(since) != 10 || since[0].Seq != 91 || since[0].Host != "10.0.0.90" {
		t.Errorf("RefusalsSince(90) = %+v", since)
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, br, resp := h.connect("public.test:80")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if err := h.p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("the tunnel outlived Close")
	}
	if err := h.p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := h.p.Start(context.Background()); err == nil {
		t.Error("Start after Close succeeded")
	}
	if _, err := net.DialTimeout("tcp", h.addr, time.Second); err == nil {
		t.Error("the listener outlived Close")
	}
}

func TestStartContextCloses(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	p := New(nil)
	addr, err := p.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the proxy outlived its context")
}

func TestNewPanicsOnPublicAddr(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("New with a non-loopback Addr did not panic")
		}
	}()
	New(&Options{Addr: "0.0.0.0:0"})
}

func TestLaunchFlags(t *testing.T) {
	t.Parallel()
	got := LaunchFlags("127.0.0.1:4321")
	for _, want := range []string{
		"--proxy-server=http://127.0.0.1:4321", "--proxy-bypass-list=<-loopback>", "--disable-quic",
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp", "--webrtc-ip-handling-policy=disable_non_proxied_udp",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("LaunchFlags lacks %s: %v", want, got)
		}
	}
}

func TestDialFallback(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.mu.Lock()
	h.names["multi.test"] = []netip.Addr{netip.MustParseAddr("2606:4700::1"), publicIP}
	h.names["dead.test"] = []netip.Addr{netip.MustParseAddr("2606:4700::2")}
	h.down = map[string]bool{"[2606:4700::1]:80": true, "[2606:4700::2]:80": true}
	h.mu.Unlock()
	if code, b, _ := h.get("http://multi.test/"); code != 200 || b != "hello from multi.test" {
		t.Errorf("multi: %d %q", code, b)
	}
	if got, want := h.dialed(), []string{"[2606:4700::1]:80", "93.184.216.34:80"}; !slices.Equal(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
	if code, b, _ := h.get("http://dead.test/"); code != http.StatusBadGateway || !strings.Contains(b, "connection refused") {
		t.Errorf("dead: %d %q", code, b)
	}
	if s := h.p.Stats(); s.Allowed != 1 || s.Failed != 1 || s.Refused != 0 {
		t.Errorf("stats %+v", s)
	}
}
