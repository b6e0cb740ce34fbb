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
// carrying them into the out-of-process iframes and dedicated workers that the page starts, and
// into the shared and service workers of the browser, for as long as ctx lives. ctx must be a
// chromedp context that can run actions (chromedp.Run); pass the tab's long-lived context, not a
// request's: its cancellation ends the patching of the page's children. Call it on a fresh tab,
// before the first navigation. It is safe to call concurrently for many tabs of one browser.
//
// CDP: Browser.getVersion (for the user agent and client hints); then, sent at once and awaited
// together, on the page session Page.addScriptToEvaluateOnNewDocument with [Script] and
// runImmediately (Chromium runs it in every same-process frame, srcdoc and about:blank iframes
// included, before their scripts), Emulation.setUserAgentOverride (user agent without
// "HeadlessChrome", Accept-Language, platform and userAgentMetadata agreeing with it),
// setAutomationOverride(false), setLocaleOverride, setTimezoneOverride and
// setHardwareConcurrencyOverride (when set), setFocusEmulationEnabled(true),
// setDeviceMetricsOverride (the screen; see [MetricsOverride]) and Target.setAutoAttach with
// waitForDebuggerOnStart and flatten false, for every type but pages and service workers (the
// page's out-of-process iframes and dedicated workers), and on the browser Target.getTargetInfo
// (the tab's browser context). Last, exactly once per browser and never again,
// Target.setAutoAttach on the browser session with waitForDebuggerOnStart, filtered to shared and
// service workers (they are no page's children; sending that command again once shared workers
// have run crashes Chromium 156: "Check failed: worker_host_" in SharedWorkerDevToolsAgentHost).
// Every Install waits until that command is answered.
//
// The page's children attach paused, on sessions that are not flat: chromedp cannot address a
// flattened auto-attach session, and only that session can let a paused frame go (measured; see
// the relay type). Their commands go as Target.sendMessageToTarget on the page session and their
// answers come back in its Target.receivedMessageFromTarget events. Each is patched from a
// goroutine of its own:
//
//   - an out-of-process (cross-site) iframe: Page.enable, then at once the page's overrides but
//     the screen (the script with runImmediately, the user agent with its client hints, automation,
//     locale, time zone, hardware concurrency, focus; the screen comes from the script, since
//     Chromium takes setDeviceMetricsOverride only on top-level targets) and the same auto-attach
//     on its session, so that its own out-of-process iframes and dedicated workers are patched
//     too. Its session stays attached while the frame lives: the script and the overrides last as
//     long as it does, and reach every document the frame loads.
//   - a dedicated worker: Runtime.evaluate of the script with the locale and time zone overrides;
//     then its session is detached.
//
// Then Runtime.runIfWaitingForDebugger on its session lets it run, whether or not the patch
// worked: a patch that fails or takes over 30 seconds is given up, and the target runs unpatched
// rather than stays paused.
//
// Each shared or service worker that the browser attaches paused (every one that starts, in any
// tab or browser context, for any reason: a registration, a message, a fetch, a push) is patched
// through a session of its own (Target.attachToTarget; Runtime.evaluate of the script with the
// locale and time zone overrides, then Runtime.runIfWaitingForDebugger); then its paused
// auto-attach session is detached. A patch that fails or takes over a minute is given up and the
// worker runs unpatched. A dedicated worker and an iframe get their page's options. A shared or
// service worker serves the pages of its origin in a browser context: it gets the options of the
// most recent Install still open in its browser context (in the browser when its context has
// none), so give tabs that need different options different browser contexts
// (chromedp.WithNewBrowserContext). Listeners only start goroutines.
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
	inst.cur = &view{c: c, ua: *ua, src: src}
	// The page's commands, the tab's target info and the page's auto-attach are independent:
	// they go at once.
	if err := chromedp.Do(ctx, chromedp.Func(func(actx context.Context, t *chromedp.Target) error {
		register(ctx, t, inst)
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
			func() error { return inst.watch(ctx, actx, t) },
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

	// mu guards cur and scriptID.
	mu sync.Mutex
	// cur are the values the page and its new children get: Install's, or an emulation's
	// (Update).
	cur *view
	// scriptID is the page's Page.addScriptToEvaluateOnNewDocument identifier, which Update
	// removes.
	scriptID page.ScriptIdentifier
}

// view are the values a page and its children are patched with. A view is never changed once
// made: Update makes a new one.
type view struct {
	c   Options
	ua  userAgent
	src string
	// noHints sends the user agent override without client hints (a Safari user agent).
	noHints bool
}

// now returns the values in effect.
func (in *installer) now() *view {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.cur
}

// metadata returns the client hints of the user agent override: nil without hints.
func (v *view) metadata() *emulation.UserAgentMetadata {
	if v.noHints {
		return nil
	}
	md := v.ua.Metadata
	return &md
}

// workerPatchTimeout bounds the patch of one worker: past it the worker is let run unpatched
// rather than stay paused (a worker that ends while it is patched never answers).
const workerPatchTimeout = time.Minute

// acceptLanguage returns the Accept-Language list for the languages; Chromium adds the q-values
// ("en-US,en" is sent as "en-US,en;q=0.9").
func acceptLanguage(langs []string) string {
	return strings.Join(langs, ",")
}

// page runs the per-page steps on the page session t: [installer.overrides], sent at once
// (Chromium handles a session's commands in order of arrival) and waited for together: one
// round trip instead of eight. The error is the first of the list that failed.
func (in *installer) page(ctx context.Context, t cdp.Session) error {
	v := in.now()
	return concurrently(append(in.overrides(ctx, t, false), func() error {
		res, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: v.src, RunImmediately: new(true),
		})
		if err != nil {
			return wrap(err, "Page.addScriptToEvaluateOnNewDocument")
		}
		in.mu.Lock()
		in.scriptID = res.Identifier
		in.mu.Unlock()
		return nil
	})...)
}

// overrides are the commands that patch a page, or with frame an out-of-process iframe, on its
// session s: Page.addScriptToEvaluateOnNewDocument with [Script] and runImmediately,
// Emulation.setUserAgentOverride (user agent, Accept-Language, platform, client hints),
// setAutomationOverride(false) (a failure is only logged), setLocaleOverride,
// setTimezoneOverride and setHardwareConcurrencyOverride when set, setFocusEmulationEnabled, and
// for a page setDeviceMetricsOverride (the screen; a frame has its page's).
func (in *installer) overrides(ctx context.Context, s cdp.Session, frame bool) []func() error {
	v := in.now()
	fns := in.emulationOverrides(ctx, s, v)
	fns = append(fns,
		func() error {
			if _, err := cdp.Call(ctx, s, emulation.SetAutomationOverride, emulation.SetAutomationOverrideParams{Enabled: false}); err != nil {
				in.log.Debug("stealth: Emulation.setAutomationOverride", logKeyErr, err)
			}
			return nil
		},
		func() error {
			if v.c.HardwareConcurrency <= 0 {
				return nil
			}
			_, err := cdp.Call(ctx, s, emulation.SetHardwareConcurrencyOverride, emulation.SetHardwareConcurrencyOverrideParams{
				HardwareConcurrency: int64(v.c.HardwareConcurrency),
			})
			return wrap(err, "Emulation.setHardwareConcurrencyOverride")
		},
		func() error {
			_, err := cdp.Call(ctx, s, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
			return wrap(err, "Emulation.setFocusEmulationEnabled")
		},
	)
	if frame {
		fns = append(fns, func() error {
			_, err := cdp.Call(ctx, s, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: v.src, RunImmediately: new(true),
			})
			return wrap(err, "Page.addScriptToEvaluateOnNewDocument")
		})
	} else {
		fns = append(fns, func() error {
			_, err := cdp.Call(ctx, s, emulation.SetDeviceMetricsOverride, MetricsOverride(&in.c, 0, 0))
			return wrap(err, "Emulation.setDeviceMetricsOverride")
		})
	}
	return fns
}

// emulationOverrides are the overrides of v that an emulation changes and Emulation reset
// clears: Emulation.setUserAgentOverride (user agent, Accept-Language, platform, client hints),
// setLocaleOverride, and setTimezoneOverride when set.
func (in *installer) emulationOverrides(ctx context.Context, s cdp.Session, v *view) []func() error {
	return []func() error{
		func() error {
			_, err := cdp.Call(ctx, s, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
				UserAgent: v.ua.UserAgent, AcceptLanguage: acceptLanguage(v.c.Languages), Platform: v.ua.Platform,
				UserAgentMetadata: v.metadata(),
			})
			return wrap(err, "Emulation.setUserAgentOverride")
		},
		func() error {
			_, err := cdp.Call(ctx, s, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: v.c.Locale})
			if err != nil && strings.Contains(err.Error(), "Another locale override is already in effect") {
				// Chromium keeps one locale override per renderer
				// process: a popup that shares its opener's process has
				// the opener's, which its Install set (the same locale,
				// but for an emulation's). Not a failure of this page.
				in.log.Debug("stealth: the page's process has a locale override already", logKeyErr, err)
				return nil
			}
			return wrap(err, "Emulation.setLocaleOverride("+v.c.Locale+")")
		},
		func() error {
			if v.c.TimeZone == "" {
				return nil
			}
			_, err := cdp.Call(ctx, s, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: v.c.TimeZone})
			return wrap(err, "Emulation.setTimezoneOverride("+v.c.TimeZone+")")
		},
	}
}

// workerOverrides sends a worker the Emulation overrides that workers accept (the locale and
// time zone, so that Intl and Date agree with the page), at once. A worker that refuses one keeps
// the browser's value (a dedicated worker already has its page's: "Another locale override is
// already in effect"); the failure is logged.
func (in *installer) workerOverrides(ctx context.Context, t cdp.Session) []func() error {
	v := in.now()
	return []func() error{
		func() error {
			if _, err := cdp.Call(ctx, t, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: v.c.Locale}); err != nil {
				in.log.Debug("stealth: worker Emulation.setLocaleOverride", logKeyErr, err)
			}
			return nil
		},
		func() error {
			if v.c.TimeZone == "" {
				return nil
			}
			if _, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: v.c.TimeZone}); err != nil {
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

// watch turns on auto-attach on the session s (the page's, or a relayed out-of-process iframe's),
// with waitForDebuggerOnStart and without flattening (see relay), and patches each target that
// attaches, from a goroutine of its own, until ctx ends or s does. callCtx bounds the command.
func (in *installer) watch(ctx, callCtx context.Context, s cdp.Session) error {
	h := newHub(ctx, in, s)
	stop := context.AfterFunc(ctx, h.close)
	switch p := s.(type) {
	case *relay:
		p.listen(h.rawEvent)
		p.whenClosed(func() { stop(); h.close() })
	case *chromedp.Target:
		// ctx is the page's chromedp context, whose target is s.
		if err := chromedp.Listen(ctx, h.event); err != nil {
			return fmt.Errorf("stealth: listening for attached targets: %w", err)
		}
	default:
		return fmt.Errorf("stealth: cannot watch a %T", s)
	}
	no := false
	_, err := cdp.Call(callCtx, s, target.SetAutoAttach, target.SetAutoAttachParams{
		AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: &no,
		Filter: target.Filter{{Type: "page", Exclude: true}, {Type: "service_worker", Exclude: true}, {}},
	})
	return wrap(err, "Target.setAutoAttach")
}

// childPatchTimeout bounds the patch of one target that a watch auto-attached, and releaseTimeout
// the command that then lets it run: past them the target runs unpatched rather than stays paused.
const (
	childPatchTimeout = 30 * time.Second
	releaseTimeout    = 10 * time.Second
)

// child patches one target that a watch auto-attached through its relayed session r, and lets it
// run when it is paused, whether or not the patch worked (a failure is logged):
//
//   - an iframe (out of process): [installer.patchFrame]; its session stays attached, since the
//     script and the overrides last only as long as it does.
//   - a dedicated worker that waits: [installer.patchWorker], then the session is detached.
//   - any other target (a worklet): let run and detached. (Service workers are the browser-level
//     watch's: see sharedWatch.start.)
func (in *installer) child(ctx context.Context, parent cdp.Session, r *relay, e *target.EventAttachedToTarget) {
	typ := e.TargetInfo.Type
	log := in.log.With(logKeyTarget, e.TargetInfo.TargetID, logKeyType, typ)
	start := time.Now()
	pctx, cancel := context.WithTimeout(ctx, childPatchTimeout)
	patched, keep := false, false
	var err error
	switch {
	case typ == "iframe":
		patched, keep = true, true
		err = in.patchFrame(ctx, pctx, r)
	case typ == "worker" && e.WaitingForDebugger:
		patched = true
		err = in.patchWorker(pctx, r, typ)
	}
	cancel()
	if patched {
		if err != nil {
			log.Debug("stealth: patching child target", logKeyErr, err, logKeyTook, time.Since(start))
		} else {
			log.Debug("stealth: patched child target", logKeyTook, time.Since(start))
		}
	}
	if e.WaitingForDebugger {
		// Only the auto-attach session that paused the target can let it go.
		rctx, cancel := context.WithTimeout(ctx, releaseTimeout)
		_, err := cdp.Call(rctx, r, cdpruntime.RunIfWaitingForDebugger, cdp.Empty{})
		cancel()
		if err != nil && ctx.Err() == nil && !errors.Is(err, errSessionEnded) {
			log.Debug("stealth: Runtime.runIfWaitingForDebugger", logKeyErr, err)
		}
	}
	if typ == "iframe" && in.c.FrameStarted != nil && ctx.Err() == nil {
		in.c.FrameStarted(e.TargetInfo.TargetID)
	}
	if keep {
		return
	}
	// Once ctx has ended, the tab's session is gone, and the auto-attach session with it.
	dctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	if _, err := cdp.Call(dctx, parent, target.DetachFromTarget, target.DetachFromTargetParams{SessionID: e.SessionID}); err != nil &&
		ctx.Err() == nil && !errors.Is(err, chromedp.ErrTargetDetached) && !errors.Is(err, errSessionEnded) {
		log.Debug("stealth: Target.detachFromTarget", logKeyErr, err)
	}
}

// patchFrame patches an out-of-process iframe through its auto-attach session r, while it waits:
// Page.enable (without it, measured, Page.addScriptToEvaluateOnNewDocument does not reach the
// frame's first document), then, behind it, at once the page's overrides that apply to a frame ([Script]
// with runImmediately, the user agent with its client hints, automation, locale, time zone,
// hardware concurrency and focus; the screen is the page's) and a watch of its own children
// (nested out-of-process iframes and the frame's workers), which lives as long as ctx.
func (in *installer) patchFrame(ctx, pctx context.Context, r *relay) error {
	// The overrides are sent once the browser has taken Page.enable, not once the frame's new
	// renderer has answered it: the target runs its commands in order.
	enabled, err := r.start(pctx, page.Enable.Method, page.EnableParams{})
	if err != nil {
		return wrap(err, "Page.enable")
	}
	err = concurrently(append(in.overrides(pctx, r, true), func() error { return in.watch(ctx, pctx, r) })...)
	if eerr := enabled(pctx, nil); eerr != nil {
		return wrap(eerr, "Page.enable")
	}
	return err
}

// patchWorker patches a worker that waits, on the session s: the script (Runtime.evaluate) and
// the worker overrides, at once.
func (in *installer) patchWorker(ctx context.Context, s cdp.Session, typ string) error {
	return concurrently(append(in.workerOverrides(ctx, s), func() error {
		res, err := cdp.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: in.now().src})
		if err != nil {
			return fmt.Errorf("stealth: Runtime.evaluate in %s: %w", typ, err)
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("stealth: patch script threw in %s: %s", typ, res.ExceptionDetails.Text)
		}
		return nil
	})...)
}

// errWorkerEnded is the cause of a patch given up because its worker ended.
var errWorkerEnded = errors.New("the worker ended while it was patched (Inspector.targetCrashed)")

// patchChild attaches a session of its own to a shared or service worker that the browser auto-attached
// (a flattened session, which chromedp cannot address), patches it, and detaches, leaving the
// target open. It gives up after workerPatchTimeout, or at once when the worker ends (its page
// closed): Chromium then sends Inspector.targetCrashed on the session and never answers its
// commands, and while sessions stay on an ended shared worker, a page that starts the same shared
// worker again gets no new paused worker to patch (TestConcurrentInstalls saw it).
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

// patchSession runs the patch on the worker session of ctx: [installer.patchWorker], then
// Runtime.runIfWaitingForDebugger once it is answered.
func (in *installer) patchSession(cctx context.Context, typ string) error {
	return chromedp.Do(cctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if err := in.patchWorker(ctx, t, typ); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, t, cdpruntime.RunIfWaitingForDebugger, cdp.Empty{}); err != nil {
			return fmt.Errorf("stealth: Runtime.runIfWaitingForDebugger in %s: %w", typ, err)
		}
		return nil
	}))
}

// sharedWatch is the shared and service worker patching of one browser: the browser-level
// auto-attach, sent once, and the Installs still open, which give a worker its options.
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

// start listens for the shared and service workers the browser attaches to, and sends the
// browser-level Target.setAutoAttach, filtered to them, once; the command ends when the browser
// answers or its connection is lost, whatever happens to the Install that started it. The watch
// ends with the browser's connection.
//
// Service workers must be in the filter: with waitForDebuggerOnStart on, Chromium pauses every
// service worker that starts in the browser before it applies the filter
// (BrowserDevToolsAgentHost::BrowserAutoAttacher::WorkerCreated sets should_pause_on_start, and
// the page-level auto-attachers of the service worker's scope overwrite it in the order they
// were set), so one that the filter left out stayed paused with no session to let it go:
// measured, the service worker of a tab opened before the first Install never answered.
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
		// the workers already running when the auto-attach was set, which are left alone.
		if e, ok := ev.(*target.EventAttachedToTarget); ok && e.WaitingForDebugger && e.TargetInfo != nil &&
			(e.TargetInfo.Type == "shared_worker" || e.TargetInfo.Type == "service_worker") {
			go w.shared(ctx, e, log) // never blocks the browser's loop, never calls CDP from it
		}
	}); err != nil {
		w.err = fmt.Errorf("stealth: listening for shared and service workers: %w", err)
		return
	}
	yes := true
	if _, err := chromedp.CallBrowser(ctx, target.SetAutoAttach, target.SetAutoAttachParams{
		AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: &yes,
		Filter: target.Filter{{Type: "shared_worker"}, {Type: "service_worker"}, {Exclude: true}},
	}); err != nil {
		w.err = fmt.Errorf("stealth: Target.setAutoAttach (browser, shared and service workers): %w", err)
	}
}

// pick returns the installer whose options a shared or service worker of the browser context gets: the most
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

// shared patches one paused shared or service worker that the browser auto-attached, lets it run
// and detaches the auto-attach session. A failure is logged: the worker runs unpatched.
func (w *sharedWatch) shared(ctx context.Context, e *target.EventAttachedToTarget, log *slog.Logger) {
	log = log.With(logKeyTarget, e.TargetInfo.TargetID, logKeyType, e.TargetInfo.Type)
	start := time.Now()
	in := w.pick(e.TargetInfo.BrowserContextID)
	var err error
	if in == nil {
		log.Debug("stealth: no open Install for a " + e.TargetInfo.Type)
	} else if err = in.patchChild(ctx, e.TargetInfo.TargetID, e.TargetInfo.Type); err != nil {
		in.log.Debug("stealth: patching "+e.TargetInfo.Type, logKeyTarget, e.TargetInfo.TargetID, logKeyErr, err, logKeyTook, time.Since(start))
	} else {
		in.log.Debug("stealth: patched "+e.TargetInfo.Type, logKeyTarget, e.TargetInfo.TargetID, logKeyTook, time.Since(start))
	}
	if in == nil || err != nil {
		release(ctx, e.TargetInfo.TargetID, log)
	}
	dctx, cancel := context.WithTimeout(ctx, workerPatchTimeout)
	defer cancel()
	if _, err := chromedp.CallBrowser(dctx, target.DetachFromTarget, target.DetachFromTargetParams{SessionID: e.SessionID}); err != nil {
		log.Debug("stealth: Target.detachFromTarget", logKeyErr, err)
	}
}

// release lets a paused worker that was not patched run: Runtime.runIfWaitingForDebugger through
// a session of its own, within releaseTimeout.
func release(ctx context.Context, id target.ID, log *slog.Logger) {
	rctx, rcancel := context.WithTimeout(ctx, releaseTimeout)
	defer rcancel()
	cctx, cancel := chromedp.NewContext(rctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	defer cancel()
	if err := chromedp.Do(cctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdpruntime.RunIfWaitingForDebugger, cdp.Empty{})
		return err
	})); err != nil {
		log.Debug("stealth: Runtime.runIfWaitingForDebugger", logKeyErr, err)
	}
}
