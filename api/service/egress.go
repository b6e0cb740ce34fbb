package service

import (
	"context"
	"fmt"
	"sync"

	"github.com/tabpilot/tabpilot/browser/egress"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// guard adapts an egress proxy to tabs.Guard: URLs are checked up front
// (egress.Proxy.CheckURL) and refusals of the navigation's own requests,
// redirects included, found in the proxy's log afterwards.
type guard struct{ p *egress.Proxy }

func (g guard) CheckURL(ctx context.Context, url string) error { return g.p.CheckURL(ctx, url) }

func (g guard) Mark() uint64 { return uint64(g.p.Stats().Refused) }

func (g guard) Refused(url string, since uint64) error {
	if r, ok := g.p.RefusalFor(url, since); ok {
		return r.Err(url)
	}
	return nil
}

// chains are the guards the service chains in front of context proxies
// (tabs.Options.ContextProxy): one egress proxy per upstream URL, with the
// main guard's policy and rules and a dialer through the upstream
// (egress.UpstreamDialer), so a context's traffic is vetted as the
// browser's is and reaches the upstream only for vetted addresses. They
// live until Shutdown.
type chains struct {
	main *egress.Proxy
	mu   sync.Mutex
	m    map[string]*egress.Proxy
}

// proxyFor returns the proxyServer URL of the guard chained to upstream,
// starting it on first use. Errors: bad_request for an upstream the guard
// cannot dial through (its message has no password).
func (c *chains) proxyFor(ctx context.Context, upstream string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.m[upstream]; p != nil {
		return "http://" + p.Addr(), nil
	}
	d, err := egress.UpstreamDialer(upstream, 0)
	if err != nil {
		return "", tabs.Errorf(errcode.BadRequest, "%v", err)
	}
	p := egress.New(&egress.Options{Policy: c.main.Policy(), Rules: c.main.Rules(), Dialer: d, Logger: c.main.Logger()})
	// The proxy lives as long as the service, not as this request.
	if _, err := p.Start(context.WithoutCancel(ctx)); err != nil {
		return "", fmt.Errorf("start the egress guard for a context proxy: %w", err)
	}
	if c.m == nil {
		c.m = map[string]*egress.Proxy{}
	}
	c.m[upstream] = p
	return "http://" + p.Addr(), nil
}

// close closes the chained guards.
func (c *chains) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, p := range c.m {
		p.Close()
		delete(c.m, k)
	}
}
