// Package script runs the `run` action: the body of an async JavaScript
// function in a fresh goja runtime with an event loop (goja_nodejs), bound
// to a tabs.Tab.
//
// Globals: tab (the tab API), cdp.send (raw CDP on the tab's session),
// browser {kind, version, tabs()}, display, assert, wait, secret, console
// (to the log, never to the output), timers, URL, URLSearchParams,
// TextEncoder, TextDecoder and Buffer. secret("NAME") returns the
// placeholder "{{secret:NAME}}" of a secret of the session's --secrets
// file (never its value), for tab.type and tab.fill, which send the value;
// it throws a bad_request Error for an unknown name, or when no secrets
// file was given. Tab methods that talk to the browser return
// promises, so `await Promise.all([tab.waitForUrl(…), tab.click(…)])` works.
//
// The tab API (T is a target: a selector, an element number, or a handle
// from tab.id(n); methods that talk to the browser return promises):
//
//	url() → string  title() → string
//	goto(url, {waitUntil: settled (default)|load|domcontentloaded|networkidle0|networkidle2}) → {url, notes, dialog}
//	back() forward() reload() → {url, status, dialog}
//	observe({includeAll, viewportOnly, query, maxTokens, scroll, since: "last", boxes})
//	  → the observation (its text() renders it as the CLI prints it)
//	evaluate(fn | source, ...args) → its JSON value (a function is called
//	  with the args; source text may be a function, an expression or
//	  statements)
//	screenshot({selector, fullPage, save, silent, marks}) → image
//	extract(format: markdown|text|html) → string
//	pdf({path, format, width, height, landscape, printBackground, margins:
//	  {top, right, bottom, left}, scale, pageRanges}) → {path, pages, bytes}
//	emulate({device, viewport: {width, height, deviceScaleFactor}, screen,
//	  userAgent, platform, touch, mobile, geolocation: {latitude, longitude,
//	  accuracy}, origin, timezone, locale, colorScheme, reducedMotion,
//	  offline, network: {latency, download, upload}, cpuThrottling})
//	  → {applied, options, note}; emulate({reset: true}) clears it
//	id(n) → a handle on element n
//	click(T, {timeout}) hover(T, {timeout}) type(T, text, {timeout})
//	fill(T, value, {timeout}) press(key, {selector, timeout})
//	scrollIntoView(T) → {target}
//	scroll(dx, dy, {selector}) → {x, y, container, position, note} (wheel over
//	  the element, or the viewport's centre; container is what moved)
//	value(T) → the whole value of a field (observe cuts it at 2000 characters)
//	drag(from, to, {steps, timeout, position: before|after|center, offset: {x, y}})
//	  (T or {x, y} points; position and offset place the end on a to element)
//	select(T, ...values) → {target, selected, values}
//	uploadFile(T, ...paths) → {target, files, via: "input"|"chooser"}
//	clickAt(x, y, {screenshot: id|true}) → {x, y, element, dialog, navigated}
//	waitFor(T, {timeout, state: visible|hidden|attached|detached})
//	waitForUrl(glob|RegExp|fn, {timeout, waitUntil: load|domcontentloaded|commit}) → url
//	waitForResponse(glob|RegExp|fn, {timeout}) → {url, method, status,
//	  statusText, headers, mimeType, body, bodyBase64, bodyError, truncated}
//	waitForPopup({timeout}) → {name, opener, url}
//	waitForDownload({timeout}) → {url, suggestedName, path, bytes, totalBytes, state, finished}
//	waitForLoadState(load|domcontentloaded|networkidle, {timeout, idleMs}) → null; on the page as it is, never reloading;
//	  networkidle: loaded and no request in flight for idleMs (default 500); timeout names the pending URLs
//	downloads() → [download]
//	dialog() → {type, message, defaultValue} | null
//	acceptDialog(promptText?) dismissDialog(); promptText only for a prompt (bad_request otherwise, the dialog left open)
//	cookies(url | [urls]?) → [{name, value, domain, path, expires, httpOnly, secure, sameSite}]
//	setCookie({name, value, url | domain, path, expires, httpOnly, secure, sameSite})
//	clearCookies() setHeaders({name: value}) (User-Agent sets the user agent)
//	storageState() → {cookies, origins: [{origin, localStorage: [{name, value}]}]}
//	setStorageState(state)
//	requests({url, type, method, status, failed, all, limit}?) → [{id, method, url, type, status, durationMs, failureText, …}]
//	request(id) → {…, requestHeaders, responseHeaders, postData, body: {text, base64, path, size}}
//	console({level, since: "navigation" | "all", limit}?) → [{level, type, text, url, line, column}]
//	errors({all}?) → [{message, rejection, url, line, column, stack: [{function, url, line, column}]}]
//	har.start({content: "omit" | "embed" | "file"}?) har.stop(path) → {path, entries, pages}
//	route(glob, {abort} | {status, headers, contentType, body, bodyBase64} | {url, method, postData, setHeaders}, with {types}?) → {pattern, action}
//	unroute(glob?) → {removed}   routes() → [{pattern, action, types, hits}]
//
// {timeout} (ms) on an element action bounds the wait for its element,
// which otherwise lasts until shortly before the run's timeout; on a wait
// it bounds the wait, which otherwise lasts the run's timeout. A handle tab.id(n) has click, hover, type, fill,
// press, select, uploadFile, scrollIntoView, waitFor, drag(to), scroll(dx,
// dy) and screenshot.
//
// A Script is a tabs.Job: Supervisor.Run gives it the run's deadline and
// calls Interrupt (goja Runtime.Interrupt) when the deadline passes.
//
// Like Node, a run fails on an exception no code catches: one thrown by a
// setTimeout, setInterval or setImmediate callback, or a promise rejected
// with no handler once the task that rejected it and its microtasks are
// done (goja Runtime.SetPromiseRejectionTracker). Once the run's result is
// decided no more JavaScript runs, and a late error is only logged.
//
// The text display adds to a run's output is bounded (Options.MaxDisplayBytes,
// DefaultMaxDisplayBytes): past the bound further text displays are left
// out, and one last text item says how many and how large.
package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/console"
	"github.com/dop251/goja_nodejs/eventloop"
	"github.com/dop251/goja_nodejs/require"
	"github.com/dop251/goja_nodejs/url"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/secrets"
	"github.com/tabpilot/tabpilot/tabs"
)

// Content is one output item: text, or an image (Data holds the bytes).
type Content struct {
	Type     string // "text" or "image"
	Text     string
	MimeType string
	Data     []byte
}

// Output is what a run produced, in order: every display call (text past
// Options.MaxDisplayBytes left out, and one item saying so), then the
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
	// PageErrors counts the uncaught exceptions and unhandled rejections
	// the page threw during the run (Runtime.exceptionThrown); tab.errors()
	// lists them.
	PageErrors int
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
	// MaxDisplayBytes bounds the text that display() adds to the run's
	// output: the bytes of UTF-8 of the text items kept, plus one per item
	// (the newline that joins them in the result text). A text display that
	// would take the total past it is left out, and so is every later one;
	// the first text display is always kept whole, since the service cuts
	// one long item itself. One text item at the end of the displays (before
	// the return value) then says how many displays and bytes were left out.
	// Images and the return value are not counted. 0 means
	// DefaultMaxDisplayBytes; a negative value means no bound.
	MaxDisplayBytes int
	// Secrets are the session's secrets, for secret(NAME); nil means none
	// were given.
	Secrets *secrets.Store
}

// DefaultMaxDisplayBytes is the default Options.MaxDisplayBytes: 100 000
// bytes of display text per run, the service's bound on one result
// (api/service.DefaultMaxResultBytes).
const DefaultMaxDisplayBytes = 100_000

// Script is one run of code against a tab. Use it once.
type Script struct {
	code string
	opts Options
	log  *slog.Logger

	// mu guards vm, interrupted, decided and the output with its display
	// budget: the loop writes them, Run and Interrupt come from elsewhere.
	mu          sync.Mutex
	vm          *goja.Runtime
	interrupted string
	decided     bool // the run's result is sent on done
	sealed      bool // Run has read the output: the loop adds nothing more
	out         Output
	disp        displayBudget

	done    chan result // the run's result, sent once (finish)
	shots   int
	tab     *tabs.Tab
	ctx     context.Context
	loop    *eventloop.EventLoop
	timers  timers // setTimeout, setInterval and wait (timers.go); the loop's
	pending sync.WaitGroup
	// inflight counts the tab calls running (pending cannot be waited on
	// while calls may still be added).
	inflight atomic.Int32
	// waitedOn is the first timeout error of a tab call that ended because
	// the run's context did, with the call's place (guarded by mu): what
	// the run was waiting for when its time ran out.
	waitedOn error

	// On the loop only: the body's settlement, which the checkpoint after
	// its task turns into the run's result, and the promises rejected with
	// no handler yet, with the order they were rejected in.
	settled   *settlement
	unhandled map[*goja.Promise]uint64
	rejected  uint64
}

// settlement is how the run's body ended: a return value or an error.
type settlement struct {
	value goja.Value
	err   error
}

// displayBudget is the state of Options.MaxDisplayBytes in one run.
type displayBudget struct {
	limit        int   // bytes; negative: no bound
	used         int   // bytes of the text items kept, plus one per item
	full         bool  // every later text display is left out
	dropped      int   // text displays left out
	droppedBytes int64 // their bytes of UTF-8
	closed       bool  // the note on what was left out is in the output
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
	s.disp.limit = s.opts.MaxDisplayBytes
	if s.disp.limit == 0 {
		s.disp.limit = DefaultMaxDisplayBytes
	}
	s.done = make(chan result, 1)
	s.unhandled = map[*goja.Promise]uint64{}
	return s
}

// Output returns what the run produced. Call it after Run returns; called
// earlier (a supervisor that gave up on a stuck run) it returns what the
// run has produced so far.
func (s *Script) Output() *Output {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.out
	return &o
}

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

// stoppedWait is how long a run whose context ended waits for its tab
// calls in flight to say what they were waiting for.
const stoppedWait = 250 * time.Millisecond

// stopped is the timeout error of a run whose context ended: the error of
// the tab call that was waiting then ("waitFor text/Done: not visible
// within the timeout (line 3:7)"), once the calls in flight have ended
// (they end with the context, at most stoppedWait), else "run stopped".
func (s *Script) stopped(ctx context.Context) error {
	var ended error
	for deadline := time.Now().Add(stoppedWait); ; {
		s.mu.Lock()
		ended = s.waitedOn
		s.mu.Unlock()
		if ended != nil || s.inflight.Load() == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var e *tabs.Error
	if errors.As(ended, &e) {
		return &tabs.Error{Code: errcode.Timeout, Msg: e.Msg, Hint: e.Hint, Err: ctx.Err()}
	}
	return &tabs.Error{Code: errcode.Timeout, Msg: "run stopped: " + context.Cause(ctx).Error(), Err: ctx.Err()}
}

// popupSettle is how long the end of a run waits for popups that are
// still being attached, so the run reports them as usable tabs.
const popupSettle = 2 * time.Second

type result struct {
	err error
}

// Run runs the script on t until its promise settles or ctx ends. Errors
// are *tabs.Error: script_error (a throw, a syntax error, an exception
// thrown by a timer callback or a promise rejection no code handled),
// assertion_failed (assert), the code of a failed tab call that the script
// did not catch (e.g. stale_element), or timeout.
func (s *Script) Run(ctx context.Context, t *tabs.Tab) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		s.pending.Wait()
	}()
	s.tab, s.ctx = t, ctx
	errs0 := t.ErrorCount()
	before := t.PopupsBefore(popupSettle)
	t.Foreground(ctx)
	reg := require.NewRegistry()
	reg.RegisterNativeModule(console.ModuleName, console.RequireWithPrinter(&printer{log: s.log, tab: t.Name()}))
	s.loop = eventloop.NewEventLoop(eventloop.WithRegistry(reg), eventloop.EnableConsole(true))
	s.timers.s = s
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in script loop", "panic", p)
				s.fail(tabs.Errorf(errcode.Internal, "internal error in the script runtime: %v", p))
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
		s.task(vm, func() { s.start(vm) })
	})
	var r result
	select {
	case r = <-s.done:
	case <-ctx.Done():
		s.Interrupt("run cancelled")
		s.finish(result{err: s.stopped(ctx)})
		r = <-s.done
	}
	s.loop.StopNoWait()
	select {
	case <-loopDone:
		s.loop.Terminate()
		s.timers.stop()
	case <-time.After(time.Second):
		// The loop is stuck in a native call; it ends when ctx is done.
	}
	if r.err == nil && ctx.Err() != nil {
		r.err = &tabs.Error{Code: errcode.Timeout, Msg: "run stopped: " + ctx.Err().Error(), Err: ctx.Err()}
	}
	s.mu.Lock()
	s.closeDisplayLocked()
	s.sealed = true
	s.mu.Unlock()
	dialogs, pending := t.HandledDialogs(), t.PendingDialog()
	popups := t.DrainPopups(popupSettle)
	downloads := t.DrainDownloads()
	if pending == nil && t.Alive() {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 300*time.Millisecond)
		t.NetSettle(sctx)
		scancel()
	}
	pageErrors := t.ErrorCount() - errs0
	s.mu.Lock()
	s.out.PageErrors = pageErrors
	defer s.mu.Unlock()
	s.out.Dialogs = append(s.out.Dialogs, dialogs...)
	s.out.PendingDialog = pending
	s.out.Popups = append(append(s.out.Popups, before...), popups...)
	s.out.Downloads = append(s.out.Downloads, downloads...)
	if len(s.out.Content) == 0 && r.err == nil {
		s.out.Content = append(s.out.Content, Content{Type: "text", Text: fmt.Sprintf("Ran code on tab %q", t.Name())})
	}
	return r.err
}

// start is the run's first task: it installs the globals, then calls the
// body and watches the promise it returns.
func (s *Script) start(vm *goja.Runtime) {
	vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	vm.SetPromiseRejectionTracker(s.track)
	if err := s.setup(vm); err != nil {
		s.fail(err)
		return
	}
	fn, err := vm.RunScript("run", codePrefix+s.code+"\n})")
	if err != nil {
		s.fail(s.jsErr(vm, err))
		return
	}
	call, _ := goja.AssertFunction(fn)
	pv, err := call(goja.Undefined())
	if err != nil {
		s.fail(s.jsErr(vm, err))
		return
	}
	p, ok := pv.Export().(*goja.Promise)
	if !ok {
		s.settled = &settlement{}
		return
	}
	then, _ := goja.AssertFunction(vm.ToValue(p).ToObject(vm).Get("then"))
	_, err = then(vm.ToValue(p),
		vm.ToValue(func(c goja.FunctionCall) goja.Value {
			s.settled = &settlement{value: c.Argument(0)}
			return goja.Undefined()
		}),
		vm.ToValue(func(c goja.FunctionCall) goja.Value {
			s.settled = &settlement{err: s.rejection(vm, c.Argument(0))}
			return goja.Undefined()
		}))
	if err != nil {
		s.fail(s.jsErr(vm, err))
	}
}

// finish decides the run's result, once: it reports whether r is it.
func (s *Script) finish(r result) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.decided {
		return false
	}
	s.decided = true
	s.done <- r
	return true
}

// fail ends the run with err, or, when its result is already decided,
// logs err.
func (s *Script) fail(err error) {
	if s.finish(result{err: err}) {
		return
	}
	if errcode.Of(err) == errcode.Timeout {
		s.log.Debug("script error after the run's result was decided", "tab", s.tab.Name(), "err", err)
		return
	}
	s.log.Warn("script error after the run's result was decided", "tab", s.tab.Name(), "err", err)
}

// ended reports whether the run's result is decided.
func (s *Script) ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.decided
}

// task runs fn, one task of the loop (the body's start, a timer callback,
// the settling of a tab call's promise), then the checkpoint, by when
// goja has run the task's microtasks. Once the run's result is decided it
// runs nothing and returns false: an interrupted goja clears its
// interrupt, and JavaScript that ran on could loop for ever.
func (s *Script) task(vm *goja.Runtime, fn func()) bool {
	if s.ended() {
		return false
	}
	fn()
	s.checkpoint(vm)
	return true
}

// checkpoint ends the run after a task, as Node does after a macrotask: an
// error of the body fails it; else the first promise rejected with no
// handler since the last checkpoint fails it (Node's unhandled
// rejection); else a body that returned ends it with its value.
func (s *Script) checkpoint(vm *goja.Runtime) {
	if st := s.settled; st != nil && st.err != nil {
		s.settled = nil
		s.fail(st.err)
	}
	if len(s.unhandled) > 0 {
		var first *goja.Promise
		var seq uint64
		for p, n := range s.unhandled {
			if first == nil || n < seq {
				first, seq = p, n
			}
		}
		n := len(s.unhandled)
		clear(s.unhandled)
		err := s.unhandledErr(vm, first.Result(), n)
		s.fail(err)
	}
	if st := s.settled; st != nil {
		s.settled = nil
		if s.ended() {
			return
		}
		s.mu.Lock()
		s.closeDisplayLocked()
		s.mu.Unlock()
		if err := s.emitValue(vm, st.value, true); err != nil {
			s.fail(err)
			return
		}
		s.finish(result{})
	}
}

// track is the run's goja PromiseRejectionTracker: a promise rejected
// with no handler is unhandled until a handler is added to it.
func (s *Script) track(p *goja.Promise, op goja.PromiseRejectionOperation) {
	switch op {
	case goja.PromiseRejectionReject:
		s.rejected++
		s.unhandled[p] = s.rejected
	case goja.PromiseRejectionHandle:
		delete(s.unhandled, p)
	}
}

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
