package tabs

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/route"
)

// contexts are the named browser contexts of a supervisor's tabs
// (OpenOptions.Context), per browser handle, refcounted by the tabs in
// them: the first tab of a name creates the context
// (Target.createBrowserContext), the last one to close disposes it
// (Target.disposeBrowserContext). A context is made with disposeOnDetach,
// so that one left on a remote browser by a daemon that died goes with
// the connection.
type contexts struct {
	mu sync.Mutex
	m  map[ctxKey]*bctx
	// chain is Options.ContextProxy.
	chain func(ctx context.Context, upstream string) (string, error)
}

type ctxKey struct {
	h    *browser.Handle
	name string
}

type bctx struct {
	ready chan struct{} // closed when id/err are set
	id    cdp.BrowserContextID
	err   error
	proxy string // as given, credentials included
	auth  *route.Credentials
	refs  int
}

// checkProxy vets a context's upstream proxy URL: scheme http, https,
// socks4 or socks5, a host and port, no path. Credentials
// (http://user:password@host:port) are for http and https proxies only:
// Chromium answers a proxy's challenge on the Fetch domain
// (Fetch.authRequired), which SOCKS does not send.
func checkProxy(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return Errorf(errcode.BadRequest, "invalid proxy %q: use SCHEME://host:port, e.g. http://127.0.0.1:3128 or socks5://127.0.0.1:1080", browser.RedactURL(raw))
	}
	switch u.Scheme {
	case "http", "https", "socks4", "socks5":
	default:
		return Errorf(errcode.BadRequest, "invalid proxy %q: the scheme must be http, https, socks4 or socks5", browser.RedactURL(raw))
	}
	if u.User != nil && strings.HasPrefix(u.Scheme, "socks") {
		return Errorf(errcode.BadRequest, "proxy %q has credentials: Chromium cannot answer a SOCKS proxy's authentication; use an http or https proxy for credentials", browser.RedactURL(raw))
	}
	if u.User != nil && u.User.Username() == "" {
		return Errorf(errcode.BadRequest, "proxy %q: credentials need a user name", browser.RedactURL(raw))
	}
	return nil
}

// splitProxy returns the proxy URL without its credentials (the
// proxyServer of Target.createBrowserContext) and the credentials, or nil.
func splitProxy(raw string) (string, *route.Credentials) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw, nil
	}
	pw, _ := u.User.Password()
	c := &route.Credentials{User: u.User.Username(), Password: pw}
	u.User = nil
	return strings.TrimSuffix(u.String(), "/"), c
}

// acquire returns the id of the context name on h, creating it with
// proxy as its proxyServer when it does not exist, and takes a
// reference. A context that exists with another proxy is bad_request.
func (c *contexts) acquire(ctx context.Context, h *browser.Handle, name, proxy string) (cdp.BrowserContextID, *route.Credentials, error) {
	k := ctxKey{h, name}
	for {
		c.mu.Lock()
		if c.m == nil {
			c.m = map[ctxKey]*bctx{}
		}
		e := c.m[k]
		if e == nil {
			server, auth := splitProxy(proxy)
			e = &bctx{ready: make(chan struct{}), proxy: proxy, refs: 1}
			c.m[k] = e
			c.mu.Unlock()
			bypass := ""
			var err error
			if proxy != "" && c.chain != nil {
				// The guard in front of the upstream: it takes loopback
				// too, and holds the upstream's credentials.
				server, err = c.chain(ctx, proxy)
				auth, bypass = nil, "<-loopback>"
			}
			e.auth = auth
			var res target.CreateBrowserContextResult
			if err == nil {
				dispose := true
				res, err = cdp.Call(ctx, chromedp.FromContext(h.Context()).Browser, target.CreateBrowserContext,
					target.CreateBrowserContextParams{DisposeOnDetach: &dispose, ProxyServer: server, ProxyBypassList: bypass})
				if err != nil {
					err = &Error{Code: errcode.NotAlive, Msg: fmt.Sprintf("create browser context %q: %v", name, err), Err: err}
				}
			}
			c.mu.Lock()
			if err != nil {
				e.err = err
				delete(c.m, k)
			} else {
				e.id = res.BrowserContextID
			}
			close(e.ready)
			c.mu.Unlock()
			return e.id, e.auth, e.err
		}
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return "", nil, ctx.Err()
		}
		c.mu.Lock()
		if c.m[k] != e { // failed, or disposed meanwhile: try again
			c.mu.Unlock()
			if e.err != nil {
				return "", nil, e.err
			}
			continue
		}
		if proxy != "" && proxy != e.proxy {
			c.mu.Unlock()
			return "", nil, Errorf(errcode.BadRequest, "context %q exists with another proxy: close its tabs first, or use another context name", name)
		}
		e.refs++
		c.mu.Unlock()
		return e.id, e.auth, nil
	}
}

// release drops a reference to the context name on h; the last one
// disposes it (when the browser is still there).
func (c *contexts) release(ctx context.Context, h *browser.Handle, name string, log *slog.Logger) {
	k := ctxKey{h, name}
	c.mu.Lock()
	e := c.m[k]
	if e == nil {
		c.mu.Unlock()
		return
	}
	e.refs--
	last := e.refs <= 0
	if last {
		delete(c.m, k)
	}
	c.mu.Unlock()
	if !last || !h.Alive() {
		return
	}
	if _, err := cdp.Call(ctx, chromedp.FromContext(h.Context()).Browser, target.DisposeBrowserContext,
		target.DisposeBrowserContextParams{BrowserContextID: e.id}); err != nil {
		log.Debug("dispose browser context", "context", name, "err", err)
	}
}
