// Package errcode owns the stable error codes of tabpilot's public contract
// (the README's "Errors" section): the Code type and its values, the
// one-line hint an agent can act on for each, and Of, which finds the code
// of an error in its chain. The strings are wire values: they appear in
// details.error.code of every failed result, in the audit log and in
// scripts' errors, so a value never changes once published.
//
// Every layer returns or reads these codes, from browser up to the CLI, so
// this package sits at the bottom of the import graph: it imports the
// standard library only, never a package of this module nor chromedp. It
// holds no layer's behaviour: which failure gets which code (a CDP error, a
// refused destination, a bad flag) is decided where the failure happens,
// by an error type of that package that implements Coder.
package errcode

// Code is a stable error code. Callers branch on it; the zero Code means
// no error.
type Code string

// The codes, in the order of the README's "Errors" section. Each says when
// it is returned.
const (
	// BadRequest: the request, or a call of a script, is malformed: a
	// missing, unknown or mistyped field, a value out of range, or a
	// per-run or per-session limit reached.
	BadRequest Code = "bad_request"
	// Timeout: the action, a wait or a CDP call ran past its deadline or
	// was cancelled; the tab is still usable unless it had to be killed.
	Timeout Code = "timeout"
	// Busy: the tab is running another action; a second action fails at
	// once, it does not queue.
	Busy Code = "busy"
	// NotAlive: the tab or its browser is gone (crashed, closed, detached,
	// or the connection was lost); open recreates it.
	NotAlive Code = "not_alive"
	// NoSuchTab: no tab has the given name.
	NoSuchTab Code = "no_such_tab"
	// BrowserMismatch: a tab of that name exists on another browser than
	// the one the request asks for.
	BrowserMismatch Code = "browser_mismatch"
	// BrowserUnavailable: no Chromium executable was found, or it failed
	// to start; the message says how to install it.
	BrowserUnavailable Code = "browser_unavailable"
	// AttachFailed: connecting to a running browser (app.cdp_url, or the
	// debugging port of a started app.path) failed.
	AttachFailed Code = "attach_failed"
	// TargetNotFound: no page of an attached browser matched app.target,
	// or the page is held by another tab.
	TargetNotFound Code = "target_not_found"
	// NavigationFailed: a navigation did not load (a network error, or the
	// browser reported an error page).
	NavigationFailed Code = "navigation_failed"
	// BlockedDestination: the egress policy refused the destination (a
	// private, loopback or link-local address, a port or a scheme).
	BlockedDestination Code = "blocked_destination"
	// ElementNotFound: the target (an element number, a selector, an
	// option's label) matched nothing.
	ElementNotFound Code = "element_not_found"
	// NotActionable: the element is hidden, disabled, moving, covered by
	// another one, of the wrong kind for the action, or the action had no
	// effect.
	NotActionable Code = "not_actionable"
	// StaleElement: the element number is from an older observation, or
	// the element left the page.
	StaleElement Code = "stale_element"
	// ScriptError: the script of a run threw, did not parse, or lost its
	// result because the page navigated while it ran.
	ScriptError Code = "script_error"
	// AssertionFailed: an assert in the script of a run failed.
	AssertionFailed Code = "assertion_failed"
	// Internal: anything else, including an error that carries no code; a
	// bug to report when it persists.
	Internal Code = "internal"
)

// all lists every code, in the order of the README's "Errors" section.
var all = []Code{BadRequest, Timeout, Busy, NotAlive, NoSuchTab, BrowserMismatch,
	BrowserUnavailable, AttachFailed, TargetNotFound, NavigationFailed, BlockedDestination,
	ElementNotFound, NotActionable, StaleElement, ScriptError, AssertionFailed, Internal}

// hints holds the default hint of each code. An error may carry a more
// specific one (Hinter).
var hints = map[Code]string{
	BadRequest:         "Fix the request: check the field names, types and values against the documentation.",
	Timeout:            "The action ran past its timeout; raise \"timeout\" or wait for something more specific.",
	Busy:               "The tab is running another action; wait for it to finish or use another tab name.",
	NotAlive:           "The tab or its browser is gone; call open again to recreate it.",
	NoSuchTab:          "No tab has that name; call open first, or list tabs with the tabs action.",
	BrowserMismatch:    "A tab of that name lives on another browser; close it first or pick another name.",
	BrowserUnavailable: "Install Chromium: sudo apt-get install -y chromium (Debian/Ubuntu), or set TABPILOT_CHROME / --chrome to its path.",
	AttachFailed:       "Check that the browser runs with --remote-debugging-port and that the CDP URL is right.",
	TargetNotFound:     "No page matched; pick one of the listed pages with app.target (CLI: open --target TEXT).",
	NavigationFailed:   "The URL did not load; check it, and that the server is reachable from the browser.",
	BlockedDestination: "The egress policy refuses that destination; use a public address.",
	ElementNotFound:    "Nothing matched the target; observe the page again and use a current number or selector.",
	NotActionable:      "The element is hidden, disabled, moving or covered; close the overlay or scroll, then retry.",
	StaleElement:       "That element number is from an older observation; observe again and use a new number.",
	ScriptError:        "The script threw; fix the code. The tab is still usable.",
	AssertionFailed:    "An assert in the script failed; the tab is still usable.",
	Internal:           "An internal error; retry, and report it if it persists.",
}

// All returns every code, in the order of the README's "Errors" section.
// The slice is the caller's.
func All() []Code { return append([]Code(nil), all...) }

// Hint returns the one-line hint an agent can act on, or "" for a code
// that is not one of All.
func (c Code) Hint() string { return hints[c] }

// Valid reports whether c is one of All.
func (c Code) Valid() bool { _, ok := hints[c]; return ok }
