package tabs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// deviceFacts are what a page reads of its device, place and user agent.
type deviceFacts struct {
	UA, Header, Platform, TZ, Lang string
	Langs                          []string
	InnerWidth, ScreenWidth, DPR   float64
	MaxTouch                       float64
	Touch, HasUAData, UADMobile    bool
	UADPlatform                    string
	Brands                         int
}

const deviceFactsJS = `(async () => {
  const d = navigator.userAgentData;
  return JSON.stringify({
    UA: navigator.userAgent, Header: document.getElementById('ua').textContent, Platform: navigator.platform,
    TZ: Intl.DateTimeFormat().resolvedOptions().timeZone, Lang: navigator.language, Langs: navigator.languages,
    InnerWidth: innerWidth, ScreenWidth: screen.width, DPR: devicePixelRatio, MaxTouch: navigator.maxTouchPoints,
    Touch: 'ontouchstart' in window, HasUAData: 'userAgentData' in navigator, UADMobile: !!(d && d.mobile),
    UADPlatform: d ? d.platform : '', Brands: d ? d.brands.length : -1,
  });
})()`

// deviceServer serves a page that shows the User-Agent header it was
// sent, and records the last one.
func deviceServer(t *testing.T) (*httptest.Server, func() string) {
	var mu sync.Mutex
	last := ""
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		last = r.Header.Get("User-Agent")
		mu.Unlock()
		fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1"><title>Device</title><p>User agent: <span id=ua>%s</span></p>`, html.EscapeString(r.Header.Get("User-Agent")))
	}))
	t.Cleanup(s.Close)
	return s, func() string { mu.Lock(); defer mu.Unlock(); return last }
}

func readFacts(t *testing.T, tab *tabs.Tab, reload bool) deviceFacts {
	t.Helper()
	var f deviceFacts
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		if reload {
			if _, err := tb.Reload(ctx); err != nil {
				return err
			}
		}
		raw, err := tb.Evaluate(ctx, deviceFactsJS, nil)
		if err != nil {
			return err
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		return json.Unmarshal([]byte(s), &f)
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func emulateOn(t *testing.T, tab *tabs.Tab, o tabs.EmulateOptions) *tabs.EmulateResult {
	t.Helper()
	var res *tabs.EmulateResult
	if err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		var err error
		res, err = tb.Emulate(ctx, o)
		return err
	}); err != nil {
		t.Fatalf("emulate %+v: %v", o, err)
	}
	return res
}

// TestEmulateDevicesOnStealthTab emulates an iPhone 15 in Tokyo in French,
// then a Pixel 7, on a stealthy tab: after a reload the page's
// navigator.userAgent is the User-Agent header the server got, and its
// viewport, pixel ratio, touch points, time zone, languages and client
// hints are the device's. A reset gives the desktop values back.
func TestEmulateDevicesOnStealthTab(t *testing.T) {
	srv2, header := deviceServer(t)
	name := "emulate-devices"
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: srv2.URL + "/", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	tab, err := sup.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	desk := readFacts(t, tab, false)
	if desk.UA != desk.Header || strings.Contains(desk.UA, "Headless") || desk.MaxTouch != 0 || desk.Brands < 2 || desk.Lang != "en-US" {
		t.Fatalf("desktop facts before emulation: %+v", desk)
	}

	res := emulateOn(t, tab, tabs.EmulateOptions{Device: "iPhone 15", Timezone: "Asia/Tokyo", Locale: "fr-FR"})
	if res.Note == "" || !strings.Contains(res.Summary(), "device iPhone 15") {
		t.Errorf("result: %q, note %q", res.Summary(), res.Note)
	}
	f := readFacts(t, tab, true)
	if !strings.Contains(f.Header, "iPhone") || f.UA != f.Header || header() != f.Header {
		t.Errorf("iPhone: navigator.userAgent %q, header %q (server %q)", f.UA, f.Header, header())
	}
	if f.InnerWidth != 393 || f.ScreenWidth != 393 || f.DPR != 3 || f.MaxTouch != 5 || !f.Touch {
		t.Errorf("iPhone screen: inner %v, screen %v, dpr %v, touch points %v, touch %v", f.InnerWidth, f.ScreenWidth, f.DPR, f.MaxTouch, f.Touch)
	}
	if f.TZ != "Asia/Tokyo" || f.Lang != "fr-FR" || strings.Join(f.Langs, ",") != "fr-FR,fr" {
		t.Errorf("iPhone place: tz %q, language %q, languages %q", f.TZ, f.Lang, f.Langs)
	}
	if f.Platform != "iPhone" || f.HasUAData {
		t.Errorf("iPhone navigator: platform %q, userAgentData present %v (Safari has none)", f.Platform, f.HasUAData)
	}

	emulateOn(t, tab, tabs.EmulateOptions{Device: "Pixel 7"})
	f = readFacts(t, tab, true)
	if !strings.Contains(f.Header, "Android") || f.UA != f.Header || header() != f.Header {
		t.Errorf("Pixel: navigator.userAgent %q, header %q (server %q)", f.UA, f.Header, header())
	}
	if f.InnerWidth != 412 || f.DPR != 2.625 || f.MaxTouch != 5 {
		t.Errorf("Pixel screen: inner %v, dpr %v, touch points %v", f.InnerWidth, f.DPR, f.MaxTouch)
	}
	if !f.HasUAData || !f.UADMobile || f.UADPlatform != "Android" || f.Brands < 2 || f.Platform != "Linux armv8l" {
		t.Errorf("Pixel client hints: %+v", f)
	}
	if f.TZ != "Asia/Tokyo" || f.Lang != "fr-FR" {
		t.Errorf("Pixel kept the place: tz %q, language %q", f.TZ, f.Lang)
	}
	if got := tab.Emulation(); got.Device != "Pixel 7" || got.Timezone != "Asia/Tokyo" {
		t.Errorf("merged options: %+v", got)
	}

	if err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.ResetEmulation(ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f = readFacts(t, tab, true)
	if f.UA != desk.UA || f.Header != desk.Header || f.InnerWidth != desk.InnerWidth || f.ScreenWidth != desk.ScreenWidth ||
		f.DPR != desk.DPR || f.MaxTouch != 0 || f.TZ != desk.TZ || f.Lang != "en-US" || f.Brands != desk.Brands || f.UADPlatform != desk.UADPlatform {
		t.Errorf("after reset:\n got %+v\nwant %+v", f, desk)
	}
}

// TestEmulateUnknownDevice is a bad_request whose hint lists the devices.
func TestEmulateUnknownDevice(t *testing.T) {
	tab := open(t, "/next")
	err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		_, err := tb.Emulate(ctx, tabs.EmulateOptions{Device: "Nokia 3310"})
		return err
	})
	var h errcode.Hinter
	if errcode.Of(err) != errcode.BadRequest || !errors.As(err, &h) || !strings.Contains(h.ErrorHint(), "iPhone 15") {
		t.Fatalf("err = %v (code %s)", err, errcode.Of(err))
	}
}

// TestSetHeadersUserAgentKeepsClientHints sends a Chrome on Windows user
// agent as a header: navigator.platform and the client hints follow it.
func TestSetHeadersUserAgentKeepsClientHints(t *testing.T) {
	srv2, _ := deviceServer(t)
	name := "emulate-headers"
	if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: srv2.URL + "/", WaitUntil: "load"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
	tab, err := sup.Tab(name)
	if err != nil {
		t.Fatal(err)
	}
	ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/150.0.0.0 Safari/537.36"
	if err := run(t, tab, func(ctx context.Context, tb *tabs.Tab) error {
		return tb.SetHeaders(ctx, map[string]string{"User-Agent": ua, "X-Test": "1"})
	}); err != nil {
		t.Fatal(err)
	}
	f := readFacts(t, tab, true)
	if f.Header != ua || f.UA != ua || f.Platform != "Win32" || f.UADPlatform != "Windows" || f.Brands < 2 {
		t.Errorf("facts: %+v", f)
	}
}
