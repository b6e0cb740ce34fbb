package script

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/tabpilot/tabpilot/tabs"
)

// setup installs the globals of DESIGN.md section 3 in vm.
func (s *Script) setup(vm *goja.Runtime) error {
	installGlobals(vm)
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
		wait := optString(vm, c.Argument(1), "waitUntil", "load")
		return s.async(func(ctx context.Context) (any, error) {
			r, err := t.Goto(ctx, u, wait)
			if err != nil {
				return nil, err
			}
			out := map[string]any{"url": t.URL(ctx)}
			if len(r.Notes) > 0 {
				out["notes"] = r.Notes
			}
			if r.Dialog != nil {
				out["dialog"] = r.Dialog
			}
			return out, nil
		})
	})
	method("observe", func(c goja.FunctionCall) goja.Value {
		o := tabs.ObserveOptions{}
		if obj := objArg(vm, c.Argument(0)); obj != nil {
			o.IncludeAll = boolField(obj, "includeAll")
			o.ViewportOnly = boolField(obj, "viewportOnly")
			o.MaxTokens = int(numField(obj, "maxTokens", 0))
			o.Query = strField(obj, "query")
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
	// handle from tab.id(n).
	act := func(name string, run func(ctx context.Context, tg tabs.Target, c goja.FunctionCall) (any, error)) {
		method(name, func(c goja.FunctionCall) goja.Value {
			tg, err := targetArg(c.Argument(0))
			if err != nil {
				return s.reject(err)
			}
			return s.async(func(ctx context.Context) (any, error) { return run(ctx, tg, c) })
		})
	}
	act("click", func(ctx context.Context, tg tabs.Target, _ goja.FunctionCall) (any, error) {
		return t.Click(ctx, tg)
	})
	act("hover", func(ctx context.Context, tg tabs.Target, _ goja.FunctionCall) (any, error) {
		return t.Hover(ctx, tg)
	})
	act("type", func(ctx context.Context, tg tabs.Target, c goja.FunctionCall) (any, error) {
		return t.Type(ctx, tg, argString(c, 1))
	})
	act("fill", func(ctx context.Context, tg tabs.Target, c goja.FunctionCall) (any, error) {
		return t.Fill(ctx, tg, argString(c, 1))
	})
	act("scrollIntoView", func(ctx context.Context, tg tabs.Target, _ goja.FunctionCall) (any, error) {
		return t.Hover(ctx, tg)
	})
	method("waitFor", func(c goja.FunctionCall) goja.Value {
		tg, err := targetArg(c.Argument(0))
		if err != nil {
			return s.reject(err)
		}
		d := time.Duration(optNum(vm, c.Argument(1), "timeout", 0) * float64(time.Millisecond))
		return s.async(func(ctx context.Context) (any, error) {
			if d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			return t.WaitFor(ctx, tg)
		})
	})
	method("press", func(c goja.FunctionCall) goja.Value {
		key := argString(c, 0)
		var tg *tabs.Target
		if sel := optString(vm, c.Argument(1), "selector", ""); sel != "" {
			p, err := tabs.ParseTarget(sel)
			if err != nil {
				return s.reject(err)
			}
			tg = &p
		}
		return s.async(func(ctx context.Context) (any, error) { return t.Press(ctx, key, tg) })
	})
	method("scroll", func(c goja.FunctionCall) goja.Value {
		dx, dy := c.Argument(0).ToFloat(), c.Argument(1).ToFloat()
		if math.IsNaN(dx) || math.IsNaN(dy) {
			return s.reject(tabs.Errorf(tabs.CodeBadRequest, "scroll(dx, dy) takes two numbers of CSS pixels"))
		}
		return s.async(func(ctx context.Context) (any, error) { return t.Scroll(ctx, dx, dy) })
	})
	method("evaluate", func(c goja.FunctionCall) goja.Value {
		if len(c.Arguments) == 0 {
			return s.reject(tabs.Errorf(tabs.CodeBadRequest, "evaluate(fn, ...args) needs a function or an expression"))
		}
		src := c.Argument(0).String()
		var args []any
		for _, a := range c.Arguments[1:] {
			js, err := stringify(vm, a)
			if err != nil {
				return s.reject(tabs.Errorf(tabs.CodeBadRequest, "evaluate: argument is not JSON-serialisable: %v", err))
			}
			args = append(args, json.RawMessage(js))
		}
		if _, isFn := goja.AssertFunction(c.Argument(0)); !isFn && len(args) > 0 {
			return s.reject(tabs.Errorf(tabs.CodeBadRequest, "evaluate: arguments need a function as the first argument"))
		}
		return s.async(func(ctx context.Context) (any, error) { return t.Evaluate(ctx, src, args) })
	})
	method("screenshot", func(c goja.FunctionCall) goja.Value {
		o := tabs.ScreenshotOptions{}
		silent := false
		if obj := objArg(vm, c.Argument(0)); obj != nil {
			o.FullPage = boolField(obj, "fullPage")
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
		for _, m := range []string{"click", "hover", "type", "fill", "scrollIntoView", "waitFor"} {
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
			v, err := f(tab, c.Argument(0), vm.ToValue(map[string]any{"selector": fmt.Sprint(n)}))
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
				return s.reject(tabs.Errorf(tabs.CodeBadRequest, "cdp.send: params are not JSON-serialisable"))
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
			panic(s.jsError(vm, string(tabs.CodeAssertionFailed), msg, ""))
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
				return nil, &tabs.Error{Code: tabs.CodeTimeout, Msg: "wait: the run's timeout passed", Err: ctx.Err()}
			}
		})
	}))
	return nil
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
	return s.asyncThen(func(ctx context.Context) (any, error) {
		return s.tab.Screenshot(ctx, o)
	}, func(v any) goja.Value {
		shot := v.(*tabs.Screenshot)
		s.out.Screenshots = append(s.out.Screenshots, shot)
		if !silent {
			s.out.Content = append(s.out.Content,
				Content{Type: "text", Text: fmt.Sprintf("Screenshot %d: %dx%d %s, %d bytes, %.3g image px per CSS px (divide image coordinates by it for CSS pixels); saved to %s",
					shot.ID, shot.Width, shot.Height, shot.MimeType, shot.Bytes, shot.Scale, shot.Dest)},
				Content{Type: "image", MimeType: shot.MimeType, Data: shot.Data})
		}
		return toJS(vm, map[string]any{"type": "image", "mimeType": shot.MimeType, "data": shot.Base64(),
			"width": shot.Width, "height": shot.Height, "bytes": shot.Bytes, "dest": shot.Dest, "id": shot.ID, "scale": shot.Scale})
	})
}

// async runs fn off the loop and returns a promise settled with its result
// (converted with toJS) or rejected with a coded Error.
func (s *Script) async(fn func(ctx context.Context) (any, error)) goja.Value {
	return s.asyncThen(fn, nil)
}

func (s *Script) asyncThen(fn func(ctx context.Context) (any, error), conv func(any) goja.Value) goja.Value {
	vm := s.vm
	p, resolve, reject := vm.NewPromise()
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		var v any
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = tabs.Errorf(tabs.CodeInternal, "internal error: %v", r)
				}
			}()
			v, err = fn(s.ctx)
		}()
		s.loop.RunOnLoop(func(vm *goja.Runtime) {
			if err != nil {
				_ = reject(s.errValue(vm, err))
				return
			}
			if conv != nil {
				_ = resolve(conv(v))
				return
			}
			_ = resolve(toJS(vm, v))
		})
	}()
	return vm.ToValue(p)
}

func (s *Script) reject(err error) goja.Value {
	p, _, reject := s.vm.NewPromise()
	_ = reject(s.errValue(s.vm, err))
	return s.vm.ToValue(p)
}

// errValue builds a JS Error with code and hint properties from a Go error.
func (s *Script) errValue(vm *goja.Runtime, err error) goja.Value {
	code := string(tabs.CodeOf(err))
	hint := ""
	var h interface{ ErrorHint() string }
	if e, ok := err.(interface{ ErrorHint() string }); ok {
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
		return tabs.Target{}, tabs.Errorf(tabs.CodeBadRequest, "missing target: give an element number, a selector or tab.id(n)")
	}
	if o, ok := v.(*goja.Object); ok {
		if id := o.Get("__tpTarget"); id != nil && !goja.IsUndefined(id) {
			return tabs.Target{ID: int(id.ToInteger())}, nil
		}
		return tabs.Target{}, tabs.Errorf(tabs.CodeBadRequest, "invalid target %s: give an element number, a selector or tab.id(n)", v.String())
	}
	switch x := v.Export().(type) {
	case int64:
		if x <= 0 {
			return tabs.Target{}, tabs.Errorf(tabs.CodeBadRequest, "invalid element number %d", x)
		}
		return tabs.Target{ID: int(x)}, nil
	case float64:
		if x != math.Trunc(x) || x <= 0 {
			return tabs.Target{}, tabs.Errorf(tabs.CodeBadRequest, "invalid element number %v", x)
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

var _ = strings.TrimSpace
