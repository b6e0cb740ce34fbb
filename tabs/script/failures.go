package script

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// unhandledErr is the run's error for a promise rejected with v that no
// code handled; n counts the unhandled rejections of the task.
func (s *Script) unhandledErr(vm *goja.Runtime, v goja.Value, n int) error {
	var e *tabs.Error
	if err := s.rejection(vm, v); !errors.As(err, &e) {
		return err
	}
	msg := "unhandled promise rejection: " + e.Msg
	if n > 1 {
		msg += fmt.Sprintf(" (and %d more)", n-1)
	}
	return &tabs.Error{Code: e.Code, Msg: msg, Hint: e.Hint}
}

// uncaught is the run's error for err, thrown by a callback of kind
// ("setTimeout", "setInterval", "setImmediate") that no code caught. It
// names where the exception was thrown: the Error's stack, else goja's.
func (s *Script) uncaught(vm *goja.Runtime, kind string, err error) error {
	var e *tabs.Error
	if jerr := s.jsErr(vm, err); !errors.As(jerr, &e) || e.Code == errcode.Timeout {
		return jerr
	}
	msg := e.Msg
	var ex *goja.Exception
	if !strings.Contains(msg, "(line ") && errors.As(err, &ex) {
		for _, f := range ex.Stack() {
			if f.SrcName() == "run" {
				p := f.Position()
				msg += " (" + positionText(fmt.Sprintf("run:%d:%d", p.Line, p.Column)) + ")"
				break
			}
		}
	}
	return &tabs.Error{Code: e.Code, Msg: "uncaught exception in a " + kind + " callback: " + msg, Hint: e.Hint}
}

// stackPos is " (line L:C)" for the first frame in the caller's code of an
// error's stack, or "": an error a native function (setTimeout, tab.id)
// throws has native frames first, and a failed tab call's error carries
// the frame of the call (Script.callSite).
func stackPos(o *goja.Object) string {
	st := o.Get("stack")
	if st == nil || goja.IsUndefined(st) {
		return ""
	}
	for _, line := range strings.Split(st.String(), "\n")[1:] {
		if at := strings.TrimSpace(line); goPos.MatchString(at) {
			return " (" + positionText(strings.TrimPrefix(at, "at ")) + ")"
		}
	}
	return ""
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
		return &tabs.Error{Code: errcode.Timeout, Msg: fmt.Sprintf("script interrupted: %v", ie.Value())}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return s.rejection(vm, ex.Value())
	}
	return &tabs.Error{Code: errcode.ScriptError, Msg: s.syntaxText(err.Error())}
}

// syntaxText is positionText for a syntax error. The parser finds a
// bracket, string or expression the code leaves open only in the
// wrapper's "})" after it, past the code's last line ("line 2:1
// Unexpected token }" of a one-line code): that is said as the end of
// the code.
func (s *Script) syntaxText(msg string) string {
	lines := strings.Count(strings.TrimRight(s.code, "\n"), "\n") + 1
	for _, g := range goPos.FindAllStringSubmatch(msg, -1) {
		if line, _ := strconv.Atoi(g[1]); line > lines {
			return fmt.Sprintf("the code ends too early, after line %d: a bracket, a string or an expression is left open", lines)
		}
	}
	return positionText(msg)
}

// rejection maps a thrown value to a coded error: a tab error keeps its
// code, an assert is assertion_failed, anything else script_error.
func (s *Script) rejection(vm *goja.Runtime, v goja.Value) error {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return &tabs.Error{Code: errcode.ScriptError, Msg: "the script threw " + fmt.Sprint(v)}
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
		if c := errcode.Code(code); c != errcode.ScriptError && c.Valid() {
			e := &tabs.Error{Code: c, Msg: msg + stackPos(o)}
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
			msg = s.syntaxText(msg)
		}
		if name != "" && name != "Error" && !strings.HasPrefix(msg, name) {
			msg = name + ": " + msg
		}
		e := &tabs.Error{Code: errcode.ScriptError, Msg: msg + stackPos(o)}
		if name == "ReferenceError" && pageGlobal(msg) {
			e.Hint = "A run's code runs in tabpilot, not in the page: read the page in tab.evaluate(() => …), e.g. tab.evaluate(() => navigator.userAgent)."
		}
		return e
	}
	return &tabs.Error{Code: errcode.ScriptError, Msg: "the script threw " + v.String()}
}

// pageGlobal reports whether a ReferenceError's message names a global of
// the page (document, window, navigator, location, localStorage, …), which
// a run's code cannot reach but through tab.evaluate.
func pageGlobal(msg string) bool {
	for _, g := range []string{"document", "window", "navigator", "location", "localStorage", "sessionStorage", "innerWidth", "innerHeight", "screen", "history", "fetch"} {
		if strings.Contains(msg, g+" is not defined") {
			return true
		}
	}
	return false
}
