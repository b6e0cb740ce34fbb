package tabs

import (
	"context"

	"github.com/chromedp/cdproto/emulation"

	"github.com/tabpilot/tabpilot/stealth"
)

// stealthOptions are the stealth settings of the supervisor's headless
// browsers: a 1920x1080 screen around the default viewport.
func (s *Supervisor) stealthOptions() *stealth.Options {
	return &stealth.Options{
		WindowWidth: s.opts.Viewport.Width, WindowHeight: s.opts.Viewport.Height,
		ScreenWidth: max(1920, s.opts.Viewport.Width), ScreenHeight: max(1080, s.opts.Viewport.Height),
		Logger: s.log,
	}
}

// stealthFlags are the launch flags of a stealthy headless browser
// (stealth.Flags), without chromedp's --enable-automation.
func (s *Supervisor) stealthFlags() []string {
	return append(stealth.Flags(s.stealthOptions()), "--enable-automation=false")
}

// stealthVersionFlags are the launch flags of a stealthy headless browser
// that name its version: --user-agent with a headed Chromium's user agent
// (stealth.DefaultUserAgent), so that every target starts with it, and so
// does the User-Agent header of every request, those that come before a
// target's patches too: a popup's first page (measured: its request and
// navigator.userAgent said HeadlessChrome) and a service worker's fetches.
func stealthVersionFlags(version string) []string {
	if ua := stealth.DefaultUserAgent(version); ua != "" {
		return []string{"--user-agent=" + ua}
	}
	return nil
}

// installStealth installs the stealth patches on a new headless tab before
// any page script runs (stealth.Install on the tab's long-lived context);
// ctx bounds the wait.
func installStealth(ctx context.Context, t *Tab) error {
	errc := make(chan error, 1)
	o := t.sup.stealthOptions()
	// The observation's session of an out-of-process iframe is attached
	// once the patches let it run, while the page loads.
	o.FrameStarted = t.FrameStarted
	go func() { errc <- stealth.Install(t.Context(), o) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// metrics returns the device metrics override for a viewport: with
// stealth, one that keeps the stealth screen (stealth.MetricsOverride).
func (t *Tab) metrics(vp Viewport) emulation.SetDeviceMetricsOverrideParams {
	if t.stealthy() {
		p := stealth.MetricsOverride(t.sup.stealthOptions(), vp.Width, vp.Height)
		if vp.Scale != 1 {
			p.DeviceScaleFactor = vp.Scale
		}
		return p
	}
	return emulation.SetDeviceMetricsOverrideParams{
		Width: int64(vp.Width), Height: int64(vp.Height), DeviceScaleFactor: vp.Scale,
		ScreenWidth: int64(vp.Width), ScreenHeight: int64(vp.Height),
	}
}
