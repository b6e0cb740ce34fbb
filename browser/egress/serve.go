package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// enter registers a handler, or reports false when the proxy is closing.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.handlers.Add(1)
	return true
}

// ServeHTTP serves one proxy request: CONNECT, or an absolute-form
// http(s) request (forwarded, upgrades included). Anything else is 400.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.enter() {
		http.Error(w, "tabpilot egress proxy: closing", http.StatusServiceUnavailable)
		return
	}
	defer p.handlers.Done()
	if r.Method == http.MethodConnect {
		p.serveConnect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "tabpilot egress proxy: not a proxy request (use an absolute URL or CONNECT)", http.StatusBadRequest)
		return
	}
	if s := strings.ToLower(r.URL.Scheme); s != "http" && s != "https" {
		p.writeError(w, r, p.refuse("http", blocked(r.URL.Host, r.URL.Hostname(), netip.Addr{}, ReasonScheme, s+":"), 0))
		return
	}
	kind := "http"
	if r.Header.Get("Upgrade") != "" {
		kind = "upgrade"
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), kindKey{}, kind)))
}

// serveConnect opens a tunnel to a vetted address of r.Host.
func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	up, err := p.dial(r.Context(), "connect", "", r.Host)
	if err != nil {
		p.writeError(w, r, err)
		return
	}
	mc := up.(*meteredConn)
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		mc.Close()
		http.Error(w, "tabpilot egress proxy: cannot hijack", http.StatusInternalServerError)
		return
	}
	cc := mc.m.wrap(client, false)
	defer cc.Close()
	defer mc.Close()
	if _, err := io.WriteString(cc, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		if _, err := mc.Write(b); err != nil {
			return
		}
	}
	splice(cc, mc)
}

// dial vets hostport, of a request of scheme ("http", or "" for a CONNECT
// tunnel), and dials the vetted addresses in turn. The returned conn is a
// *meteredConn.
func (p *Proxy) dial(ctx context.Context, kind, scheme, hostport string) (net.Conn, error) {
	addrs, port, err := p.vet(ctx, scheme, hostport, false)
	if err != nil {
		var be *BlockedError
		if errors.As(err, &be) {
			return nil, p.refuse(kind, be, port)
		}
		p.fail(kind, hostport, err)
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, p.opts.DialTimeout)
	defer cancel()
	// Each address gets its share of the timeout (at least 2 s), so one
	// that black-holes does not starve the others.
	per := max(p.opts.DialTimeout/time.Duration(len(addrs)), 2*time.Second)
	var last error
	for _, a := range addrs {
		actx, acancel := context.WithTimeout(dctx, per)
		c, err := p.opts.Dialer(actx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		acancel()
		if err != nil {
			last = err
			continue
		}
		mc, err := p.meter(c)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.stats.Allowed++
		p.mu.Unlock()
		return mc, nil
	}
	err = fmt.Errorf("egress proxy: connect %s: %w", hostport, last)
	p.fail(kind, hostport, err)
	return nil, err
}

// vet applies the rules and the policy to hostport, of a request of
// scheme ("http", "https", or "" for a CONNECT tunnel; document for a page
// or a frame, checked before it is requested), and returns the addresses
// to dial. In order (Rules): a host that does not parse is refused; then
// the origin rules; for an origin they do not decide, under PublicOnly,
// the host rules of CheckURL; then the addresses a name resolves to (each
// must pass CheckAddr under PublicOnly, unless an allowed pattern allows
// it); last, for an undecided origin, the port. The address is checked
// before the port, so a refusal names the address when both would refuse.
func (p *Proxy) vet(ctx context.Context, scheme, hostport string, document bool) ([]netip.Addr, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, 0, blocked(hostport, hostport, netip.Addr{}, ReasonInvalid, "want host:port")
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return nil, 0, blocked(hostport, host, netip.Addr{}, ReasonInvalid, "bad port "+ps)
	}
	addr, numeric, perr := ParseHost(host)
	if perr != nil {
		return nil, port, blocked(hostport, host, netip.Addr{}, ReasonInvalid, perr.Error())
	}
	v, match, be := p.opts.Rules.decide(hostport, scheme, host, port, document)
	if be != nil {
		return nil, port, be
	}
	guarded := p.opts.Policy != Any
	if guarded {
		if v == undecided {
			if be := checkHost(hostport, host); be != nil {
				return nil, port, be
			}
		} else if numeric && addr.Is4() && addr.String() != host {
			return nil, port, blocked(hostport, host, addr, ReasonNumericForm, "")
		}
	}
	if numeric {
		if guarded {
			if be := p.vetAddr(hostport, scheme, host, addr, port, v, match); be != nil {
				return nil, port, be
			}
		}
		if be := p.vetPort(hostport, host, port, v, guarded); be != nil {
			return nil, port, be
		}
		return []netip.Addr{addr.WithZone("").Unmap()}, port, nil
	}
	// A name is not resolved for a port that is refused anyway.
	if be := p.vetPort(hostport, host, port, v, guarded); be != nil {
		return nil, port, be
	}
	rctx, cancel := context.WithTimeout(ctx, p.opts.DialTimeout)
	defer cancel()
	got, err := p.opts.Resolver(rctx, "ip", host)
	if err != nil {
		return nil, port, &ResolveError{Host: host, Err: err}
	}
	if len(got) == 0 {
		return nil, port, &ResolveError{Host: host, Err: errors.New("no addresses")}
	}
	addrs := make([]netip.Addr, 0, len(got))
	for _, a := range got {
		if guarded {
			if be := p.vetAddr(hostport, scheme, host, a, port, v, match); be != nil {
				return nil, port, be
			}
		}
		addrs = append(addrs, a.WithZone("").Unmap())
	}
	return addrs, port, nil
}

// vetAddr refuses an address that fails CheckAddr, unless the origin is
// allowed and a pattern allows the address too (Rules.addrAllowed).
func (p *Proxy) vetAddr(hostport, scheme, host string, a netip.Addr, port int, v verdict, match *OriginPattern) *BlockedError {
	if r, bad := addrReason(a); bad && (v != allowed || !p.opts.Rules.addrAllowed(match, scheme, a, port)) {
		return blocked(hostport, host, a, r, "")
	}
	return nil
}

// vetPort refuses a port outside AllowedPorts for an origin the rules did
// not decide.
func (p *Proxy) vetPort(hostport, host string, port int, v verdict, guarded bool) *BlockedError {
	if guarded && v == undecided && !p.ports[port] {
		return blocked(hostport, host, netip.Addr{}, ReasonPort, fmt.Sprintf("%d (allowed: %v)", port, p.opts.AllowedPorts))
	}
	return nil
}

// refuse records and logs a refusal and returns be.
func (p *Proxy) refuse(kind string, be *BlockedError, port int) *BlockedError {
	p.mu.Lock()
	p.seq++
	p.stats.Refused++
	r := Refusal{Seq: p.seq, Time: time.Now(), Kind: kind, Host: be.Host, Port: port, Addr: be.Addr, Reason: be.Reason, Detail: be.Detail}
	p.stats.Recent = append(p.stats.Recent, r)
	if n := len(p.stats.Recent); n > recentMax {
		p.stats.Recent = append(p.stats.Recent[:0:0], p.stats.Recent[n-recentMax:]...)
	}
	p.mu.Unlock()
	p.log.Info("egress refused", logKind, kind, logHost, be.Host, logPort, port, logAddr, be.Addr, logReason, string(be.Reason))
	return be
}

func (p *Proxy) fail(kind, hostport string, err error) {
	p.mu.Lock()
	p.stats.Failed++
	p.mu.Unlock()
	p.log.Debug("egress failed", logKind, kind, logHost, hostport, logErr, err)
}

// writeError answers a refusal 403 with a one-line text body naming the
// host and the reason (and the header X-Tabpilot-Egress: refused;
// reason=…), anything else 502.
func (p *Proxy) writeError(w http.ResponseWriter, _ *http.Request, err error) {
	var be *BlockedError
	if errors.As(err, &be) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Tabpilot-Egress", "refused; reason="+string(be.Reason))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "tabpilot egress guard refused %s: %s\n", be.Host, be.Reason.Text())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "tabpilot egress proxy: %v\n", err)
}
