// Package script runs the `run` action: the body of an async JavaScript
// function in a fresh goja runtime with an event loop (goja_nodejs), bound
// to a tabs.Tab (DESIGN.md section 3).
//
// Globals: tab (the tab API), cdp.send (raw CDP on the tab's session),
// browser {kind, version, tabs()}, display, assert, wait, console (to the
// log, never to the output), timers, URL, URLSearchParams, TextEncoder,
// TextDecoder and Buffer. Tab methods that talk to the browser return
// promises, so `await Promise.all([tab.waitForUrl(…), tab.click(…)])` works.
//
// A Script is a tabs.Job: Supervisor.Run gives it the run's deadline and
// calls Interrupt (goja Runtime.Interrupt) when the deadline passes.
package script

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/console"
	"github.com/dop251/goja_nodejs/eventloop"
	"github.com/dop251/goja_nodejs/require"
	"github.com/dop251/goja_nodejs/url"

	"github.com/tabpilot/tabpilot/tabs"
)

// Content is one output item: text, or an image (Data holds the bytes).
type Content struct {
	Type     string // "text" or "image"
	Text     string
	MimeType string
	Data     []byte
}

// Output is what a run produced, in order: every display call, then the
// return value.
type Output struct {
	Content     []Content
	Screenshots []*tabs.Screenshot
	// Dialogs the tab's policy handled during the run.
	Dialogs []tabs.Dialog
	// PendingDialog is a dialog left open when the run ended (no policy);
	// the next run handles it with tab.acceptDialog() or tab.dismissDialog().
	PendingDialog *tabs.Dialog
	// Popups are the pages the tab's page opened during the run, each now
	// a named tab ("<tab>-popup-<n>").
	Popups []tabs.Popup
	// Downloads are the downloads that began, progressed or finished
	// during the run (see tabs.Tab.DrainDownloads).
	Downloads []tabs.Download
}

// Options configure a Script. Nil means defaults.
type Options struct {
	// Logger receives console.* output and run logs; nil discards.
	Logger *slog.Logger
	// Audit, when set, is called before each action that can change the
	// page (goto, click, type, fill, press, select, upload, drag,
	// evaluate) with its target and typed text; done receives the outcome.
	// An error stops the action.
	Audit func(ctx context.Context, action, target, text string) (done func(error), err error)
	// MaxScreenshots caps the screenshots of one run; 0 means no cap.
	MaxScreenshots int
	// BrowserTabs lists the supervisor's tabs for browser.tabs().
	BrowserTabs func(ctx context.Context) []tabs.TabInfo
}

// Script is one run of code against a tab. Use it once.
type Script struct {
	code string
	opts Options
	log  *slog.Logger

	mu          sync.Mutex
	vm          *goja.Runtime
	interrupted string

	out     Output
	shots   int
	tab     *tabs.Tab
	ctx     context.Context
	loop    *eventloop.EventLoop
	pending sync.WaitGroup
}

// New returns a Script for code, the body of an async function.
func New(code string, opts *Options) *Script {
	s := &Script{code: code}
	if opts != nil {
		s.opts = *opts
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Output returns what the run produced. Call it after Run returns.
func (s *Script) Output() *Output { return &s.out }

// Interrupt stops the JavaScript at once (goja Runtime.Interrupt); the run
// then fails. Safe to call from any goroutine.
func (s *Script) Interrupt(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interrupted == "" {
		s.interrupted = reason
	}
	if s.vm != nil {
		s.vm.Interrupt(reason)
	}
}

// popupSettle is how long the end of a run waits for popups that are
// still being attached, so the run reports them as usable tabs.
const popupSettle = 2 * time.Second

type result struct {
	err error
}

// Run runs the script on t until its promise settles or ctx ends. Errors
// are *tabs.Error: script_error (a throw or a syntax error),
// assertion_failed (assert), the code of a failed tab call that the script
// did not catch (e.g. stale_element), or timeout.
func (s *Script) Run(ctx context.Context, t *tabs.Tab) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		s.pending.Wait()
	}()
	s.tab, s.ctx = t, ctx
	t.Foreground(ctx)
	reg := require.NewRegistry()
	reg.RegisterNativeModule(console.ModuleName, console.RequireWithPrinter(&printer{log: s.log, tab: t.Name()}))
	s.loop = eventloop.NewEventLoop(eventloop.WithRegistry(reg), eventloop.EnableConsole(true))
	done := make(chan result, 1)
	finish := func(r result) {
		select {
		case done <- r:
		default:
		}
	}
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in script loop", "panic", p)
				finish(result{err: tabs.Errorf(tabs.CodeInternal, "internal error in the script runtime: %v", p)})
			}
		}()
		s.loop.StartInForeground()
	}()
	s.loop.RunOnLoop(func(vm *goja.Runtime) {
		s.mu.Lock()
		s.vm = vm
		if s.interrupted != "" {
			vm.Interrupt(s.interrupted)
		}
		s.mu.Unlock()
		vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
		if err := s.setup(vm); err != nil {
			finish(result{err: err})
			return
		}
		fn, err := vm.RunScript("run", codePrefix+s.code+"\n})")
		if err != nil {
			finish(result{err: s.jsErr(vm, err)})
			return
		}
		call, _ := goja.AssertFunction(fn)
		pv, err := call(goja.Undefined())
		if err != nil {
			finish(result{err: s.jsErr(vm, err)})
			return
		}
		p, ok := pv.Export().(*goja.Promise)
		if !ok {
			finish(result{})
			return
		}
		then, _ := goja.AssertFunction(vm.ToValue(p).ToObject(vm).Get("then"))
		_, _ = then(vm.ToValue(p),
			vm.ToValue(func(c goja.FunctionCall) goja.Value {
				if err := s.emitValue(vm, c.Argument(0), true); err != nil {
					finish(result{err: err})
					return goja.Undefined()
				}
				finish(result{})
				return goja.Undefined()
			}),
			vm.ToValue(func(c goja.FunctionCall) goja.Value {
				finish(result{err: s.rejection(vm, c.Argument(0))})
				return goja.Undefined()
			}))
	})
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		s.Interrupt("run cancelled")
		r.err = &tabs.Error{Code: tabs.CodeTimeout, Msg: "run stopped: " + context.Cause(ctx).Error(), Err: ctx.Err()}
	}
	s.loop.StopNoWait()
	select {
	case <-loopDone:
		s.loop.Terminate()
	case <-time.After(time.Second):
		// The loop is stuck in a native call; it ends when ctx is done.
	}
	if r.err == nil && ctx.Err() != nil {
		r.err = &tabs.Error{Code: tabs.CodeTimeout, Msg: "run stopped: " + ctx.Err().Error(), Err: ctx.Err()}
	}
	s.out.Dialogs = append(s.out.Dialogs, t.HandledDialogs()...)
	s.out.PendingDialog = t.PendingDialog()
	s.out.Popups = append(s.out.Popups, t.DrainPopups(popupSettle)...)
	s.out.Downloads = append(s.out.Downloads, t.DrainDownloads()...)
	if len(s.out.Content) == 0 && r.err == nil {
		s.out.Content = append(s.out.Content, Content{Type: "text", Text: fmt.Sprintf("Ran code on tab %q", t.Name())})
	}
	return r.err
}

// codePrefix opens the async function a run's code is the body of. It
// adds no line, so a position in the code is the caller's line; on the
// first line, positionText takes its length off the column.
const codePrefix = "(async () => {"

// goPos matches a position goja gives in the code: "run:2:6(4)" in a stack
// frame (the last number is a bytecode offset) and "run: Line 2:6" in a
// syntax error.
var goPos = regexp.MustCompile(`run:(?: Line )?(\d+):(\d+)(?:\(\d+\))?`)

// positionText rewrites goja's positions in msg as "line L:C" of the
// caller's code.
func positionText(msg string) string {
	return goPos.ReplaceAllStringFunc(msg, func(m string) string {
		g := goPos.FindStringSubmatch(m)
		line, _ := strconv.Atoi(g[1])
		col, _ := strconv.Atoi(g[2])
		if line == 1 && col > len(codePrefix) {
			col -= len(codePrefix)
		}
		return fmt.Sprintf("line %d:%d", line, col)
	})
}

// jsErr converts an error from goja (a thrown value or an interrupt).
func (s *Script) jsErr(vm *goja.Runtime, err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return &tabs.Error{Code: tabs.CodeTimeout, Msg: fmt.Sprintf("script interrupted: %v", ie.Value())}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return s.rejection(vm, ex.Value())
	}
	return &tabs.Error{Code: tabs.CodeScriptError, Msg: positionText(err.Error())}
}

// rejection maps a thrown value to a coded error: a tab error keeps its
// code, an assert is assertion_failed, anything else script_error.
func (s *Script) rejection(vm *goja.Runtime, v goja.Value) error {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return &tabs.Error{Code: tabs.CodeScriptError, Msg: "the script threw " + fmt.Sprint(v)}
	}
	if o, ok := v.(*goja.Object); ok {
		code := ""
		if c := o.Get("code"); c != nil && !goja.IsUndefined(c) {
			code = c.String()
		}
		msg := ""
		if m := o.Get("message"); m != nil && !goja.IsUndefined(m) {
			msg = m.String()
		} else {
			msg = v.String()
		}
		if code != "" && code != string(tabs.CodeScriptError) && validCode(code) {
			e := &tabs.Error{Code: tabs.Code(code), Msg: msg}
			if h := o.Get("hint"); h != nil && !goja.IsUndefined(h) {
				e.Hint = h.String()
			}
			return e
		}
		name := ""
		if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
			name = n.String()
		}
		if name == "SyntaxError" {
			msg = positionText(msg)
		}
		if name != "" && name != "Error" && !strings.HasPrefix(msg, name) {
			msg = name + ": " + msg
		}
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			if lines := strings.Split(st.String(), "\n"); len(lines) > 1 {
				if at := strings.TrimSpace(lines[1]); at != "" {
					msg += " (" + positionText(strings.TrimPrefix(at, "at ")) + ")"
				}
			}
		}
		return &tabs.Error{Code: tabs.CodeScriptError, Msg: msg}
	}
	return &tabs.Error{Code: tabs.CodeScriptError, Msg: "the script threw " + v.String()}
}

func validCode(c string) bool {
	switch tabs.Code(c) {
	case tabs.CodeBadRequest, tabs.CodeTimeout, tabs.CodeBusy, tabs.CodeNotAlive, tabs.CodeNoSuchTab,
		tabs.CodeBrowserMismatch, tabs.CodeNavigationFailed, tabs.CodeElementNotFound, tabs.CodeNotActionable,
		tabs.CodeStaleElement, tabs.CodeScriptError, tabs.CodeAssertionFailed, tabs.CodeInternal:
		return true
	}
	return c == "blocked_destination" || c == "browser_unavailable" || c == "attach_failed" || c == "target_not_found"
}

// emitValue appends a value to the output: an image object as an image, a
// string as text, anything else as pretty JSON. With final, undefined and
// null add nothing.
func (s *Script) emitValue(vm *goja.Runtime, v goja.Value, final bool) error {
	if v == nil || goja.IsUndefined(v) || (final && goja.IsNull(v)) {
		return nil
	}
	if o, ok := v.(*goja.Object); ok {
		if t := o.Get("type"); t != nil && t.String() == "image" {
			if d := o.Get("data"); d != nil && !goja.IsUndefined(d) {
				data, err := base64.StdEncoding.DecodeString(d.String())
				if err != nil {
					return &tabs.Error{Code: tabs.CodeScriptError, Msg: "display: image data is not base64"}
				}
				mt := "image/png"
				if m := o.Get("mimeType"); m != nil && !goja.IsUndefined(m) {
					mt = m.String()
				}
				s.out.Content = append(s.out.Content, Content{Type: "image", MimeType: mt, Data: data})
				return nil
			}
		}
	}
	if str, ok := v.Export().(string); ok {
		s.out.Content = append(s.out.Content, Content{Type: "text", Text: str})
		return nil
	}
	js, err := stringify(vm, v)
	if err != nil {
		return &tabs.Error{Code: tabs.CodeScriptError, Msg: "cannot serialise the value: " + err.Error()}
	}
	s.out.Content = append(s.out.Content, Content{Type: "text", Text: js})
	return nil
}

func stringify(vm *goja.Runtime, v goja.Value) (string, error) {
	j := vm.Get("JSON").ToObject(vm)
	f, _ := goja.AssertFunction(j.Get("stringify"))
	r, err := f(j, v, goja.Null(), vm.ToValue(2))
	if err != nil {
		return "", err
	}
	if goja.IsUndefined(r) {
		return "undefined", nil
	}
	return r.String(), nil
}

// printer sends console output to the log.
type printer struct {
	log *slog.Logger
	tab string
}

func (p *printer) Log(s string)   { p.log.Info(s, "src", "console", "tab", p.tab) }
func (p *printer) Warn(s string)  { p.log.Warn(s, "src", "console", "tab", p.tab) }
func (p *printer) Error(s string) { p.log.Error(s, "src", "console", "tab", p.tab) }

// toJS converts a Go value to a plain JS value through JSON, so struct
// fields get their JSON names.
func toJS(vm *goja.Runtime, v any) goja.Value {
	if v == nil {
		return goja.Null()
	}
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case string:
		return vm.ToValue(x)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return vm.ToValue(fmt.Sprint(v))
		}
		raw = b
	}
	if !utf8.Valid(raw) {
		return vm.ToValue(string(raw))
	}
	j := vm.Get("JSON").ToObject(vm)
	f, _ := goja.AssertFunction(j.Get("parse"))
	r, err := f(j, vm.ToValue(string(raw)))
	if err != nil {
		return vm.ToValue(string(raw))
	}
	return r
}

// installGlobals installs URL, Buffer, console and the TextEncoder pair.
func installGlobals(vm *goja.Runtime) {
	url.Enable(vm)
	buffer.Enable(vm)
	console.Enable(vm)
	_, _ = vm.RunString(textCodecJS)
	vm.Set("__tp_utf8encode", func(s string) []byte { return []byte(s) })
	vm.Set("__tp_utf8decode", func(b goja.Value) string {
		switch x := b.Export().(type) {
		case []byte:
			return strings.ToValidUTF8(string(x), "\uFFFD")
		case goja.ArrayBuffer:
			return strings.ToValidUTF8(string(x.Bytes()), "\uFFFD")
		}
		return ""
	})
}

// textCodecJS defines TextEncoder and TextDecoder (UTF-8 only) over two Go
// helpers.
const textCodecJS = `
globalThis.TextEncoder = class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(s = '') { return new Uint8Array(__tp_utf8encode(String(s))); }
};
globalThis.TextDecoder = class TextDecoder {
  constructor(label = 'utf-8') { if (!/^utf-?8$/i.test(label)) throw new RangeError('only utf-8 is supported'); }
  get encoding() { return 'utf-8'; }
  decode(b) {
    if (b === undefined) return '';
    if (ArrayBuffer.isView(b)) b = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    return __tp_utf8decode(b);
  }
};
`
