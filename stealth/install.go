package stealth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Log keys.
const (
	logKeyTarget = "target"
	logKeyType   = "type"
	logKeyErr    = "err"
	logKeyTook   = "took"
)

// Install installs the patches on the page target of ctx before any page script runs, and keeps
// carrying them into the dedicated and shared workers that the page starts, for as long as ctx
// lives. ctx must be a chromedp context that can run actions (chromedp.Run); pass the tab's
// long-lived context, not a request's: its cancellation ends the worker patching. Call it on a
// fresh tab, before the first navigation. It is safe to call concurrently for many tabs of one
// browser.
//
// CDP: Browser.getVersion (for the user agent and client hints); then, sent at once and awaited
// together, on the page session Page.addScriptToEvaluateOnNewDocument with [Script] and
// runImmediately (Chromium runs it in every same-process frame, srcdoc and about:blank iframes
// included, before their scripts), Emulation.setUserAgentOverride (user agent without
// "HeadlessChrome", Accept-Language, platform and userAgentMetadata agreeing with it),
// setAutomationOverride(false), setLocaleOverride, setTimezoneOverride and
// setHardwareConcurrencyOverride (when set), setFocusEmulationEnabled(true),
// setDeviceMetricsOverride (the screen; see [MetricsOverride]) and Target.setAutoAttach with
// waitForDebuggerOnStart and flatten (the page's dedicated workers), and on the browser
// Target.getTargetInfo (the tab's browser context). Last, exactly once per browser and never
// again, Target.setAutoAttach on the browser session, filtered to shared workers (a shared worker
// is no page's child; sending that command again once shared workers have run crashes Chromium
// 156: "Check failed: worker_host_" in SharedWorkerDevToolsAgentHost). Every Install waits until
// that command is answered.
//
// Each worker that attaches paused is patched from a goroutine of its own, through a session of
// its own (Target.attachToTarget; Runtime.evaluate of the script with the locale and time zone
// overrides, then Runtime.runIfWaitingForDebugger); then its paused auto-attach session is
// detached, which lets it run. A patch that fails or takes over a minute is given up and the
// worker runs unpatched: no worker stays paused. A dedicated worker gets its page's options. A
// shared worker is shared by the pages of its origin in a browser context: it gets the options of
// the most recent Install still open in its browser context (in the browser when its context has
// none), so give tabs that need different options different browser contexts
// (chromedp.WithNewBrowserContext). Listeners only start goroutines.
//
// Out-of-process (cross-site) iframes are not paused: Chromium releases a paused frame only on
// the auto-attach session, which chromedp cannot address. Their documents get the launch-level
// stealth of [Flags] (the --user-agent, navigator.webdriver false) but not the script.
//
// Errors: ErrNoTarget without a chromedp context; ctx's error when it ends first; otherwise the
// first failing CDP call, wrapped (a failed browser-level auto-attach fails every later Install on
// that browser too, since it is never sent again).
func Install(ctx context.Context, o *Options) error {
	c := o.withDefaults()
	if chromedp.FromContext(ctx) == nil {
		return ErrNoTarget
	}
	ver, err := chromedp.CallBrowser(ctx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return fmt.Errorf("stealth: Browser.getVersion: %w", err)
	}
	ua, err := userAgentFor(c, ver.Product, ver.UserAgent)
	if err != nil {
		return fmt.Errorf("stealth: %w", err)
	}
	src := script(c, scriptOptionsFor(c, ua))
	inst := &installer{c: c, ua: ua, src: src, log: c.Logger}
	// The page's commands, the tab's target info and the page's auto-attach are independent:
	// they go at once.
	if err := chromedp.Do(ctx, chromedp.Func(func(actx context.Context, t *chromedp.Target) error {
		return concurrently(
			func() error { return inst.page(actx, t) },
			func() error {
				info, err := chromedp.CallBrowser(actx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.TargetID})
				if err != nil {
					return fmt.Errorf("stealth: Target.getTargetInfo: %w", err)
				}
				if info.TargetInfo != nil {
					inst.browserContext = info.TargetInfo.BrowserContextID
				}
				return nil
			},
			func() error { return inst.watch(ctx) },
		)
	})); err != nil {
		return err
	}
	return watchShared(ctx, inst)
}

// installer holds what Install computed once for a page and its children.
type installer struct {
	c   Options
	ua  *userAgent
	src string
	log *slog.Logger
	// browserContext is the browser context of the tab (Target.getTargetInfo), which picks the
	// installer of a shared worker.
	browserContext cdp.BrowserContextID
}

// workerPatchTimeout bounds the patch of one worker: past it the worker is let run unpatched
// rather than stay paused (a worker that ends while it is patched never answers).
const workerPatchTimeout = time.Minute

// acceptLanguage returns the Accept-Language list for the languages; Chromium adds the q-values
// ("en-US,en" is sent as "en-US,en;q=0.9").
func acceptLanguage(langs []string) string {
	return strings.Join(langs, ",")
}

// page runs the per-page steps on the page session t. The commands are independent of one
// another, so they are sent at once (Chromium handles a session's commands in order of arrival)
// and waited for together: one round trip instead of eight. The error is the first of the list
// that failed.
func (in *installer) page(ctx context.Context, t cdp.Session) error {
	yes := true
	md := in.ua.Metadata
	return concurrently(
		func() error {
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: in.src, RunImmediately: &yes,
			})
			return wrap(err, "Page.addScriptToEvaluateOnNewDocument")
		},
		func() error {
			_, err := cdp.Call(ctx, t, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
				UserAgent: in.ua.UserAgent, AcceptLanguage: acceptLanguage(in.c.Languages), Platform: in.ua.Platform,
				UserAgentMetadata: &md,
			})
			return wrap(err, "Emulation.setUserAgentOverride")
		},
		func() error {
			if _, err := cdp.Call(ctx, t, emulation.SetAutomationOverride, emulation.SetAutomationOverrideParams{Enabled: false}); err != nil {
				in.log.Debug("stealth: Emulation.setAutomationOverride", logKeyErr, err)
			}
			return nil
		},
		func() error {
			_, err := cdp.Call(ctx, t, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: in.c.Locale})
			return wrap(err, "Emulation.setLocaleOverride("+in.c.Locale+")")
		},
		func() error {
			if in.c.TimeZone == "" {
				return nil
			}
			_, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: in.c.TimeZone})
			return wrap(err, "Emulation.setTimezoneOverride("+in.c.TimeZone+")")
		},
		func() error {
			if in.c.HardwareConcurrency <= 0 {
				return nil
			}
			_, err := cdp.Call(ctx, t, emulation.SetHardwareConcurrencyOverride, emulation.SetHardwareConcurrencyOverrideParams{
				HardwareConcurrency: int64(in.c.HardwareConcurrency),
			})
			return wrap(err, "Emulation.setHardwareConcurrencyOverride")
		},
		func() error {
			_, err := cdp.Call(ctx, t, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
			return wrap(err, "Emulation.setFocusEmulationEnabled")
		},
		func() error {
			_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, MetricsOverride(&in.c, 0, 0))
			return wrap(err, "Emulation.setDeviceMetricsOverride")
		},
	)
}

// workerOverrides sends a worker the Emulation overrides that workers accept (the locale and
// time zone, so that Intl and Date agree with the page), at once. A worker that refuses one keeps
// the browser's value (a dedicated worker already has its page's: "Another locale override is
// already in effect"); the failure is logged.
func (in *installer) workerOverrides(ctx context.Context, t cdp.Session) []func() error {
	return []func() error{
		func() error {
			if _, err := cdp.Call(ctx, t, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: in.c.Locale}); err != nil {
				in.log.Debug("stealth: worker Emulation.setLocaleOverride", logKeyErr, err)
			}
			return nil
		},
		func() error {
			if in.c.TimeZone == "" {
				return nil
			}
			if _, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: in.c.TimeZone}); err != nil {
				in.log.Debug("stealth: worker Emulation.setTimezoneOverride", logKeyErr, err)
			}
			return nil
		},
	}
}

// wrap wraps a failed CDP call's error with the package and the method.
func wrap(err error, method string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("stealth: %s: %w", method, err)
}

// concurrently runs the funcs at once and returns the first error in the order of fns.
func concurrently(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Go(func() { errs[i] = f() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// MetricsOverride returns the Emulation.setDeviceMetricsOverride parameters for a viewport of
// width×height CSS pixels (0×0: keep the window's) that keep the stealth screen: the screen size
// from o, not mobile, and no device scale factor override. The scale factor comes from the launch
// flag (see Flags): an emulated one leaves 0.5px borders at two device pixels, so a page reads
// devicePixelRatio 2 without hairline support, a mismatch no real screen shows. Package tabs uses it when it sets a viewport on a
// stealthy tab, so that the viewport does not reset the screen.
func MetricsOverride(o *Options, width, height int) emulation.SetDeviceMetricsOverrideParams {
	c := o.withDefaults()
	sw, sh := c.ScreenWidth, c.ScreenHeight
	if width > sw {
		sw = width
	}
	if height > sh {
		sh = height
	}
	return emulation.SetDeviceMetricsOverrideParams{
		Width: int64(width), Height: int64(height), DeviceScaleFactor: 0, // the launch flag's, see Flags
		ScreenWidth: int64(sw), ScreenHeight: int64(sh),
	}
}

// watch turns on auto-attach with waitForDebuggerOnStart on the page, and patches each child
// target that attaches, each from a goroutine of its own, until ctx ends.
func (in *installer) watch(ctx context.Context) error {
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*target.EventAttachedToTarget); ok {
			go in.child(ctx, e) // never blocks the tab's loop, never calls CDP from it
		}
	}); err != nil {
		return fmt.Errorf("stealth: listening for attached targets: %w", err)
	}
	yes := true
	if _, err := chromedp.Call(ctx, target.SetAutoAttach, target.SetAutoAttachParams{
		AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: &yes,
		Filter: target.Filter{{Type: "iframe", Exclude: true}, {Type: "page", Exclude: true}, {}},
	}); err != nil {
		return fmt.Errorf("stealth: Target.setAutoAttach: %w", err)
	}
	return nil
}

// child patches one target that the page auto-attached and lets it run. A failure is logged: the
// target runs unpatched rather than stays paused.
func (in *installer) child(ctx context.Context, e *target.EventAttachedToTarget) {
	if e.TargetInfo == nil {
		return
	}
	typ := e.TargetInfo.Type
	log := in.log.With(logKeyTarget, e.TargetInfo.TargetID, logKeyType, typ)
	if typ == "worker" && e.WaitingForDebugger {
		start := time.Now()
		if err := in.patchChild(ctx, e.TargetInfo.TargetID, typ); err != nil {
			log.Debug("stealth: patching child target", logKeyErr, err, logKeyTook, time.Since(start))
		} else {
			log.Debug("stealth: patched child target", logKeyTook, time.Since(start))
		}
	}
	// Detaching the paused auto-attach session lets the target run. Once ctx has ended, the tab's
	// session is gone, and the auto-attach session and the page's workers with it.
	dctx, cancel := context.WithTimeout(ctx, workerPatchTimeout)
	defer cancel()
	if _, err := chromedp.Call(dctx, target.DetachFromTarget, target.DetachFromTargetParams{SessionID: e.SessionID}); err != nil &&
		ctx.Err() == nil && !errors.Is(err, chromedp.ErrTargetDetached) {
		log.Debug("stealth: Target.detachFromTarget", logKeyErr, err)
	}
}

// errWorkerEnded is the cause of a patch given up because its worker ended.
var errWorkerEnded = errors.New("the worker ended while it was patched (Inspector.targetCrashed)")

// patchChild attaches a session of its own to the child target (chromedp routes no messages of
// the flattened auto-attach session), patches it, and detaches, leaving the target open. It gives
// up after workerPatchTimeout, or at once when the worker ends (its page closed): Chromium then
// sends Inspector.targetCrashed on the session and never answers its commands, and while sessions
// stay on an ended shared worker, a page that starts the same shared worker again gets no new
// paused worker to patch (TestConcurrentInstalls saw it).
func (in *installer) patchChild(ctx context.Context, id target.ID, typ string) error {
	ectx, end := context.WithCancelCause(ctx)
	defer end(nil)
	tctx, tcancel := context.WithTimeout(ectx, workerPatchTimeout)
	defer tcancel()
	cctx, cancel := chromedp.NewContext(tctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel(),
		chromedp.WithListener(func(ev any) {
			if _, ok := ev.(*inspector.EventTargetCrashed); ok {
				end(errWorkerEnded) // only cancels: never blocks the session's loop
			}
		}))
	defer cancel()
	err := in.patchSession(cctx, typ)
	if cause := context.Cause(ectx); err != nil && errors.Is(cause, errWorkerEnded) {
		return fmt.Errorf("stealth: patching %s: %w", typ, cause)
	}
	return err
}

// patchSession runs the patch on the worker session of ctx: the script and the overrides at
// once, then Runtime.runIfWaitingForDebugger once they are answered.
func (in *installer) patchSession(cctx context.Context, typ string) error {
	return chromedp.Do(cctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if err := concurrently(append(in.workerOverrides(ctx, t), func() error {
			res, err := cdp.Call(ctx, t, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: in.src})
			if err != nil {
				return fmt.Errorf("stealth: Runtime.evaluate in %s: %w", typ, err)
			}
			if res.ExceptionDetails != nil {
				return fmt.Errorf("stealth: patch script threw in %s: %s", typ, res.ExceptionDetails.Text)
			}
			return nil
		})...); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, t, cdpruntime.RunIfWaitingForDebugger, cdp.Empty{}); err != nil {
			return fmt.Errorf("stealth: Runtime.runIfWaitingForDebugger in %s: %w", typ, err)
		}
		return nil
	}))
}

// sharedWatch is the shared-worker patching of one browser: the browser-level auto-attach, sent
// once, and the Installs still open, which give a shared worker its options.
type sharedWatch struct {
	// ready is closed once the browser-level Target.setAutoAttach is answered; err is its error.
	ready chan struct{}
	err   error

	mu    sync.Mutex
	insts []*installer // open Installs, oldest first
}

// sharedWatches holds the watch of each browser, from its first Install until the browser's
// connection is lost.
var sharedWatches = struct {
	sync.Mutex
	m map[*chromedp.Browser]*sharedWatch
}{m: map[*chromedp.Browser]*sharedWatch{}}

// watchShared registers in with the shared-worker watch of ctx's browser, starting the watch on
// the browser's first Install, and waits until the browser-level auto-attach is answered. in is
// unregistered when ctx ends.
func watchShared(ctx context.Context, in *installer) error {
	b := chromedp.FromContext(ctx).Browser
	sharedWatches.Lock()
	w := sharedWatches.m[b]
	if w == nil {
		w = &sharedWatch{ready: make(chan struct{})}
		sharedWatches.m[b] = w
		// The watch outlives this tab: it runs on ctx's values without its cancellation, and
		// ends with the browser.
		go w.start(context.WithoutCancel(ctx), b, in.log)
	}
	sharedWatches.Unlock()

	w.mu.Lock()
	w.insts = append(w.insts, in)
	w.mu.Unlock()
	context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for i, x := range w.insts {
			if x == in {
				w.insts = append(w.insts[:i], w.insts[i+1:]...)
				break
			}
		}
	})

	select {
	case <-w.ready:
		return w.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start listens for the shared workers the browser attaches to, and sends the browser-level
// Target.setAutoAttach, filtered to shared workers (pages and service workers are left alone),
// once; the command ends when the browser answers or its connection is lost, whatever happens
// to the Install that started it. The watch ends with the browser's connection.
func (w *sharedWatch) start(ctx context.Context, b *chromedp.Browser, log *slog.Logger) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		<-b.LostConnection
		cancel()
		sharedWatches.Lock()
		if sharedWatches.m[b] == w {
			delete(sharedWatches.m, b)
		}
		sharedWatches.Unlock()
	}()
	defer close(w.ready)
	if err := chromedp.ListenBrowser(ctx, func(ev any) {
		// Only a paused worker is the auto-attach's to handle. The browser session also tells of
		// the sessions that Target.attachToTarget opens (the patches' own, other clients'), and of
		// the shared workers already running when the auto-attach was set, which are left alone.
		if e, ok := ev.(*target.EventAttachedToTarget); ok && e.WaitingForDebugger && e.TargetInfo != nil && e.TargetInfo.Type == "shared_worker" {
			go w.shared(ctx, e, log) // never blocks the browser's loop, never calls CDP from it
		}
	}); err != nil {
		w.err = fmt.Errorf("stealth: listening for shared workers: %w", err)
		return
	}
	yes := true
	if _, err := chromedp.CallBrowser(ctx, target.SetAutoAttach, target.SetAutoAttachParams{
		AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: &yes,
		Filter: target.Filter{{Type: "shared_worker"}, {Exclude: true}},
	}); err != nil {
		w.err = fmt.Errorf("stealth: Target.setAutoAttach (browser, shared workers): %w", err)
	}
}

// pick returns the installer whose options a shared worker of the browser context gets: the most
// recent open Install in that context, else the most recent in the browser, else nil.
func (w *sharedWatch) pick(bc cdp.BrowserContextID) *installer {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.insts) - 1; i >= 0; i-- {
		if w.insts[i].browserContext == bc {
			return w.insts[i]
		}
	}
	if n := len(w.insts); n > 0 {
		return w.insts[n-1]
	}
	return nil
}

// shared patches one paused shared worker that the browser auto-attached, and detaches the
// auto-attach session, which lets it run. A failure is logged: the worker runs unpatched.
func (w *sharedWatch) shared(ctx context.Context, e *target.EventAttachedToTarget, log *slog.Logger) {
	log = log.With(logKeyTarget, e.TargetInfo.TargetID, logKeyType, e.TargetInfo.Type)
	start := time.Now()
	if in := w.pick(e.TargetInfo.BrowserContextID); in == nil {
		log.Debug("stealth: no open Install for a shared worker")
	} else if err := in.patchChild(ctx, e.TargetInfo.TargetID, e.TargetInfo.Type); err != nil {
		in.log.Debug("stealth: patching shared worker", logKeyTarget, e.TargetInfo.TargetID, logKeyErr, err, logKeyTook, time.Since(start))
	} else {
		in.log.Debug("stealth: patched shared worker", logKeyTarget, e.TargetInfo.TargetID, logKeyTook, time.Since(start))
	}
	dctx, cancel := context.WithTimeout(ctx, workerPatchTimeout)
	defer cancel()
	if _, err := chromedp.CallBrowser(dctx, target.DetachFromTarget, target.DetachFromTargetParams{SessionID: e.SessionID}); err != nil {
		log.Debug("stealth: Target.detachFromTarget", logKeyErr, err)
	}
}
