package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
)

// GridOptions configure a browser on a Selenium Grid 4.
type GridOptions struct {
	// User and Password are the Grid's basic auth (standalone --username
	// and --password); credentials in the Grid URL are used when these
	// are empty. They go on every WebDriver request and on the CDP
	// upgrade.
	User, Password string
	// Binary is the Chromium executable on the Grid's node
	// (goog:chromeOptions.binary), e.g. /usr/bin/chromium on Debian;
	// empty leaves it to the node's stereotype.
	Binary string
	// Timeout bounds the connect: the WebDriver session's creation (the
	// Grid may queue it) and the CDP attach. 0 means 60 s.
	Timeout time.Duration
	// KeepAlive is how often a cheap WebDriver command
	// (GET /session/{id}/timeouts) tells the Grid the session is in use:
	// CDP traffic does not count against its idle timeout
	// (--session-timeout, 300 s by default). 0 means 60 s.
	KeepAlive time.Duration
}

// GridKey returns the registry key of a browser on the Grid at gridURL
// (http(s)://host:4444, optionally with user:password@). The key's
// Endpoint is the URL without its credentials. o may be nil. Errors:
// *Error with errcode.BadRequest.
func GridKey(gridURL string, o *GridOptions) (Key, error) {
	u, err := url.Parse(gridURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.RawQuery != "" {
		return Key{}, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("invalid Grid URL %q: use http://host:4444", RedactURL(gridURL))}
	}
	k := Key{Kind: Grid}
	if u.User != nil {
		k.remote.user = u.User.Username()
		k.remote.password, _ = u.User.Password()
		u.User = nil
	}
	k.Endpoint = strings.TrimRight(u.String(), "/")
	if o != nil {
		if o.User != "" || o.Password != "" {
			k.remote.user, k.remote.password = o.User, o.Password
		}
		k.remote.binary, k.remote.timeout, k.remote.keepAlive = o.Binary, o.Timeout, o.KeepAlive
	}
	return k, nil
}

// gridSession is one WebDriver session of a Grid.
type gridSession struct {
	base   string // the Grid URL, no credentials
	id     string
	cdp    string // se:cdp, its host rewritten to base's
	header http.Header
	client *http.Client
}

// gridCapabilities are the W3C capabilities of a new session: Chrome with
// tabpilot's flags (DefaultFlags, o.Args, headless unless o.Headed).
func gridCapabilities(binary string, o *Options) map[string]any {
	args := append([]string{}, DefaultFlags...)
	if o == nil || !o.Headed {
		args = append(args, "--headless=new")
	}
	if o != nil {
		args = append(args, o.Args...)
	}
	chrome := map[string]any{"args": mergeFeatures(args)}
	if binary != "" {
		chrome["binary"] = binary
	}
	return map[string]any{"capabilities": map[string]any{
		"alwaysMatch": map[string]any{"browserName": "chrome", "goog:chromeOptions": chrome},
	}}
}

// webDriverError is the value of a failed WebDriver answer.
type webDriverError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// errNoSession is wrapped when the Grid does not know the session.
var errNoSession = errors.New("invalid session id")

// do sends a WebDriver command and decodes the answer's value into out
// (nil: discard). A WebDriver error (any status but 200) is an error
// naming it; "invalid session id" wraps errNoSession.
func (g *gridSession) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if err != nil {
		return err
	}
	for k, vs := range g.header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%s %s: HTTP 401: the Grid wants credentials (user:password in the Grid URL, or GridOptions.User and Password)", method, path)
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d, not a WebDriver answer", method, path, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		var we webDriverError
		_ = json.Unmarshal(env.Value, &we)
		msg, _, _ := strings.Cut(we.Message, "\n")
		if we.Error == "invalid session id" || resp.StatusCode == http.StatusNotFound && strings.Contains(path, g.id) && g.id != "" {
			return fmt.Errorf("%s %s: %w: %s", method, path, errNoSession, msg)
		}
		return fmt.Errorf("%s %s: HTTP %d: %s: %s", method, path, resp.StatusCode, we.Error, msg)
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

// RewriteCDPHost returns the se:cdp URL a Grid advertised with its scheme
// and host:port replaced by those of the Grid URL the user gave (ws for
// http, wss for https): Grids advertise the address their node sees,
// often an internal host. The path and query stay.
func RewriteCDPHost(seCDP, gridURL string) (string, error) {
	c, err := url.Parse(seCDP)
	if err != nil || c.Host == "" {
		return "", fmt.Errorf("the Grid's se:cdp %q is not a URL", seCDP)
	}
	g, err := url.Parse(gridURL)
	if err != nil || g.Host == "" {
		return "", fmt.Errorf("invalid Grid URL %q", RedactURL(gridURL))
	}
	c.Scheme = "ws"
	if g.Scheme == "https" {
		c.Scheme = "wss"
	}
	c.Host, c.User = g.Host, nil
	return c.String(), nil
}

// ConnectGrid creates a WebDriver session on the Grid of key (GridKey)
// with Chrome capabilities from o (POST /session), attaches over the
// session's CDP endpoint (se:cdp, its host rewritten to the Grid's, with
// the basic auth on the upgrade), keeps the session alive with a
// WebDriver command every KeepAlive, and deletes the session
// (DELETE /session/{id}) when the handle closes. A session that the Grid
// ended (killed, timed out) makes the handle not alive, with a hint.
// Errors: *Error with errcode.BrowserUnavailable (no session) or
// errcode.AttachFailed (no CDP).
func ConnectGrid(parent, ctx context.Context, key Key, o *Options) (*Handle, error) {
	if o != nil {
		if err := CheckArgs(o.Args); err != nil {
			return nil, err
		}
	}
	if key.Kind != Grid {
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("ConnectGrid of a %s key", key.Kind)}
	}
	log := loggerOf(o)
	timeout := key.remote.timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	g := &gridSession{base: key.Endpoint, header: key.remote.httpHeader(), client: &http.Client{}}
	var created struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := g.do(cctx, http.MethodPost, "/session", gridCapabilities(key.remote.binary, o), &created); err != nil {
		return nil, &Error{Code: errcode.BrowserUnavailable, Msg: fmt.Sprintf("grid %s: new session: %v", key.Endpoint, err), Err: err,
			Hint: "Check the Grid's /status: it needs a free chrome slot, and the node a working chromedriver and Chromium."}
	}
	g.id = created.SessionID
	fail := func(code errcode.Code, err error) (*Handle, error) {
		g.delete(context.WithoutCancel(ctx), log)
		return nil, &Error{Code: code, Msg: fmt.Sprintf("grid %s: session %s: %v", key.Endpoint, g.id, err), Err: err}
	}
	seCDP, _ := created.Capabilities["se:cdp"].(string)
	if seCDP == "" {
		return fail(errcode.AttachFailed, errors.New("the session has no se:cdp endpoint (the Grid's node must run Chrome or Chromium with CDP)"))
	}
	ws, err := RewriteCDPHost(seCDP, key.Endpoint)
	if err != nil {
		return fail(errcode.AttachFailed, err)
	}
	g.cdp = ws
	h, err := attachRemote(parent, cctx, ws, g.header, timeout, o)
	if err != nil {
		return fail(errcode.AttachFailed, fmt.Errorf("attach to %s: %w", ws, err))
	}
	h.kind, h.key, h.hint, h.gridID = Grid, key, lostHint, g.id
	every := key.remote.keepAlive
	if every <= 0 {
		every = 60 * time.Second
	}
	stop := make(chan struct{})
	h.closeHook = func(ctx context.Context) {
		close(stop)
		g.delete(ctx, log)
	}
	go h.watch(h.lost)
	go g.keepAlive(h, every, stop, log)
	log.Info("grid session", "grid", key.Endpoint, "session", g.id, "version", h.product, "took", time.Since(start))
	return h, nil
}

// GridSession returns the WebDriver session id of a Grid handle, else "".
func (h *Handle) GridSession() string {
	return h.gridID
}

// keepAlive sends GET /session/{id}/timeouts every interval until stop
// closes or the handle dies. When the Grid says the session is gone, it
// ends the handle (not alive, with the reason in its hint).
func (g *gridSession) keepAlive(h *Handle, every time.Duration, stop <-chan struct{}, log *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-h.done:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
		err := g.do(ctx, http.MethodGet, "/session/"+g.id+"/timeouts", nil, nil)
		cancel()
		switch {
		case err == nil:
		case errors.Is(err, errNoSession):
			log.Warn("the grid ended the session", "grid", g.base, "session", g.id, "err", err)
			reason := fmt.Sprintf("the Grid ended WebDriver session %s", g.id)
			h.reason.Store(&reason)
			h.cancel()
			return
		default:
			log.Debug("grid keepalive", "grid", g.base, "session", g.id, "err", err)
		}
	}
}

// delete ends the WebDriver session (DELETE /session/{id}), within 10 s.
func (g *gridSession) delete(ctx context.Context, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := g.do(ctx, http.MethodDelete, "/session/"+g.id, nil, nil); err != nil && !errors.Is(err, errNoSession) {
		log.Debug("delete grid session", "grid", g.base, "session", g.id, "err", err)
	}
}
