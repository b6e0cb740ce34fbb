package emulate

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"golang.org/x/text/language"
)

// Options say what to emulate. Every field is optional: a zero value or a
// nil pointer leaves that part of the tab as it is. Device fills in the
// viewport, screen, mobile, touch, user agent, platform and client hints
// of a preset; a field set beside it wins over the preset's.
type Options struct {
	// Device is a preset's name (Devices; case-insensitive).
	Device string `json:"device,omitempty"`
	// Viewport is the layout viewport in CSS pixels and the device pixel
	// ratio (0: keep the browser's, which the stealth launch flag sets).
	Viewport *Viewport `json:"viewport,omitempty"`
	// Screen is screen.width and screen.height in CSS pixels. Default: the
	// preset's, else the viewport's size.
	Screen *Size `json:"screen,omitempty"`
	// UserAgent is navigator.userAgent and the User-Agent header. Without
	// a Device, navigator.platform and the client hints are derived from
	// it (a Chrome user agent gets Chromium's brands of its version and
	// its OS, a Safari or Firefox one none, as those browsers send none).
	UserAgent string `json:"userAgent,omitempty"`
	// Platform is navigator.platform. Default: the preset's, or the one of
	// UserAgent's OS.
	Platform string `json:"platform,omitempty"`
	// Touch turns touch events and navigator.maxTouchPoints (5) on or off.
	Touch *bool `json:"touch,omitempty"`
	// Mobile turns on the viewport meta tag, overlay scrollbars and text
	// autosizing. Set Viewport with it: without one, the window's size is
	// kept.
	Mobile *bool `json:"mobile,omitempty"`
	// Geolocation is the position navigator.geolocation reports; the
	// permission is granted to Origin.
	Geolocation *Geolocation `json:"geolocation,omitempty"`
	// Origin is the origin ("https://example.com") granted the geolocation
	// permission. Empty: every origin.
	Origin string `json:"origin,omitempty"`
	// BrowserContextID is the browser context of the tab, for the
	// permission grant. Empty: the default browser context.
	BrowserContextID cdp.BrowserContextID `json:"-"`
	// Timezone is an IANA time zone ("Europe/Paris") for Date and Intl.
	Timezone string `json:"timezone,omitempty"`
	// Locale is a BCP 47 language tag ("fr-FR") for Intl,
	// navigator.language(s) and Accept-Language.
	Locale string `json:"locale,omitempty"`
	// ColorScheme is prefers-color-scheme: "light", "dark" or
	// "no-preference".
	ColorScheme string `json:"colorScheme,omitempty"`
	// ReducedMotion is prefers-reduced-motion: "reduce" or "no-preference".
	ReducedMotion string `json:"reducedMotion,omitempty"`
	// Offline fails every request and makes navigator.onLine false.
	Offline *bool `json:"offline,omitempty"`
	// Network throttles every request.
	Network *Network `json:"network,omitempty"`
	// CPUThrottling slows the page's CPU down by this factor (1: none; at
	// least 1).
	CPUThrottling float64 `json:"cpuThrottling,omitempty"`
}

// Viewport is a layout viewport.
type Viewport struct {
	// Width and Height are CSS pixels, 1 to 10000.
	Width  int `json:"width"`
	Height int `json:"height"`
	// DeviceScaleFactor is window.devicePixelRatio, 0 (keep) or 0.25 to 10.
	DeviceScaleFactor float64 `json:"deviceScaleFactor,omitempty"`
}

// Size is a screen size in CSS pixels.
type Size struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Geolocation is a position: degrees, and the accuracy in metres (0: the
// browser's default).
type Geolocation struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Accuracy  float64 `json:"accuracy,omitempty"`
}

// Network are throttled network conditions. Throughputs are in kilobits
// per second (1 kbps = 1000 bit/s = 125 bytes/s); 0 does not throttle.
type Network struct {
	// LatencyMs is added to every request before its response headers, in
	// milliseconds.
	LatencyMs    float64 `json:"latency,omitempty"`
	DownloadKbps float64 `json:"download,omitempty"`
	UploadKbps   float64 `json:"upload,omitempty"`
}

// bytesPerSecond returns the CDP throughput of kbps: bytes per second, or
// -1 (no throttling) for 0.
func bytesPerSecond(kbps float64) float64 {
	if kbps <= 0 {
		return -1
	}
	return kbps * 1000 / 8
}

var (
	// timezoneRE is the shape of an IANA zone name ("UTC", "America/Argentina/Buenos_Aires",
	// "Etc/GMT+5"); the browser checks that it exists.
	timezoneRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9][A-Za-z0-9_+\-]*)*$`)
	// localeRE is the shape of a BCP 47 tag: a 2-3 (or 4-8) letter language and subtags.
	localeRE = regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$`)
	// originRE is an origin: a scheme and a host, with an optional port, no path.
	originRE = regexp.MustCompile(`^[a-z][a-z0-9+.\-]*://[^/?#\s]+$`)
)

// Validate checks o and returns an *Error with errcode.BadRequest that
// names the first field out of range, or nil.
func (o Options) Validate() error {
	if o.Device != "" {
		if _, ok := LookupDevice(o.Device); !ok {
			return badRequest("Use one of: "+strings.Join(Devices(), ", ")+".", "unknown device %q", o.Device)
		}
	}
	if v := o.Viewport; v != nil {
		if v.Width < 1 || v.Width > 10000 || v.Height < 1 || v.Height > 10000 {
			return badRequest("", "viewport %dx%d: width and height are 1 to 10000 CSS pixels", v.Width, v.Height)
		}
		if f := v.DeviceScaleFactor; f != 0 && (!finite(f) || f < 0.25 || f > 10) {
			return badRequest("", "viewport deviceScaleFactor %g: 0 (the browser's) or 0.25 to 10", f)
		}
	}
	if s := o.Screen; s != nil && (s.Width < 1 || s.Width > 10000 || s.Height < 1 || s.Height > 10000) {
		return badRequest("", "screen %dx%d: width and height are 1 to 10000 CSS pixels", s.Width, s.Height)
	}
	if strings.ContainsAny(o.UserAgent, "\r\n") || strings.ContainsAny(o.Platform, "\r\n") {
		return badRequest("", "the user agent and platform are one line")
	}
	if g := o.Geolocation; g != nil {
		if !finite(g.Latitude) || g.Latitude < -90 || g.Latitude > 90 || !finite(g.Longitude) || g.Longitude < -180 || g.Longitude > 180 {
			return badRequest("", "geolocation (%g, %g): latitude is -90 to 90 degrees, longitude -180 to 180", g.Latitude, g.Longitude)
		}
		if !finite(g.Accuracy) || g.Accuracy < 0 {
			return badRequest("", "geolocation accuracy %g: metres, at least 0", g.Accuracy)
		}
	}
	if o.Origin != "" && !originRE.MatchString(o.Origin) {
		return badRequest("Give a scheme and host, e.g. https://example.com.", "origin %q is not an origin", o.Origin)
	}
	if o.Timezone != "" && !timezoneRE.MatchString(o.Timezone) {
		return badRequest("Use an IANA time zone such as Europe/Paris or America/New_York.", "timezone %q is not an IANA zone name", o.Timezone)
	}
	if o.Locale != "" {
		if !localeRE.MatchString(o.Locale) {
			return badRequest("Use a BCP 47 tag such as en-US or fr-FR.", "locale %q is not a BCP 47 language tag", o.Locale)
		}
		// Chromium takes any well-formed tag (ICU falls back to its root
		// locale), so a typo would emulate nothing and say it did.
		if _, err := language.Parse(o.Locale); err != nil {
			return badRequest("Use a BCP 47 tag of a known language, such as en-US, fr-FR or ja-JP.", "locale %q: %v", o.Locale, err)
		}
	}
	switch o.ColorScheme {
	case "", "light", "dark", "no-preference":
	default:
		return badRequest("", "colorScheme %q: light, dark or no-preference", o.ColorScheme)
	}
	switch o.ReducedMotion {
	case "", "reduce", "no-preference":
	default:
		return badRequest("", "reducedMotion %q: reduce or no-preference", o.ReducedMotion)
	}
	if n := o.Network; n != nil {
		for _, f := range []struct {
			name string
			v    float64
		}{{"latency", n.LatencyMs}, {"download", n.DownloadKbps}, {"upload", n.UploadKbps}} {
			if !finite(f.v) || f.v < 0 {
				return badRequest("", "network %s %g: at least 0 (latency in ms, throughput in kbps)", f.name, f.v)
			}
		}
	}
	if c := o.CPUThrottling; c != 0 && (!finite(c) || c < 1 || c > 100) {
		return badRequest("", "cpuThrottling %g: a slowdown factor from 1 (none) to 100", c)
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Merge returns o with the fields that next sets replacing its own: the
// tab's emulation after next is applied on top of o. A new Device drops
// the viewport, screen, user agent, platform, touch and mobile that o set
// beside its device, so that the new preset's apply.
func (o Options) Merge(next Options) Options {
	if next.Device != "" {
		o.Device = next.Device
		o.Viewport, o.Screen, o.UserAgent, o.Platform, o.Touch, o.Mobile = nil, nil, "", "", nil, nil
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&o.UserAgent, next.UserAgent)
	set(&o.Platform, next.Platform)
	set(&o.Origin, next.Origin)
	set(&o.Timezone, next.Timezone)
	set(&o.Locale, next.Locale)
	set(&o.ColorScheme, next.ColorScheme)
	set(&o.ReducedMotion, next.ReducedMotion)
	if next.BrowserContextID != "" {
		o.BrowserContextID = next.BrowserContextID
	}
	if next.Viewport != nil {
		o.Viewport = new(*next.Viewport)
	}
	if next.Screen != nil {
		o.Screen = new(*next.Screen)
	}
	if next.Touch != nil {
		o.Touch = new(*next.Touch)
	}
	if next.Mobile != nil {
		o.Mobile = new(*next.Mobile)
	}
	if next.Geolocation != nil {
		o.Geolocation = new(*next.Geolocation)
	}
	if next.Offline != nil {
		o.Offline = new(*next.Offline)
	}
	if next.Network != nil {
		o.Network = new(*next.Network)
	}
	if next.CPUThrottling != 0 {
		o.CPUThrottling = next.CPUThrottling
	}
	return o
}

// uaPlatform derives navigator.platform and the client hints of a user
// agent no preset gave: Chrome's on Android, Windows, macOS and Linux
// (Chromium's brands of the user agent's major version), none for Safari,
// Firefox and anything else, which send no client hints.
func uaPlatform(ua string) (string, *emulation.UserAgentMetadata) {
	platform := ""
	switch {
	case strings.Contains(ua, "iPhone"):
		platform = "iPhone"
	case strings.Contains(ua, "iPad"):
		platform = "iPad"
	case strings.Contains(ua, "Android"):
		platform = "Linux armv8l"
	case strings.Contains(ua, "Windows"):
		platform = "Win32"
	case strings.Contains(ua, "Macintosh"):
		platform = "MacIntel"
	case strings.Contains(ua, "Linux"):
		platform = "Linux x86_64"
	}
	_, after, ok := strings.Cut(ua, "Chrome/")
	if !ok || strings.Contains(ua, "iPhone") || strings.Contains(ua, "iPad") {
		return platform, nil
	}
	digits := strings.IndexFunc(after, func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(after)
	}
	major, err := strconv.Atoi(after[:digits])
	if err != nil || major <= 0 {
		return platform, nil
	}
	gb, gv := greased(major)
	m := strconv.Itoa(major)
	grease, chromium := &emulation.UserAgentBrandVersion{Brand: gb, Version: gv}, &emulation.UserAgentBrandVersion{Brand: "Chromium", Version: m}
	gfull, cfull := &emulation.UserAgentBrandVersion{Brand: gb, Version: gv + ".0.0.0"}, &emulation.UserAgentBrandVersion{Brand: "Chromium", Version: m + ".0.0.0"}
	md := &emulation.UserAgentMetadata{
		Brands: []*emulation.UserAgentBrandVersion{grease, chromium}, FullVersionList: []*emulation.UserAgentBrandVersion{gfull, cfull},
		Architecture: "x86", Bitness: "64", FormFactors: []string{"Desktop"},
	}
	if major%2 == 1 { // Chromium's shuffle of two brands
		md.Brands = []*emulation.UserAgentBrandVersion{chromium, grease}
		md.FullVersionList = []*emulation.UserAgentBrandVersion{cfull, gfull}
	}
	switch platform {
	case "Linux armv8l":
		md.Platform, md.PlatformVersion, md.Mobile = "Android", "16.0.0", strings.Contains(ua, "Mobile")
		md.Architecture, md.Bitness = "", ""
		md.FormFactors = []string{"Mobile"}
		if !md.Mobile {
			md.FormFactors = []string{"Tablet"}
		}
	case "Win32":
		md.Platform, md.PlatformVersion = "Windows", "19.0.0"
	case "MacIntel":
		md.Platform, md.PlatformVersion, md.Architecture = "macOS", "15.0.0", "arm"
	case "Linux x86_64":
		md.Platform = "Linux"
	default:
		return platform, nil
	}
	return platform, md
}

// String returns the viewport as "393x659@3x" (without "@" for the
// browser's scale factor).
func (v Viewport) String() string {
	s := fmt.Sprintf("%dx%d", v.Width, v.Height)
	if v.DeviceScaleFactor != 0 {
		s += fmt.Sprintf("@%gx", v.DeviceScaleFactor)
	}
	return s
}
