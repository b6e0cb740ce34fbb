package emulate_test

import (
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/emulate"
)

// facts are what a page reads of its device, place and preferences.
type facts struct {
	InnerWidth  float64        `json:"innerWidth"`
	ScreenWidth float64        `json:"screenWidth"`
	DPR         float64        `json:"dpr"`
	UA          string         `json:"ua"`
	Platform    string         `json:"platform"`
	Touch       bool           `json:"touch"`
	MaxTouch    float64        `json:"maxTouch"`
	Coarse      bool           `json:"coarse"`
	UADMobile   bool           `json:"uadMobile"`
	UADBrands   int            `json:"uadBrands"`
	UADPlatform string         `json:"uadPlatform"`
	Model       string         `json:"model"`
	Dark        bool           `json:"dark"`
	Reduce      bool           `json:"reduce"`
	TZ          string         `json:"tz"`
	Lang        string         `json:"lang"`
	Langs       []string       `json:"langs"`
	IntlLocale  string         `json:"intlLocale"`
	Online      bool           `json:"online"`
	Headers     map[string]any `json:"headers"`
}

const factsJS = `(async () => {
  const d = navigator.userAgentData;
  const hi = d ? await d.getHighEntropyValues(['model']) : {};
  return {
    innerWidth: innerWidth, screenWidth: screen.width, dpr: devicePixelRatio,
    ua: navigator.userAgent, platform: navigator.platform,
    touch: 'ontouchstart' in window, maxTouch: navigator.maxTouchPoints, coarse: matchMedia('(pointer: coarse)').matches,
    uadMobile: !!(d && d.mobile), uadBrands: d ? d.brands.length : -1, uadPlatform: d ? d.platform : '', model: hi.model || '',
    dark: matchMedia('(prefers-color-scheme: dark)').matches, reduce: matchMedia('(prefers-reduced-motion: reduce)').matches,
    tz: Intl.DateTimeFormat().resolvedOptions().timeZone, lang: navigator.language, langs: navigator.languages,
    intlLocale: Intl.DateTimeFormat().resolvedOptions().locale,
    online: navigator.onLine, headers: window.HEADERS,
  };
})()`

const geoJS = `new Promise((resolve) => navigator.geolocation.getCurrentPosition(
  (p) => resolve([p.coords.latitude, p.coords.longitude, p.coords.accuracy]),
  (e) => resolve([e.code, e.message]), {timeout: 10000}))`

// TestIPhone15 emulates an iPhone 15 in Tokyo with a French locale, a dark
// scheme and reduced motion, then takes it offline, and reads each from
// the page; Reset gives the page back its own values.
func TestIPhone15(t *testing.T) {
	t.Parallel()
	ctx, s := newTab(t)
	navigate(t, ctx, "/")
	before := eval[facts](t, ctx, factsJS)
	a, err := emulate.Apply(ctx, s, emulate.Options{
		Device: "iphone 15", Timezone: "Asia/Tokyo", Locale: "fr-FR", ColorScheme: "dark", ReducedMotion: "reduce",
		Geolocation: &emulate.Geolocation{Latitude: 35.6586, Longitude: 139.7454, Accuracy: 12}, Origin: server.URL,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(a.Summary())
	if a.Device != "iPhone 15" || a.Viewport == nil || a.Viewport.Width != 393 || a.ClientHints != "none" || a.MaxTouchPoints != 5 {
		t.Errorf("applied %+v", a)
	}
	navigate(t, ctx, "/")
	f := eval[facts](t, ctx, factsJS)
	checks := []struct {
		what      string
		got, want any
	}{
		{"innerWidth", f.InnerWidth, 393.0},
		{"screen.width", f.ScreenWidth, 393.0},
		{"devicePixelRatio", f.DPR, 3.0},
		{"navigator.userAgent", f.UA, "Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Mobile/15E148 Safari/604.1"},
		{"User-Agent header", f.Headers["user-agent"], f.UA},
		{"navigator.platform", f.Platform, "iPhone"},
		{"'ontouchstart' in window", f.Touch, true},
		{"navigator.maxTouchPoints", f.MaxTouch, 5.0},
		{"(pointer: coarse)", f.Coarse, true},
		// Safari has no client hints: no Sec-CH-UA header, no brands.
		{"userAgentData.brands", f.UADBrands, 0},
		{"userAgentData.mobile", f.UADMobile, false},
		{"Sec-CH-UA header", f.Headers["sec-ch-ua"], nil},
		{"prefers-color-scheme: dark", f.Dark, true},
		{"prefers-reduced-motion: reduce", f.Reduce, true},
		{"time zone", f.TZ, "Asia/Tokyo"},
		{"navigator.language", f.Lang, "fr-FR"},
		{"Intl locale", f.IntlLocale, "fr-FR"},
		{"Accept-Language header", f.Headers["accept-language"], "fr-FR,fr;q=0.9"},
		{"navigator.onLine", f.Online, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
	geo := eval[[]any](t, ctx, geoJS)
	if len(geo) != 3 || geo[0] != 35.6586 || geo[1] != 139.7454 || geo[2] != 12.0 {
		t.Errorf("getCurrentPosition = %v, want [35.6586 139.7454 12]", geo)
	}

	if _, err := emulate.Apply(ctx, s, emulate.Options{Offline: new(true)}); err != nil {
		t.Fatal(err)
	}
	if on := eval[bool](t, ctx, "navigator.onLine"); on {
		t.Error("navigator.onLine is true offline")
	}
	if got := eval[string](t, ctx, `fetch('/slow').then(() => 'loaded', (e) => e.name)`); got != "TypeError" {
		t.Errorf("a fetch offline: %s, want a TypeError", got)
	}

	if err := emulate.Reset(ctx, s); err != nil {
		t.Fatal(err)
	}
	navigate(t, ctx, "/")
	r := eval[facts](t, ctx, factsJS)
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"innerWidth", r.InnerWidth, before.InnerWidth},
		{"devicePixelRatio", r.DPR, before.DPR},
		{"navigator.userAgent", r.UA, before.UA},
		{"'ontouchstart' in window", r.Touch, before.Touch},
		{"navigator.maxTouchPoints", r.MaxTouch, before.MaxTouch},
		{"userAgentData.brands", r.UADBrands, before.UADBrands},
		{"prefers-color-scheme: dark", r.Dark, before.Dark},
		{"prefers-reduced-motion: reduce", r.Reduce, before.Reduce},
		{"time zone", r.TZ, before.TZ},
		{"navigator.language", r.Lang, before.Lang},
		{"navigator.onLine", r.Online, true},
	} {
		if c.got != c.want {
			t.Errorf("after Reset, %s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
	if before.UADBrands == 0 || before.Dark || before.TZ == "Asia/Tokyo" {
		t.Errorf("the browser's own values are not a baseline: %+v", before)
	}
}

// TestPixel7 checks that an Android preset comes with mobile client hints
// that agree with its user agent: navigator.userAgentData and the
// Sec-CH-UA headers say Android, mobile, Chrome 156, and the model.
func TestPixel7(t *testing.T) {
	t.Parallel()
	ctx, s := newTab(t)
	if _, err := emulate.Apply(ctx, s, emulate.Options{Device: "Pixel 7"}); err != nil {
		t.Fatal(err)
	}
	navigate(t, ctx, "/")
	f := eval[facts](t, ctx, factsJS)
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"innerWidth", f.InnerWidth, 412.0},
		{"devicePixelRatio", f.DPR, 2.625},
		{"navigator.userAgent", f.UA, "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36"},
		{"navigator.platform", f.Platform, "Linux armv8l"},
		{"navigator.maxTouchPoints", f.MaxTouch, 5.0},
		{"userAgentData.mobile", f.UADMobile, true},
		{"userAgentData.platform", f.UADPlatform, "Android"},
		{"userAgentData.brands", f.UADBrands, 3},
		{"model", f.Model, "Pixel 7"},
		{"Sec-CH-UA-Mobile", f.Headers["sec-ch-ua-mobile"], "?1"},
		{"Sec-CH-UA-Platform", f.Headers["sec-ch-ua-platform"], `"Android"`},
		{"Sec-CH-UA", f.Headers["sec-ch-ua"], `"Not:A-Brand";v="8", "Chromium";v="156", "Google Chrome";v="156"`},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
}

// TestLocaleKeepsUserAgent applies a Windows Chrome user agent, then a
// locale alone: the second Apply sends the page's user agent, platform and
// client hints back with the new Accept-Language, rather than dropping
// them.
func TestLocaleKeepsUserAgent(t *testing.T) {
	t.Parallel()
	ctx, s := newTab(t)
	const win = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	navigate(t, ctx, "/")
	if _, err := emulate.Apply(ctx, s, emulate.Options{UserAgent: win}); err != nil {
		t.Fatal(err)
	}
	a, err := emulate.Apply(ctx, s, emulate.Options{Locale: "de-DE"})
	if err != nil {
		t.Fatal(err)
	}
	if a.UserAgent != win || a.Platform != "Win32" || a.ClientHints != "Windows 19.0.0" {
		t.Errorf("applied %+v", a)
	}
	navigate(t, ctx, "/")
	f := eval[facts](t, ctx, factsJS)
	if f.UA != win || f.Platform != "Win32" || f.UADPlatform != "Windows" || f.Lang != "de-DE" ||
		f.Headers["accept-language"] != "de-DE,de;q=0.9" || f.Headers["sec-ch-ua-platform"] != `"Windows"` {
		t.Errorf("page reads %+v", f)
	}
}

// TestNetworkLatency throttles every request by 600 ms and times a fetch.
func TestNetworkLatency(t *testing.T) {
	t.Parallel()
	ctx, s := newTab(t)
	navigate(t, ctx, "/")
	a, err := emulate.Apply(ctx, s, emulate.Options{Network: &emulate.Network{LatencyMs: 600, DownloadKbps: 1600, UploadKbps: 750}, CPUThrottling: 2})
	if err != nil {
		t.Fatal(err)
	}
	if a.Offline == nil || *a.Offline || a.Network.LatencyMs != 600 || a.CPUThrottling != 2 {
		t.Errorf("applied %+v", a)
	}
	ms := eval[float64](t, ctx, `(async () => { const t0 = performance.now(); await (await fetch('/slow?' + Math.random())).text(); return performance.now() - t0; })()`)
	if ms < 550 {
		t.Errorf("a fetch took %.0f ms with 600 ms of latency", ms)
	}
	if err := emulate.Reset(ctx, s); err != nil {
		t.Fatal(err)
	}
	ms = eval[float64](t, ctx, `(async () => { const t0 = performance.now(); await (await fetch('/slow?' + Math.random())).text(); return performance.now() - t0; })()`)
	if ms >= 550 {
		t.Errorf("a fetch took %.0f ms after Reset", ms)
	}
}

// TestBrowserRefuses checks that a well-formed time zone the browser does
// not know is a bad request.
func TestBrowserRefuses(t *testing.T) {
	t.Parallel()
	ctx, s := newTab(t)
	_, err := emulate.Apply(ctx, s, emulate.Options{Timezone: "Mars/Olympus_Mons"})
	if errcode.Of(err) != errcode.BadRequest {
		t.Fatalf("Apply(Mars/Olympus_Mons) = %v (%s), want bad_request", err, errcode.Of(err))
	}
	t.Log(err)
}

// TestValidate checks that each field out of range is a bad request that
// names it.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    emulate.Options
		want string
	}{
		{emulate.Options{Device: "Nokia 3310"}, `unknown device "Nokia 3310"`},
		{emulate.Options{Viewport: &emulate.Viewport{Width: 0, Height: 10}}, "viewport 0x10"},
		{emulate.Options{Viewport: &emulate.Viewport{Width: 10, Height: 10, DeviceScaleFactor: 20}}, "deviceScaleFactor 20"},
		{emulate.Options{Geolocation: &emulate.Geolocation{Latitude: 91}}, "latitude is -90 to 90"},
		{emulate.Options{Geolocation: &emulate.Geolocation{Accuracy: -1}}, "accuracy -1"},
		{emulate.Options{Origin: "example.com"}, `origin "example.com"`},
		{emulate.Options{Timezone: "Europe Paris"}, "IANA"},
		{emulate.Options{Locale: "english!"}, "BCP 47"},
		{emulate.Options{Locale: "zz"}, `locale "zz": language: subtag "zz" is well-formed but unknown`},
		{emulate.Options{ColorScheme: "blue"}, `colorScheme "blue"`},
		{emulate.Options{ReducedMotion: "yes"}, `reducedMotion "yes"`},
		{emulate.Options{Network: &emulate.Network{LatencyMs: -5}}, "network latency -5"},
		{emulate.Options{CPUThrottling: 0.5}, "cpuThrottling 0.5"},
		{emulate.Options{UserAgent: "a\r\nX-Evil: 1"}, "one line"},
	} {
		err := c.o.Validate()
		if errcode.Of(err) != errcode.BadRequest || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want bad_request with %q", c.o, err, c.want)
		}
	}
	ok := emulate.Options{Device: "Desktop 1920x1080", Timezone: "America/Argentina/Buenos_Aires", Locale: "zh-Hant-TW", CPUThrottling: 4,
		Origin: "http://127.0.0.1:8080", Geolocation: &emulate.Geolocation{Latitude: -33.9, Longitude: 151.2}}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", ok, err)
	}
}

// TestDevices checks the table: every preset is found by its name in any
// case, and its parts agree (a mobile user agent has touch, a phone's
// screen is at least its viewport).
func TestDevices(t *testing.T) {
	t.Parallel()
	names := emulate.Devices()
	if len(names) < 8 {
		t.Fatalf("Devices() = %v", names)
	}
	for _, n := range names {
		d, ok := emulate.LookupDevice(" " + strings.ToUpper(n) + " ")
		if !ok || d.Name != n {
			t.Errorf("LookupDevice(%q) = %v, %v", strings.ToUpper(n), d.Name, ok)
			continue
		}
		mobileUA := strings.Contains(d.UserAgent, "Mobile")
		if mobileUA != (d.Touch && d.Mobile && d.Viewport.Width < 500) {
			t.Errorf("%s: mobile user agent %t, touch %t, mobile %t, width %d", n, mobileUA, d.Touch, d.Mobile, d.Viewport.Width)
		}
		if d.ScreenWidth < d.Viewport.Width || d.ScreenHeight < d.Viewport.Height {
			t.Errorf("%s: screen %dx%d smaller than viewport %v", n, d.ScreenWidth, d.ScreenHeight, d.Viewport)
		}
		if d.Metadata != nil && d.Metadata.Mobile != mobileUA {
			t.Errorf("%s: client hints mobile %t, user agent %q", n, d.Metadata.Mobile, d.UserAgent)
		}
		if strings.Contains(d.UserAgent, "Chrome/156") != (d.Metadata != nil) {
			t.Errorf("%s: a Chrome user agent needs client hints, a Safari one none", n)
		}
	}
	d, _ := emulate.LookupDevice("Pixel 7")
	d.Metadata.Model = "changed"
	if d2, _ := emulate.LookupDevice("Pixel 7"); d2.Metadata.Model != "Pixel 7" {
		t.Error("LookupDevice returns the table's own metadata")
	}
}
