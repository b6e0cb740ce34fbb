package script

import (
	"context"

	"github.com/dop251/goja"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/netlog"
)

// bindNetwork installs the network and console methods of tab: requests,
// request, console, errors, har.start and har.stop, route, unroute and
// routes.
func (s *Script) bindNetwork(vm *goja.Runtime, t *tabs.Tab, tab *goja.Object, method methodFunc, must func(error)) {
	method("requests", func(c goja.FunctionCall) goja.Value {
		var f netlog.Filter
		if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			if err := fromJS(vm, a, &f); err != nil {
				return s.reject(tabs.Errorf(errcode.BadRequest, "requests({url, type, method, status, failed, all, limit}): %v", err))
			}
		}
		return s.async(func(ctx context.Context) (any, error) {
			t.NetSettle(ctx)
			return t.Requests(f)
		})
	})
	method("request", func(c goja.FunctionCall) goja.Value {
		id := c.Argument(0).String()
		return s.async(func(ctx context.Context) (any, error) {
			t.NetSettle(ctx)
			return t.Request(ctx, id)
		})
	})
	method("console", func(c goja.FunctionCall) goja.Value {
		var f netlog.ConsoleFilter
		if o := objArg(vm, c.Argument(0)); o != nil {
			f.Level = strField(o, "level")
			f.All = boolField(o, "all") || strField(o, "since") == "all"
			f.Limit = int(numField(o, "limit", 0))
			if since := strField(o, "since"); since != "" && since != "all" && since != "navigation" {
				return s.reject(tabs.Errorf(errcode.BadRequest, "console({since}): %q: use \"navigation\" (the default) or \"all\"", since))
			}
		}
		return s.async(func(ctx context.Context) (any, error) {
			t.NetSettle(ctx)
			return t.Console(f)
		})
	})
	method("errors", func(c goja.FunctionCall) goja.Value {
		all := false
		if o := objArg(vm, c.Argument(0)); o != nil {
			all = boolField(o, "all")
		}
		return s.async(func(ctx context.Context) (any, error) {
			t.NetSettle(ctx)
			return t.PageErrors(all), nil
		})
	})
	har := vm.NewObject()
	must(har.Set("start", func(c goja.FunctionCall) goja.Value {
		o := netlog.HAROptions{Content: optString(vm, c.Argument(0), "content", "omit"), Dir: optString(vm, c.Argument(0), "dir", "")}
		return s.async(func(ctx context.Context) (any, error) {
			dir, err := t.StartHAR(o)
			if err != nil || dir == "" {
				return nil, err
			}
			return map[string]any{"dir": dir}, nil
		})
	}))
	must(har.Set("stop", func(c goja.FunctionCall) goja.Value {
		path := c.Argument(0).String()
		if goja.IsUndefined(c.Argument(0)) || path == "" {
			return s.reject(tabs.Errorf(errcode.BadRequest, "har.stop(path): the file to write the HAR to"))
		}
		return s.async(func(ctx context.Context) (any, error) {
			h, err := t.StopHAR(ctx, path)
			if err != nil {
				return nil, err
			}
			return map[string]any{"path": path, "entries": len(h.Log.Entries), "pages": len(h.Log.Pages)}, nil
		})
	}))
	must(tab.Set("har", har))
	method("route", func(c goja.FunctionCall) goja.Value {
		pattern := c.Argument(0).String()
		var spec tabs.RouteSpec
		if a := c.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
			if err := fromJS(vm, a, &spec); err != nil {
				return s.reject(tabs.Errorf(errcode.BadRequest, "route(pattern, {abort} | {status, headers, contentType, body} | {url, method, postData, setHeaders}, types): %v", err))
			}
		}
		return s.async(func(ctx context.Context) (any, error) {
			if err := t.Route(ctx, pattern, spec); err != nil {
				return nil, err
			}
			return map[string]any{"pattern": pattern, "action": spec.Kind()}, nil
		})
	})
	method("unroute", func(c goja.FunctionCall) goja.Value {
		pattern := ""
		if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			pattern = a.String()
		}
		return s.async(func(ctx context.Context) (any, error) {
			n, err := t.Unroute(ctx, pattern)
			return map[string]any{"removed": n}, err
		})
	})
	method("routes", func(goja.FunctionCall) goja.Value {
		return s.async(func(context.Context) (any, error) { return t.Routes(), nil })
	})
}
