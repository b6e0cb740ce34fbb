package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/emulate"
	"github.com/tabpilot/tabpilot/tabs/pdf"
)

// callPrintEmulate dispatches the pdf and emulate methods (issue 21).
func (s *Service) callPrintEmulate(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
	if method == "pdf" {
		var r api.PDFRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.PDF(ctx, &r), nil
	}
	var r api.EmulateRequest
	if err := decode(params, &r); err != nil {
		return nil, err
	}
	return s.Emulate(ctx, &r), nil
}

// PDF is the pdf shortcut (tabs.Tab.PDF). details: path, pages, bytes.
func (s *Service) PDF(ctx context.Context, r *api.PDFRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	o := tabs.PDFOptions{Path: r.Path, Options: pdf.Options{Format: r.Format, Width: r.Width, Height: r.Height, Landscape: r.Landscape,
		PrintBackground: r.PrintBackground, Scale: r.Scale, PageRanges: r.PageRanges}}
	if m := r.Margins; m != nil {
		o.Margins = pdf.Margins{Top: m.Top, Right: m.Right, Bottom: m.Bottom, Left: m.Left}
	}
	var res *tabs.PDF
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		var err error
		res, err = t.PDF(ctx, o)
		return err
	})
	if err != nil {
		return fail("pdf", name, err)
	}
	return &api.Result{Content: []api.Content{api.TextContent(res.Summary(o.Options))},
		Details: map[string]any{"action": "pdf", "name": name, "path": res.Path, "pages": res.Pages, "bytes": res.Bytes}}
}

// EmulateOptions returns the tabs options of an emulate request.
func EmulateOptions(r *api.EmulateRequest) tabs.EmulateOptions {
	o := tabs.EmulateOptions{Device: r.Device, UserAgent: r.UserAgent, Touch: r.Touch, Mobile: r.Mobile, Timezone: r.Timezone, Locale: r.Locale,
		ColorScheme: r.ColorScheme, ReducedMotion: r.ReducedMotion, Offline: r.Offline, CPUThrottling: r.CPUThrottling}
	if v := r.Viewport; v != nil {
		o.Viewport = &emulate.Viewport{Width: v.Width, Height: v.Height, DeviceScaleFactor: v.Scale}
	}
	if g := r.Geolocation; g != nil {
		o.Geolocation = &emulate.Geolocation{Latitude: g.Latitude, Longitude: g.Longitude, Accuracy: g.Accuracy}
	}
	if n := r.Network; n != nil {
		o.Network = &emulate.Network{LatencyMs: n.Latency, DownloadKbps: n.Download, UploadKbps: n.Upload}
	}
	return o
}

// Emulate is the emulate shortcut (tabs.Tab.Emulate, ResetEmulation, or
// with list the device presets). details: applied (what is in effect),
// options (the tab's merged emulation), note; with list, devices.
func (s *Service) Emulate(ctx context.Context, r *api.EmulateRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	o := EmulateOptions(r)
	if r.List {
		if r.Reset || o != (tabs.EmulateOptions{}) {
			return fail("emulate", name, tabs.Errorf(errcode.BadRequest, "emulate list takes no other field: it only lists the devices"))
		}
		return deviceList(name)
	}
	if r.Reset && o != (tabs.EmulateOptions{}) {
		return fail("emulate", name, tabs.Errorf(errcode.BadRequest, "emulate reset takes no other field: reset, then emulate again"))
	}
	var res *tabs.EmulateResult
	err := s.audited(ctx, name, "emulate", r.Device, "", true, func() error {
		return s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
			var err error
			if r.Reset {
				res, err = t.ResetEmulation(ctx)
			} else {
				res, err = t.Emulate(ctx, o)
			}
			return err
		})
	})
	if err != nil {
		return fail("emulate", name, err)
	}
	details := map[string]any{"action": "emulate", "name": name, "options": res.Options, "reset": res.Reset}
	if res.Applied != nil {
		details["applied"] = res.Applied
	}
	if res.Note != "" {
		details["note"] = res.Note
	}
	return &api.Result{Content: []api.Content{api.TextContent(res.Summary())}, Details: details}
}

// deviceList is the result of emulate list: one preset a line.
func deviceList(name string) *api.Result {
	var b strings.Builder
	b.WriteString("Devices (emulate --device NAME):")
	var list []map[string]any
	for _, n := range emulate.Devices() {
		d, _ := emulate.LookupDevice(n)
		kind := "desktop"
		switch {
		case d.Mobile && d.Touch && d.Viewport.Width < 600:
			kind = "phone"
		case d.Touch:
			kind = "tablet"
		}
		fmt.Fprintf(&b, "\n%s: %s, %s, screen %dx%d", d.Name, kind, d.Viewport, d.ScreenWidth, d.ScreenHeight)
		list = append(list, map[string]any{"name": d.Name, "kind": kind, "viewport": d.Viewport, "screen": emulate.Size{Width: d.ScreenWidth, Height: d.ScreenHeight},
			"mobile": d.Mobile, "touch": d.Touch, "userAgent": d.UserAgent})
	}
	return &api.Result{Content: []api.Content{api.TextContent(b.String())}, Details: map[string]any{"action": "emulate", "name": name, "devices": list}}
}
