package tabs

import (
	"context"

	"github.com/tabpilot/tabpilot/tabs/pagecore"
	"github.com/tabpilot/tabpilot/tabs/route"
)

// RouteSpec is what a route does with the requests it matches.
type RouteSpec = route.Spec

// RouteInfo describes a route of a tab.
type RouteInfo = route.Info

// router returns the tab's router, made at the first route.
func (t *Tab) router() *route.Router {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.routes == nil {
		s := t.sup
		t.routes = route.New(t.Context(), s.log, func(f func()) { s.wg.Go(f) })
	}
	return t.routes
}

// installGuard, under a navigation policy (Options.Guard), makes the tab's
// router vet every document request of its page before it is sent
// (route.Router.SetGuard): a refused one is recorded on the page
// (pagecore.Page.RecordBlocked), where the action that started it reports
// it, and failed so that the page stays as it was.
func (t *Tab) installGuard(ctx context.Context) error {
	g := t.sup.opts.Guard
	if g == nil {
		return nil
	}
	err := t.router().SetGuard(ctx, &route.Guard{Check: g.CheckURL, Blocked: t.RecordBlocked})
	if err != nil {
		return pagecore.CDPErr("install the navigation guard", err)
	}
	return nil
}

// Route routes the requests of the tab's page that pattern (a URL glob of
// urlpattern; one starting with '/' is relative to the page's origin)
// and the spec's resource types match: they are fulfilled, failed or
// continued with changes as s says (package route, on the Fetch domain),
// from now until Unroute or the tab closes. A route of the same pattern
// replaces the old one; of several that match, the last added wins.
// Errors: bad_request for a bad pattern or spec.
func (t *Tab) Route(ctx context.Context, pattern string, s RouteSpec) error {
	if err := t.DialogBlock(); err != nil {
		return err
	}
	return t.router().Add(ctx, pattern, t.LastURL(), s)
}

// Unroute removes the route of pattern ("" every route) and reports how
// many it removed.
func (t *Tab) Unroute(ctx context.Context, pattern string) (int, error) {
	t.mu.Lock()
	r := t.routes
	t.mu.Unlock()
	if r == nil {
		return 0, nil
	}
	return r.Remove(ctx, pattern)
}

// Routes lists the tab's routes, in the order they were added, with the
// requests each handled.
func (t *Tab) Routes() []RouteInfo {
	t.mu.Lock()
	r := t.routes
	t.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.List()
}
