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
	"github.com/tabpilot/tabpilot/urlpattern"
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

	s.bindNavigation(vm, t, tab, method, must)
	s.bindObserve(vm, t, tab, method, must)
	s.bindActions(vm, t, tab, method, must)
	s.bindWaits(vm, t, tab, method, must)
	s.bindState(vm, t, tab, method, must)
	s.bindNetwork(vm, t, tab, method, must)
	s.bindPage(vm, t, tab, method, must)
	s.bindPrintEmulate(vm, t, method)
	s.bindID(vm, t, tab, method, must)
	must(vm.Set("tab", tab))
	s.bindGlobals(vm, t, must)
	return nil
}

// methodFunc installs a method of the tab object.
type methodFunc = func(name string, fn func(c goja.FunctionCall) goja.Value)

// wrapTimers replaces the event loop's setImmediate (goja_nodejs, which
// drops what a callback throws) with one whose callbacks run as tasks of
// the run (Script.task): an exception a callback throws fails the run, as
// in Node, and once the run's result is decided callbacks no longer run.
// setTimeout and setInterval are the run's own (installTimers).
func (s *Script) wrapTimers(vm *goja.Runtime) {
	const kind = "setImmediate"
	orig, ok := goja.AssertFunction(vm.Get(kind))
	if !ok {
		return
	}
	f := func(c goja.FunctionCall) goja.Value {
		cb, ok := goja.AssertFunction(c.Argument(0))
		if !ok {
			panic(vm.NewTypeError("%s: the callback must be a function, not %s", kind, c.Argument(0).String()))
		}
		var args []goja.Value
		if len(c.Arguments) > 1 {
			args = append(args, c.Arguments[1:]...)
		}
		wrapped := vm.ToValue(func(goja.FunctionCall) goja.Value {
			s.task(vm, func() {
				if _, err := cb(goja.Undefined(), args...); err != nil {
					s.fail(s.uncaught(vm, kind, err))
				}
			})
			return goja.Undefined()
		})
		r, err := orig(goja.Undefined(), wrapped)
		if err != nil {
			panic(err)
		}
		return r
	}
	if err := vm.Set(kind, f); err != nil {
		panic(err)
	}
	s.installTimers(vm)
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
func (s *Script) urlPattern(vm *goja.Runtime, v goja.Value) (urlpattern.Pattern, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return urlpattern.Pattern{}, tabs.Errorf(errcode.BadRequest, "missing URL pattern: give a URL, a glob, a RegExp or a function")
	}
	if fn, ok := goja.AssertFunction(v); ok {
		return urlpattern.Pattern{Func: s.predicate(fn)}, nil
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
			return urlpattern.Pattern{}, tabs.Errorf(errcode.BadRequest, "the regular expression /%s/ is not supported (Go RE2 syntax: no lookaround or backreferences): %v", src, err)
		}
		return urlpattern.Pattern{Regexp: re}, nil
	}
	return urlpattern.ParseGlob(v.String(), s.tab.KnownURL())
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
