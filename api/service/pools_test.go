package service_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/browser/egress"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// TestOpenContextsBehindEgress: with --egress public-only a named
// context's pages still go through the guard (a context without a proxy
// of its own uses the browser's, the guard), a context proxy the guard
// cannot chain to is refused, a Grid is refused like a connected
// browser, and a bad CDP header line is refused without its value.
func TestOpenContextsBehindEgress(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>shop %s</title>`, r.Host)
	}))
	defer page.Close()
	// shop.test resolves to a public address for the guard, and the
	// guard's dialer takes every vetted address to the loopback page: the
	// traffic stays on this machine, and only the guard can reach it.
	pub := netip.MustParseAddr("93.184.216.34")
	p := egress.New(&egress.Options{
		Resolver: func(ctx context.Context, network, host string) ([]netip.Addr, error) {
			if host == "shop.test" {
				return []netip.Addr{pub}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		Dialer: func(ctx context.Context, network, address string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", page.Listener.Addr().String())
		},
	})
	if _, err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	svc := service.New(&service.Options{BrowserArgs: testenv.BrowserArgs, MaxTimeout: 60 * time.Second, Egress: p})
	defer svc.Shutdown(context.Background())
	ctx := context.Background()

	res := svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "c"}, URL: "http://shop.test/", Context: "agent1", WaitUntil: "load"})
	if res.IsError || res.Details["title"] != "shop shop.test" || res.Details["context"] != "agent1" || !strings.Contains(res.Text(), `context "agent1"`) {
		t.Fatalf("open in a context behind the guard: %s %+v", res.Text(), res.Details)
	}
	if n := p.Stats().Allowed; n < 1 {
		t.Fatalf("the guard saw %d connections: the context went around it", n)
	}
	if tabs := svc.Tabs(ctx).Text(); !strings.Contains(tabs, "[headless context agent1]") {
		t.Errorf("tabs: %s", tabs)
	}
	res = svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "p"}, Context: "x", Proxy: "socks4://127.0.0.1:3128"})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.BadRequest || !strings.Contains(e.Message, "http, https or socks5 behind the egress guard") {
		t.Errorf("a socks4 context proxy behind the guard: %s", res.Text())
	}
	res = svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "g"}, App: &api.App{Grid: "http://u:gridpw@127.0.0.1:4444"}})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.BlockedDestination || strings.Contains(res.Text(), "gridpw") {
		t.Errorf("a Grid behind the guard: %s", res.Text())
	}
	res = svc.Open(ctx, &api.OpenRequest{Common: api.Common{Name: "h"}, App: &api.App{CDPURL: "ws://127.0.0.1:1/x", CDPHeaders: []string{"Bearer-only-SECRET"}}})
	if e := res.ErrorOf(); e == nil || e.Code != errcode.BadRequest || strings.Contains(res.Text(), "SECRET") {
		t.Errorf("a bad header line: %s", res.Text())
	}
}
