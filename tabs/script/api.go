package script

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// funcSource returns the source text of v for the page: a function's text,
// else v as a string. goja's Function.prototype.toString drops the closing
// parentheses of an arrow function whose body is parenthesised
// ("() => ({a: 1})" reads "() => ({a: 1}"), so a function text that does
// not parse is given closing parentheses, at most eight, until it does.
func funcSource(v goja.Value) string {
	src := v.String()
	if _, isFn := goja.AssertFunction(v); !isFn || parses(src) {
		return src
	}
	for i := 1; i <= 8; i++ {
		if fixed := src + strings.Repeat(")", i); parses(fixed) {
			return fixed
		}
	}
	return src
}

// parses reports whether src parses as a JavaScript expression.
func parses(src string) bool {
	_, err := parser.ParseFile(nil, "", "("+src+"\n)", 0)
	return err == nil
}

// setup installs the globals (see the package doc) in vm.
func (s *Script) setup(vm *goja.Runtime) error {
	installGlobals(vm)
	s.wrapTimers(vm)
	t := s.tab
	tab := vm.NewObject()
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(tab.Set("name", t.Name()))
	method := func(name string, fn func(c goja.FunctionCall) goja.Value) { must(tab.Set(name, fn)) }

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
	// Element actions take a target: an element number, a selector or a
	// handle from tab.id(n), and an optional last {timeout} (ms) that bounds
	// the wait for the element to be actionable.
	act := func(name string, optIdx int, run func(ctx context.Context, tg tabs.Target, c goja.FunctionCall) (any, error)) {
		method(name, func(c goja.FunctionCall) goja.Value {
			tg, err := targetArg(c.Argument(0))
			if err != nil {
				return s.reject(err)
			}
			d := msOpt(vm, c.Argument(optIdx), "timeout")
			text := ""
			if name == "type" || name == "fill" {
				text = argString(c, 1)
			}
			return s.async(s.audited(name, tg.String(), text, func(ctx context.Context) (any, error) {
				if d > 0 {
					ctx = tabs.WithActionTimeout(ctx, d)
				}
				return run(ctx, tg, c)
			}))
		})
	}
	act("click", 1, func(ctx context.Context, tg tabs.Target, _ goja.FunctionCall) (any, error) {
		return t.Click(ctx, tg)
	})
	act("hover", 1, func(ctx context.Context, tg tabs.Target, _ goja.FunctionCall) (any, error) {
		return t.Hover(ctx, tg)
	})
	act("type", 2, func(ctx context.Context, tg tabs.Target, c goja.FunctionCall) (any, error) {
		return t.Type(ctx, tg, argString(c, 1))
	})
	act("fill", 2, func(ctx context.Context, tg tabs.Target, c goja.FunctionCall) (any, error) {
		return t.Fill(ctx, tg, argString(c, 1))
	})
	act("value", 1, func(ctx context.Context, tg tabs.Target, _ goja.FunctionCall) (any, error) {
		return t.Value(ctx, tg, 5*time.Second)
	})
	act("scrollIntoView", 1, func(ctx context.Context, tg tabs.Target, _ goja.FunctionCall) (any, error) {
		return t.ScrollIntoView(ctx, tg)
	})
	// select(target, ...values) and uploadFile(target, ...paths): the rest
	// are strings, or arrays of strings.
	rest := func(c goja.FunctionCall) ([]string, error) {
		var out []string
		for _, a := range c.Arguments[min(1, len(c.Arguments)):] {
			if goja.IsUndefined(a) || goja.IsNull(a) {
				continue
			}
			if o, ok := a.(*goja.Object); ok && o.ClassName() == "Array" {
				var xs []any
				if err := vm.ExportTo(a, &xs); err != nil {
					return nil, tabs.Errorf(errcode.BadRequest, "expected strings: %v", err)
				}
				for _, x := range xs {
					out = append(out, fmt.Sprint(x))
				}
				continue
			}
			out = append(out, a.String())
		}
		return out, nil
	}
	method("select", func(c goja.FunctionCall) goja.Value {
		tg, err := targetArg(c.Argument(0))
		if err != nil {
			return s.reject(err)
		}
		values, err := rest(c)
		if err != nil {
			return s.reject(err)
		}
		return s.async(s.audited("select", tg.String(), "", func(ctx context.Context) (any, error) { return t.Select(ctx, tg, values) }))
	})
	method("uploadFile", func(c goja.FunctionCall) goja.Value {
		tg, err := targetArg(c.Argument(0))
		if err != nil {
			return s.reject(err)
		}
		paths, err := rest(c)
		if err != nil {
			return s.reject(err)
		}
		return s.async(s.audited("upload", tg.String()+" "+strings.Join(paths, " "), "", func(ctx context.Context) (any, error) { return t.UploadFile(ctx, tg, paths) }))
	})
	method("drag", func(c goja.FunctionCall) goja.Value {
		from, err := dragEndArg(c.Argument(0))
		if err != nil {
			return s.reject(err)
		}
		to, err := dragEndArg(c.Argument(1))
		if err != nil {
			return s.reject(err)
		}
		o := tabs.DragOptions{
			Steps:    int(optNum(vm, c.Argument(2), "steps", 0)),
			Position: optString(vm, c.Argument(2), "position", ""),
		}
		if opts := objArg(vm, c.Argument(2)); opts != nil {
			if v := opts.Get("offset"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
				end, err := dragEndArg(v)
				if err != nil || end.Point == nil {
					return s.reject(tabs.Errorf(errcode.BadRequest, "drag: offset is {x, y}, in CSS pixels from the to element's top-left corner"))
				}
				o.Offset = end.Point
			}
		}
		d := msOpt(vm, c.Argument(2), "timeout")
		return s.async(s.audited("drag", fmt.Sprint(from, " -> ", to), "", func(ctx context.Context) (any, error) {
			if d > 0 {
				ctx = tabs.WithActionTimeout(ctx, d)
			}
			return t.Drag(ctx, from, to, o)
		}))
	})
	method("waitFor", func(c goja.FunctionCall) goja.Value {
		tg, err := targetArg(c.Argument(0))
		if err != nil {
			return s.reject(err)
		}
		d := msOpt(vm, c.Argument(1), "timeout")
		state := optString(vm, c.Argument(1), "state", "visible")
		return s.async(func(ctx context.Context) (any, error) {
			ctx, cancel := withTimeout(ctx, d)
			defer cancel()
			return t.WaitForState(ctx, tg, state)
		})
	})
	method("press", func(c goja.FunctionCall) goja.Value {
		key := argString(c, 0)
		var tg *tabs.Target
		if o := objArg(vm, c.Argument(1)); o != nil {
			if v := o.Get("selector"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
				p, err := targetArg(v)
				if err != nil {
					return s.reject(err)
				}
				tg = &p
			}
		}
		d := msOpt(vm, c.Argument(1), "timeout")
		target := key
		if tg != nil {
			target += " " + tg.String()
		}
		return s.async(s.audited("press", target, "", func(ctx context.Context) (any, error) {
			if d > 0 {
				ctx = tabs.WithActionTimeout(ctx, d)
			}
			return t.Press(ctx, key, tg)
		}))
	})
	method("scroll", func(c goja.FunctionCall) goja.Value {
		dx, dy := c.Argument(0).ToFloat(), c.Argument(1).ToFloat()
		if math.IsNaN(dx) || math.IsNaN(dy) {
			return s.reject(tabs.Errorf(errcode.BadRequest, "scroll(dx, dy, {selector}) takes two numbers of CSS pixels"))
		}
		if o := objArg(vm, c.Argument(2)); o != nil {
			if v := o.Get("selector"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
				tg, err := targetArg(v)
				if err != nil {
					return s.reject(err)
				}
				return s.async(func(ctx context.Context) (any, error) { return t.ScrollAt(ctx, tg, dx, dy) })
			}
		}
		return s.async(func(ctx context.Context) (any, error) { return t.Scroll(ctx, dx, dy) })
	})
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
	method("clickAt", func(c goja.FunctionCall) goja.Value {
		x, y := c.Argument(0).ToFloat(), c.Argument(1).ToFloat()
		if math.IsNaN(x) || math.IsNaN(y) {
			return s.reject(tabs.Errorf(errcode.BadRequest, "clickAt(x, y, {screenshot}) takes two numbers"))
		}
		shot := 0
		if o := objArg(vm, c.Argument(2)); o != nil {
			if v := o.Get("screenshot"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
				switch x := v.Export().(type) {
				case bool:
					if x {
						shot = -1
					}
				case map[string]any:
					if id, ok := x["id"].(int64); ok {
						shot = int(id)
					}
				default:
					shot = int(v.ToInteger())
				}
			}
		}
		return s.async(func(ctx context.Context) (any, error) { return t.ClickAt(ctx, x, y, shot) })
	})
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
	must(vm.Set("tab", tab))

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
	must(vm.Set("wait", func(c goja.FunctionCall) goja.Value {
		ms := c.Argument(0).ToFloat()
		if math.IsNaN(ms) || ms < 0 {
			ms = 0
		}
		return s.async(func(ctx context.Context) (any, error) {
			select {
			case <-time.After(time.Duration(ms * float64(time.Millisecond))):
				return nil, nil
			case <-ctx.Done():
				return nil, &tabs.Error{Code: errcode.Timeout, Msg: "wait: the run's timeout passed", Err: ctx.Err()}
			}
		})
	}))
	return nil
}

// wrapTimers replaces the event loop's setTimeout, setInterval and
// setImmediate (goja_nodejs, which drops what a callback throws) with
// versions whose callbacks run as tasks of the run (Script.task): an
// exception a callback throws fails the run, as in Node, and once the
// run's result is decided callbacks no longer run.
func (s *Script) wrapTimers(vm *goja.Runtime) {
	for _, kind := range []string{"setTimeout", "setInterval", "setImmediate"} {
		orig, ok := goja.AssertFunction(vm.Get(kind))
		if !ok {
			continue
		}
		// The callback's own arguments follow the delay, except for
		// setImmediate, which has none.
		first := 2
		if kind == "setImmediate" {
			first = 1
		}
		f := func(c goja.FunctionCall) goja.Value {
			cb, ok := goja.AssertFunction(c.Argument(0))
			if !ok {
				panic(vm.NewTypeError("%s: the callback must be a function, not %s", kind, c.Argument(0).String()))
			}
			var args []goja.Value
			if len(c.Arguments) > first {
				args = append(args, c.Arguments[first:]...)
			}
			wrapped := vm.ToValue(func(goja.FunctionCall) goja.Value {
				s.task(vm, func() {
					if _, err := cb(goja.Undefined(), args...); err != nil {
						s.fail(s.uncaught(vm, kind, err))
					}
				})
				return goja.Undefined()
			})
			call := []goja.Value{wrapped}
			if first == 2 {
				call = append(call, c.Argument(1))
			}
			r, err := orig(goja.Undefined(), call...)
			if err != nil {
				panic(err)
			}
			return r
		}
		if err := vm.Set(kind, f); err != nil {
			panic(err)
		}
	}
}

// observationJS makes an observation's JSON carry a text() rendering.
type observationJS struct{ obs interface{ Text() string } }

func (o observationJS) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(o.obs)
	if err != nil {
		return nil, err
	}
	t, _ := json.Marshal(o.obs.Text())
	// Splice "text" into the object.
	return append(append(append(b[:len(b)-1:len(b)-1], []byte(`,"text":`)...), t...), '}'), nil
}

func (s *Script) screenshot(vm *goja.Runtime, o tabs.ScreenshotOptions, silent bool) goja.Value {
	if m := s.opts.MaxScreenshots; m > 0 && s.shots >= m {
		return s.reject(tabs.Errorf(errcode.BadRequest, "screenshot limit reached: at most %d screenshots per run", m))
	}
	s.shots++
	return s.asyncThen(func(ctx context.Context) (any, error) {
		return s.tab.Screenshot(ctx, o)
	}, func(v any) goja.Value {
		shot := v.(*tabs.Screenshot)
		s.mu.Lock()
		if !s.sealed {
			s.out.Screenshots = append(s.out.Screenshots, shot)
		}
		s.mu.Unlock()
		if !silent {
			s.add(Content{Type: "text", Text: shot.Summary()},
				Content{Type: "image", MimeType: shot.MimeType, Data: shot.Data})
		}
		return toJS(vm, map[string]any{"type": "image", "mimeType": shot.MimeType, "data": shot.Base64(),
			"width": shot.Width, "height": shot.Height, "bytes": shot.Bytes, "dest": shot.Dest, "fullResolution": shot.FullResolution, "id": shot.ID, "scale": shot.Scale})
	})
}

// async runs fn off the loop and returns a promise settled with its result
// (converted with toJS) or rejected with a coded Error.
func (s *Script) async(fn func(ctx context.Context) (any, error)) goja.Value {
	return s.asyncThen(fn, nil)
}

func (s *Script) asyncThen(fn func(ctx context.Context) (any, error), conv func(any) goja.Value) goja.Value {
	vm := s.vm
	site := callSite(vm)
	p, resolve, reject := vm.NewPromise()
	s.pending.Add(1)
	s.inflight.Add(1)
	go func() {
		defer s.pending.Done()
		var v any
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = tabs.Errorf(errcode.Internal, "internal error: %v", r)
				}
			}()
			v, err = fn(s.ctx)
		}()
		if err != nil && s.ctx.Err() != nil && errcode.Of(err) == errcode.Timeout && !generic(err) {
			msg := err.Error()
			if site != "" {
				msg += " (" + positionText(site) + ")"
			}
			hint := ""
			if h, ok := err.(errcode.Hinter); ok {
				hint = h.ErrorHint()
			}
			s.mu.Lock()
			if s.waitedOn == nil {
				s.waitedOn = &tabs.Error{Code: errcode.Timeout, Msg: msg, Hint: hint}
			}
			s.mu.Unlock()
		}
		s.inflight.Add(-1)
		s.loop.RunOnLoop(func(vm *goja.Runtime) {
			ran := s.task(vm, func() {
				var jerr error
				switch {
				case err != nil:
					ev := s.errValue(vm, err)
					if o, ok := ev.(*goja.Object); ok && site != "" {
						// The error is made on the loop, far from the call:
						// give it the call's place, as its stack.
						_ = o.Set("stack", fmt.Sprintf("Error: %s\n    at %s", err.Error(), site))
					}
					jerr = reject(ev)
				case conv != nil:
					jerr = resolve(conv(v))
				default:
					jerr = resolve(toJS(vm, v))
				}
				if jerr != nil {
					s.fail(s.jsErr(vm, jerr))
				}
			})
			if !ran && err != nil {
				s.log.Debug("tab call ended after the run", "tab", s.tab.Name(), "err", err)
			}
		})
	}()
	return vm.ToValue(p)
}

func (s *Script) reject(err error) goja.Value {
	p, _, reject := s.vm.NewPromise()
	_ = reject(s.errValue(s.vm, err))
	return s.vm.ToValue(p)
}

// generic reports whether a timeout error says only that a call timed out
// or was cancelled, not what it waited for.
func generic(err error) bool {
	m := err.Error()
	return strings.HasSuffix(m, ": timed out") || strings.HasSuffix(m, ": cancelled")
}

// callSite is the place ("run:L:C") in the caller's code of the innermost
// frame of the current call stack that is in it, or "".
func callSite(vm *goja.Runtime) string {
	for _, f := range vm.CaptureCallStack(0, nil) {
		if f.SrcName() == "run" {
			p := f.Position()
			return fmt.Sprintf("run:%d:%d", p.Line, p.Column)
		}
	}
	return ""
}

// errValue builds a JS Error with code and hint properties from a Go error.
func (s *Script) errValue(vm *goja.Runtime, err error) goja.Value {
	code := string(errcode.Of(err))
	hint := ""
	var h errcode.Hinter
	if e, ok := err.(errcode.Hinter); ok {
		h = e
		hint = h.ErrorHint()
	}
	return s.jsError(vm, code, err.Error(), hint)
}

func (s *Script) jsError(vm *goja.Runtime, code, msg, hint string) *goja.Object {
	ctor := vm.Get("Error")
	o, err := vm.New(ctor, vm.ToValue(msg))
	if err != nil {
		o = vm.NewObject()
		_ = o.Set("message", msg)
	}
	_ = o.Set("code", code)
	if hint != "" {
		_ = o.Set("hint", hint)
	}
	return o
}

// targetArg reads a target: a number, a selector string, or a tab.id handle.
func targetArg(v goja.Value) (tabs.Target, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return tabs.Target{}, tabs.Errorf(errcode.BadRequest, "missing target: give an element number, a selector or tab.id(n)")
	}
	if o, ok := v.(*goja.Object); ok {
		if id := o.Get("__tpTarget"); id != nil && !goja.IsUndefined(id) {
			return tabs.Target{ID: int(id.ToInteger())}, nil
		}
		return tabs.Target{}, tabs.Errorf(errcode.BadRequest, "invalid target %s: give an element number, a selector or tab.id(n)", v.String())
	}
	switch x := v.Export().(type) {
	case int64:
		if x <= 0 {
			return tabs.Target{}, tabs.Errorf(errcode.BadRequest, "invalid element number %d", x)
		}
		return tabs.Target{ID: int(x)}, nil
	case float64:
		if x != math.Trunc(x) || x <= 0 {
			return tabs.Target{}, tabs.Errorf(errcode.BadRequest, "invalid element number %v", x)
		}
		return tabs.Target{ID: int(x)}, nil
	}
	return tabs.ParseTarget(v.String())
}

func argString(c goja.FunctionCall, i int) string {
	v := c.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	return v.String()
}

func objArg(vm *goja.Runtime, v goja.Value) *goja.Object {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	if o, ok := v.(*goja.Object); ok {
		return o
	}
	return nil
}

func boolField(o *goja.Object, k string) bool {
	v := o.Get(k)
	return v != nil && v.ToBoolean()
}

func strField(o *goja.Object, k string) string {
	v := o.Get(k)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	return v.String()
}

func numField(o *goja.Object, k string, def float64) float64 {
	v := o.Get(k)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return def
	}
	f := v.ToFloat()
	if math.IsNaN(f) {
		return def
	}
	return f
}

func optString(vm *goja.Runtime, v goja.Value, k, def string) string {
	if o := objArg(vm, v); o != nil {
		if s := strField(o, k); s != "" {
			return s
		}
	}
	return def
}

func optNum(vm *goja.Runtime, v goja.Value, k string, def float64) float64 {
	if o := objArg(vm, v); o != nil {
		return numField(o, k, def)
	}
	return def
}

// msOpt reads a duration option given in milliseconds; 0 when absent.
func msOpt(vm *goja.Runtime, v goja.Value, k string) time.Duration {
	ms := optNum(vm, v, k, 0)
	if ms <= 0 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// withTimeout bounds ctx by d when d > 0.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// fromJS converts a JS value to a Go value through JSON.
func fromJS(vm *goja.Runtime, v goja.Value, out any) error {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return fmt.Errorf("missing argument")
	}
	js, err := stringify(vm, v)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(js), out)
}

// dragEndArg reads one end of a drag: a target, or a point {x, y}.
func dragEndArg(v goja.Value) (tabs.DragEnd, error) {
	if o, ok := v.(*goja.Object); ok {
		if id := o.Get("__tpTarget"); id == nil || goja.IsUndefined(id) {
			x, y := o.Get("x"), o.Get("y")
			if x == nil || y == nil || goja.IsUndefined(x) || goja.IsUndefined(y) {
				return tabs.DragEnd{}, tabs.Errorf(errcode.BadRequest, "a drag end is a target or a point {x, y}")
			}
			p := tabs.Point{X: x.ToFloat(), Y: y.ToFloat()}
			if math.IsNaN(p.X) || math.IsNaN(p.Y) {
				return tabs.DragEnd{}, tabs.Errorf(errcode.BadRequest, "a drag point needs numbers x and y")
			}
			return tabs.DragEnd{Point: &p}, nil
		}
	}
	tg, err := targetArg(v)
	if err != nil {
		return tabs.DragEnd{}, err
	}
	return tabs.DragEnd{Target: &tg}, nil
}

// urlPattern reads a URL pattern: a string (a URL, or a glob with ** and
// *; one starting with / is relative to the page's origin), a RegExp
// (converted to Go's RE2 syntax), or a predicate url => boolean, which runs
// on the script's loop.
func (s *Script) urlPattern(vm *goja.Runtime, v goja.Value) (tabs.URLPattern, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return tabs.URLPattern{}, tabs.Errorf(errcode.BadRequest, "missing URL pattern: give a URL, a glob, a RegExp or a function")
	}
	if fn, ok := goja.AssertFunction(v); ok {
		return tabs.URLPattern{Func: s.predicate(fn)}, nil
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "RegExp" {
		src, flags := o.Get("source").String(), o.Get("flags").String()
		prefix := ""
		for _, f := range flags {
			if strings.ContainsRune("ims", f) {
				prefix += string(f)
			}
		}
		if prefix != "" {
			prefix = "(?" + prefix + ")"
		}
		re, err := regexp.Compile(prefix + src)
		if err != nil {
			return tabs.URLPattern{}, tabs.Errorf(errcode.BadRequest, "the regular expression /%s/ is not supported (Go RE2 syntax: no lookaround or backreferences): %v", src, err)
		}
		return tabs.URLPattern{Regexp: re}, nil
	}
	return tabs.ParseGlob(v.String(), s.tab.KnownURL())
}

// predicate runs a JS function on the loop and reports its truth; false
// when the run ends first or the function throws.
func (s *Script) predicate(fn goja.Callable) func(string) bool {
	return func(u string) bool {
		res := make(chan bool, 1)
		ok := s.loop.RunOnLoop(func(vm *goja.Runtime) {
			b := false
			s.task(vm, func() {
				v, err := fn(goja.Undefined(), vm.ToValue(u))
				b = err == nil && v.ToBoolean()
			})
			res <- b
		})
		if !ok {
			return false
		}
		select {
		case b := <-res:
			return b
		case <-s.ctx.Done():
			return false
		}
	}
}

// audited wraps an action that can change the page with the Audit hook:
// an intent before (a failure to write it stops the action) and the
// outcome after. Without a hook it returns fn.
func (s *Script) audited(action, target, text string, fn func(ctx context.Context) (any, error)) func(ctx context.Context) (any, error) {
	if s.opts.Audit == nil {
		return fn
	}
	return func(ctx context.Context) (any, error) {
		done, err := s.opts.Audit(ctx, action, target, text)
		if err != nil {
			return nil, err
		}
		v, err := fn(ctx)
		done(err)
		return v, err
	}
}
