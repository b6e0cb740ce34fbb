// Package emulate owns per-tab device and place emulation: the device
// presets (phones, tablets, desktops, each with a viewport, screen, touch,
// a user agent and client hints that agree with each other), the
// validation of an emulation request, and the CDP calls that apply it to
// one page session and clear it again.
//
// It is a leaf below package tabs: it imports errcode and cdproto only,
// never chromedp nor a package of tabs, and holds no state. It must not
// decide what a tab's baseline is: the stealth overrides (user agent,
// screen, locale) and the tab's viewport are the caller's, which merges
// them into the Options it passes (Options.Merge) and puts them back
// after Reset.
package emulate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
)

// Applied is what an Apply put in effect, for a result's summary. Fields
// Apply did not touch are zero.
type Applied struct {
	Device         string    `json:"device,omitempty"`
	Viewport       *Viewport `json:"viewport,omitempty"`
	Screen         *Size     `json:"screen,omitempty"`
	Mobile         *bool     `json:"mobile,omitempty"`
	Touch          *bool     `json:"touch,omitempty"`
	MaxTouchPoints int       `json:"maxTouchPoints,omitempty"`
	UserAgent      string    `json:"userAgent,omitempty"`
	Platform       string    `json:"platform,omitempty"`
	AcceptLanguage string    `json:"acceptLanguage,omitempty"`
	ClientHints    string    `json:"clientHints,omitempty"` // "Android 16.0.0, Pixel 7, mobile", or "none"
	// Metadata are the client hints sent with UserAgent (nil: none), for
	// the caller's stealth patch to agree with them.
	Metadata      *emulation.UserAgentMetadata `json:"-"`
	Geolocation   *Geolocation                 `json:"geolocation,omitempty"`
	Origin        string                       `json:"origin,omitempty"`
	Timezone      string                       `json:"timezone,omitempty"`
	Locale        string                       `json:"locale,omitempty"`
	ColorScheme   string                       `json:"colorScheme,omitempty"`
	ReducedMotion string                       `json:"reducedMotion,omitempty"`
	Offline       *bool                        `json:"offline,omitempty"`
	Network       *Network                     `json:"network,omitempty"`
	CPUThrottling float64                      `json:"cpuThrottling,omitempty"`
}

// Summary returns the emulation in effect on one line, e.g. "device iPhone
// 15, viewport 393x659@3x, screen 393x852, mobile, touch (5 points),
// timezone Europe/Paris", or "nothing emulated".
func (a *Applied) Summary() string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if a.Device != "" {
		add("device %s", a.Device)
	}
	if a.Viewport != nil {
		add("viewport %s", a.Viewport)
	}
	if a.Screen != nil {
		add("screen %dx%d", a.Screen.Width, a.Screen.Height)
	}
	if a.Mobile != nil {
		add("mobile %t", *a.Mobile)
	}
	if a.Touch != nil {
		if *a.Touch {
			add("touch (%d points)", a.MaxTouchPoints)
		} else {
			add("no touch")
		}
	}
	if a.UserAgent != "" {
		add("user agent %q", a.UserAgent)
	}
	if a.ClientHints != "" {
		add("client hints %s", a.ClientHints)
	}
	if g := a.Geolocation; g != nil {
		add("geolocation %g,%g", g.Latitude, g.Longitude)
	}
	for _, kv := range [][2]string{{"timezone", a.Timezone}, {"locale", a.Locale}, {"color scheme", a.ColorScheme}, {"reduced motion", a.ReducedMotion}} {
		if kv[1] != "" {
			add("%s %s", kv[0], kv[1])
		}
	}
	if a.Offline != nil && *a.Offline {
		add("offline")
	}
	if n := a.Network; n != nil {
		add("network %gms, %g/%g kbps down/up", n.LatencyMs, n.DownloadKbps, n.UploadKbps)
	}
	if a.CPUThrottling != 0 {
		add("CPU %gx slower", a.CPUThrottling)
	}
	if len(parts) == 0 {
		return "nothing emulated"
	}
	return strings.Join(parts, ", ")
}

// resolved is o with its device's values filled in.
type resolved struct {
	Options
	dev       *Device
	maxTouch  int
	metadata  *emulation.UserAgentMetadata
	setUA     bool // the user agent override is sent
	setMetric bool // the device metrics override is sent
}

func resolve(o Options) resolved {
	r := resolved{Options: o, maxTouch: 5}
	if o.Device != "" {
		d, _ := LookupDevice(o.Device)
		r.dev = &d
		r.Device = d.Name
		if r.Viewport == nil {
			r.Viewport = new(d.Viewport)
		}
		if r.Screen == nil {
			r.Screen = &Size{d.ScreenWidth, d.ScreenHeight}
		}
		if r.Mobile == nil {
			r.Mobile = new(d.Mobile)
		}
		if r.Touch == nil {
			r.Touch = new(d.Touch)
		}
		if d.MaxTouchPoints > 0 {
			r.maxTouch = d.MaxTouchPoints
		}
		if r.UserAgent == "" {
			r.UserAgent, r.metadata = d.UserAgent, d.Metadata
			if r.Platform == "" {
				r.Platform = d.Platform
			}
		}
	}
	if r.UserAgent != "" && (r.dev == nil || r.UserAgent != r.dev.UserAgent) {
		p, md := uaPlatform(r.UserAgent)
		r.metadata = md
		if r.Platform == "" {
			r.Platform = p
		}
	}
	if r.Screen == nil && r.Viewport != nil {
		r.Screen = &Size{r.Viewport.Width, r.Viewport.Height}
	}
	r.setMetric = r.Viewport != nil || r.Mobile != nil || o.Screen != nil
	r.setUA = r.UserAgent != "" || r.Locale != ""
	return r
}

// Apply validates o and applies it to the page session s, in this order,
// each call only when its fields are set:
//
//   - Emulation.setDeviceMetricsOverride: the viewport (width, height,
//     deviceScaleFactor), mobile and the screen (screenWidth,
//     screenHeight);
//   - Emulation.setTouchEmulationEnabled with maxTouchPoints;
//   - Emulation.setUserAgentOverride: userAgent, acceptLanguage (Locale
//     and its base language, "fr-FR,fr"), platform and userAgentMetadata
//     (the preset's client hints, or those derived from UserAgent). With
//     a Locale but no UserAgent nor Device, the page's current user agent,
//     platform and client hints are read (Runtime.evaluate) and sent back
//     with the new language, so that a stealth override stays;
//   - Browser.setPermission (geolocation granted to Origin, in
//     BrowserContextID) and Emulation.setGeolocationOverride;
//   - Emulation.setTimezoneOverride and Emulation.setLocaleOverride;
//   - Emulation.setEmulatedMedia with the features prefers-color-scheme
//     and prefers-reduced-motion (the call replaces every feature: pass
//     both, as Merge keeps them);
//   - Network.emulateNetworkConditionsByRule (one rule for every request:
//     offline, latency in ms, throughput in bytes/s from the kbps of
//     Network) and Network.overrideNetworkState (navigator.onLine and
//     navigator.connection): the successors of the deprecated
//     Network.emulateNetworkConditions. Requests are throttled once the
//     Network domain is enabled on s, as chromedp does for a page;
//   - Emulation.setCPUThrottlingRate.
//
// A viewport, user agent and locale take effect at once; touch support
// ('ontouchstart' in window), the viewport meta tag and the client hints
// of navigator.userAgentData are read by a document when it loads, so
// apply before navigating, or reload. Errors: an *Error with
// errcode.BadRequest for invalid options or a time zone or locale the
// browser does not know; the wrapped error of any other failed call,
// after which the calls before it stay in effect.
func Apply(ctx context.Context, s cdp.Session, o Options) (*Applied, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := resolve(o)
	a := &Applied{Device: r.Device}
	if r.setMetric {
		p := emulation.SetDeviceMetricsOverrideParams{}
		if v := r.Viewport; v != nil {
			p.Width, p.Height, p.DeviceScaleFactor = int64(v.Width), int64(v.Height), v.DeviceScaleFactor
			a.Viewport = new(*v)
		}
		if r.Mobile != nil {
			p.Mobile = *r.Mobile
		}
		a.Mobile = new(p.Mobile)
		if sc := r.Screen; sc != nil {
			p.ScreenWidth, p.ScreenHeight = int64(sc.Width), int64(sc.Height)
			a.Screen = new(*sc)
		}
		if _, err := cdp.Call(ctx, s, emulation.SetDeviceMetricsOverride, p); err != nil {
			return nil, callErr(emulation.CommandSetDeviceMetricsOverride, err, false)
		}
	}
	if r.Touch != nil {
		p := emulation.SetTouchEmulationEnabledParams{Enabled: *r.Touch}
		if *r.Touch {
			p.MaxTouchPoints = int64(r.maxTouch)
			a.MaxTouchPoints = r.maxTouch
		}
		if _, err := cdp.Call(ctx, s, emulation.SetTouchEmulationEnabled, p); err != nil {
			return nil, callErr(emulation.CommandSetTouchEmulationEnabled, err, false)
		}
		a.Touch = new(*r.Touch)
	}
	if r.setUA {
		p := emulation.SetUserAgentOverrideParams{UserAgent: r.UserAgent, Platform: r.Platform, UserAgentMetadata: r.metadata}
		if p.UserAgent == "" {
			cur, err := current(ctx, s)
			if err != nil {
				return nil, err
			}
			p.UserAgent, p.Platform, p.UserAgentMetadata = cur.UserAgent, cur.Platform, cur.metadata()
		}
		if r.Locale != "" {
			p.AcceptLanguage = r.Locale
			if base, _, ok := strings.Cut(r.Locale, "-"); ok {
				p.AcceptLanguage += "," + base
			}
		}
		if _, err := cdp.Call(ctx, s, emulation.SetUserAgentOverride, p); err != nil {
			return nil, callErr(emulation.CommandSetUserAgentOverride, err, false)
		}
		a.UserAgent, a.Platform, a.AcceptLanguage = p.UserAgent, p.Platform, p.AcceptLanguage
		a.ClientHints, a.Metadata = hintsSummary(p.UserAgentMetadata), p.UserAgentMetadata
	}
	if g := r.Geolocation; g != nil {
		perm := browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: string(browser.PermissionTypeGeolocation)},
			Setting:    browser.PermissionSettingGranted, Origin: r.Origin, BrowserContextID: r.BrowserContextID,
		}
		if _, err := cdp.Call(ctx, s, browser.SetPermission, perm); err != nil {
			return nil, callErr(browser.CommandSetPermission, err, true)
		}
		// Without an accuracy Chromium reports POSITION_UNAVAILABLE
		// (measured): send 0, as Playwright does, when none is given.
		p := emulation.SetGeolocationOverrideParams{Latitude: new(g.Latitude), Longitude: new(g.Longitude), Accuracy: new(g.Accuracy)}
		if _, err := cdp.Call(ctx, s, emulation.SetGeolocationOverride, p); err != nil {
			return nil, callErr(emulation.CommandSetGeolocationOverride, err, false)
		}
		a.Geolocation, a.Origin = new(*g), r.Origin
	}
	if r.Timezone != "" {
		if _, err := cdp.Call(ctx, s, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: r.Timezone}); err != nil {
			return nil, callErr(emulation.CommandSetTimezoneOverride+"("+r.Timezone+")", err, true)
		}
		a.Timezone = r.Timezone
	}
	if r.Locale != "" {
		if _, err := cdp.Call(ctx, s, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: r.Locale}); err != nil {
			return nil, callErr(emulation.CommandSetLocaleOverride+"("+r.Locale+")", err, true)
		}
		a.Locale = r.Locale
	}
	if r.ColorScheme != "" || r.ReducedMotion != "" {
		var f []*emulation.MediaFeature
		if r.ColorScheme != "" {
			f = append(f, &emulation.MediaFeature{Name: "prefers-color-scheme", Value: r.ColorScheme})
		}
		if r.ReducedMotion != "" {
			f = append(f, &emulation.MediaFeature{Name: "prefers-reduced-motion", Value: r.ReducedMotion})
		}
		if _, err := cdp.Call(ctx, s, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: f}); err != nil {
			return nil, callErr(emulation.CommandSetEmulatedMedia, err, false)
		}
		a.ColorScheme, a.ReducedMotion = r.ColorScheme, r.ReducedMotion
	}
	if r.Offline != nil || r.Network != nil {
		if err := setNetwork(ctx, s, r.Offline != nil && *r.Offline, r.Network); err != nil {
			return nil, err
		}
		a.Offline = new(r.Offline != nil && *r.Offline)
		if r.Network != nil {
			a.Network = new(*r.Network)
		}
	}
	if r.CPUThrottling != 0 {
		if _, err := cdp.Call(ctx, s, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: r.CPUThrottling}); err != nil {
			return nil, callErr(emulation.CommandSetCPUThrottlingRate, err, false)
		}
		a.CPUThrottling = r.CPUThrottling
	}
	return a, nil
}

// conditionsByRule is Network.emulateNetworkConditionsByRule with the
// parameters of the Chromium releases tabpilot runs on: up to Chromium 148
// offline is a required parameter of the command, from 156 a field of
// each rule (cdproto's EmulateNetworkConditionsByRuleParams has no
// top-level offline). Both are sent; each release reads its own and
// ignores the other.
var conditionsByRule = cdp.Command[conditionsByRuleParams, network.EmulateNetworkConditionsByRuleResult]{Method: network.CommandEmulateNetworkConditionsByRule}

type conditionsByRuleParams struct {
	Offline                  bool                  `json:"offline"`
	MatchedNetworkConditions []*network.Conditions `json:"matchedNetworkConditions"`
}

// setNetwork sends Network.emulateNetworkConditionsByRule with one rule
// for every request, and Network.overrideNetworkState; nil n does not
// throttle.
func setNetwork(ctx context.Context, s cdp.Session, offline bool, n *Network) error {
	c := network.Conditions{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}
	if n != nil {
		c.Latency, c.DownloadThroughput, c.UploadThroughput = n.LatencyMs, bytesPerSecond(n.DownloadKbps), bytesPerSecond(n.UploadKbps)
	}
	rules := []*network.Conditions{&c}
	if !offline && n == nil {
		rules = []*network.Conditions{}
	}
	if _, err := cdp.Call(ctx, s, conditionsByRule, conditionsByRuleParams{Offline: offline, MatchedNetworkConditions: rules}); err != nil {
		return callErr(network.CommandEmulateNetworkConditionsByRule, err, false)
	}
	st := network.OverrideNetworkStateParams{Offline: c.Offline, Latency: c.Latency, DownloadThroughput: c.DownloadThroughput, UploadThroughput: c.UploadThroughput}
	if _, err := cdp.Call(ctx, s, network.OverrideNetworkState, st); err != nil {
		return callErr(network.CommandOverrideNetworkState, err, false)
	}
	return nil
}

// Reset clears every override Apply sets on the page session s:
// Emulation.clearDeviceMetricsOverride, setTouchEmulationEnabled(false),
// setUserAgentOverride with an empty user agent (the browser's own, which
// says HeadlessChrome in a headless browser), clearGeolocationOverride,
// setTimezoneOverride and setLocaleOverride with empty values (the
// machine's), setEmulatedMedia with no features, setCPUThrottlingRate(1),
// and no network conditions (Network.emulateNetworkConditionsByRule with
// no rule, Network.overrideNetworkState online). The geolocation
// permission stays granted. It clears the stealth overrides and the tab's
// viewport too: the caller applies them again after it. It tries every
// call and returns the first error, wrapped.
func Reset(ctx context.Context, s cdp.Session) error {
	var first error
	try := func(method string, err error) {
		if err != nil && first == nil {
			first = callErr(method, err, false)
		}
	}
	_, err := cdp.Call(ctx, s, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
	try(emulation.CommandClearDeviceMetricsOverride, err)
	_, err = cdp.Call(ctx, s, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: false})
	try(emulation.CommandSetTouchEmulationEnabled, err)
	_, err = cdp.Call(ctx, s, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{})
	try(emulation.CommandSetUserAgentOverride, err)
	_, err = cdp.Call(ctx, s, emulation.ClearGeolocationOverride, cdp.Empty{})
	try(emulation.CommandClearGeolocationOverride, err)
	_, err = cdp.Call(ctx, s, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{})
	try(emulation.CommandSetTimezoneOverride, err)
	_, err = cdp.Call(ctx, s, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{})
	try(emulation.CommandSetLocaleOverride, err)
	_, err = cdp.Call(ctx, s, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	try(emulation.CommandSetEmulatedMedia, err)
	_, err = cdp.Call(ctx, s, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: 1})
	try(emulation.CommandSetCPUThrottlingRate, err)
	if err := setNetwork(ctx, s, false, nil); err != nil && first == nil {
		first = err
	}
	return first
}

// currentUA is the page's user agent as navigator reports it.
type currentUA struct {
	UserAgent string                       `json:"userAgent"`
	Platform  string                       `json:"platform"`
	Hints     *emulation.UserAgentMetadata `json:"hints"`
}

func (c *currentUA) metadata() *emulation.UserAgentMetadata {
	if c.Hints == nil || len(c.Hints.Brands) == 0 {
		return nil // no client hints: keep none (navigator.userAgentData of a Safari preset)
	}
	return c.Hints
}

// currentJS reads the page's user agent, platform and high-entropy client
// hints (null outside a secure context, where navigator.userAgentData is
// missing).
const currentJS = `(async () => {
  const d = navigator.userAgentData;
  const hints = d ? await d.getHighEntropyValues(['architecture', 'bitness', 'model', 'platformVersion', 'fullVersionList', 'wow64', 'formFactors']) : null;
  return JSON.stringify({userAgent: navigator.userAgent, platform: navigator.platform, hints});
})()`

// current reads the page's user agent with Runtime.evaluate.
func current(ctx context.Context, s cdp.Session) (*currentUA, error) {
	res, err := cdp.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: currentJS, AwaitPromise: new(true), ReturnByValue: new(true)})
	if err != nil {
		return nil, callErr(cdpruntime.CommandEvaluate, err, false)
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return nil, fmt.Errorf("emulate: reading the page's user agent: %v", res.ExceptionDetails)
	}
	var text string
	if err := json.Unmarshal([]byte(res.Result.Value), &text); err != nil {
		return nil, fmt.Errorf("emulate: reading the page's user agent: %w", err)
	}
	var c currentUA
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return nil, fmt.Errorf("emulate: reading the page's user agent: %w", err)
	}
	return &c, nil
}

// hintsSummary describes client hints on one line.
func hintsSummary(m *emulation.UserAgentMetadata) string {
	if m == nil {
		return "none"
	}
	s := strings.TrimSpace(m.Platform + " " + m.PlatformVersion)
	if m.Model != "" {
		s += ", " + m.Model
	}
	if m.Mobile {
		s += ", mobile"
	}
	return s
}
