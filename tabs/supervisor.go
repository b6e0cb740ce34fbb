// Package tabs owns the life of tabs: the Supervisor, which keeps the
// registry of browser handles and of named tabs and runs each open, close
// and run with a timeout, and the Tab, a named page target with its action
// slot. A Tab is its page's layers embedded: the page core
// (tabs/pagecore), the observer (tabs/observe), the actor (tabs/act) and
// the capturer (tabs/capture), whose exported methods are the tab's; this
// package adds names, reuse, kills, popups adopted as tabs, stealth on the
// tabs it launches, and the routes and network record it wires to each tab.
//
// It must not hold a page's CDP logic itself: what an action, an
// observation or a capture does belongs to the layer below that owns it.
//
// Every Supervisor method is safe for concurrent use. A request's context
// bounds only that request: browsers hang below the supervisor's own
// context and tabs below their browser's, and an operation's context is
// derived from the tab's and linked to the request with context.AfterFunc.
// A tab runs one action at a time; a second one fails at once with busy.
// Each open, close and run has a timeout; a run that overruns is
// interrupted, and if it does not yield within a grace period its tab is
// killed (the page target closed) while the supervisor goes on.
//
// A tab's browser is headless (launched), spawned, connected (a CDP
// endpoint, local or a pool's, with headers) or a Selenium Grid session
// (OpenOptions.App); tabs on the browsers tabpilot makes (headless, Grid)
// are pages of their own. A tab may live in a named browser context
// (OpenOptions.Context) with its own cookies and storage, refcounted by
// its tabs and disposed with the last.
package tabs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/target"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/secrets"
	"github.com/tabpilot/tabpilot/tabs/record"
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
	// policy: the README's "Safety" section).
	Guard Guard
	// ContextProxy, when set, stands in for a context's upstream proxy
	// (OpenOptions.Proxy): the context's proxyServer is the URL it
	// returns, e.g. the egress guard chained to the upstream (api/service
	// does so under the guard), and loopback goes through it too. The
	// upstream's credentials are then its business. Errors refuse the
	// open.
	ContextProxy func(ctx context.Context, upstream string) (string, error)
	// Secrets, when set, are the session's named secrets (package
	// secrets): type and fill expand {{secret:NAME}} with them just before
	// the text goes to the page, and observations and the files the tabs
	// write (HARs, body files, observations) show their values masked.
	Secrets *secrets.Store
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

// App selects a spawned, connected or Grid browser; Supervisor.browserKey
// (open.go) turns it into a browser.Key.
type App struct {
	Path string
	// CDPURL is a CDP endpoint: http(s)://host:port (discovered through
	// /json/version) or ws(s)://… dialed as given, query intact
	// (browser.RemoteKey).
	CDPURL string
	// CDPHeader goes on the websocket upgrade (and the discovery) of
	// CDPURL, e.g. Authorization: Bearer T. Its values are never shown.
	CDPHeader http.Header
	// ConnectTimeout bounds the connect to CDPURL or Grid; 0 means the
	// browser package's defaults (10 s, a Grid 60 s).
	ConnectTimeout time.Duration
	// Grid is a Selenium Grid 4 (http(s)://host:4444, user:password@
	// allowed): the tab's browser is a WebDriver session there, attached
	// through its CDP proxy (browser.GridKey).
	Grid, GridUser, GridPassword string
	// GridKeepAlive is how often the Grid hears that the session is in
	// use (browser.GridOptions.KeepAlive); 0 means 60 s.
	GridKeepAlive time.Duration
	Args          []string
	Target        string
	Profile       string
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
	// Context puts a new tab in the browser context of that name
	// (Target.createBrowserContext), with its own cookies, storage and
	// cache, shared by the tabs of that name on the same browser and
	// disposed when the last of them closes. "" is the browser's default
	// context.
	Context string
	// Proxy is the upstream proxy of a new Context (its proxyServer),
	// e.g. http://127.0.0.1:3128 or socks5://host:1080; only with Context.
	Proxy string
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
	// Context is the tab's browser context (OpenOptions.Context), "" for
	// the default one.
	Context string `json:"context,omitempty"`
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

	ctxs contexts

	crashes, kills atomic.Int64

	// rec is the recording in progress (recording.go), nil when none.
	rec atomic.Pointer[record.Recorder]
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
	s.ctxs.chain = s.opts.ContextProxy
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
	s.log = s.opts.Secrets.Logger(s.log) // no secret reaches a log line
	s.ctx, s.stop = context.WithCancel(context.Background())
	bo := s.opts.Browser
	bo.Logger = s.log
	bo.Args = append([]string{fmt.Sprintf("--window-size=%d,%d", s.opts.Viewport.Width, s.opts.Viewport.Height)}, bo.Args...)
	if !s.opts.NoStealth {
		bo.Args = append(s.stealthFlags(), bo.Args...)
		bo.VersionArgs = stealthVersionFlags
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
	sort.Slice(victims, func(i, j int) bool { return victims[i].Name() < victims[j].Name() })
	var names []string
	var errs []error
	for _, t := range victims {
		names = append(names, t.Name())
		if err := t.close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close tab %q: %w", t.Name(), err))
		}
		s.dispose(t, kill...)
	}
	return names, errors.Join(errs...)
}

// dispose releases a removed tab's reference on its browser (once). With
// kill, the last tab of a spawned app also ends the app's process tree.
func (s *Supervisor) dispose(t *Tab, kill ...bool) {
	h := t.BrowserHandle()
	if h == nil || !t.released.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*time.Second)
	defer cancel()
	if t.ctxHeld.Load() {
		s.ctxs.release(ctx, h, t.context, s.log)
	}
	last, err := s.reg.Release(ctx, h)
	if err != nil {
		s.log.Warn("release browser", "tab", t.Name(), "err", err)
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
		if id, ok := t.HeldOn(h); ok {
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
		return nil, &Error{Code: errcode.NotAlive, Msg: fmt.Sprintf("tab %q is not alive: %s", n, t.DeadReason()), Hint: t.lostHint(), Err: ErrNotAlive}
	}
	return t, nil
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
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name() < ts[j].Name() })
	// Idle live tabs are asked for their URL and title (at once, each
	// bounded); a busy or unresponsive tab reports the last known ones.
	var wg sync.WaitGroup
	for _, t := range ts {
		if t.Alive() && !t.Busy() {
			wg.Go(func() {
				rctx, cancel := context.WithTimeout(ctx, tabsRefreshWait)
				defer cancel()
				t.URLTitle(rctx)
			})
		}
	}
	wg.Wait()
	out := make([]TabInfo, 0, len(ts))
	for _, t := range ts {
		url, title := t.CachedURLTitle()
		id := t.TargetID()
		out = append(out, TabInfo{Name: t.Name(), Browser: t.browserName(), URL: url, Title: title, Alive: t.Alive(), Busy: t.Busy(),
			TargetID: string(id), Context: t.context, Adopted: true})
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
		if h.Kind() == browser.Headless || h.Kind() == browser.Grid || !h.Alive() {
			continue // the browsers tabpilot made: their other pages are not the user's (a Grid's is chromedriver's window)
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

// dlDirs are the download directories of the supervisors.
var (
	dlDirsMu sync.Mutex
	dlDirs   = map[*Supervisor]string{}
)

// DownloadDir returns the directory downloads of the supervisor's
// headless tabs go to: the one SetDownloadDir gave, else one per
// supervisor (so one per daemon session) with a random name under the
// temp directory. The browser creates it (mode 0700) at the first
// download, so a session without downloads leaves nothing behind.
func (s *Supervisor) DownloadDir() (string, error) {
	dlDirsMu.Lock()
	defer dlDirsMu.Unlock()
	if d, ok := dlDirs[s]; ok {
		return d, nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("name the download directory: %w", err)
	}
	d := filepath.Join(os.TempDir(), "tabpilot-downloads-"+hex.EncodeToString(b[:]))
	dlDirs[s] = d
	return d, nil
}

// SetDownloadDir sets the directory of the supervisor's downloads (an
// absolute path; the browser creates it when missing). Call it before the
// first Open: tabs opened earlier keep the old one.
func (s *Supervisor) SetDownloadDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return Errorf(errcode.BadRequest, "download directory %q is not an absolute path", dir)
	}
	dlDirsMu.Lock()
	dlDirs[s] = filepath.Clean(dir)
	dlDirsMu.Unlock()
	return nil
}
