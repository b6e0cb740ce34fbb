package service

import (
	"context"

	"github.com/tabpilot/tabpilot/browser/egress"
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
