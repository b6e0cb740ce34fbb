package script

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dop251/goja"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// bindNavigation installs tab.url, title, goto, back, forward and reload.
func (s *Script) bindNavigation(vm *goja.Runtime, t *tabs.Tab, tab *goja.Object, method methodFunc, must func(error)) {
	method("url", func(goja.FunctionCall) goja.Value {
		return s.async(func(ctx context.Context) (any, error) { return t.URL(ctx), nil })
	})
	method("title", func(goja.FunctionCall) goja.Value {
		return s.async(func(ctx context.Context) (any, error) { return t.Title(ctx), nil })
	})
	method("goto", func(c goja.FunctionCall) goja.Value {
		u := c.Argument(0).String()
		wait := optString(vm, c.Argument(1), "waitUntil", "settled")
		return s.async(s.audited("goto", u, "", func(ctx context.Context) (any, error) {
			r, err := t.Goto(ctx, u, wait)
			if err != nil {
				return nil, err
			}
			out := map[string]any{"url": t.URL(ctx)}
			if r.Status != 0 {
				out["status"] = r.Status
			}
			if len(r.Notes) > 0 {
				out["notes"] = r.Notes
			}
			if r.Dialog != nil {
				out["dialog"] = r.Dialog
			}
			return out, nil
		}))
	})
	// back(), forward() and reload() move in the tab's history and wait
	// for the page's load, as goto does.
	for name, nav := range map[string]func(context.Context) (*tabs.NavResult, error){"back": t.Back, "forward": t.Forward, "reload": t.Reload} {
		method(name, func(c goja.FunctionCall) goja.Value {
			return s.async(s.audited(name, "", "", func(ctx context.Context) (any, error) {
				r, err := nav(ctx)
				if err != nil {
					return nil, err
				}
				out := map[string]any{"url": t.URL(ctx)}
				if r.Status != 0 {
					out["status"] = r.Status
				}
				if r.Dialog != nil {
					out["dialog"] = r.Dialog
				}
				return out, nil
			}))
		})
	}
}

// bindObserve installs tab.observe.
func (s *Script) bindObserve(vm *goja.Runtime, t *tabs.Tab, tab *goja.Object, method methodFunc, must func(error)) {
	method("observe", func(c goja.FunctionCall) goja.Value {
		o := tabs.ObserveOptions{}
		if obj := objArg(vm, c.Argument(0)); obj != nil {
			o.IncludeAll = boolField(obj, "includeAll")
			o.ViewportOnly = boolField(obj, "viewportOnly")
			o.MaxTokens = int(numField(obj, "maxTokens", 0))
			o.Query = strField(obj, "query")
			o.Scroll = boolField(obj, "scroll")
			o.Since = strField(obj, "since")
			o.Boxes = boolField(obj, "boxes")
		}
		return s.async(func(ctx context.Context) (any, error) {
			obs, err := t.Observe(ctx, o)
			if err != nil {
				return nil, err
			}
			return observationJS{obs}, nil
		})
	})
}

// bindState installs the cookie, header and storage methods of tab.
func (s *Script) bindState(vm *goja.Runtime, t *tabs.Tab, tab *goja.Object, method methodFunc, must func(error)) {
	method("cookies", func(c goja.FunctionCall) goja.Value {
		var urls []string
		if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			if o, ok := a.(*goja.Object); ok && o.ClassName() == "Array" {
				if err := vm.ExportTo(a, &urls); err != nil {
					return s.reject(tabs.Errorf(errcode.BadRequest, "cookies(urls) takes a URL or an array of URLs"))
				}
			} else {
				urls = []string{a.String()}
			}
		}
		return s.async(func(ctx context.Context) (any, error) { return t.Cookies(ctx, urls) })
	})
	method("setCookie", func(c goja.FunctionCall) goja.Value {
		var ck tabs.Cookie
		if err := fromJS(vm, c.Argument(0), &ck); err != nil {
			return s.reject(tabs.Errorf(errcode.BadRequest, "setCookie({name, value, url | domain, path, expires, httpOnly, secure, sameSite}): %v", err))
		}
		return s.async(func(ctx context.Context) (any, error) { return nil, t.SetCookie(ctx, ck) })
	})
	method("clearCookies", func(goja.FunctionCall) goja.Value {
		return s.async(func(ctx context.Context) (any, error) { return nil, t.ClearCookies(ctx) })
	})
	method("setHeaders", func(c goja.FunctionCall) goja.Value {
		h := map[string]string{}
		if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			var raw map[string]any
			if err := fromJS(vm, a, &raw); err != nil {
				return s.reject(tabs.Errorf(errcode.BadRequest, "setHeaders({name: value, ...}): %v", err))
			}
			for k, v := range raw {
				h[k] = fmt.Sprint(v)
			}
		}
		return s.async(func(ctx context.Context) (any, error) { return nil, t.SetHeaders(ctx, h) })
	})
	method("storageState", func(goja.FunctionCall) goja.Value {
		return s.async(func(ctx context.Context) (any, error) { return t.StorageState(ctx) })
	})
	method("setStorageState", func(c goja.FunctionCall) goja.Value {
		a := c.Argument(0)
		var raw string
		if str, ok := a.Export().(string); ok {
			raw = str
		} else {
			js, err := stringify(vm, a)
			if err != nil {
				return s.reject(tabs.Errorf(errcode.BadRequest, "setStorageState(state): not JSON"))
			}
			raw = js
		}
		return s.async(func(ctx context.Context) (any, error) { return nil, t.SetStorageState(ctx, json.RawMessage(raw)) })
	})
}

// bindPage installs tab.evaluate, screenshot, extract and the dialog methods.
func (s *Script) bindPage(vm *goja.Runtime, t *tabs.Tab, tab *goja.Object, method methodFunc, must func(error)) {
	method("evaluate", func(c goja.FunctionCall) goja.Value {
		if len(c.Arguments) == 0 {
			return s.reject(tabs.Errorf(errcode.BadRequest, "evaluate(fn, ...args) needs a function or an expression"))
		}
		src := funcSource(c.Argument(0))
		var args []any
		for i, a := range c.Arguments[1:] {
			if _, isFn := goja.AssertFunction(a); isFn {
				return s.reject(tabs.Errorf(errcode.BadRequest, "evaluate: argument %d is a function; the page gets JSON values only", i+1))
			}
			if goja.IsUndefined(a) {
				args = append(args, nil) // null in the page
				continue
			}
			js, err := stringify(vm, a)
			if err != nil || !json.Valid([]byte(js)) {
				if err == nil {
					err = fmt.Errorf("JSON.stringify gave %s", js)
				}
				return s.reject(tabs.Errorf(errcode.BadRequest, "evaluate: argument %d is not JSON-serialisable: %v", i+1, err))
			}
			args = append(args, json.RawMessage(js))
		}
		return s.async(s.audited("evaluate", "", src, func(ctx context.Context) (any, error) { return t.Evaluate(ctx, src, args) }))
	})
	method("screenshot", func(c goja.FunctionCall) goja.Value {
		o := tabs.ScreenshotOptions{}
		silent := false
		if obj := objArg(vm, c.Argument(0)); obj != nil {
			o.FullPage = boolField(obj, "fullPage")
			o.Marks = boolField(obj, "marks")
			o.Save = strField(obj, "save")
			silent = boolField(obj, "silent")
			if v := obj.Get("selector"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
				tg, err := targetArg(v)
				if err != nil {
					return s.reject(err)
				}
				o.Target = &tg
			}
		}
		return s.screenshot(vm, o, silent)
	})
	method("extract", func(c goja.FunctionCall) goja.Value {
		format := "markdown"
		if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			format = a.String()
		}
		return s.async(func(ctx context.Context) (any, error) {
			ex, err := t.Extract(ctx, format)
			if err != nil {
				return nil, err
			}
			if ex == nil || ex.Empty {
				return nil, nil
			}
			return ex.Content, nil
		})
	})
	method("dialog", func(goja.FunctionCall) goja.Value {
		if d := t.PendingDialog(); d != nil {
			return toJS(vm, d)
		}
		return goja.Null()
	})
	method("acceptDialog", func(c goja.FunctionCall) goja.Value {
		var text *string
		if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			str := a.String()
			text = &str
		}
		return s.async(func(ctx context.Context) (any, error) { return nil, t.HandleDialog(ctx, true, text) })
	})
	method("dismissDialog", func(goja.FunctionCall) goja.Value {
		return s.async(func(ctx context.Context) (any, error) { return nil, t.HandleDialog(ctx, false, nil) })
	})
}

// bindID installs tab.id(n), the handle of an element number.
func (s *Script) bindID(vm *goja.Runtime, t *tabs.Tab, tab *goja.Object, method methodFunc, must func(error)) {
	method("id", func(c goja.FunctionCall) goja.Value {
		n := c.Argument(0).ToInteger()
		if n <= 0 {
			panic(vm.NewTypeError("tab.id(n) takes an element number from observe()"))
		}
		h := vm.NewObject()
		must(h.Set("id", n))
		// handle.m(...args) is tab.m(n, ...args).
		for _, m := range []string{"click", "hover", "type", "fill", "select", "uploadFile", "scrollIntoView", "waitFor", "drag"} {
			f, _ := goja.AssertFunction(tab.Get(m))
			must(h.Set(m, func(c goja.FunctionCall) goja.Value {
				args := append([]goja.Value{vm.ToValue(n)}, c.Arguments...)
				v, err := f(tab, args...)
				if err != nil {
					panic(err)
				}
				return v
			}))
		}
		must(h.Set("press", func(c goja.FunctionCall) goja.Value {
			f, _ := goja.AssertFunction(tab.Get("press"))
			opts := map[string]any{"selector": n}
			if o := objArg(vm, c.Argument(1)); o != nil {
				if d := o.Get("timeout"); d != nil && !goja.IsUndefined(d) {
					opts["timeout"] = d.Export()
				}
			}
			v, err := f(tab, c.Argument(0), vm.ToValue(opts))
			if err != nil {
				panic(err)
			}
			return v
		}))
		must(h.Set("scroll", func(c goja.FunctionCall) goja.Value {
			f, _ := goja.AssertFunction(tab.Get("scroll"))
			v, err := f(tab, c.Argument(0), c.Argument(1), vm.ToValue(map[string]any{"selector": n}))
			if err != nil {
				panic(err)
			}
			return v
		}))
		must(h.Set("screenshot", func(c goja.FunctionCall) goja.Value {
			o := tabs.ScreenshotOptions{Target: &tabs.Target{ID: int(n)}}
			silent := false
			if obj := objArg(vm, c.Argument(0)); obj != nil {
				o.Save, silent = strField(obj, "save"), boolField(obj, "silent")
			}
			return s.screenshot(vm, o, silent)
		}))
		must(h.Set("__tpTarget", n))
		return h
	})
}
