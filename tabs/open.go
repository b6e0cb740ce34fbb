package tabs

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// browserKey is the registry key of o's browser: a remote CDP endpoint
// (browser.RemoteKey, with its headers and connect timeout), a Grid
// (browser.GridKey), a spawned app, or headless.
func (s *Supervisor) browserKey(o *OpenOptions) (browser.Key, error) {
	if o.App == nil {
		return browser.Key{Kind: browser.Headless}, nil
	}
	a := o.App
	if a.Grid != "" {
		if a.CDPURL != "" || a.Path != "" || a.Target != "" {
			return browser.Key{}, Errorf(errcode.BadRequest, "app.grid takes no cdp_url, path or target: a Grid session is a browser of its own")
		}
		if len(a.CDPHeader) > 0 {
			return browser.Key{}, Errorf(errcode.BadRequest, "app.cdp_headers apply to app.cdp_url; a Grid takes grid_user and grid_password")
		}
		return browser.GridKey(a.Grid, &browser.GridOptions{User: a.GridUser, Password: a.GridPassword, Timeout: a.ConnectTimeout, KeepAlive: a.GridKeepAlive})
	}
	if a.GridUser != "" || a.GridPassword != "" {
		return browser.Key{}, Errorf(errcode.BadRequest, "app.grid_user and app.grid_password need app.grid")
	}
	if a.CDPURL != "" {
		return browser.RemoteKey(a.CDPURL, &browser.RemoteOptions{Header: a.CDPHeader, Timeout: a.ConnectTimeout})
	}
	if len(a.CDPHeader) > 0 {
		return browser.Key{}, Errorf(errcode.BadRequest, "app.cdp_headers need app.cdp_url")
	}
	if a.Path != "" {
		if !strings.HasPrefix(a.Path, "/") {
			return browser.Key{}, Errorf(errcode.BadRequest, "app.path %q must be an absolute path", a.Path)
		}
		return browser.Key{Kind: browser.Spawned, Path: a.Path}, nil
	}
	if a.Profile != "" {
		return browser.Key{Kind: browser.Headless, Profile: a.Profile}, nil
	}
	return browser.Key{Kind: browser.Headless}, nil
}

// Open opens the tab o.Name (creating its browser if needed) or reuses a
// live tab of that name on the same browser, and navigates it when o.URL is
// set. A tab of that name on another browser is browser_mismatch; a changed
// dialog policy recreates the tab.
//
// Errors (coded, see errcode.Of): bad_request, busy, browser_mismatch,
// browser_unavailable, navigation_failed, timeout.
func (s *Supervisor) Open(ctx context.Context, o OpenOptions) (*OpenResult, error) {
	name, err := normName(o.Name)
	if err != nil {
		return nil, err
	}
	o.Name = name
	if o.WaitUntil, err = pagecore.NormWaitUntil(o.WaitUntil); err != nil {
		return nil, err
	}
	switch o.Dialogs {
	case "", "accept", "dismiss":
	default:
		return nil, Errorf(errcode.BadRequest, "invalid dialogs %q: use accept or dismiss", o.Dialogs)
	}
	if o.Viewport != nil && (o.Viewport.Width < 1 || o.Viewport.Height < 1 || o.Viewport.Width > 10000 || o.Viewport.Height > 10000 || o.Viewport.Scale < 0 || o.Viewport.Scale > 5) {
		return nil, Errorf(errcode.BadRequest, "invalid viewport %dx%d@%g", o.Viewport.Width, o.Viewport.Height, o.Viewport.Scale)
	}
	if o.URL != "" {
		if err := pagecore.CheckURL(o.URL); err != nil {
			return nil, err
		}
	}
	key, err := s.browserKey(&o)
	if err != nil {
		return nil, err
	}
	if o.Context != "" && !ValidName(o.Context) {
		return nil, Errorf(errcode.BadRequest, "invalid context name %q: use 1-64 printable characters without spaces or slashes", o.Context)
	}
	if o.Proxy != "" {
		if o.Context == "" {
			return nil, Errorf(errcode.BadRequest, "a proxy is per browser context: give a context name with it")
		}
		if err := checkProxy(o.Proxy); err != nil {
			return nil, err
		}
	}
	timeout := s.Timeout(o.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// Find or reserve the tab under the lock; the reserved tab's action slot
	// is held, so a concurrent open or run of the same name is busy.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, &Error{Code: errcode.NotAlive, Msg: "the supervisor is shut down", Err: ErrClosed}
	}
	t := s.tabs[name]
	var stale *Tab
	recreated := ""
	if t != nil {
		switch {
		case !t.Alive():
			stale, t = t, nil
			delete(s.tabs, name)
		case t.key != key:
			s.mu.Unlock()
			return nil, &Error{Code: errcode.BrowserMismatch, Msg: fmt.Sprintf("tab %q lives on the %s browser, not %s; close it first", name, t.key, key)}
		case t.context != o.Context:
			s.mu.Unlock()
			return nil, &Error{Code: errcode.BrowserMismatch, Msg: fmt.Sprintf("tab %q lives in browser context %s, not %s; close it first", name, ctxLabel(t.context), ctxLabel(o.Context)),
				Hint: "A tab of that name lives in another browser context (open --context); close it first, or pick another name."}
		case !t.tryAcquire():
			s.mu.Unlock()
			return nil, &Error{Code: errcode.Busy, Msg: fmt.Sprintf("tab %q is busy", name), Err: ErrBusy}
		case o.Dialogs != "" && t.DialogPolicy() != o.Dialogs:
			// The dialog policy changed: recreate the tab, on the page
			// it showed unless the open names another.
			stale, t = t, nil
			delete(s.tabs, name)
			if o.URL == "" {
				if u := stale.LastURL(); u != "" && u != "about:blank" {
					o.URL = u
					recreated = "the dialog policy changed, so the tab was recreated and loaded " + u + " again"
				}
			}
		}
	}
	if t == nil {
		t = newTab(s, name, key, o.Dialogs)
		t.context = o.Context
		t.tryAcquire()
		s.tabs[name] = t
		s.mu.Unlock()
		if stale != nil {
			// Disposed once the new tab holds the browser, so that a
			// headless browser whose last tab it was is not closed and
			// launched again.
			stale.kill("replaced by a new tab of the same name")
			defer s.dispose(stale)
		}
		if err := t.safeStart(ctx, &o); err != nil {
			s.mu.Lock()
			if s.tabs[name] == t {
				delete(s.tabs, name)
			}
			s.mu.Unlock()
			t.kill("open failed")
			s.dispose(t)
			t.release()
			return nil, err
		}
	} else {
		s.mu.Unlock()
		if o.Viewport != nil {
			if err := t.setViewport(ctx, *o.Viewport); err != nil {
				t.release()
				return nil, err
			}
		}
		if len(o.StorageState) > 0 {
			if err := t.SetStorageState(ctx, o.StorageState); err != nil {
				t.release()
				return nil, err
			}
		}
	}
	defer t.release()
	res := &OpenResult{Reused: t.opened.Load(), Name: name, Browser: t.browserName()}
	t.opened.Store(true)
	if o.URL != "" {
		nav, err := t.Navigate(ctx, o.URL, o.WaitUntil)
		if err != nil {
			return nil, fmt.Errorf("open tab %q: %w", name, err)
		}
		res.Notes = nav.Notes
		res.Dialog = nav.Dialog
		res.Status = nav.Status
		s.recordOpen(name, o.URL) // recording.go
	}
	if recreated != "" {
		res.Notes = append(res.Notes, recreated)
	}
	res.URL, res.Title = t.URLTitle(ctx)
	res.Viewport = t.Viewport()
	return res, nil
}

// ctxLabel names a browser context in messages.
func ctxLabel(name string) string {
	if name == "" {
		return "the default"
	}
	return fmt.Sprintf("%q", name)
}

// safeStart is start, with a panic in it (a bug) turned into an internal
// error, so that Open removes the half-open tab as after any failed start
// instead of leaving its name reserved and busy.
func (t *Tab) safeStart(ctx context.Context, o *OpenOptions) (err error) {
	defer func() {
		if p := recover(); p != nil {
			t.sup.log.Error("panic in open", "tab", t.Name(), "panic", p, "stack", string(debug.Stack()))
			err = Errorf(errcode.Internal, "internal error: %v", p)
		}
	}()
	return t.start(ctx, o)
}
