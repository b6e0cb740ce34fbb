package emulate

import (
	"slices"
	"strings"

	"github.com/chromedp/cdproto/emulation"
)

// Chromium's version the presets present, in user agents and client
// hints: Chrome 156, the stable release of late 2026.
const (
	chromeMajor = "156"
	chromeFull  = "156.0.8078.114"
	// safariVersion is Safari's version on iOS and iPadOS 26. The OS
	// version of an iOS user agent is frozen at 18_6 since iOS 26.
	safariVersion = "26.1"
)

// Device is a preset: what a page on that device reads of its screen,
// input and browser.
type Device struct {
	// Name is the preset's name, as Devices lists it.
	Name string
	// Viewport is the layout viewport in CSS pixels and the device pixel
	// ratio.
	Viewport Viewport
	// ScreenWidth and ScreenHeight are screen.width and screen.height in
	// CSS pixels (portrait for phones and tablets).
	ScreenWidth, ScreenHeight int
	// Mobile turns on the viewport meta tag, overlay scrollbars and text
	// autosizing (setDeviceMetricsOverride's mobile).
	Mobile bool
	// Touch is true for a touch screen; MaxTouchPoints is then
	// navigator.maxTouchPoints.
	Touch          bool
	MaxTouchPoints int
	// UserAgent is navigator.userAgent and the User-Agent header.
	UserAgent string
	// Platform is navigator.platform.
	Platform string
	// Metadata are the client hints (navigator.userAgentData and the
	// Sec-CH-UA-* headers). Nil for Safari, which has none: Chromium then
	// sends no Sec-CH-UA header and navigator.userAgentData has no brands,
	// rather than Chromium brands beside a Safari user agent.
	Metadata *emulation.UserAgentMetadata
}

// greased returns the GREASE brand Chromium pairs with a major version
// (components/embedder_support/user_agent_utils.cc), the same as package
// stealth's, so that a preset's brands match the browser's own.
func greased(major int) (brand, version string) {
	chars := []string{" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_"}
	versions := []string{"8", "99", "24"}
	return "Not" + chars[major%len(chars)] + "A" + chars[(major+1)%len(chars)] + "Brand", versions[major%len(versions)]
}

// brands returns the brand lists of Chromium 156, with Google Chrome's
// brand when chrome is set, in the order Chromium shuffles them for that
// version (ShuffleBrandList: the identity for 156, as 156%6 == 0 and
// 156%2 == 0).
func brands(chrome bool) (short, full []*emulation.UserAgentBrandVersion) {
	gb, gv := greased(156)
	short = []*emulation.UserAgentBrandVersion{{Brand: gb, Version: gv}, {Brand: "Chromium", Version: chromeMajor}}
	full = []*emulation.UserAgentBrandVersion{{Brand: gb, Version: gv + ".0.0.0"}, {Brand: "Chromium", Version: chromeFull}}
	if chrome {
		short = append(short, &emulation.UserAgentBrandVersion{Brand: "Google Chrome", Version: chromeMajor})
		full = append(full, &emulation.UserAgentBrandVersion{Brand: "Google Chrome", Version: chromeFull})
	}
	return short, full
}

// android returns a preset of Chrome 156 on an Android phone: the reduced
// user agent ("Android 10; K", as Chrome sends since version 110) and the
// client hints with the real model and Android version.
func android(name, model string, vp Viewport, sw, sh int) Device {
	b, f := brands(true)
	return Device{
		Name: name, Viewport: vp, ScreenWidth: sw, ScreenHeight: sh, Mobile: true, Touch: true, MaxTouchPoints: 5,
		UserAgent: "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + chromeMajor + ".0.0.0 Mobile Safari/537.36",
		Platform:  "Linux armv8l",
		Metadata: &emulation.UserAgentMetadata{
			Brands: b, FullVersionList: f, Platform: "Android", PlatformVersion: "16.0.0", Model: model, Mobile: true,
			FormFactors: []string{"Mobile"},
		},
	}
}

// iphone returns a preset of Safari on an iPhone.
func iphone(name string, vp Viewport, sw, sh int) Device {
	return Device{
		Name: name, Viewport: vp, ScreenWidth: sw, ScreenHeight: sh, Mobile: true, Touch: true, MaxTouchPoints: 5,
		UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/" + safariVersion + " Mobile/15E148 Safari/604.1",
		Platform:  "iPhone",
	}
}

// ipad returns a preset of Safari on an iPad. Since iPadOS 13 Safari asks
// for desktop sites: it sends the user agent and navigator.platform of a
// Mac, and only its five touch points tell it apart.
func ipad(name string, vp Viewport, sw, sh int) Device {
	return Device{
		Name: name, Viewport: vp, ScreenWidth: sw, ScreenHeight: sh, Mobile: true, Touch: true, MaxTouchPoints: 5,
		UserAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/" + safariVersion + " Safari/605.1.15",
		Platform:  "MacIntel",
	}
}

// desktop returns a preset of Chromium 156 on a Linux desktop: the user
// agent and client hints that package stealth presents on a Linux machine
// (where tabpilot runs; fonts and WebGL agree with it), in a window of the
// viewport's size on a larger screen.
func desktop(name string, w, h, sw, sh int) Device {
	b, f := brands(false)
	return Device{
		Name: name, Viewport: Viewport{Width: w, Height: h, DeviceScaleFactor: 1}, ScreenWidth: sw, ScreenHeight: sh,
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + chromeMajor + ".0.0.0 Safari/537.36",
		Metadata: &emulation.UserAgentMetadata{
			Brands: b, FullVersionList: f, Platform: "Linux", Architecture: "x86", Bitness: "64",
			FormFactors: []string{"Desktop"},
		},
	}
}

// devices are the presets. Viewports are what the page gets below the
// browser's toolbars, in portrait.
var devices = []Device{
	iphone("iPhone 15", Viewport{393, 659, 3}, 393, 852),
	iphone("iPhone SE", Viewport{375, 547, 2}, 375, 667),
	android("Pixel 7", "Pixel 7", Viewport{412, 839, 2.625}, 412, 915),
	android("Galaxy S23", "SM-S911B", Viewport{360, 664, 3}, 360, 780),
	ipad("iPad (gen 10)", Viewport{820, 1106, 2}, 820, 1180),
	ipad("iPad Pro 11", Viewport{834, 1120, 2}, 834, 1194),
	desktop("Desktop 1280x800", 1280, 800, 1440, 900),
	desktop("Desktop 1920x1080", 1920, 1080, 2560, 1440),
}

// Devices returns the names of the presets, phones first, then tablets,
// then desktops.
func Devices() []string {
	names := make([]string, len(devices))
	for i, d := range devices {
		names[i] = d.Name
	}
	return names
}

// LookupDevice returns the preset of that name, compared without case
// and with runs of spaces as one ("iphone 15", "IPHONE  15"), and whether
// there is one. The Metadata is the caller's copy.
func LookupDevice(name string) (Device, bool) {
	key := strings.Join(strings.Fields(name), " ")
	i := slices.IndexFunc(devices, func(d Device) bool { return strings.EqualFold(d.Name, key) })
	if i < 0 {
		return Device{}, false
	}
	d := devices[i]
	d.Metadata = cloneMetadata(d.Metadata)
	return d, true
}

// cloneMetadata returns a deep copy of m (nil for nil).
func cloneMetadata(m *emulation.UserAgentMetadata) *emulation.UserAgentMetadata {
	if m == nil {
		return nil
	}
	c := *m
	c.Brands = cloneBrands(m.Brands)
	c.FullVersionList = cloneBrands(m.FullVersionList)
	c.FormFactors = slices.Clone(m.FormFactors)
	return &c
}

func cloneBrands(in []*emulation.UserAgentBrandVersion) []*emulation.UserAgentBrandVersion {
	if in == nil {
		return nil
	}
	out := make([]*emulation.UserAgentBrandVersion, len(in))
	for i, b := range in {
		c := *b
		out[i] = &c
	}
	return out
}
