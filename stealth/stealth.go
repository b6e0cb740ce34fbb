// Package stealth makes a headless Chromium read as a person's browser to bot detectors.
//
// It has three parts, used together for a headless launch (never for a spawned or connected
// browser, whose owner chose its settings):
//
//   - [Flags]: the extra launch flags (--disable-blink-features=AutomationControlled, the window
//     size, the language, pointer and hover media, and the user agent when one is given).
//   - [Script]: the patches, one embedded .js file per surface (js/*.js), joined into one script
//     that runs before any page script in every realm it reaches.
//   - [Install]: per page target, installs [Script] with Page.addScriptToEvaluateOnNewDocument
//     (same-process iframes, srcdoc and about:blank ones included, run it too), sets the user
//     agent without "HeadlessChrome" with matching client hints (Emulation.setUserAgentOverride),
//     locale, time zone, focus, screen and automation overrides, and carries the script and the
//     overrides that apply into out-of-process (cross-site) iframes, dedicated, shared and service
//     workers through Target.setAutoAttach, each patched while it waits for the debugger.
//
// The surfaces: native-function masking, visibility and focus, navigator.webdriver, window.chrome,
// iframes, WebGL vendor and renderer, screen and device pixel ratio, locale, hardware concurrency,
// notification permission, media codecs, and the user agent of workers. Hairline, fonts and
// canvas text, audio, and plugins and mimeTypes need no patch on Chromium's new headless mode:
// they already match a headed Chromium on the same machine, which the package's tests check.
package stealth

import (
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/target"
)

// patches are the surfaces in the order they run; native.js must come first.
var patches = []string{
	"native.js", "webdriver.js", "useragent.js", "chrome.js", "visibility.js", "webgl.js",
	"screen.js", "locale.js", "hardware.js", "permissions.js", "codecs.js",
}

//go:embed js/*.js
var jsFS embed.FS

// Defaults of [Options].
const (
	DefaultLocale        = "en-US"
	DefaultWindowWidth   = 1920
	DefaultWindowHeight  = 1080
	DefaultWebGLVendor   = "Google Inc. (Intel)"
	DefaultWebGLRenderer = "ANGLE (Intel, Mesa Intel(R) UHD Graphics 630 (CFL GT2), OpenGL 4.6)"
)

// Options configure the stealth patches. A nil *Options means all defaults. Zero fields take
// their defaults; the struct is copied, never kept.
type Options struct {
	// UserAgent is the navigator.userAgent and User-Agent header. Empty: the browser's own,
	// with "HeadlessChrome/" read as "Chrome/" (Install reads it with Browser.getVersion).
	UserAgent string
	// Platform is navigator.platform. Empty: the browser's own (it matches the real OS, as the
	// default user agent does).
	Platform string
	// Locale is the BCP 47 locale for Intl, navigator.language and Accept-Language. Default en-US.
	Locale string
	// Languages is navigator.languages. Default: Locale and its base language ("en-US", "en").
	Languages []string
	// TimeZone is an IANA time zone ("Europe/Paris") for Intl and Date. Empty: the machine's.
	TimeZone string
	// WindowWidth and WindowHeight are the browser window's outer size in CSS pixels, given to
	// --window-size. Default 1920×1080 (a maximized window on a 1920×1080 screen).
	WindowWidth, WindowHeight int
	// ScreenWidth and ScreenHeight are screen.width and screen.height in CSS pixels. Default: the
	// window size.
	ScreenWidth, ScreenHeight int
	// DeviceScaleFactor is window.devicePixelRatio, set at launch by Flags. Default 1.
	DeviceScaleFactor float64
	// HardwareConcurrency is navigator.hardwareConcurrency in the page and its workers. 0: the
	// machine's.
	HardwareConcurrency int
	// DeviceMemory is navigator.deviceMemory in GiB. 0: the browser's.
	DeviceMemory float64
	// WebGLVendor and WebGLRenderer are the unmasked WebGL vendor and renderer
	// (WEBGL_debug_renderer_info). When both are set they always apply; otherwise the defaults
	// apply only where the browser renders WebGL in software (SwiftShader, llvmpipe).
	WebGLVendor, WebGLRenderer string
	// Logger gets the package's debug logs (the workers patched, the failures of a worker patch).
	// Default: discard.
	Logger *slog.Logger
	// FrameStarted, when set, is called (on a goroutine of the package's) each time an
	// out-of-process iframe that the auto-attach held (waitForDebuggerOnStart) has been patched,
	// or failed to be, and let run (Runtime.runIfWaitingForDebugger), with the iframe's target
	// id: from then on another client can attach to it and find it running. Package tabs
	// prepares its observation of the frame there.
	FrameStarted func(id target.ID)
}

// withDefaults returns a copy of o with the defaults filled in.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
		c.Languages = append([]string(nil), o.Languages...)
	}
	if c.Locale == "" {
		c.Locale = DefaultLocale
	}
	if len(c.Languages) == 0 {
		c.Languages = []string{c.Locale}
		if base, _, ok := strings.Cut(c.Locale, "-"); ok && base != "" {
			c.Languages = append(c.Languages, base)
		}
	}
	if c.WindowWidth <= 0 {
		c.WindowWidth = DefaultWindowWidth
	}
	if c.WindowHeight <= 0 {
		c.WindowHeight = DefaultWindowHeight
	}
	if c.ScreenWidth <= 0 {
		c.ScreenWidth = c.WindowWidth
	}
	if c.ScreenHeight <= 0 {
		c.ScreenHeight = c.WindowHeight
	}
	if c.DeviceScaleFactor <= 0 {
		c.DeviceScaleFactor = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Flags returns the extra command-line flags for a stealthy headless launch, as "--name=value"
// strings to add to the other launch flags. They are:
//
//   - --disable-blink-features=AutomationControlled: navigator.webdriver is false. (Do not also
//     pass --enable-automation; chromedp's DefaultExecAllocatorOptions does. The patches hide it
//     anyway, but the flag is a tell in its own right.)
//   - --window-size=W,H and --lang=LOCALE (also the default Accept-Language).
//   - --blink-settings with a fine pointer that can hover: headless otherwise matches
//     (pointer: none) and (hover: none), which no desktop browser does.
//   - --user-agent=UA when Options.UserAgent is set (see [DefaultUserAgent]), so every target
//     starts with it, and so does the User-Agent header of every request: [Install] patches the
//     navigator of shared and service workers, not the header of their fetches (measured: a
//     service worker's fetch sends the launch user agent, HeadlessChrome without this flag).
//   - --force-device-scale-factor when Options.DeviceScaleFactor is not 1: a real scale factor,
//     so that 0.5px borders render as hairlines as they do on such a screen.
//
// Chromium merges repeated --disable-blink-features and --blink-settings poorly: give these
// only once.
func Flags(o *Options) []string {
	c := o.withDefaults()
	flags := []string{
		"--disable-blink-features=AutomationControlled",
		"--window-size=" + strconv.Itoa(c.WindowWidth) + "," + strconv.Itoa(c.WindowHeight),
		"--lang=" + c.Locale,
		"--blink-settings=primaryPointerType=4,availablePointerTypes=4,primaryHoverType=2,availableHoverTypes=2",
	}
	if c.UserAgent != "" {
		flags = append(flags, "--user-agent="+c.UserAgent)
	}
	if c.DeviceScaleFactor != 1 {
		flags = append(flags, "--force-device-scale-factor="+strconv.FormatFloat(c.DeviceScaleFactor, 'f', -1, 64))
	}
	return flags
}

// scriptOptions are the values the patches read, as the JSON object O.
type scriptOptions struct {
	UserAgent           string         `json:"userAgent,omitempty"`
	Platform            string         `json:"platform,omitempty"`
	UAPlatform          string         `json:"uaPlatform,omitempty"`
	Brands              []brandVersion `json:"brands,omitempty"`
	FullVersionList     []brandVersion `json:"fullVersionList,omitempty"`
	FullVersion         string         `json:"fullVersion,omitempty"`
	UAHints             map[string]any `json:"uaHints,omitempty"`
	Languages           []string       `json:"languages,omitempty"`
	HardwareConcurrency int            `json:"hardwareConcurrency,omitempty"`
	DeviceMemory        float64        `json:"deviceMemory,omitempty"`
	WebGLVendor         string         `json:"webglVendor"`
	WebGLRenderer       string         `json:"webglRenderer"`
	WebGLForce          bool           `json:"webglForce,omitempty"`
	ChromeHeight        int            `json:"chromeHeight"`
	ScreenWidth         int            `json:"screenWidth,omitempty"`
	ScreenHeight        int            `json:"screenHeight,omitempty"`
	// WindowHeight is the browser window's outer height (the launch flag's).
	WindowHeight int             `json:"windowHeight,omitempty"`
	Extra        json.RawMessage `json:"extra,omitempty"`
	// NoUAData removes navigator.userAgentData (an emulated Safari user agent: see Update).
	NoUAData bool `json:"noUAData,omitempty"`
	// Mobile is an emulated mobile device: screen.js leaves the screen as the emulation set it.
	Mobile bool `json:"mobile,omitempty"`
}

type brandVersion struct {
	Brand   string `json:"brand"`
	Version string `json:"version"`
}

// Script returns the combined patch JavaScript for o: every embedded patch (js/*.js, one per
// surface), each in its own try block so one failure leaves the others, inside one function
// called with the global object and the options. It declares no globals. It is the source that
// [Install] gives Page.addScriptToEvaluateOnNewDocument and evaluates in workers. Without a
// browser version at hand the user agent patch reads the browser's own user agent at run time.
func Script(o *Options) string {
	c := o.withDefaults()
	return script(c, scriptOptionsFor(c, nil))
}

func scriptOptionsFor(c Options, ua *userAgent) scriptOptions {
	so := scriptOptions{
		UserAgent:           c.UserAgent,
		Platform:            c.Platform,
		Languages:           c.Languages,
		HardwareConcurrency: c.HardwareConcurrency,
		DeviceMemory:        c.DeviceMemory,
		WebGLVendor:         DefaultWebGLVendor,
		WebGLRenderer:       DefaultWebGLRenderer,
		ChromeHeight:        85,
		ScreenWidth:         c.ScreenWidth,
		ScreenHeight:        c.ScreenHeight,
		WindowHeight:        c.WindowHeight,
	}
	if c.WebGLVendor != "" && c.WebGLRenderer != "" {
		so.WebGLVendor, so.WebGLRenderer, so.WebGLForce = c.WebGLVendor, c.WebGLRenderer, true
	}
	if ua != nil {
		so.UserAgent = ua.UserAgent
		if ua.Platform != "" {
			so.Platform = ua.Platform // the page has it from the override; workers only from the script
		}
		so.UAPlatform = ua.Metadata.Platform
		so.FullVersion = ua.FullVersion
		m := ua.Metadata
		so.UAHints = map[string]any{
			"architecture": m.Architecture, "bitness": m.Bitness, "model": m.Model, "mobile": m.Mobile,
			"platformVersion": m.PlatformVersion, "wow64": m.Wow64, "formFactors": m.FormFactors,
		}
		for _, b := range ua.Metadata.Brands {
			so.Brands = append(so.Brands, brandVersion{b.Brand, b.Version})
		}
		for _, b := range ua.Metadata.FullVersionList {
			so.FullVersionList = append(so.FullVersionList, brandVersion{b.Brand, b.Version})
		}
	}
	return so
}

// script joins the patches. It panics if an embedded file is missing, which is a build defect.
func script(_ Options, so scriptOptions) string {
	opts, err := json.Marshal(so)
	if err != nil {
		panic(fmt.Sprintf("stealth: encoding options: %v", err))
	}
	var b strings.Builder
	b.WriteString("(function (G, O) {\n'use strict';\n")
	b.WriteString("const apply = Reflect.apply;\n")
	b.WriteString("const defProp = { getOwn: Object.getOwnPropertyDescriptor, define: Object.defineProperty };\n")
	for i, name := range patches {
		src, err := jsFS.ReadFile("js/" + name)
		if err != nil {
			panic(fmt.Sprintf("stealth: embedded patch %s: %v", name, err))
		}
		if i == 0 {
			b.Write(src) // native.js defines the helpers the others use
			b.WriteString("\n")
			continue
		}
		b.WriteString("try {\n")
		b.Write(src)
		b.WriteString("\n} catch (_) { /* " + name + " */ }\n")
	}
	b.WriteString("})(globalThis, ")
	b.Write(opts)
	b.WriteString(");\n")
	return b.String()
}

// hostPlatform returns the client-hint platform, architecture and bitness of the machine, which
// Chromium reports for itself (the default user agent names the same OS).
func hostPlatform() (platform, arch, bitness string) {
	switch runtime.GOOS {
	case "windows":
		platform = "Windows"
	case "darwin":
		platform = "macOS"
	case "android":
		platform = "Android"
	case "linux":
		platform = "Linux"
	default:
		platform = "Unknown"
	}
	arch, bitness = "x86", "64"
	switch runtime.GOARCH {
	case "386":
		bitness = "32"
	case "arm64":
		arch = "arm"
	case "arm":
		arch, bitness = "arm", "32"
	}
	return platform, arch, bitness
}
