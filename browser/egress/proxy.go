package egress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Resolver looks up the addresses of a name; (*net.Resolver).LookupNetIP
// has this shape. The proxy calls it with network "ip".
type Resolver func(ctx context.Context, network, host string) ([]netip.Addr, error)

// Dialer connects to address, always a vetted "ip:port" literal, never a
// name; (*net.Dialer).DialContext has this shape. The proxy calls it with
// network "tcp".
type Dialer func(ctx context.Context, network, address string) (net.Conn, error)

// Options configure a Proxy. A nil *Options means the defaults; New copies
// them.
type Options struct {
	// Addr is the listen address; it must be a loopback IP. Empty means
	// "127.0.0.1:0" (a free port).
	Addr string
	// Resolver resolves names; nil means net.DefaultResolver.LookupNetIP.
	// A test seam: map names to public-looking addresses.
	Resolver Resolver
	// Dialer dials vetted addresses; nil means a net.Dialer. A test seam:
	// send vetted addresses to a local test server.
	Dialer Dialer
	// Policy is the address policy: PublicOnly ("" too) refuses
	// non-public addresses and ports outside AllowedPorts; Any checks
	// only Rules.
	Policy Policy
	// Rules are the origin rules (--allow-origin, --block-origin,
	// --allow-subresource-origin), applied before the policy; see Rules.
	Rules Rules
	// AllowedPorts are the destination ports allowed; empty means 80 and
	// 443. An origin that Rules allow may use any port.
	AllowedPorts []int
	// MaxConns bounds the client connections open at once (Chromium keeps
	// at most 32 per proxy); past it a new connection is answered 503 and
	// closed. 0 means 256.
	MaxConns int
	// IdleTimeout ends a client connection, a tunnel or an upstream
	// connection with no traffic in either direction for that long, and
	// bounds the wait for request and response headers. 0 means 2 minutes.
	IdleTimeout time.Duration
	// DialTimeout bounds resolving and connecting. 0 means 10 seconds.
	DialTimeout time.Duration
	// MaxBytes bounds the bytes of one upstream connection, both
	// directions together: one proxied request (with its WebSocket, if it
	// upgrades) or one CONNECT tunnel. The connection is cut when it is
	// reached. 0 means 1 GiB; negative means no bound.
	MaxBytes int64
	// Logger receives logs (a refusal is Info); nil discards them.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxConns    = 256
	DefaultIdleTimeout = 2 * time.Minute
	DefaultDialTimeout = 10 * time.Second
	DefaultMaxBytes    = 1 << 30
)

// recentMax is how many refusals Stats keeps.
const recentMax = 64

// Log keys.
const (
	logKind   = "kind"
	logHost   = "host"
	logPort   = "port"
	logAddr   = "addr"
	logReason = "reason"
	logErr    = "err"
)

// Refusal is one refused request.
type Refusal struct {
	// Seq numbers the refusals of a proxy from 1; see RefusalsSince.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Kind is "connect" (a CONNECT tunnel: https and ws/wss from
	// Chromium), "http" (a forwarded request) or "upgrade" (a forwarded
	// request with an Upgrade header, e.g. a WebSocket).
	Kind string `json:"kind"`
	Host string `json:"host"`
	Port int    `json:"port,omitempty"`
	// Addr is the refused address (a literal or a resolver answer), when
	// the refusal is about an address.
	Addr   netip.Addr `json:"addr,omitzero"`
	Reason Reason     `json:"reason"`
	Detail string     `json:"detail,omitempty"`
}

// Stats are a proxy's counters since Start.
type Stats struct {
	// Allowed counts upstream connections dialled after vetting.
	Allowed uint64 `json:"allowed"`
	// Refused counts refused requests; it is also the Seq of the latest
	// refusal.
	Refused uint64 `json:"refused"`
	// Failed counts requests whose name did not resolve or whose vetted
	// addresses could not be reached.
	Failed uint64 `json:"failed"`
	// Active is the number of client connections open now.
	Active int `json:"active"`
	// Recent are the latest refusals, oldest first, at most 64.
	Recent []Refusal `json:"recent"`
}

// Proxy is the egress guard's HTTP forward and CONNECT proxy. Its methods
// are safe for concurrent use.
type Proxy struct {
	opts      Options
	log       *slog.Logger
	ports     map[int]bool
	sem       chan struct{}
	transport *http.Transport
	rp        *httputil.ReverseProxy

	mu        sync.Mutex
	started   bool
	closed    bool
	ln        net.Listener
	srv       *http.Server
	serveDone chan struct{}
	stopFunc  func() bool
	meters    map[*meter]struct{}
	stats     Stats
	seq       uint64
	handlers  sync.WaitGroup
}

type kindKey struct{}

// New returns a Proxy; it listens from Start. It panics when Options.Addr
// is not a loopback IP address with a port (a programmer error).
func New(o *Options) *Proxy {
	p := &Proxy{meters: map[*meter]struct{}{}}
	if o != nil {
		p.opts = *o
	}
	if p.opts.Addr == "" {
		p.opts.Addr = "127.0.0.1:0"
	}
	ap, err := netip.ParseAddrPort(p.opts.Addr)
	if err != nil || !ap.Addr().IsLoopback() {
		panic(fmt.Sprintf("egress.New: Addr %q is not a loopback ip:port", p.opts.Addr))
	}
	if p.opts.Policy == "" {
		p.opts.Policy = PublicOnly
	}
	if p.opts.Resolver == nil {
		p.opts.Resolver = net.DefaultResolver.LookupNetIP
	}
	if p.opts.MaxConns <= 0 {
		p.opts.MaxConns = DefaultMaxConns
	}
	if p.opts.IdleTimeout <= 0 {
		p.opts.IdleTimeout = DefaultIdleTimeout
	}
	if p.opts.DialTimeout <= 0 {
		p.opts.DialTimeout = DefaultDialTimeout
	}
	if p.opts.Dialer == nil {
		p.opts.Dialer = (&net.Dialer{Timeout: p.opts.DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	if p.opts.MaxBytes == 0 {
		p.opts.MaxBytes = DefaultMaxBytes
	}
	ports := p.opts.AllowedPorts
	if len(ports) == 0 {
		ports = []int{80, 443}
	}
	p.opts.AllowedPorts = append([]int(nil), ports...)
	p.ports = map[int]bool{}
	for _, n := range ports {
		p.ports[n] = true
	}
	p.log = p.opts.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.sem = make(chan struct{}, p.opts.MaxConns)
	p.transport = &http.Transport{
		Proxy: nil, // never an environment proxy
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			kind, _ := ctx.Value(kindKey{}).(string)
			return p.dial(ctx, kind, "http", addr)
		},
		// One upstream connection per request: each request is resolved
		// and vetted anew, so a pooled connection never outlives a
		// rebinding.
		DisableKeepAlives:      true,
		DisableCompression:     true, // pass encodings through untouched
		TLSHandshakeTimeout:    p.opts.DialTimeout,
		ResponseHeaderTimeout:  p.opts.IdleTimeout,
		MaxResponseHeaderBytes: 1 << 20,
	}
	p.rp = &httputil.ReverseProxy{
		// Rewrite (not Director): no X-Forwarded-* headers are added and
		// the client's are dropped; the Host header follows the URL.
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.Out.Host = "" },
		Transport:     p.transport,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		ErrorHandler:  p.writeError,
	}
	return p
}

// Start listens on Options.Addr and serves until Close or until ctx, the
// proxy's long-lived parent (the daemon's, never a request's), is done.
// It returns the listen address, e.g. "127.0.0.1:41234", for LaunchFlags.
// Errors: the proxy was started or closed before, or the listen failed.
func (p *Proxy) Start(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return "", errors.New("egress proxy: already started or closed")
	}
	ln, err := net.Listen("tcp", p.opts.Addr)
	if err != nil {
		return "", fmt.Errorf("egress proxy: listen %s: %w", p.opts.Addr, err)
	}
	p.started = true
	p.ln = ln
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: p.opts.IdleTimeout,
		IdleTimeout:       p.opts.IdleTimeout,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	p.serveDone = make(chan struct{})
	go func() {
		defer close(p.serveDone)
		_ = p.srv.Serve(&limitListener{Listener: ln, p: p})
	}()
	p.stopFunc = context.AfterFunc(ctx, func() { _ = p.Close() })
	p.log.Info("egress proxy listening", logAddr, ln.Addr().String())
	return ln.Addr().String(), nil
}

// Addr returns the listen address, or "" before Start.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return ""
	}
	return p.ln.Addr().String()
}

// Close stops the proxy: it closes the listener, every client connection,
// tunnel and upstream connection, and waits for the handlers to return. It
// is idempotent; a proxy cannot be restarted.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	srv := p.srv
	meters := make([]*meter, 0, len(p.meters))
	for m := range p.meters {
		meters = append(meters, m)
	}
	stop := p.stopFunc
	p.mu.Unlock()
	if srv == nil {
		return nil
	}
	if stop != nil {
		stop()
	}
	err := srv.Close()
	for _, m := range meters {
		m.closeAll()
	}
	p.handlers.Wait()
	<-p.serveDone
	p.transport.CloseIdleConnections()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Stats returns a copy of the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Recent = append([]Refusal(nil), p.stats.Recent...)
	s.Active = len(p.sem)
	return s
}

// RefusalsSince returns the kept refusals with Seq > seq, oldest first:
// take Stats().Refused before a run and call RefusalsSince with it after,
// to put the run's refusals in its details. Refusals are not attributed to
// tabs: runs on other tabs at the same time show up too.
func (p *Proxy) RefusalsSince(seq uint64) []Refusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Refusal
	for _, r := range p.stats.Recent {
		if r.Seq > seq {
			out = append(out, r)
		}
	}
	return out
}

// LastRefusal returns the latest kept refusal of host (compared without
// case and brackets), to explain a navigation that failed at the proxy.
func (p *Proxy) LastRefusal(host string) (Refusal, bool) {
	host = normHost(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.stats.Recent) - 1; i >= 0; i-- {
		if normHost(p.stats.Recent[i].Host) == host {
			return p.stats.Recent[i], true
		}
	}
	return Refusal{}, false
}

// RefusalFor explains a navigation to rawURL that failed at the proxy
// (net::ERR_TUNNEL_CONNECTION_FAILED for https, or a 403 response with
// the header X-Tabpilot-Egress for http): the latest refusal of the URL's
// host with Seq > since (take since from Stats().Refused before
// navigating). Refusals are not attributed to tabs, and the browser's own
// background requests are refused too, so a refusal of another host is
// never taken for the navigation's; the tab vets a navigation's redirects
// itself (Proxy.CheckURL on each document request).
func (p *Proxy) RefusalFor(rawURL string, since uint64) (Refusal, bool) {
	host := ""
	if u, err := url.Parse(rawURL); err == nil {
		host = normHost(u.Hostname())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.stats.Recent) - 1; i >= 0; i-- {
		r := &p.stats.Recent[i]
		if r.Seq <= since {
			break
		}
		if normHost(r.Host) == host {
			return *r, true
		}
	}
	return Refusal{}, false
}

// Err returns the refusal as a *BlockedError for a request of dest.
func (r Refusal) Err(dest string) *BlockedError {
	return &BlockedError{Dest: dest, Host: r.Host, Addr: r.Addr, Reason: r.Reason, Detail: r.Detail}
}

// CheckURL checks a document (a top-level page or a frame) before the
// browser requests it, the way the proxy will check the request, with the
// document rule on top: the URL rules of CheckURL but for the host (only
// http, https and about:blank; no URL that a browser and Go may read
// differently), then vet: the origin rules, with origins that only
// --allow-subresource-origin allows refused; the host rules; the name's
// addresses, resolved now; the port. It returns a *BlockedError for a
// refusal, another error when the name does not resolve, and nil for
// about:blank. The proxy checks the request again, so an answer that
// changes in between is still refused.
func (p *Proxy) CheckURL(ctx context.Context, raw string) error {
	scheme, host, port, err := parseNavURL(raw)
	if err != nil || host == "" {
		return err
	}
	_, _, err = p.vet(ctx, scheme, net.JoinHostPort(host, strconv.Itoa(port)), true)
	var be *BlockedError
	if errors.As(err, &be) {
		be.Dest = raw
	}
	return err
}

// Rules returns the proxy's origin rules.
func (p *Proxy) Rules() Rules { return p.opts.Rules }

// Logger returns the proxy's logger.
func (p *Proxy) Logger() *slog.Logger { return p.log }

// Policy returns the proxy's address policy.
func (p *Proxy) Policy() Policy { return p.opts.Policy }

// LaunchFlags returns the Chromium flags that send all of a browser's
// traffic through the proxy at addr (Start's result) and close the side
// doors:
//   - --proxy-server=http://ADDR: HTTP through the proxy, HTTPS and
//     WebSockets through CONNECT;
//   - --proxy-bypass-list=<-loopback>: loopback too (Chromium bypasses
//     the proxy for localhost and 127.0.0.1 by default);
//   - --disable-quic: no HTTP/3 (UDP) around the proxy;
//   - --force-webrtc-ip-handling-policy=disable_non_proxied_udp and
//     --webrtc-ip-handling-policy=…: WebRTC sends no UDP and uses TCP
//     through the proxy only;
//   - --enforce-webrtc-ip-permission-check: no local address enumeration;
//   - --host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE <proxy host>: the
//     browser resolves no name itself (the proxy does), so no DNS
//     prefetch or other lookup leaves around the proxy.
func LaunchFlags(addr string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return []string{
		"--proxy-server=http://" + addr,
		"--proxy-bypass-list=<-loopback>",
		"--disable-quic",
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--enforce-webrtc-ip-permission-check",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE " + host,
	}
}
