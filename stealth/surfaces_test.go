package stealth

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestNativeMasking(t *testing.T) {
	t.Parallel()
	on := surface(t, "native", true, nil)
	if n := num(on, "checked"); n < 40 {
		t.Errorf("checked %v functions, want at least 40", n)
	}
	if bad := get(on, "nonNative"); len(bad.([]any)) != 0 {
		t.Errorf("functions not reading as native with stealth on: %v", bad)
	}
	if got := str(on, "toStringOfToString"); got != "function toString() { [native code] }" {
		t.Errorf("toString.toString() = %q", got)
	}
	if got := str(on, "wrongReceiver"); got != "TypeError: Function.prototype.toString requires that 'this' be a Function" {
		t.Errorf("toString on a non-function: %q", got)
	}
	if get(on, "stackClean") != true {
		t.Error("the stack of an error thrown through the toString proxy shows the proxy handler")
	}
}

func TestVisibility(t *testing.T) {
	t.Parallel()
	on := surface(t, "visibility", true, nil)
	if get(on, "hidden") != false || str(on, "visibilityState") != "visible" || get(on, "hasFocus") != true || get(on, "rafFires") != true {
		t.Errorf("stealth on: %s, want visible, focused, animating", jsonOf(on))
	}
}

func TestHairline(t *testing.T) {
	t.Parallel()
	r := loads(t, load{b: retina, on: true, o: &Options{DeviceScaleFactor: 2}, path: "/testdata/surfaces/hairline.html", global: "result"},
		surfaceLoad("hairline", true, nil))
	res, plainDPR := r[0], r[1]
	if num(res, "dpr") != 2 || num(res, "offsetHeight") != 1 || get(res, "hairline") != true {
		t.Errorf("stealth on, scale 2: %s, want dpr 2 and a 1px hairline", jsonOf(res))
	}
	if num(plainDPR, "dpr") != 1 || num(plainDPR, "offsetHeight") != 2 || get(plainDPR, "hairline") != false {
		t.Errorf("stealth on, scale 1: %s, want dpr 1 and no hairline", jsonOf(plainDPR))
	}
}

func TestWebdriver(t *testing.T) {
	t.Parallel()
	r := loads(t, surfaceLoad("webdriver", true, nil), surfaceLoad("webdriver", false, nil))
	on, off := r[0], r[1]
	if get(on, "value") != false || get(on, "own") != false || get(on, "onPrototype") != true {
		t.Errorf("stealth on: %s, want false from Navigator.prototype, no own property", jsonOf(on))
	}
	if get(off, "value") != true {
		t.Errorf("stealth off: navigator.webdriver = %v, want true", get(off, "value"))
	}
}

func TestChrome(t *testing.T) {
	t.Parallel()
	on := surface(t, "chrome", true, nil)
	if str(on, "type") != "object" || str(on, "loadTimes") != "function" || str(on, "csi") != "function" || str(on, "app") != "object" {
		t.Errorf("stealth on: window.chrome = %s", jsonOf(on))
	}
	if keys := jsonOf(get(on, "loadTimesKeys")); !strings.Contains(keys, "requestTime") || !strings.Contains(keys, "firstPaintTime") {
		t.Errorf("chrome.loadTimes() keys = %s", keys)
	}
	if keys := jsonOf(get(on, "csiKeys")); keys != `["onloadT","pageT","startE","tran"]` {
		t.Errorf("chrome.csi() keys = %s", keys)
	}
	// A headed Chromium has no chrome.runtime on an ordinary page (TestHeadedComparison checks).
	if str(on, "runtime") != "undefined" {
		t.Errorf("chrome.runtime is %s, want undefined as in a headed Chromium", str(on, "runtime"))
	}
}

func TestIframe(t *testing.T) {
	t.Parallel()
	cross := strings.Replace(server.URL, "127.0.0.1", "localhost", 1) + "/testdata/surfaces/frame.html"
	path := "/testdata/surfaces/iframe.html?cross=" + cross
	r := loads(t, load{b: stealthy, on: true, o: &Options{HardwareConcurrency: 6}, path: path, global: "result"},
		load{b: plain, path: path, global: "result"})
	for i, on := range []bool{true, false} {
		res := r[i]
		topUA := str(res, "top", "userAgent")
		for _, f := range []string{"srcdocSync", "blankSync", "srcdocLoaded", "cross"} {
			ua := str(res, f, "userAgent")
			// The out-of-process iframe gets the script too (TestCrossSiteIframe compares every
			// surface): hardwareConcurrency 6, which no launch flag gives.
			if on && (ua != topUA || strings.Contains(ua, "Headless") || get(res, f, "webdriver") != false || num(res, f, "hardwareConcurrency") != 6) {
				t.Errorf("stealth on, %s iframe: %s; top user agent %q", f, jsonOf(get(res, f)), topUA)
			}
			if !on && !strings.Contains(ua, "HeadlessChrome") {
				t.Errorf("stealth off, %s iframe: user agent %q, want HeadlessChrome", f, ua)
			}
		}
		if on && (get(res, "contentWindowSane") != true || get(res, "detachedContentWindow") != true) {
			t.Errorf("stealth on: contentWindow sane %v, detached null %v", get(res, "contentWindowSane"), get(res, "detachedContentWindow"))
		}
		if on && !strings.HasPrefix(str(res, "cross", "origin"), "http://localhost:") {
			t.Errorf("cross-site frame origin %q", str(res, "cross", "origin"))
		}
		if *verbose {
			t.Logf("iframe stealth=%v: %s", on, jsonOf(res))
		}
	}
}

func TestWebGL(t *testing.T) {
	t.Parallel()
	custom := &Options{WebGLVendor: "Google Inc. (NVIDIA)", WebGLRenderer: "ANGLE (NVIDIA, NVIDIA GeForce GTX 1650, OpenGL 4.5)"}
	r := loads(t, surfaceLoad("webgl", true, nil), surfaceLoad("webgl", false, nil), surfaceLoad("webgl", true, custom))
	on, off := r[0], r[1]
	for _, kind := range []string{"webgl", "webgl2"} {
		if r := str(on, kind, "unmaskedRenderer"); r != DefaultWebGLRenderer || str(on, kind, "unmaskedVendor") != DefaultWebGLVendor {
			t.Errorf("stealth on, %s: %s", kind, jsonOf(get(on, kind)))
		}
		if r := str(off, kind, "unmaskedRenderer"); !strings.Contains(r, "SwiftShader") {
			t.Errorf("stealth off, %s renderer %q, want SwiftShader", kind, r)
		}
	}
	if str(r[2], "webgl", "unmaskedRenderer") != "ANGLE (NVIDIA, NVIDIA GeForce GTX 1650, OpenGL 4.5)" {
		t.Errorf("configured renderer: %s", jsonOf(get(r[2], "webgl")))
	}
}

func TestScreen(t *testing.T) {
	t.Parallel()
	r := loads(t, surfaceLoad("screen", true, nil), surfaceLoad("screen", false, nil))
	on, off := r[0], r[1]
	want := map[string]float64{"width": 1920, "height": 1080, "availWidth": 1920, "availHeight": 1080,
		"outerWidth": 1920, "outerHeight": 1080, "devicePixelRatio": 1, "colorDepth": 24}
	for k, v := range want {
		if num(on, k) != v {
			t.Errorf("stealth on: %s = %v, want %v", k, num(on, k), v)
		}
	}
	if num(on, "innerWidth") > num(on, "outerWidth") || num(on, "innerHeight") >= num(on, "outerHeight") ||
		get(on, "deviceWidthMatches") != true || get(on, "resolutionMatches") != true {
		t.Errorf("stealth on: inconsistent geometry %s", jsonOf(on))
	}
	if num(off, "width") != 800 || num(off, "height") != 600 {
		t.Errorf("stealth off: screen %vx%v, want headless's 800x600", num(off, "width"), num(off, "height"))
	}
}

// TestUnpatchedSurfaces checks the surfaces that need no patch on new headless: the patches
// must leave them as the browser has them (TestHeadedComparison checks them against headed).
func TestUnpatchedSurfaces(t *testing.T) {
	t.Parallel()
	r := loads(t, surfaceLoad("unpatched", true, nil), surfaceLoad("unpatched", false, nil))
	for _, name := range []string{"fonts", "audio", "plugins", "codecs"} {
		on, off := r[0][name], r[1][name]
		if !reflect.DeepEqual(on, off) {
			t.Errorf("%s: stealth on %s != off %s", name, jsonOf(on), jsonOf(off))
		}
		switch name {
		case "fonts":
			if n := len(get(on, "present").([]any)); n < 3 || str(on, "canvasHash") == "" {
				t.Errorf("fonts: %s", jsonOf(on))
			}
		case "audio":
			if num(on, "sampleRate") <= 0 || num(on, "baseLatency") <= 0 || num(on, "maxChannelCount") < 2 {
				t.Errorf("audio: %s", jsonOf(on))
			}
		case "plugins":
			if num(on, "length") != 5 || len(get(on, "mimeTypes").([]any)) != 2 || get(on, "prototypesOK") != true {
				t.Errorf("plugins: %s", jsonOf(on))
			}
		case "codecs":
			if str(on, "canPlay", `video/mp4; codecs="avc1.42E01E"`) != "probably" || str(on, "canPlay", `audio/mp4; codecs="mp4a.40.2"`) != "probably" {
				t.Errorf("codecs: %s", jsonOf(on))
			}
		}
	}
}

func TestLocale(t *testing.T) {
	t.Parallel()
	// A browser context of its own: a shared worker takes the options of an Install in its
	// browser context, and the other tests (TestHeadedComparison's en-US among them) must not
	// get fr-FR in theirs.
	own := surfaceLoad("locale", true, &Options{Locale: "fr-FR", TimeZone: "Europe/Paris"})
	own.copts = []chromedp.ContextOption{chromedp.WithNewBrowserContext()}
	on := loads(t, own)[0]
	for _, scope := range [][]string{nil, {"worker"}} {
		v := get(on, scope...)
		if str(v, "language") != "fr-FR" || jsonOf(get(v, "languages")) != `["fr-FR","fr"]` {
			t.Errorf("stealth on %v: languages %s", scope, jsonOf(v))
		}
		if str(v, "intl", "locale") != "fr-FR" || str(v, "intl", "timeZone") != "Europe/Paris" || num(v, "intl", "offset") != -60 ||
			!strings.HasPrefix(str(v, "intl", "dateString"), "GMT+0100") || str(v, "intl", "localeString") != "15/01/2024 12:00:00" {
			t.Errorf("stealth on %v: Intl and Date %s", scope, jsonOf(get(v, "intl")))
		}
	}
}

func TestHardwareConcurrency(t *testing.T) {
	t.Parallel()
	// A shared worker takes the options of an Install in its browser context: this tab has a
	// context of its own, so that the other tests' Installs (other options) cannot be picked.
	own := surfaceLoad("hardware", true, &Options{HardwareConcurrency: 8})
	own.copts = []chromedp.ContextOption{chromedp.WithNewBrowserContext()}
	r := loads(t, own, surfaceLoad("hardware", false, nil))
	on, off := r[0], r[1]
	for _, k := range []string{"page", "dedicated", "shared"} {
		if num(on, k) != 8 {
			t.Errorf("stealth on: %s hardwareConcurrency %v, want 8", k, num(on, k))
		}
	}
	if num(off, "page") != float64(runtime.NumCPU()) {
		t.Errorf("stealth off: hardwareConcurrency %v, want the machine's %d", num(off, "page"), runtime.NumCPU())
	}
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	on := surface(t, "permissions", true, nil)
	if str(on, "notification") != "default" || str(on, "query") != "prompt" {
		t.Errorf("stealth on: %s, want default/prompt", jsonOf(on))
	}
}

func TestWorkers(t *testing.T) {
	t.Parallel()
	own := surfaceLoad("workers", true, nil)
	own.copts = []chromedp.ContextOption{chromedp.WithNewBrowserContext()}
	r := loads(t, own, surfaceLoad("workers", false, nil))
	on, off := r[0], r[1]
	page := get(on, "page")
	for _, w := range []string{"dedicated", "shared"} {
		for _, k := range []string{"userAgent", "appVersion", "platform", "languages", "uaData"} {
			if jsonOf(get(on, w, k)) != jsonOf(get(page, k)) {
				t.Errorf("stealth on: %s worker %s = %s, page %s", w, k, jsonOf(get(on, w, k)), jsonOf(get(page, k)))
			}
		}
		if strings.Contains(jsonOf(get(on, w)), "Headless") {
			t.Errorf("stealth on: %s worker shows Headless: %s", w, jsonOf(get(on, w)))
		}
	}
	if !strings.Contains(str(off, "shared", "userAgent"), "HeadlessChrome") {
		t.Errorf("stealth off: shared worker user agent %q, want HeadlessChrome", str(off, "shared", "userAgent"))
	}
}

func TestUserAgent(t *testing.T) {
	t.Parallel()
	r := loads(t, surfaceLoad("useragent", true, nil), surfaceLoad("useragent", false, nil))
	on, off := r[0], r[1]
	ua := str(on, "nav", "userAgent")
	if ua == "" || strings.Contains(ua, "Headless") || !strings.Contains(ua, "Chrome/") {
		t.Errorf("stealth on: navigator.userAgent %q", ua)
	}
	if h := str(on, "headers", "user-agent"); h != ua {
		t.Errorf("stealth on: User-Agent header %q != navigator.userAgent %q", h, ua)
	}
	if h := str(on, "headers", "sec-ch-ua"); !strings.Contains(h, `"Chromium";v="`) || strings.Contains(h, "Headless") {
		t.Errorf("stealth on: Sec-CH-UA %q", h)
	}
	if h := str(on, "headers", "accept-language"); h != "en-US,en;q=0.9" {
		t.Errorf("stealth on: Accept-Language %q", h)
	}
	if !strings.Contains(str(off, "headers", "user-agent"), "HeadlessChrome") {
		t.Errorf("stealth off: User-Agent header %q, want HeadlessChrome", str(off, "headers", "user-agent"))
	}
}
