package api

// Code is a stable error code (DESIGN.md section 8). Callers branch on it.
type Code string

// The error codes. Each has a one-line hint (Code.Hint).
const (
	BadRequest         Code = "bad_request"
	Timeout            Code = "timeout"
	Busy               Code = "busy"
	NotAlive           Code = "not_alive"
	NoSuchTab          Code = "no_such_tab"
	BrowserMismatch    Code = "browser_mismatch"
	BrowserUnavailable Code = "browser_unavailable"
	AttachFailed       Code = "attach_failed"
	TargetNotFound     Code = "target_not_found"
	NavigationFailed   Code = "navigation_failed"
	BlockedDestination Code = "blocked_destination"
	ElementNotFound    Code = "element_not_found"
	NotActionable      Code = "not_actionable"
	StaleElement       Code = "stale_element"
	ScriptError        Code = "script_error"
	AssertionFailed    Code = "assertion_failed"
	Internal           Code = "internal"
)

// Codes lists every code, in the order of DESIGN.md section 8.
var Codes = []Code{BadRequest, Timeout, Busy, NotAlive, NoSuchTab, BrowserMismatch,
	BrowserUnavailable, AttachFailed, TargetNotFound, NavigationFailed, BlockedDestination,
	ElementNotFound, NotActionable, StaleElement, ScriptError, AssertionFailed, Internal}

var hints = map[Code]string{
	BadRequest:         "Fix the request: check the field names, types and values against the documentation.",
	Timeout:            "The action ran past its timeout; raise \"timeout\" or wait for something more specific.",
	Busy:               "The tab is running another action; wait for it to finish or use another tab name.",
	NotAlive:           "The tab or its browser is gone; call open again to recreate it.",
	NoSuchTab:          "No tab has that name; call open first, or list tabs with the tabs action.",
	BrowserMismatch:    "A tab of that name lives on another browser; close it first or pick another name.",
	BrowserUnavailable: "Install Chromium (apt-get install -y chromium) or set TABPILOT_CHROME to its path.",
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

// Hint returns the one-line hint an agent can act on.
func (c Code) Hint() string { return hints[c] }

// Valid reports whether c is one of the documented codes.
func (c Code) Valid() bool { _, ok := hints[c]; return ok }

// Protocol-level errors returned by a Handler's Call (see api/rpc): the
// method does not exist, or its params do not decode. A failed action is not
// one of these; it is a Result with IsError.
var (
	ErrMethodNotFound = errorString("method not found")
	ErrInvalidParams  = errorString("invalid params")
)

type errorString string

func (e errorString) Error() string { return string(e) }
