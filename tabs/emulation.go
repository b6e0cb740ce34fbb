package tabs

import (
	"context"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/cdp"

	"github.com/tabpilot/tabpilot/stealth"
	"github.com/tabpilot/tabpilot/tabs/capture"
	"github.com/tabpilot/tabpilot/tabs/emulate"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// The emulation's and the print's types, under the names callers of tabs use.
type (
	// EmulateOptions say what tab.emulate emulates (emulate.Options).
	EmulateOptions = emulate.Options
	// Emulated is what an emulation put in effect (emulate.Applied).
	Emulated = emulate.Applied
	// PDFOptions are the options of tab.pdf.
	PDFOptions = capture.PDFOptions
	// PDF is a page printed to a file.
	PDF = capture.PDF
)

// emuState is a tab's emulation state.
type emuState struct {
	// opts are the options of every Emulate since the last reset, merged
	// (emulate.Options.Merge).
	opts emulate.Options
	// viewport is the emulated layout viewport, nil when the tab's own
	// applies.
	viewport *Viewport
}

// EmulateResult is the outcome of Emulate or ResetEmulation.
type EmulateResult struct {
	// Applied is the whole emulation in effect after the call (nil after a
	// reset).
	Applied *Emulated `json:"applied,omitempty"`
	// Options are the tab's merged emulation options.
	Options EmulateOptions `json:"options"`
	// Reset is true for ResetEmulation.
	Reset bool `json:"reset,omitempty"`
	// Note says what takes effect only from the next navigation.
	Note string `json:"note,omitempty"`
}

// Summary is the result's line of text.
func (r *EmulateResult) Summary() string {
	s := "Emulation reset: the tab's own viewport, user agent, locale and time zone"
	if !r.Reset {
		s = "Emulating " + r.Applied.Summary()
	}
	if r.Note != "" {
		s += ". " + r.Note
	}
	return s
}

// layout is the viewport the page lays out in: an emulated one, else the
// tab's.
func (t *Tab) layout() Viewport {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v := t.emu.viewport; v != nil {
		return *v
	}
	return t.viewport
}

// Emulation returns the tab's merged emulation options.
func (t *Tab) Emulation() EmulateOptions {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.emu.opts
}

// nextNavNote is the note of an emulation whose parts a document reads
// when it loads.
const nextNavNote = "Touch, the viewport meta tag, client hints and the page's navigator values apply from the next navigation: reload to see them on this page"

// Emulate emulates a device, a place and preferences on the tab: o is
// merged into the tab's emulation (emulate.Options.Merge) and the whole of
// it applied (emulate.Apply), with the geolocation permission granted to
// the page's origin (or o.Origin) in the tab's browser context. On a
// stealthy tab the stealth patch is remade with the emulated user agent,
// platform, client hints, languages and screen (stealth.Update), so that
// the page's JavaScript agrees with the headers from the next navigation.
// Errors: bad_request for invalid options (an unknown device, with the
// list in the hint) or values the browser refuses; timeout.
func (t *Tab) Emulate(ctx context.Context, o EmulateOptions) (*EmulateResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	merged := t.emu.opts.Merge(o)
	t.mu.Unlock()
	in := merged
	if in.Geolocation != nil {
		if in.Origin == "" {
			in.Origin = t.origin(ctx)
		}
		in.BrowserContextID = t.browserContext(ctx)
	}
	applied, err := emulate.Apply(ctx, t.Target(), in)
	if err != nil {
		return nil, pagecore.CDPErr("emulate", err)
	}
	if t.stealthy() {
		e := &stealth.Emulation{Locale: merged.Locale, TimeZone: merged.Timezone}
		if merged.UserAgent != "" || merged.Device != "" {
			e.UserAgent, e.Platform, e.Metadata = applied.UserAgent, applied.Platform, applied.Metadata
		}
		if sc := applied.Screen; sc != nil {
			e.ScreenWidth, e.ScreenHeight = sc.Width, sc.Height
		}
		e.Mobile = applied.Mobile != nil && *applied.Mobile
		if err := stealth.Update(ctx, t.Target(), e); err != nil {
			return nil, pagecore.CDPErr("update the stealth patch", err)
		}
	}
	t.mu.Lock()
	t.emu.opts = merged
	if v := applied.Viewport; v != nil {
		scale := v.DeviceScaleFactor
		if scale == 0 {
			scale = t.viewport.Scale
		}
		t.emu.viewport = &Viewport{Width: v.Width, Height: v.Height, Scale: scale}
	}
	t.mu.Unlock()
	res := &EmulateResult{Applied: applied, Options: merged}
	if o.Device != "" || o.UserAgent != "" || o.Touch != nil || o.Mobile != nil || o.Locale != "" {
		if u := t.URL(ctx); u != "" && u != "about:blank" {
			res.Note = nextNavNote
		}
	}
	return res, nil
}

// ResetEmulation clears the tab's emulation (emulate.Reset), then gives
// the tab back its own: the stealth overrides (stealth.Restore) and its
// viewport. Errors: timeout.
func (t *Tab) ResetEmulation(ctx context.Context) (*EmulateResult, error) {
	if err := emulate.Reset(ctx, t.Target()); err != nil {
		return nil, pagecore.CDPErr("reset emulation", err)
	}
	if t.stealthy() {
		if err := stealth.Restore(ctx, t.Target()); err != nil {
			return nil, pagecore.CDPErr("restore the stealth overrides", err)
		}
	}
	t.mu.Lock()
	vp, set := t.viewport, t.viewportSet
	t.emu = emuState{}
	t.mu.Unlock()
	if set {
		if err := t.setViewport(ctx, vp); err != nil {
			return nil, err
		}
	}
	res := &EmulateResult{Reset: true}
	if u := t.URL(ctx); u != "" && u != "about:blank" {
		res.Note = nextNavNote
	}
	return res, nil
}

// SetHeaders sets the extra HTTP headers of the tab (pagecore's
// SetHeaders). A User-Agent header emulates that user agent (Emulate
// with userAgent), so that navigator.userAgent, navigator.platform and
// the client hints agree with it.
func (t *Tab) SetHeaders(ctx context.Context, headers map[string]string) error {
	rest := make(map[string]string, len(headers))
	ua := ""
	for k, v := range headers {
		if strings.EqualFold(k, "User-Agent") {
			ua = v
			continue
		}
		rest[k] = v
	}
	if err := t.Page.SetHeaders(ctx, rest); err != nil {
		return err
	}
	if ua == "" {
		return nil
	}
	_, err := t.Emulate(ctx, EmulateOptions{UserAgent: ua})
	return err
}

// origin returns the origin of the tab's page, or "" when it has none
// (about:blank, data:).
func (t *Tab) origin(ctx context.Context) string {
	u, err := url.Parse(t.URL(ctx))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// browserContext returns the tab's browser context as Browser.setPermission
// takes it (pagecore.Page.BrowserContextID), or "" (the default one) when it
// cannot say.
func (t *Tab) browserContext(ctx context.Context) cdp.BrowserContextID {
	id, err := t.BrowserContextID(ctx)
	if err != nil {
		return ""
	}
	return id
}
