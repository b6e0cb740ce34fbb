package tabs

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/tabs/act"
	"github.com/tabpilot/tabpilot/tabs/capture"
	"github.com/tabpilot/tabpilot/tabs/observe"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
	"github.com/tabpilot/tabpilot/tabs/route"
)

// Tab is a named page target. Its action methods are safe for concurrent
// use, but the supervisor runs one action at a time on a tab.
//
// A Tab is its page's layers, embedded: the page core (pagecore.Page), the
// observer (observe.Observer), the actor (act.Actor) and the capturer
// (capture.Capturer), whose exported methods are the tab's. The tab itself
// adds its name in the supervisor, its action slot, and its life.
type Tab struct {
	*pagecore.Page
	*observe.Observer
	*act.Actor
	*capture.Capturer

	sup *Supervisor
	key browser.Key

	cancel context.CancelFunc
	// borrowed marks a page tabpilot attached to but did not open: closing
	// the tab only detaches.
	borrowed bool
	// context is the tab's browser context (OpenOptions.Context), "" for
	// the default; ctxHeld is set once the tab holds a reference on it.
	context  string
	ctxHeld  atomic.Bool
	released atomic.Bool
	opened   atomic.Bool
	// unsettled is set on a popup until its first run: the page opened it,
	// and nothing waited for it to settle as open waits (see Run).
	unsettled atomic.Bool
	// firstURL is a popup's first page's URL, as RunPopup saw its request.
	firstURL string

	slot chan struct{}

	// mu guards the viewport, the emulation and the router.
	mu       sync.Mutex
	viewport Viewport
	// viewportSet is true once the tab set its viewport (setViewport): a
	// reset emulation sets it again.
	viewportSet bool
	// emu is the tab's emulation (Emulate), merged over its calls.
	emu    emuState
	routes *route.Router
	// proxyAuth are the credentials of the tab's context proxy, which
	// its router answers the proxy's challenges with; its popups inherit
	// them.
	proxyAuth *route.Credentials
}

func newTab(s *Supervisor, name string, key browser.Key, dialogs string) *Tab {
	t := &Tab{sup: s, key: key, slot: make(chan struct{}, 1), viewport: s.opts.Viewport}
	t.Page = pagecore.New(name, dialogs, t.pageEnv())
	t.Observer = observe.NewObserver(t.Page, s.log)
	t.Actor = act.NewActor(t.Observer, s.log, func(f func()) { s.wg.Go(f) }, func() (int, int) {
		vp := t.layout()
		return vp.Width, vp.Height
	})
	t.Capturer = capture.NewCapturer(t.Actor, s.log, s.opts.ScreenshotDir, func() float64 { return t.layout().Scale })
	return t
}

func (t *Tab) tryAcquire() bool {
	select {
	case t.slot <- struct{}{}:
		return true
	default:
		return false
	}
}

func (t *Tab) release() { <-t.slot }

// Busy reports whether an action holds the tab.
func (t *Tab) Busy() bool { return len(t.slot) > 0 }

func (t *Tab) kill(reason string) {
	t.MarkDead(reason)
	if t.cancel != nil {
		// Closes the target; may wait on a hung renderer.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = t.closeTarget(ctx)
		}()
	}
}

func (t *Tab) close(ctx context.Context) error {
	t.MarkDead("closed")
	if t.cancel == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- t.closeTarget(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("close target: %w", ctx.Err())
	}
}

// closeTarget ends the tab's chromedp context, which closes its page
// (Target.closeTarget) unless it is borrowed, and then sees that the
// page is gone. Chromium answers closeTarget before it closes the page,
// and a page that commits a navigation meanwhile, one that sends itself
// on again and again (a refresh loop) on a loaded machine, keeps running
// (a fresh-user trial saw 8 such pages in 16 closes): closeTarget is
// sent again until Target.getTargets no longer lists it, within ctx.
func (t *Tab) closeTarget(ctx context.Context) error {
	id := t.TargetID()
	var b *chromedp.Browser
	if c := chromedp.FromContext(t.Context()); c != nil {
		b = c.Browser
	}
	t.cancel()
	if t.borrowed || b == nil || id == "" {
		return nil
	}
	for {
		res, err := cdp.Call(ctx, b, target.GetTargets, target.GetTargetsParams{})
		if err != nil {
			return nil // the browser is gone, or ctx ended: so is the page, or it goes with the browser
		}
		if !slices.ContainsFunc(res.TargetInfos, func(i *target.Info) bool { return i.TargetID == id }) {
			return nil
		}
		if _, err := cdp.Call(ctx, b, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
			return nil // gone meanwhile ("No target with given id")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("close target: the page %s is still open: %w", id, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (t *Tab) browserName() string { return string(t.key.Kind) }

// lostHint is the hint of a tab whose remote browser's connection
// dropped (browser.Handle.LostHint), else "".
func (t *Tab) lostHint() string {
	if h := t.BrowserHandle(); h != nil && !h.Alive() {
		return h.LostHint()
	}
	return ""
}

// BrowserContext returns the tab's browser context name, "" for the default.
func (t *Tab) BrowserContext() string { return t.context }

// Browser returns the kind and version of the tab's browser.
func (t *Tab) Browser() (kind, version string) {
	h := t.BrowserHandle()
	if h == nil {
		return string(t.key.Kind), ""
	}
	return string(h.Kind()), h.Version()
}

// Viewport returns the tab's viewport.
func (t *Tab) Viewport() Viewport {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.viewport
}

// pageEnv is what the tab's Page needs from the supervisor and the tab.
func (t *Tab) pageEnv() pagecore.Env {
	s := t.sup
	return pagecore.Env{
		Log:            s.log,
		Go:             func(f func()) { s.wg.Go(f) },
		Crashed:        func() { s.crashes.Add(1) },
		DownloadDir:    s.DownloadDir,
		Guard:          s.opts.Guard,
		NetworkIdleMax: s.opts.NetworkIdleMax,
		Headless:       t.key.Kind == browser.Headless,
		WorldScript:    observe.WalkerJS,
		HeldScripts:    act.HeldScripts,
		TopNavigated:   func(restored bool) { t.Observer.Reset(restored) },
		Popup:          func(info *target.Info) { s.wg.Go(func() { s.adoptPopup(t, info) }) },
		Secrets:        s.opts.Secrets,
	}
}
