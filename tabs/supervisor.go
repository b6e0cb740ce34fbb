// Package tabs is tabpilot's core: the Supervisor that owns browser handles
// and named tabs, and the Tab with its actions (navigate, observe, click,
// type, fill, press, waits, screenshots, extraction).
//
// Every Supervisor method is safe for concurrent use. A request's context
// bounds only that request: browsers hang below the supervisor's own
// context and tabs below their browser's, and an operation's context is
// derived from the tab's and linked to the request with context.AfterFunc.
// A tab runs one action at a time; a second one fails at once with busy.
// Each open, close and run has a timeout; a run that overruns is
// interrupted, and if it does not yield within a grace period its tab is
// killed (the page target closed) while the supervisor goes on.
package tabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/target"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
)

// Options configure a Supervisor. A nil *Options means the defaults; New
// copies them.
type Options struct {
	// Browser configures launched browsers (executable, headed, extra flags).
	Browser browser.Options
	// DefaultTimeout is used when a request gives none; 0 means 30s.
	DefaultTimeout time.Duration
	// MaxTimeout caps every timeout; 0 means 30s.
	MaxTimeout time.Duration
	// Grace is how long an interrupted run may take to yield before its tab
	// is killed; 0 means 2s.
	Grace time.Duration
	// NetworkIdleMax caps the wait for networkidle0/2 past the load event;
	// 0 means 5s.
	NetworkIdleMax time.Duration
	// NoStealth turns off the stealth patches of headless browsers.
	NoStealth bool
	// ScreenshotDir, when set, receives a timestamped full-resolution PNG of
	// each screenshot that is not saved elsewhere.
	ScreenshotDir string
	// Viewport is the default viewport of new tabs; zero means 1365x768 at
	// scale 1.
	Viewport Viewport
	// Guard, when set, vets every top-level navigation (the egress
	// policy of DESIGN.md section 9).
	Guard Guard
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

// Viewport is a tab's layout viewport in CSS pixels and its device scale
// factor (Emulation.setDeviceMetricsOverride).
type Viewport struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Scale  float64 `json:"scale,omitempty"`
}

// App selects a spawned or connected browser (DESIGN.md section 3).
type App struct {
	Path    string
	CDPURL  string
	Args    []string
	Target  string
	Profile string
}

// OpenOptions are the fields of the open action.
type OpenOptions struct {
	// Name is the tab; empty means "main".
	Name string
	// Timeout bounds the open; 0 means the default, clamped to MaxTimeout.
	Timeout time.Duration
	// URL to navigate to; empty opens (or reuses) the tab without navigating.
	URL string
	// Viewport overrides the default viewport when non-nil.
	Viewport *Viewport
	// WaitUntil is settled (default: the load event, then up to 500 ms
	// until no fetch, XHR or frame document is in flight and the DOM has
	// not changed for 100 ms; see Tab.Goto), load, domcontentloaded,
	// networkidle0 or networkidle2.
	WaitUntil string
	// Dialogs is the dialog policy: accept or dismiss. "" gives a new tab
	// none (runs answer dialogs) and keeps a reused tab's. A reused tab
	// whose policy differs is recreated on the page it showed; to drop a
	// policy, close the tab.
	Dialogs string
	// App selects a non-headless browser; nil means headless.
	App *App
	// StorageState, when set, is restored into a new tab before it
	// navigates (Tab.SetStorageState): cookies and local storage, as
	// tab.storageState() saved them.
	StorageState json.RawMessage
}

// OpenResult describes an opened or reused tab.
type OpenResult struct {
	Reused   bool
	Name     string
	Browser  string
	URL      string
	Title    string
	Viewport Viewport
	// Notes are non-fatal remarks, e.g. requests still pending when the
	// network-idle wait gave up.
	Notes []string
	// Dialog is a JavaScript dialog left pending by the page load.
	Dialog *Dialog
	// Status is the HTTP status of the document the open navigated to,
	// 0 when it did not navigate or there was no HTTP response.
	Status int64
}

// TabInfo is one line of Supervisor.Tabs: a tab, or a page of a connected
// or spawned browser that no tab holds (Adopted false, Name empty).
type TabInfo struct {
	Name    string `json:"name"`
	Browser string `json:"browser"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	Alive   bool   `json:"alive"`
	Busy    bool   `json:"busy"`
	// TargetID is the page's CDP target id (Target.getTargets); an open
	// with app.target set to it attaches to that page.
	TargetID string `json:"targetId,omitempty"`
	// Adopted is true for a tab, false for a page of the browser that no
	// tab holds.
	Adopted bool `json:"adopted"`
}

// Job is work run on a tab's action slot by Supervisor.Run.
type Job interface {
	// Run does the work. ctx carries the run's deadline and is cancelled
	// when the request is cancelled or the tab dies.
	Run(ctx context.Context, t *Tab) error
	// Interrupt asks a running job to stop at once (e.g. goja's
	// Runtime.Interrupt). It must not block.
	Interrupt(reason string)
}

// JobFunc adapts a function that honours ctx to a Job.
type JobFunc func(ctx context.Context, t *Tab) error

// Run calls f.
func (f JobFunc) Run(ctx context.Context, t *Tab) error { return f(ctx, t) }

// Interrupt does nothing: a JobFunc stops when its ctx is cancelled.
func (JobFunc) Interrupt(string) {}

// Supervisor owns the browser registry and the named tabs.
type Supervisor struct {
	opts Options
	log  *slog.Logger
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
	reg  *browser.Registry

	mu     sync.Mutex
	tabs   map[string]*Tab
	closed bool

	crashes, kills atomic.Int64
}

// Stats are a supervisor's counters since it started.
type Stats struct {
	// Crashes counts the renderer crashes of its tabs' pages, as Chromium
	// reported them (Inspector.targetCrashed).
	Crashes int64
	// Kills counts the tabs it killed because their page did not answer.
	Kills int64
}

// Stats returns the supervisor's counters.
func (s *Supervisor) Stats() Stats {
	return Stats{Crashes: s.crashes.Load(), Kills: s.kills.Load()}
}

// DefaultName is the tab name used when none is given.
const DefaultName = "main"

// NewSupervisor returns a Supervisor. It launches no browser until the
// first Open. Close it with Shutdown.
func NewSupervisor(opts *Options) *Supervisor {
	s := &Supervisor{tabs: map[string]*Tab{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.DefaultTimeout <= 0 {
		s.opts.DefaultTimeout = 30 * time.Second
	}
	if s.opts.MaxTimeout <= 0 {
		s.opts.MaxTimeout = 30 * time.Second
	}
	if s.opts.Grace <= 0 {
		s.opts.Grace = 2 * time.Second
	}
	if s.opts.NetworkIdleMax <= 0 {
		s.opts.NetworkIdleMax = 5 * time.Second
	}
	if s.opts.Viewport.Width <= 0 || s.opts.Viewport.Height <= 0 {
		s.opts.Viewport = Viewport{Width: 1365, Height: 768, Scale: 1}
	}
	if s.opts.Viewport.Scale <= 0 {
		s.opts.Viewport.Scale = 1
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	bo := s.opts.Browser
	bo.Logger = s.log
	bo.Args = append([]string{fmt.Sprintf("--window-size=%d,%d", s.opts.Viewport.Width, s.opts.Viewport.Height)}, bo.Args...)
	if !s.opts.NoStealth {
		bo.Args = append(s.stealthFlags(), bo.Args...)
	}
	s.reg = browser.NewRegistry(s.ctx, &bo)
	return s
}

// Timeout clamps a requested timeout: 0 means the default, and the result
// lies in 1s..MaxTimeout.
func (s *Supervisor) Timeout(d time.Duration) time.Duration {
	if d <= 0 {
		d = s.opts.DefaultTimeout
	}
	if d > s.opts.MaxTimeout {
		d = s.opts.MaxTimeout
	}
	if d < time.Second {
		d = time.Second
	}
	return d
}

// ValidName reports whether name is usable as a tab name: 1 to 64
// printable characters without spaces or slashes.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) || r == '/' || r == '\\' {
			return false
		}
	}
	return true
}

func normName(name string) (string, error) {
	if name == "" {
		name = DefaultName
	}
	if !ValidName(name) {
		return "", Errorf(errcode.BadRequest, "invalid tab name %q: use 1-64 printable characters without spaces or slashes", name)
	}
	return name, nil
}

// opCtx derives an operation context from parent (a tab's or the
// supervisor's) with the timeout, cancelled too when req is done or dead
// is closed (the tab died: a CDP call to a crashed renderer is never
// answered, so every call under the context ends at once instead of at
// the deadline).
func opCtx(parent, req context.Context, timeout time.Duration, dead <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	stop := context.AfterFunc(req, cancel)
	go func() {
		select {
		case <-dead:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { stop(); cancel() }
}

func (s *Supervisor) browserKey(o *OpenOptions) (browser.Key, error) {
	if o.App == nil {
		return browser.Key{Kind: browser.Headless}, nil
	}
	if o.App.CDPURL != "" {
		return browser.Key{Kind: browser.Connected, Endpoint: o.App.CDPURL}, nil
	}
	if o.App.Path != "" {
		if !strings.HasPrefix(o.App.Path, "/") {
			return browser.Key{}, Errorf(errcode.BadRequest, "app.path %q must be an absolute path", o.App.Path)
		}
		return browser.Key{Kind: browser.Spawned, Path: o.App.Path}, nil
	}
	if o.App.Profile != "" {
		return browser.Key{Kind: browser.Headless, Profile: o.App.Profile}, nil
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
	switch o.WaitUntil {
	case "":
		o.WaitUntil = "settled"
	case "settled", "load", "domcontentloaded", "networkidle0", "networkidle2":
	default:
		return nil, Errorf(errcode.BadRequest, "invalid wait_until %q: use "+waitUntilList, o.WaitUntil)
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
		if err := checkURL(o.URL); err != nil {
			return nil, err
		}
	}
	key, err := s.browserKey(&o)
	if err != nil {
		return nil, err
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
		case !t.tryAcquire():
			s.mu.Unlock()
			return nil, &Error{Code: errcode.Busy, Msg: fmt.Sprintf("tab %q is busy", name), Err: ErrBusy}
		case o.Dialogs != "" && t.dialogs != o.Dialogs:
			// The dialog policy changed: recreate the tab, on the page
			// it showed unless the open names another.
			stale, t = t, nil
			delete(s.tabs, name)
			if o.URL == "" {
				if u := stale.lastURL(); u != "" && u != "about:blank" {
					o.URL = u
					recreated = "the dialog policy changed, so the tab was recreated and loaded " + u + " again"
				}
			}
		}
	}
	if t == nil {
		t = newTab(s, name, key, o.Dialogs)
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
		if err := t.start(ctx, &o); err != nil {
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
		nav, err := t.navigate(ctx, o.URL, o.WaitUntil)
		if err != nil {
			return nil, fmt.Errorf("open tab %q: %w", name, err)
		}
		res.Notes = nav.Notes
		res.Dialog = nav.Dialog
		res.Status = nav.Status
	}
	if recreated != "" {
		res.Notes = append(res.Notes, recreated)
	}
	res.URL, res.Title = t.urlTitle(ctx)
	res.Viewport = t.Viewport()
	return res, nil
}

// Close closes the tab name (or every tab with all) and releases its
// browser; the last tab of a headless browser closes the browser. It
// returns the names closed; closing a missing tab returns none and no
// error.
//
// With kill, closing the last tab of a spawned app also ends its process
// tree; without it the app keeps running and is only disconnected.
func (s *Supervisor) Close(ctx context.Context, name string, all bool, timeout time.Duration, kill ...bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout(timeout))
	defer cancel()
	var victims []*Tab
	s.mu.Lock()
	if all {
		for n, t := range s.tabs {
			victims = append(victims, t)
			delete(s.tabs, n)
		}
	} else {
		n, err := normName(name)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		if t := s.tabs[n]; t != nil {
			victims = append(victims, t)
			delete(s.tabs, n)
		}
	}
	s.mu.Unlock()
	sort.Slice(victims, func(i, j int) bool { return victims[i].name < victims[j].name })
	var names []string
	var errs []error
	for _, t := range victims {
		names = append(names, t.name)
		if err := t.close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close tab %q: %w", t.name, err))
		}
		s.dispose(t, kill...)
	}
	return names, errors.Join(errs...)
}

// dispose releases a removed tab's reference on its browser (once). With
// kill, the last tab of a spawned app also ends the app's process tree.
func (s *Supervisor) dispose(t *Tab, kill ...bool) {
	h := t.browserHandle()
	if h == nil || !t.released.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*time.Second)
	defer cancel()
	last, err := s.reg.Release(ctx, h)
	if err != nil {
		s.log.Warn("release browser", "tab", t.name, "err", err)
	}
	if last && len(kill) > 0 && kill[0] {
		h.KillApp()
	}
}

// heldTargets returns the page targets that live tabs on h hold.
func (s *Supervisor) heldTargets(h *browser.Handle) map[target.ID]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := map[target.ID]bool{}
	for _, t := range s.tabs {
		if id, ok := t.heldOn(h); ok {
			held[id] = true
		}
	}
	return held
}

// Tab returns the live tab name. Errors: no_such_tab, not_alive.
func (s *Supervisor) Tab(name string) (*Tab, error) {
	n, err := normName(name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	t := s.tabs[n]
	s.mu.Unlock()
	if t == nil {
		return nil, &Error{Code: errcode.NoSuchTab, Msg: fmt.Sprintf("no tab named %q", n), Err: ErrNoSuchTab}
	}
	if !t.Alive() {
		return nil, &Error{Code: errcode.NotAlive, Msg: fmt.Sprintf("tab %q is not alive: %s", n, t.DeadReason()), Err: ErrNotAlive}
	}
	return t, nil
}

// Run runs job on the tab name's action slot with the timeout. A busy tab
// fails at once with busy. When the timeout passes (or ctx is cancelled)
// the job is interrupted; if it has not returned within the grace period
// the tab is killed and the error says so. A job that returns after the
// deadline yields a timeout error. Panics in the job become internal errors.
func (s *Supervisor) Run(ctx context.Context, name string, timeout time.Duration, job Job) error {
	t, err := s.Tab(name)
	if err != nil {
		return err
	}
	if !t.tryAcquire() {
		return &Error{Code: errcode.Busy, Msg: fmt.Sprintf("tab %q is busy running another action", t.name), Err: ErrBusy}
	}
	defer t.release()
	asked := timeout
	timeout = s.Timeout(timeout)
	rctx, cancel := opCtx(t.ctx, ctx, timeout, t.deadSig)
	defer cancel()

	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in run", "tab", t.name, "panic", p)
				done <- Errorf(errcode.Internal, "internal error: %v", p)
			}
		}()
		done <- job.Run(rctx, t)
	}()
	select {
	case err = <-done:
		if err != nil && ctx.Err() == nil && !t.Alive() {
			return goneErr(t)
		}
		if err != nil && ctx.Err() != nil && t.Alive() {
			// Cancelled by the caller: the page may still be running what
			// the run started (a loop in an evaluate); a hung one is killed
			// now, not found by the next call.
			s.afterTimeout(t)
		}
		if err != nil && rctx.Err() != nil && ctx.Err() == nil && t.Alive() && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			err = s.timeoutErr(t, timeout, asked, err, s.afterTimeout(t))
		}
		return err
	case <-rctx.Done():
	}
	reason := "timeout"
	if ctx.Err() != nil {
		reason = "cancelled"
	} else if !t.Alive() {
		reason = "the tab is gone"
	}
	job.Interrupt(reason)
	grace := time.NewTimer(s.opts.Grace)
	defer grace.Stop()
	select {
	case err = <-done:
		if err == nil && t.Alive() {
			// It finished as the deadline passed (a click whose navigation
			// committed at the last moment): it did what it was asked.
			return nil
		}
		if !t.Alive() {
			return goneErr(t)
		}
		killed := s.afterTimeout(t)
		if ctx.Err() != nil {
			return Errorf(errcode.Timeout, "run on tab %q cancelled: %w", t.name, ctx.Err())
		}
		return s.timeoutErr(t, timeout, asked, err, killed)
	case <-grace.C:
		s.log.Warn("run did not yield; killing tab", "tab", t.name)
		s.killTab(t, fmt.Sprintf("killed: a run overran its %v timeout and did not stop within %v", timeout, s.opts.Grace))
		return &Error{Code: errcode.Timeout, Msg: fmt.Sprintf("run on tab %q timed out after %v and did not stop; the tab was killed (open it again)", t.name, timeout)}
	}
}

// goneErr is the error of a run whose tab was closed, or whose page
// crashed, under it.
func goneErr(t *Tab) error {
	return &Error{Code: errcode.NotAlive, Msg: fmt.Sprintf("run on tab %q stopped: the tab is gone (%s)", t.name, t.DeadReason()), Err: ErrNotAlive}
}

// timeoutErr is the timeout error of an action on tab t that ran for d,
// when asked asked for (0: the default): it says what the action was
// waiting for (cause's message, a navigation that had not committed), and
// whether the tab was killed after it (killed).
func (s *Supervisor) timeoutErr(t *Tab, d, asked time.Duration, cause error, killed bool) error {
	msg := fmt.Sprintf("the action on tab %q timed out after %v", t.name, d)
	if asked > d && d == s.opts.MaxTimeout {
		msg += fmt.Sprintf(" (%v asked, cut to the maximum; the daemon's --max-timeout or TABPILOT_MAX_TIMEOUT raises it)", asked)
	}
	var e *Error
	switch {
	case errors.As(cause, &e) && e.Code == errcode.Timeout && e.Msg != "" && !strings.HasSuffix(e.Msg, ": timed out") && !strings.HasPrefix(e.Msg, "run stopped"):
		// What the action was waiting for when the time ran out.
		msg += ": " + e.Msg
	case cause != nil && !errors.Is(cause, context.DeadlineExceeded) && !strings.Contains(cause.Error(), "timed out"):
		msg += " (" + cause.Error() + ")"
	}
	if u := t.pendingNavigation(); u != "" && !killed {
		msg += fmt.Sprintf("; the page is still navigating to %s, which has not answered (the page holds every call until it does: open another URL to give up on it)", u)
	}
	if killed {
		msg += fmt.Sprintf("; the page did not answer for %v after it, so the tab was killed (open it again)", probeWait)
	}
	return &Error{Code: errcode.Timeout, Msg: msg, Err: context.DeadlineExceeded}
}

// afterTimeout probes a tab after a run timed out: a page stuck in a loop
// does not answer Runtime.evaluate, and such a tab is killed so the next
// call does not hang on it.
// It reports whether it killed the tab.
func (s *Supervisor) afterTimeout(t *Tab) bool {
	if t.probe(probeWait) {
		return false
	}
	s.killTab(t, fmt.Sprintf("killed: the page did not answer for %v after the action timed out (a script in an endless loop?)", probeWait))
	return true
}

// probeWait is how long a page has to answer the probe after an action
// timed out before its tab is killed.
const probeWait = 1500 * time.Millisecond

// killTab closes a tab's target in the background, removes it from the
// registry and marks it dead with reason.
func (s *Supervisor) killTab(t *Tab, reason string) {
	s.kills.Add(1)
	t.kill(reason)
	s.mu.Lock()
	if s.tabs[t.name] == t {
		delete(s.tabs, t.name)
		s.deadTabs(t)
	}
	s.mu.Unlock()
	s.wg.Go(func() { s.dispose(t) })
}

// deadTabs keeps a killed tab listed as dead until the next open of its
// name, so the caller learns what happened. s.mu is held.
func (s *Supervisor) deadTabs(t *Tab) {
	s.tabs[t.name] = t
}

// tabsRefreshWait bounds how long Tabs waits for a tab's URL and title.
const tabsRefreshWait = 300 * time.Millisecond

// Tabs lists the tabs, sorted by name, with each idle tab's current URL and
// title (Runtime.evaluate, at most tabsRefreshWait) or else the last known,
// then, for each connected or spawned browser a tab is on, the page
// targets of that browser no tab holds (Target.getTargets, at most
// tabsRefreshWait), with Adopted false.
func (s *Supervisor) Tabs(ctx context.Context) []TabInfo {
	s.mu.Lock()
	ts := make([]*Tab, 0, len(s.tabs))
	for _, t := range s.tabs {
		ts = append(ts, t)
	}
	s.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
	// Idle live tabs are asked for their URL and title (at once, each
	// bounded); a busy or unresponsive tab reports the last known ones.
	var wg sync.WaitGroup
	for _, t := range ts {
		if t.Alive() && !t.Busy() {
			wg.Go(func() {
				rctx, cancel := context.WithTimeout(ctx, tabsRefreshWait)
				defer cancel()
				t.urlTitle(rctx)
			})
		}
	}
	wg.Wait()
	out := make([]TabInfo, 0, len(ts))
	for _, t := range ts {
		url, title := t.cachedURLTitle()
		t.evMu.Lock()
		id := t.targetID
		t.evMu.Unlock()
		out = append(out, TabInfo{Name: t.name, Browser: t.browserName(), URL: url, Title: title, Alive: t.Alive(), Busy: t.Busy(),
			TargetID: string(id), Adopted: true})
	}
	return append(out, s.unadopted(ctx)...)
}

// TabCount returns the number of tabs (dead ones listed until their name
// is opened again included).
func (s *Supervisor) TabCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tabs)
}

// unadopted lists the page targets of the connected and spawned browsers
// that no tab holds.
func (s *Supervisor) unadopted(ctx context.Context) []TabInfo {
	var out []TabInfo
	for _, h := range s.reg.Handles() {
		if h.Kind() == browser.Headless || !h.Alive() {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, tabsRefreshWait)
		pages, err := h.Pages(rctx)
		cancel()
		if err != nil {
			s.log.Warn("list pages", "browser", h.Key().String(), "err", err)
			continue
		}
		held := s.heldTargets(h)
		for _, p := range pages {
			if !held[p.ID] {
				out = append(out, TabInfo{Browser: string(h.Kind()), URL: p.URL, Title: p.Title, Alive: true, TargetID: string(p.ID)})
			}
		}
	}
	return out
}

// Shutdown closes every tab and browser, waiting at most until ctx is done;
// what is left then is killed (process groups). The supervisor refuses
// further opens.
func (s *Supervisor) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	_, err := s.Close(ctx, "", true, s.opts.MaxTimeout)
	if rerr := s.reg.Close(context.WithoutCancel(ctx)); rerr != nil && err == nil {
		err = rerr
	}
	s.stop()
	s.wg.Wait()
	return err
}

// MaxTimeout returns the configured cap on timeouts.
func (s *Supervisor) MaxTimeout() time.Duration { return s.opts.MaxTimeout }

// BrowserPIDs returns the process ids of the browsers tabpilot launched or
// spawned (0 for connected ones is left out).
func (s *Supervisor) BrowserPIDs() []int {
	var out []int
	for _, h := range s.reg.Handles() {
		if p := h.PID(); p > 0 && h.Alive() {
			out = append(out, p)
		}
	}
	return out
}
