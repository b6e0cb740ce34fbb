package main

import (
	"flag"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tabpilot/tabpilot/api"
)

// The pdf and emulate verbs (issue 21).

var pdfAction = &action{name: "pdf", args: "FILE", method: "pdf",
	summary: "print the tab's page to a PDF file",
	about: `Print the tab's page to FILE as PDF (as the page lays out for print), on
--format paper (Letter, Legal, Tabloid, A3, A4, A5; default Letter), or
--landscape, with --print-background, --margin, --scale and --pages. The
text gives the path, the page count and the size. Headless only.`,
	flags: pdfFlags}

var emulateAction = &action{name: "emulate", args: "", method: "emulate",
	summary: "emulate a device, place and preferences on the tab",
	about: `Emulate a device (--device "iPhone 15"; --list lists them), a viewport, a
user agent, touch, a geolocation (granted to the page's origin), a time zone,
a locale, a colour scheme, reduced motion, offline or a slow network, or a
slower CPU, on top of what earlier emulate calls set; --reset gives the tab
its own back. Touch, the user agent's navigator values and client hints apply
from the next navigation: reload after it.`,
	flags: emulateFlags}

func pdfFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	format := fs.String("format", "", "the paper: Letter, Legal, Tabloid, A3, A4 or A5 (default Letter)")
	landscape := fs.Bool("landscape", false, "landscape paper")
	background := fs.Bool("print-background", false, "print background colours and images")
	margin := fs.String("margin", "", "every margin, or TOP,RIGHT,BOTTOM,LEFT, as lengths: `1cm`, 0.5in, 10mm, 20px (default 1cm)")
	scale := fs.Float64("scale", 0, "scale the rendering, 0.1 to 2 (default 1)")
	pages := fs.String("pages", "", "the one-based `ranges` to print, e.g. 1-3,5 (default all)")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
			return nil, usagef("pdf takes one FILE, got %d arguments", len(pos))
		}
		// The daemon writes the file; its working directory is not ours.
		abs, err := filepath.Abs(pos[0])
		if err != nil {
			return nil, usagef("%q: %v", pos[0], err)
		}
		req := api.PDFRequest{Common: common, Path: abs, Format: *format, Landscape: *landscape, PrintBackground: *background, Scale: *scale, PageRanges: *pages}
		if *margin != "" {
			m := strings.Split(*margin, ",")
			switch len(m) {
			case 1:
				req.Margins = &api.Margins{Top: m[0], Right: m[0], Bottom: m[0], Left: m[0]}
			case 4:
				req.Margins = &api.Margins{Top: m[0], Right: m[1], Bottom: m[2], Left: m[3]}
			default:
				return nil, usagef("--margin %q: one length, or four: TOP,RIGHT,BOTTOM,LEFT", *margin)
			}
		}
		return req, nil
	}
}

// triState is a bool flag that tells unset from false.
type triState struct{ v *bool }

func (t *triState) String() string {
	if t.v == nil {
		return ""
	}
	return strconv.FormatBool(*t.v)
}
func (t *triState) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	t.v = &b
	return nil
}
func (t *triState) IsBoolFlag() bool { return true }

func emulateFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	device := fs.String("device", "", "a device preset's `name`, e.g. \"iPhone 15\", \"Pixel 7\" (--list lists them)")
	list := fs.Bool("list", false, "list the device presets")
	reset := fs.Bool("reset", false, "clear the emulation: the tab's own viewport, user agent, locale and time zone")
	viewport := fs.String("viewport", "", "the viewport in CSS pixels, `WxH` or WxH@SCALE (the device pixel ratio)")
	ua := fs.String("user-agent", "", "the user agent (navigator.platform and client hints follow it)")
	var touch, mobile, offline triState
	fs.Var(&touch, "touch", "touch events and 5 touch points (--touch=false: none)")
	fs.Var(&mobile, "mobile", "the viewport meta tag and overlay scrollbars of a phone")
	fs.Var(&offline, "offline", "fail every request, navigator.onLine false")
	geo := fs.String("geolocation", "", "the position `LAT,LON[,ACCURACY]` in degrees (and metres)")
	tz := fs.String("timezone", "", "an IANA time `zone`, e.g. Europe/Paris")
	locale := fs.String("locale", "", "a BCP 47 `locale`, e.g. fr-FR (Intl, navigator.language, Accept-Language)")
	scheme := fs.String("color-scheme", "", "prefers-color-scheme: light, dark or no-preference")
	motion := fs.String("reduced-motion", "", "prefers-reduced-motion: reduce or no-preference")
	latency := fs.Float64("latency", 0, "add `ms` to every request")
	down := fs.Float64("download", 0, "throttle downloads to `kbps`")
	up := fs.Float64("upload", 0, "throttle uploads to `kbps`")
	cpu := fs.Float64("cpu-throttling", 0, "slow the CPU down by this `factor` (1 to 100)")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q (use --device NAME)", pos[0])
		}
		req := api.EmulateRequest{Common: common, Device: *device, List: *list, Reset: *reset, UserAgent: *ua, Touch: touch.v, Mobile: mobile.v,
			Offline: offline.v, Timezone: *tz, Locale: *locale, ColorScheme: *scheme, ReducedMotion: *motion, CPUThrottling: *cpu}
		if *viewport != "" {
			v, err := parseViewport(*viewport)
			if err != nil {
				return nil, err
			}
			req.Viewport = v
		}
		if *geo != "" {
			parts := strings.Split(*geo, ",")
			var f [3]float64
			if len(parts) < 2 || len(parts) > 3 {
				return nil, usagef("--geolocation %q: want LAT,LON or LAT,LON,ACCURACY", *geo)
			}
			for i, p := range parts {
				x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
				if err != nil {
					return nil, usagef("--geolocation %q: %q is not a number", *geo, p)
				}
				f[i] = x
			}
			req.Geolocation = &api.Geolocation{Latitude: f[0], Longitude: f[1], Accuracy: f[2]}
		}
		if *latency != 0 || *down != 0 || *up != 0 {
			req.Network = &api.Network{Latency: *latency, Download: *down, Upload: *up}
		}
		return req, nil
	}
}
