// Package browser owns the browsers tabpilot drives: finding the Chromium
// executable, launching it with the right flags in its own process group,
// connecting to it over CDP, and a Registry of refcounted Handles keyed by
// browser kind.
//
// A Handle holds one browser connection and the chromedp context that
// binds the connection's lifetime (chromedp closes the whole browser when
// the context that allocated it is cancelled). Tabs are made below it with
// NewTab; the first tab of a launched browser is the page the browser
// started with, so a cold start spends no second renderer. A launched browser runs in its own process group with a
// parent-death signal, so no Chromium outlives the daemon; Close stops it in
// stages: close the browser over CDP, cancel the allocator, kill the group.
//
// Remote browsers: RemoteKey makes the key of a CDP endpoint on the
// network, an http(s)://host:port discovered through /json/version or a
// ws(s):// URL dialed as given (its query, e.g. a pool's ?token=, intact),
// with headers on the websocket upgrade and a connect timeout. GridKey
// and ConnectGrid reach a browser of a Selenium Grid 4: a WebDriver
// session whose CDP proxy (se:cdp) tabpilot attaches to, kept alive
// against the Grid's idle timeout and deleted when the handle closes.
// Headers and credentials live in the Key's unexported part and are never
// logged. A remote handle whose connection drops is not alive, with a
// hint (LostHint) that the next open reconnects; the Registry replaces it.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
)

// Kind is how tabpilot reaches a browser.
type Kind string

// The browser kinds.
const (
	// Headless is a Chromium that tabpilot launches (headless unless
	// Options.Headed).
	Headless Kind = "headless"
	// Spawned is an app that tabpilot starts with --remote-debugging-port.
	Spawned Kind = "spawned"
	// Connected is a browser that runs already and exposes a CDP endpoint,
	// on this machine or on the network (RemoteKey).
	Connected Kind = "connected"
	// Grid is a browser of a WebDriver session on a Selenium Grid 4,
	// reached through the Grid's CDP proxy (GridKey, ConnectGrid).
	Grid Kind = "grid"
)

// Options configure launched browsers. The zero value launches a headless
// Chromium found by Find.
type Options struct {
	// ExecPath is the Chromium executable; empty means Find("").
	ExecPath string
	// Headed shows a window instead of running headless.
	Headed bool
	// Args are extra command-line flags, e.g. "--host-resolver-rules=…".
	// A flag given here overrides a default of the same name.
	Args []string
	// VersionArgs, when set, returns more flags for the executable's
	// version ("156.0.8078.129", ExecVersion), such as a --user-agent
	// that names it; Args override them. A version that cannot be read
	// gives none of them (logged).
	VersionArgs func(version string) []string
	// ProfileDir is a persistent user data directory; empty means a fresh
	// temporary profile, removed when the browser closes.
	ProfileDir string
	// StateDir, when set, receives a record of each launched browser so
	// that Sweep can end it if this process dies without closing it.
	StateDir string
	// StartTimeout bounds the launch; 0 means 30s.
	StartTimeout time.Duration
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

// DefaultFlags are the flags every launched browser gets on top of
// chromedp's defaults: no background traffic, no component updates, no
// first-run UI, no QUIC, and none of the browser window's own WebUI pages.
// Chromium 15x builds its (hidden, in headless) window's omnibox popup as a
// WebUI page (chrome://omnibox-popup.top-chrome) in a renderer process of
// its own, as it starts: traced, 300 to 400 ms of that renderer's main
// thread in the first second, on a machine whose cores the first page's
// load and first actions need then. A --disable-features or
// --enable-features given in Options.Args is merged with these (Chromium
// reads only the last of a repeated switch).
var DefaultFlags = []string{
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--no-first-run",
	"--disable-quic",
	"--mute-audio",
	"--hide-scrollbars",
	"--disable-features=" + strings.Join(noBrowserWebUI, ","),
}

// noBrowserWebUI are the features of the browser window's WebUI pages: the
// omnibox popup (both needed to keep its renderer from starting, measured
// on Chromium 156), its preload and the toolbar's.
var noBrowserWebUI = []string{"InitialWebUI", "WebUIToolbarProcessOverheadExperiment", "PreloadTopChromeWebUI", "WebUIOmniboxPopup", "WebUIOmniboxAimPopup"}

// chromedpFeatures are the feature switches chromedp's
// DefaultExecAllocatorOptions set, which a merged switch must keep.
var chromedpFeatures = []string{"--disable-features=Translate,BlinkGenPropertyTrees", "--enable-features=NetworkService,NetworkServiceInProcess"}

// mergeFeatures returns flags with every --disable-features and every
// --enable-features merged into one of each, where the first of its kind
// stood, with the union of their comma-separated lists in order: Chromium
// reads only the last of a repeated switch, and so does chromedp's Flag.
// A feature named by both takes the later switch's word (the caller's
// --enable-features of a feature tabpilot's defaults disable enables it;
// Chromium would let the disable win), in the form given last, at the
// place it was first given. A feature is its name, without the
// field-trial parameters (Name:param/value) or group (Name<Trial).
func mergeFeatures(flags []string) []string {
	const dis, en = "--disable-features", "--enable-features"
	out := make([]string, 0, len(flags))
	at := map[string]int{}          // switch -> index in out
	lists := map[string][]string{}  // switch -> its features, in order
	state := map[string]string{}    // feature name -> the switch that names it last
	entry := map[[2]string]string{} // switch, name -> the feature as given last
	for _, f := range flags {
		// Chromium takes a switch with one dash or two, and a bare one
		// (no value) as an empty list.
		sw, val, _ := strings.Cut(strings.TrimSpace(f), "=")
		sw = "--" + strings.TrimLeft(sw, "-")
		if sw != dis && sw != en {
			out = append(out, f)
			continue
		}
		if _, ok := at[sw]; !ok {
			at[sw] = len(out)
			out = append(out, "")
		}
		for _, feat := range strings.Split(strings.Trim(val, `"`), ",") {
			feat = strings.TrimSpace(feat)
			name, _, _ := strings.Cut(feat, ":")
			name, _, _ = strings.Cut(name, "<")
			if name == "" {
				continue
			}
			state[name] = sw
			if _, ok := entry[[2]string{sw, name}]; !ok {
				lists[sw] = append(lists[sw], name)
			}
			entry[[2]string{sw, name}] = feat
		}
	}
	for sw, i := range at {
		var keep []string
		for _, name := range lists[sw] {
			if state[name] == sw {
				keep = append(keep, entry[[2]string{sw, name}])
			}
		}
		out[i] = sw + "=" + strings.Join(keep, ",")
	}
	return out
}

// CheckArgs refuses, with bad_request, an extra browser argument that is
// not a Chromium switch (-name, --name or --name=value): chromedp would
// pass "Translate" on as --Translate, which Chromium ignores without a
// word.
func CheckArgs(args []string) error {
	for _, a := range args {
		name, _ := splitFlag(a)
		if !strings.HasPrefix(strings.TrimSpace(a), "-") || name == "" {
			return &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("browser argument %q is not a Chromium switch", a),
				Hint: "Give each as --name or --name=value, e.g. --disable-features=Translate."}
		}
	}
	return nil
}

// Handle is one browser connection. Its methods are safe for concurrent use.
type Handle struct {
	kind    Kind
	key     Key
	log     *slog.Logger
	version string
	product string

	allocCancel context.CancelFunc
	ctx         context.Context // the allocating context; parent of every tab
	// first is the page a launched browser started with, from which ctx's
	// own session is detached; firstTaken is set once a tab holds it.
	first      target.ID
	firstTaken atomic.Bool
	cancel     context.CancelFunc
	pid        int
	appPath    string
	stateDir   string
	lost       <-chan struct{}
	// hint is the NotAlive hint once the connection is gone (remote kinds).
	hint string
	// reason, when set before done closes, says why the handle died.
	reason atomic.Pointer[string]
	// closeHook runs last in Close (a Grid session's DELETE).
	closeHook func(ctx context.Context)
	gridID    string        // the WebDriver session of a Grid handle
	done      chan struct{} // closed when the connection is lost or closed
	closeOnce sync.Once
	closed    chan struct{}
}

// Kind returns how the browser is reached.
func (h *Handle) Kind() Kind { return h.kind }

// Key returns the registry key of the handle.
func (h *Handle) Key() Key { return h.key }

// Version returns the browser's product string, e.g. "Chrome/131.0.6778.85"
// (Browser.getVersion).
func (h *Handle) Version() string { return h.product }

// PID returns the browser process id for a launched browser, else 0.
func (h *Handle) PID() int { return h.pid }

// Done is closed when the browser connection is lost (crash, kill,
// disconnect) or the handle is closed.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Alive reports whether the connection is up.
func (h *Handle) Alive() bool {
	select {
	case <-h.done:
		return false
	default:
		return true
	}
}

// LostHint says what to do once the handle is not alive: for a remote
// browser, that the next open reconnects; "" for a local one. With the
// reason a Grid's keepalive saw, when it ended the handle.
func (h *Handle) LostHint() string {
	if r := h.reason.Load(); r != nil && h.hint != "" {
		return *r + ". " + h.hint
	}
	return h.hint
}

// Context returns the handle's browser context: a chromedp context whose
// children (chromedp.NewContext) are new tabs. It is cancelled by Close.
func (h *Handle) Context() context.Context { return h.ctx }

// NewTab attaches to a new page target and returns the tab's chromedp
// context: cancel closes the target. With no options, the first call on a
// launched browser takes the page the browser started with (about:blank,
// its renderer already running), and later calls create a page
// (Target.createTarget); opts (chromedp.WithTargetID) attach to another.
// ctx bounds only the creation: if it ends first, the half-made tab is
// closed and ctx's error returned.
func (h *Handle) NewTab(ctx context.Context, opts ...chromedp.ContextOption) (context.Context, context.CancelFunc, error) {
	if !h.Alive() {
		return nil, nil, &Error{Code: errcode.NotAlive, Msg: "the browser is gone", Hint: h.LostHint()}
	}
	if len(opts) == 0 && h.first != "" && h.firstTaken.CompareAndSwap(false, true) {
		tctx, cancel, err := h.NewTab(ctx, chromedp.WithTargetID(h.first))
		if err == nil || ctx.Err() != nil {
			return tctx, cancel, err
		}
		h.log.Debug("take the first page", "err", err) // closed meanwhile: make one
	}
	tctx, cancel := chromedp.NewContext(h.ctx, opts...)
	errc := make(chan error, 1)
	// The first Do binds the target to tctx; it must run without a deadline.
	go func() { errc <- chromedp.Do(tctx) }()
	select {
	case err := <-errc:
		if err != nil {
			cancel()
			return nil, nil, fmt.Errorf("create tab: %w", err)
		}
		return tctx, cancel, nil
	case <-ctx.Done():
		go func() { <-errc; cancel() }()
		return nil, nil, fmt.Errorf("create tab: %w", ctx.Err())
	case <-h.done:
		cancel()
		return nil, nil, &Error{Code: errcode.NotAlive, Msg: "the browser went away while creating a tab", Hint: h.LostHint()}
	}
}

// Close stops the browser in stages, waiting at most until ctx is done:
// close the browser over CDP (Browser.close), cancel the allocator (which
// kills the process and removes a temporary profile), then kill the
// process group. For a connected browser it only disconnects; for a Grid
// browser it disconnects, then deletes the WebDriver session.
func (h *Handle) Close(ctx context.Context) error {
	h.closeOnce.Do(func() {
		go func() {
			defer close(h.closed)
			if h.kind == Headless {
				// Ask the browser to quit; chromedp.Cancel does Browser.close
				// and waits for the process.
				_ = chromedp.Cancel(h.ctx)
			}
			h.cancel()
			h.allocCancel()
			h.killGroup()
			if h.stateDir != "" && h.pid > 0 {
				os.Remove(recordPath(h.stateDir, h.pid))
			}
			if h.closeHook != nil {
				h.closeHook(context.WithoutCancel(ctx))
			}
		}()
	})
	select {
	case <-h.closed:
		return nil
	case <-ctx.Done():
		// Must-do: the group dies even if the graceful path hangs.
		h.killGroup()
		return fmt.Errorf("close browser: %w", ctx.Err())
	}
}

// killGroup sends SIGKILL to the launched browser's process group.
func (h *Handle) killGroup() {
	if h.pid > 0 && h.kind == Headless {
		_ = syscall.Kill(-h.pid, syscall.SIGKILL)
	}
}

// Launch starts a Chromium (the headless kind) and connects to it over a
// pipe (--remote-debugging-pipe). The process runs in its own process group
// with SIGKILL as its parent-death signal. parent is the long-lived context
// the browser hangs below (the supervisor's, never a request's); ctx bounds
// only the launch.
//
// Errors: *Error with errcode.BrowserUnavailable when no executable is
// found or it fails to start.
func Launch(parent, ctx context.Context, o *Options) (*Handle, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := CheckArgs(opts.Args); err != nil {
		return nil, err
	}
	start := time.Now()
	exe, err := Find(opts.ExecPath)
	if err != nil {
		return nil, err
	}
	aopts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	aopts = append(aopts,
		chromedp.ExecPath(exe),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Setpgid = true
			cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		}),
	)
	if opts.Headed {
		aopts = append(aopts, chromedp.VisibleWindow)
	}
	if opts.ProfileDir != "" {
		if err := os.MkdirAll(opts.ProfileDir, 0o700); err != nil {
			return nil, &Error{Code: errcode.BrowserUnavailable, Msg: fmt.Sprintf("profile %s: %v", opts.ProfileDir, err), Err: err}
		}
		if err := checkProfile(opts.ProfileDir); err != nil {
			return nil, err
		}
		aopts = append(aopts, chromedp.UserDataDir(opts.ProfileDir))
	}
	flags := append(append([]string{}, chromedpFeatures...), DefaultFlags...)
	var made string // the version the flags were made for
	if opts.VersionArgs != nil {
		if v, err := ExecVersion(exe); err != nil {
			log.Warn("read the browser's version", "err", err)
		} else {
			made = v
			flags = append(flags, opts.VersionArgs(v)...)
		}
	}
	for _, f := range mergeFeatures(append(flags, opts.Args...)) {
		name, val := splitFlag(f)
		if name == "" {
			continue
		}
		aopts = append(aopts, chromedp.Flag(name, val))
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.WithoutCancel(parent), aopts...)
	bctx, bcancel := newBrowserContext(allocCtx, log)
	h := &Handle{kind: Headless, key: Key{Kind: Headless, Profile: opts.ProfileDir}, log: log,
		allocCancel: allocCancel, ctx: bctx, cancel: bcancel,
		done: make(chan struct{}), closed: make(chan struct{})}

	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(bctx) }() // no deadline: binds the browser's life
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("no CDP connection within %v", timeout)
	}
	if err != nil {
		bcancel()
		allocCancel()
		return nil, &Error{Code: errcode.BrowserUnavailable, Msg: fmt.Sprintf("launch %s: %v", exe, err), Err: err}
	}
	c := chromedp.FromContext(bctx)
	if p := c.Browser.Process(); p != nil {
		h.pid = p.Pid
	}
	// chromedp attached the allocating context to the page the browser
	// started with. Detach it, so that the first tab takes that page (no
	// Target.createTarget, no second renderer) and its events go to one
	// session only.
	if c.Target != nil {
		if _, err := cdp.Call(ctx, c.Browser, target.DetachFromTarget, target.DetachFromTargetParams{SessionID: c.Target.SessionID}); err == nil {
			h.first = c.Target.TargetID
		} else {
			log.Debug("detach from the first page", "err", err)
		}
	}
	if v, err := cdp.Call(ctx, c.Browser, browser.GetVersion, cdp.Empty{}); err == nil {
		h.product = v.Product
		h.version = v.UserAgent
		if made != "" && !noteLaunched(exe, made, v.Product, h.pid) {
			log.Warn("the browser's version is not the one its flags were made for (it changed behind its launcher); the next launch has the right ones", "made_for", made, "version", v.Product)
		}
	}
	if err := writeRecord(opts.StateDir, h.pid, opts.ProfileDir == ""); err != nil {
		log.Warn("record browser", "err", err)
	}
	h.stateDir = opts.StateDir
	go h.watch(c.Browser.LostConnection)
	log.Info("browser launched", "exec", exe, "pid", h.pid, "version", h.product, "took", time.Since(start))
	return h, nil
}

// watch closes h.done when the connection is lost, the handle's context
// ends, or the launched process is gone. A killed browser's children can
// keep the pipe open, so the process itself is polled too; its group is
// then killed so no child lingers.
func (h *Handle) watch(lost <-chan struct{}) {
	defer close(h.done)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-lost:
			h.killGroup()
			return
		case <-h.ctx.Done():
			return
		case <-tick.C:
			if h.pid > 0 && h.kind == Headless && !processAlive(h.pid) {
				h.log.Warn("browser process is gone", "pid", h.pid)
				h.killGroup()
				return
			}
		}
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil && !zombie(pid)
}

// UserAgent returns the browser's default user agent (Browser.getVersion).
func (h *Handle) UserAgent() string { return h.version }

// splitFlag turns "--name=value" or "--name" into chromedp.Flag arguments.
func splitFlag(f string) (string, any) {
	f = strings.TrimLeft(strings.TrimSpace(f), "-")
	if f == "" {
		return "", nil
	}
	if name, val, ok := strings.Cut(f, "="); ok {
		if val == "false" {
			return name, false // drops a default flag such as --enable-automation
		}
		return name, strings.Trim(val, `"`)
	}
	return f, true
}

// candidates are the executable names and paths Find tries, in order.
var candidates = []string{
	"chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
	"/usr/bin/chromium", "/usr/lib/chromium/chromium", "/usr/bin/chromium-browser",
	"/snap/bin/chromium", "/usr/bin/google-chrome", "/opt/google/chrome/chrome",
}

// Find returns the Chromium executable: explicit when non-empty (it must
// exist and be executable), else the first of chromium, chromium-browser,
// google-chrome, google-chrome-stable on PATH, then their usual paths.
// Errors: *Error with errcode.BrowserUnavailable, whose hint (the code's)
// says how to install it.
func Find(explicit string) (string, error) {
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", &Error{Code: errcode.BrowserUnavailable, Msg: fmt.Sprintf("chromium executable %q not usable: %v", explicit, err), Err: ErrNoBrowser}
		}
		return p, nil
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	return "", &Error{Code: errcode.BrowserUnavailable, Msg: "no Chromium found (tried chromium, chromium-browser, google-chrome, google-chrome-stable)", Err: ErrNoBrowser}
}

// IsLost reports whether err means the browser connection is gone.
func IsLost(err error) bool {
	return errors.Is(err, chromedp.ErrTargetDetached) || strings.Contains(fmt.Sprint(err), "lost the connection")
}
