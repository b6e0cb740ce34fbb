package script

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/dop251/goja"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/secrets"
	"github.com/tabpilot/tabpilot/tabs"
)

// bindWaits installs tab.waitForUrl, waitForLoadState, waitForResponse,
// waitForPopup, waitForDownload and downloads.
func (s *Script) bindWaits(vm *goja.Runtime, t *tabs.Tab, tab *goja.Object, method methodFunc, must func(error)) {
	method("waitForUrl", func(c goja.FunctionCall) goja.Value {
		p, err := s.urlPattern(vm, c.Argument(0))
		if err != nil {
			return s.reject(err)
		}
		d := msOpt(vm, c.Argument(1), "timeout")
		wait := optString(vm, c.Argument(1), "waitUntil", "load")
		return s.async(func(ctx context.Context) (any, error) {
			ctx, cancel := withTimeout(ctx, d)
			defer cancel()
			u, err := t.WaitForURL(ctx, p, wait)
			if err != nil {
				return nil, err
			}
			return u, nil
		})
	})
	method("waitForLoadState", func(c goja.FunctionCall) goja.Value {
		state := "load"
		if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			state = a.String()
		}
		d := msOpt(vm, c.Argument(1), "timeout")
		idle := msOpt(vm, c.Argument(1), "idleMs")
		return s.async(func(ctx context.Context) (any, error) {
			ctx, cancel := withTimeout(ctx, d)
			defer cancel()
			return nil, t.WaitForLoadState(ctx, state, idle)
		})
	})
	method("waitForResponse", func(c goja.FunctionCall) goja.Value {
		p, err := s.urlPattern(vm, c.Argument(0))
		if err != nil {
			return s.reject(err)
		}
		d := msOpt(vm, c.Argument(1), "timeout")
		// Subscribe now, so the action that follows cannot beat it.
		w := t.WatchResponses(p)
		return s.async(func(ctx context.Context) (any, error) {
			ctx, cancel := withTimeout(ctx, d)
			defer cancel()
			return w.Wait(ctx)
		})
	})
	method("waitForPopup", func(c goja.FunctionCall) goja.Value {
		d := msOpt(vm, c.Argument(0), "timeout")
		w := t.WatchPopups()
		return s.async(func(ctx context.Context) (any, error) {
			ctx, cancel := withTimeout(ctx, d)
			defer cancel()
			return w.Wait(ctx)
		})
	})
	method("waitForDownload", func(c goja.FunctionCall) goja.Value {
		d := msOpt(vm, c.Argument(0), "timeout")
		w := t.WatchDownloads()
		return s.async(func(ctx context.Context) (any, error) {
			ctx, cancel := withTimeout(ctx, d)
			defer cancel()
			return w.Wait(ctx)
		})
	})
	method("downloads", func(goja.FunctionCall) goja.Value {
		return toJS(vm, t.Downloads())
	})
}

// bindGlobals installs cdp, browser, display, assert and wait.
func (s *Script) bindGlobals(vm *goja.Runtime, t *tabs.Tab, must func(error)) {

	// cdp.send: the escape hatch.
	cdpObj := vm.NewObject()
	must(cdpObj.Set("send", func(c goja.FunctionCall) goja.Value {
		m := argString(c, 0)
		var params json.RawMessage
		if a := c.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
			js, err := stringify(vm, a)
			if err != nil {
				return s.reject(tabs.Errorf(errcode.BadRequest, "cdp.send: params are not JSON-serialisable"))
			}
			params = json.RawMessage(js)
		}
		return s.async(func(ctx context.Context) (any, error) { return t.Send(ctx, m, params) })
	}))
	must(vm.Set("cdp", cdpObj))

	kind, version := t.Browser()
	b := vm.NewObject()
	must(b.Set("kind", kind))
	must(b.Set("version", version))
	must(b.Set("tabs", func(goja.FunctionCall) goja.Value {
		if s.opts.BrowserTabs == nil {
			return vm.NewArray()
		}
		return toJS(vm, s.opts.BrowserTabs(s.ctx))
	}))
	must(vm.Set("browser", b))

	must(vm.Set("display", func(c goja.FunctionCall) goja.Value {
		for _, a := range c.Arguments {
			if err := s.emitValue(vm, a, false); err != nil {
				panic(vm.NewGoError(err))
			}
		}
		return goja.Undefined()
	}))
	must(vm.Set("assert", func(c goja.FunctionCall) goja.Value {
		if !c.Argument(0).ToBoolean() {
			msg := "assertion failed"
			if m := c.Argument(1); !goja.IsUndefined(m) {
				msg = "assertion failed: " + m.String()
			}
			panic(s.jsError(vm, string(errcode.AssertionFailed), msg, ""))
		}
		return goja.Undefined()
	}))
	must(vm.Set("secret", func(c goja.FunctionCall) goja.Value {
		name := argString(c, 0)
		if err := s.opts.Secrets.Check(name); err != nil {
			panic(s.errValue(vm, err))
		}
		return vm.ToValue(secrets.Placeholder(name))
	}))
	must(vm.Set("wait", func(c goja.FunctionCall) goja.Value {
		ms := c.Argument(0).ToFloat()
		if math.IsNaN(ms) || ms < 0 {
			ms = 0
		}
		// The wait's timer is in the run's timer queue, so the timers
		// due before it have run when it resolves.
		due := make(chan struct{})
		s.timers.add(time.Duration(min(ms, math.MaxInt32)*float64(time.Millisecond)), false, func(*goja.Runtime) { close(due) })
		return s.async(func(ctx context.Context) (any, error) {
			select {
			case <-due:
				return nil, nil
			case <-ctx.Done():
				return nil, &tabs.Error{Code: errcode.Timeout, Msg: "wait: the run's timeout passed", Err: ctx.Err()}
			}
		})
	}))
}
