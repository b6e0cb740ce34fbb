package netlog

import (
	"strings"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
)

// Message is one console message: a console.* call
// (Runtime.consoleAPICalled), a browser message (Log.entryAdded, e.g. a
// failed resource load), or an uncaught error (Runtime.exceptionThrown,
// Source "exception").
type Message struct {
	Seq int `json:"seq"`
	Nav int `json:"nav"`
	// Level is debug, log, info, warning or error.
	Level string `json:"level"`
	// Type is the console method (log, table, assert, trace, …), the Log
	// entry's level, or "exception".
	Type string `json:"type"`
	// Source is console-api, exception, or the Log entry's source
	// (network, violation, intervention, javascript, …).
	Source string `json:"source"`
	// Text is the message as DevTools prints it: the arguments joined by
	// spaces, strings unquoted, objects as their preview, with the first
	// argument's %s, %d, %i, %f, %o, %O and %c substituted.
	Text string    `json:"text"`
	Time time.Time `json:"time"`
	// URL, Line and Column (1-based) locate the call: the top frame of its
	// stack, or the Log entry's source.
	URL    string `json:"url,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// PageError is an uncaught exception or an unhandled promise rejection
// (Runtime.exceptionThrown).
type PageError struct {
	Seq int `json:"seq"`
	Nav int `json:"nav"`
	// Message is the error's first line, e.g. "Error: boom", or the
	// rejected value as DevTools prints it.
	Message string `json:"message"`
	// Rejection is set for an unhandled rejection ("Uncaught (in
	// promise)"), unset for a thrown exception ("Uncaught").
	Rejection bool      `json:"rejection,omitempty"`
	Time      time.Time `json:"time"`
	URL       string    `json:"url,omitempty"`
	Line      int       `json:"line,omitempty"`
	Column    int       `json:"column,omitempty"`
	// Stack is the call stack, innermost first.
	Stack []StackFrame `json:"stack,omitempty"`
}

// StackFrame is one frame of a stack; Line and Column are 1-based, as in
// the "at f (url:line:col)" of a JavaScript stack.
type StackFrame struct {
	Function string `json:"function"`
	URL      string `json:"url"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
}

// ConsoleFilter selects console messages. The zero filter selects every
// message since the last navigation.
type ConsoleFilter struct {
	// Level is the lowest level kept: debug keeps all, log and info keep
	// all but debug, warning keeps warnings and errors, error errors only.
	// "" keeps all.
	Level string
	// All looks across navigations instead of since the last one.
	All bool
	// Limit keeps the newest Limit messages; 0 keeps all.
	Limit int
}

var levelRank = map[string]int{"debug": 0, "log": 1, "info": 1, "warning": 2, "error": 3}

// Console returns the messages that match f, oldest first. Errors:
// bad_request for an unknown level or a negative limit.
func (l *Log) Console(f ConsoleFilter) ([]Message, error) {
	floor := 0
	if f.Level != "" {
		r, ok := levelRank[strings.ToLower(f.Level)]
		if !ok {
			return nil, badRequest("unknown console level %q: use debug, log, info, warning or error", f.Level)
		}
		floor = r
	}
	if f.Limit < 0 {
		return nil, badRequest("limit %d is negative", f.Limit)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Message{}
	l.console.each(func(m *Message) bool {
		if (f.All || m.Nav == l.nav) && levelRank[m.Level] >= floor {
			out = append(out, *m)
		}
		return true
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out, nil
}

// Errors returns the uncaught exceptions and unhandled rejections, oldest
// first: since the last navigation, or across navigations when all.
func (l *Log) Errors(all bool) []PageError {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []PageError{}
	l.errs.each(func(e *PageError) bool {
		if all || e.Nav == l.nav {
			c := *e
			c.Stack = append([]StackFrame(nil), e.Stack...)
			out = append(out, c)
		}
		return true
	})
	return out
}

// ErrorCount returns how many uncaught errors the page has thrown since the
// log began, dropped ones included: it only grows, so a caller diffs it
// around an action.
func (l *Log) ErrorCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nerrs
}

func (l *Log) pushMessage(m *Message) {
	l.seq++
	m.Seq, m.Nav = l.seq, l.nav
	l.console.push(m)
}

func consoleLevel(t runtime.ConsoleAPICalledType) string {
	switch t {
	case runtime.ConsoleAPICalledTypeDebug:
		return "debug"
	case runtime.ConsoleAPICalledTypeInfo:
		return "info"
	case runtime.ConsoleAPICalledTypeWarning:
		return "warning"
	case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeAssert:
		return "error"
	}
	return "log"
}

func (l *Log) onConsole(ev *runtime.EventConsoleAPICalled) {
	m := &Message{Level: consoleLevel(ev.Type), Type: string(ev.Type), Source: "console-api",
		Text: FormatArgs(ev.Args), Time: stamp(ev.Timestamp.Float64(), l.o.Now)}
	if ev.Type == runtime.ConsoleAPICalledTypeAssert {
		m.Text = strings.TrimSpace("Assertion failed: " + m.Text)
	}
	if f := topFrame(ev.StackTrace); f != nil {
		m.URL, m.Line, m.Column = f.URL, f.Line, f.Column
	}
	l.pushMessage(m)
}

func (l *Log) onLogEntry(ev *log.EventEntryAdded) {
	e := ev.Entry
	if e == nil {
		return
	}
	lv := string(e.Level)
	if e.Level == log.EntryLevelVerbose {
		lv = "debug"
	}
	if _, ok := levelRank[lv]; !ok {
		lv = "log"
	}
	m := &Message{Level: lv, Type: string(e.Level), Source: string(e.Source), Text: e.Text,
		Time: stamp(e.Timestamp.Float64(), l.o.Now), URL: e.URL}
	if e.LineNumber > 0 {
		m.Line = int(e.LineNumber) + 1
	}
	if f := topFrame(e.StackTrace); f != nil && m.URL == "" {
		m.URL, m.Line, m.Column = f.URL, f.Line, f.Column
	}
	l.pushMessage(m)
}

func (l *Log) onException(ev *runtime.EventExceptionThrown) {
	d := ev.ExceptionDetails
	if d == nil {
		return
	}
	pe := &PageError{Rejection: strings.Contains(d.Text, "(in promise)"), Time: stamp(ev.Timestamp.Float64(), l.o.Now),
		URL: d.URL, Line: int(d.LineNumber) + 1, Column: int(d.ColumnNumber) + 1}
	pe.Message = d.Text
	if x := d.Exception; x != nil {
		if x.Type == runtime.RemoteObjectTypeObject && x.Subtype == runtime.RemoteObjectSubtypeError && x.Description != "" {
			pe.Message, _, _ = strings.Cut(x.Description, "\n")
		} else {
			pe.Message = render(x, true)
		}
	}
	if d.StackTrace != nil {
		for _, f := range d.StackTrace.CallFrames {
			if f != nil {
				pe.Stack = append(pe.Stack, StackFrame{Function: f.FunctionName, URL: f.URL,
					Line: int(f.LineNumber) + 1, Column: int(f.ColumnNumber) + 1})
			}
		}
		if pe.URL == "" && len(pe.Stack) > 0 {
			pe.URL, pe.Line, pe.Column = pe.Stack[0].URL, pe.Stack[0].Line, pe.Stack[0].Column
		}
	}
	l.nerrs++
	l.seq++
	pe.Seq, pe.Nav = l.seq, l.nav
	l.errs.push(pe)
	prefix := "Uncaught "
	if pe.Rejection {
		prefix = "Uncaught (in promise) "
	}
	l.pushMessage(&Message{Level: "error", Type: "exception", Source: "exception", Text: prefix + pe.Message,
		Time: pe.Time, URL: pe.URL, Line: pe.Line, Column: pe.Column})
}

// topFrame returns the first frame of st with a URL, or nil.
func topFrame(st *runtime.StackTrace) *StackFrame {
	for ; st != nil; st = st.Parent {
		for _, f := range st.CallFrames {
			if f != nil && f.URL != "" {
				return &StackFrame{Function: f.FunctionName, URL: f.URL, Line: int(f.LineNumber) + 1, Column: int(f.ColumnNumber) + 1}
			}
		}
	}
	return nil
}

// stamp turns a Runtime.Timestamp (milliseconds since the epoch) into a
// time, or now when it is 0.
func stamp(ms float64, now func() time.Time) time.Time {
	if ms <= 0 {
		return now()
	}
	return time.UnixMilli(0).Add(time.Duration(ms * float64(time.Millisecond)))
}
