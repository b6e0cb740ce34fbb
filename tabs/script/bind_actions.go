package script

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// bindActions installs the element actions (click, type, fill, select,
// uploadFile, drag, waitFor, press, scroll, clickAt).
func (s *Script) bindActions(vm *goja.Runtime, t *tabs.Tab, tab *goja.Object, method methodFunc, must func(error)) {
	// Element actions take a target: an element number, a selector or a
	// handle from tab.id(n), and an optional last {timeout} (ms) that bounds
	// the wait for the element to be actionable.
	// The arguments are read here, on the script's loop: goja reuses a
	// call's argument slots once it returns, so run, on its own goroutine,
	// gets the text, not the call (read there, a fill started beside
	// another got the other's text).
	// inLine takes the action's place in the page's input line now, as the
	// script calls it, and has fn wait for it: actions a script starts
	// together (Promise.all) send their input in the order it called them
	// (a fill and the click that submits it, say), not in the order their
	// goroutines get going.
	inLine := func(fn func(ctx context.Context) (any, error)) func(ctx context.Context) (any, error) {
		p := t.InputPlace()
		return func(ctx context.Context) (any, error) {
			defer p.Release()
			return fn(p.Context(ctx))
		}
	}
	act := func(name string, optIdx int, run func(ctx context.Context, tg tabs.Target, text string) (any, error)) {
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
			fn := s.audited(name, tg.String(), text, func(ctx context.Context) (any, error) {
				if d > 0 {
					ctx = tabs.WithActionTimeout(ctx, d)
				}
				return run(ctx, tg, text)
			})
			if name != "value" {
				fn = inLine(fn)
			}
			return s.async(fn)
		})
	}
	act("click", 1, func(ctx context.Context, tg tabs.Target, _ string) (any, error) {
		return t.Click(ctx, tg)
	})
	act("hover", 1, func(ctx context.Context, tg tabs.Target, _ string) (any, error) {
		return t.Hover(ctx, tg)
	})
	act("type", 2, func(ctx context.Context, tg tabs.Target, text string) (any, error) {
		return t.Type(ctx, tg, text)
	})
	act("fill", 2, func(ctx context.Context, tg tabs.Target, text string) (any, error) {
		return t.Fill(ctx, tg, text)
	})
	act("value", 1, func(ctx context.Context, tg tabs.Target, _ string) (any, error) {
		return t.Value(ctx, tg, 5*time.Second)
	})
	act("scrollIntoView", 1, func(ctx context.Context, tg tabs.Target, _ string) (any, error) {
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
		return s.async(inLine(s.audited("select", tg.String(), "", func(ctx context.Context) (any, error) { return t.Select(ctx, tg, values) })))
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
		return s.async(inLine(s.audited("upload", tg.String()+" "+strings.Join(paths, " "), "", func(ctx context.Context) (any, error) { return t.UploadFile(ctx, tg, paths) })))
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
		return s.async(inLine(s.audited("drag", fmt.Sprint(from, " -> ", to), "", func(ctx context.Context) (any, error) {
			if d > 0 {
				ctx = tabs.WithActionTimeout(ctx, d)
			}
			return t.Drag(ctx, from, to, o)
		})))
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
		return s.async(inLine(s.audited("press", target, "", func(ctx context.Context) (any, error) {
			if d > 0 {
				ctx = tabs.WithActionTimeout(ctx, d)
			}
			return t.Press(ctx, key, tg)
		})))
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
				return s.async(inLine(func(ctx context.Context) (any, error) { return t.ScrollAt(ctx, tg, dx, dy) }))
			}
		}
		return s.async(inLine(func(ctx context.Context) (any, error) { return t.Scroll(ctx, dx, dy) }))
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
		return s.async(inLine(func(ctx context.Context) (any, error) { return t.ClickAt(ctx, x, y, shot) }))
	})
}
