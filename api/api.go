// Package api is the wire contract of tabpilot: the request and result types
// every door (CLI, JSON-RPC, MCP, Go) speaks. The stable error codes in
// details.error.code and their hints are errcode's. It imports the standard
// library and errcode only, so clients can use it without pulling in a CDP
// stack.
//
// A result is {"content": [...], "details": {...}, "isError": false}. Content
// items are text ({"type":"text","text":…}) or images
// ({"type":"image","mimeType":…,"data":BASE64}). On failure isError is true
// and details.error is {"code","message","hint"}.
package api

import (
	"encoding/json"
	"strings"

	"github.com/tabpilot/tabpilot/errcode"
)

// Content is one item of a result's content: text or a base64 image.
type Content struct {
	// Type is "text" or "image".
	Type string `json:"type"`
	// Text is set when Type is "text".
	Text string `json:"text,omitempty"`
	// MimeType is set when Type is "image", e.g. "image/jpeg".
	MimeType string `json:"mimeType,omitempty"`
	// Data is the base64 (standard encoding) image bytes when Type is "image".
	Data string `json:"data,omitempty"`
}

// TextContent returns a text content item.
func TextContent(s string) Content { return Content{Type: "text", Text: s} }

// Result is what every action returns on every door.
type Result struct {
	Content []Content      `json:"content"`
	Details map[string]any `json:"details"`
	IsError bool           `json:"isError"`
}

// Text returns the text items of the result joined by newlines.
func (r *Result) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// Common fields of every request.
type Common struct {
	// Name is the tab's name; empty means "main".
	Name string `json:"name,omitempty"`
	// Timeout is in seconds; 0 means the default (30), and it is clamped to
	// 1..max_timeout.
	Timeout float64 `json:"timeout,omitempty"`
}

// Viewport is the tab's layout viewport in CSS pixels, and its device scale
// factor (Emulation.setDeviceMetricsOverride).
type Viewport struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Scale  float64 `json:"scale,omitempty"`
}

// App selects a non-headless browser: a spawned executable (Path), an
// existing CDP endpoint (CDPURL), or a session on a Selenium Grid (Grid).
type App struct {
	Path string `json:"path,omitempty"`
	// CDPURL is http(s)://host:port (discovered through /json/version) or
	// ws(s)://… dialed as given, its query (a pool's ?token=) intact.
	CDPURL string `json:"cdp_url,omitempty"`
	// CDPHeaders are "Name: value" lines sent on the websocket upgrade of
	// CDPURL (e.g. "Authorization: Bearer T"). Their values are secrets:
	// no result, listing, log or error shows them.
	CDPHeaders []string `json:"cdp_headers,omitempty"`
	// ConnectTimeout, in seconds, bounds the connect to CDPURL or Grid;
	// 0 means 10 (a Grid, which may queue the session: 60).
	ConnectTimeout float64 `json:"connect_timeout,omitempty"`
	// Grid is a Selenium Grid 4, http(s)://host:4444: each browser is a
	// WebDriver session there, deleted when its last tab closes.
	Grid string `json:"grid,omitempty"`
	// GridUser and GridPassword are the Grid's basic auth (or give them
	// in the Grid URL as user:password@).
	GridUser     string   `json:"grid_user,omitempty"`
	GridPassword string   `json:"grid_password,omitempty"`
	Args         []string `json:"args,omitempty"`
	// Target picks the page to attach to: its target id (as tabs lists
	// it), else the first page whose URL or title contains it. Without
	// it, an open with a URL on a CDP endpoint opens a page of its own.
	Target  string `json:"target,omitempty"`
	Profile string `json:"profile,omitempty"`
}

// OpenRequest opens (or reuses) a named tab and optionally navigates it.
type OpenRequest struct {
	Common
	URL      string    `json:"url,omitempty"`
	Viewport *Viewport `json:"viewport,omitempty"`
	// WaitUntil is settled (default: the load event, then until no fetch,
	// XHR or frame document is in flight and the DOM has not changed for
	// 100 ms, at most 500 ms), load, domcontentloaded, networkidle0 or
	// networkidle2.
	WaitUntil string `json:"wait_until,omitempty"`
	// Dialogs is accept or dismiss: JavaScript dialogs are answered so.
	// Empty gives a new tab no automatic handling and keeps a reused
	// tab's policy; another policy recreates the tab on its page.
	Dialogs string `json:"dialogs,omitempty"`
	App     *App   `json:"app,omitempty"`
	// StorageState restores cookies and local storage (the shape that
	// tab.storageState() returns, Playwright's) before the page loads.
	StorageState json.RawMessage `json:"storage_state,omitempty"`
	// Context puts a new tab in the isolated browser context of that name
	// (own cookies, storage, cache), shared by the tabs of that name on
	// the same browser and disposed with the last of them.
	Context string `json:"context,omitempty"`
	// Proxy is the upstream proxy of a new Context, SCHEME://host:port.
	Proxy string `json:"proxy,omitempty"`
}

// CloseRequest closes one tab (Name) or every tab (All).
type CloseRequest struct {
	Common
	All  bool `json:"all,omitempty"`
	Kill bool `json:"kill,omitempty"`
}

// RunRequest runs Code, the body of an async JavaScript function, against a tab.
type RunRequest struct {
	Common
	Code string `json:"code"`
}

// ObserveRequest observes a tab (the README's "What an observation shows").
type ObserveRequest struct {
	Common
	IncludeAll   bool   `json:"include_all,omitempty"`
	ViewportOnly bool   `json:"viewport_only,omitempty"`
	MaxTokens    int    `json:"max_tokens,omitempty"`
	Query        string `json:"query,omitempty"`
	Since        string `json:"since,omitempty"`
	Scroll       bool   `json:"scroll,omitempty"`
	// Boxes gives every element its box (x, y, width, height in CSS
	// pixels of the viewport).
	Boxes bool `json:"boxes,omitempty"`
}

// ScreenshotRequest takes a screenshot of the viewport, the full page or one element.
type ScreenshotRequest struct {
	Common
	Selector string `json:"selector,omitempty"`
	FullPage bool   `json:"full_page,omitempty"`
	Save     string `json:"save,omitempty"`
	Marks    bool   `json:"marks,omitempty"`
}

// ExtractRequest extracts the readable content of a tab.
type ExtractRequest struct {
	Common
	// Format is markdown (default), text or html.
	Format string `json:"format,omitempty"`
}

// ActRequest is the shared shape of the click, type, fill, press and hover
// shortcuts.
// Target is an element number from the latest observation or a selector.
type ActRequest struct {
	Common
	Target Target `json:"target,omitempty"`
	// Text is the text to type (type), the value (fill) or the key (press).
	Text string `json:"text,omitempty"`
}

// TabsRequest lists the open tabs.
type TabsRequest struct{}

// SelectRequest picks options of a select, listbox or combobox: by their
// label or value (native selects), or by their text.
type SelectRequest struct {
	Common
	Target Target   `json:"target"`
	Values []string `json:"values"`
}

// ScrollRequest scrolls by DX, DY CSS pixels with a mouse wheel: at the
// centre of the viewport, or over the element Target when it is set.
type ScrollRequest struct {
	Common
	DX     float64 `json:"dx,omitempty"`
	DY     float64 `json:"dy,omitempty"`
	Target Target  `json:"target,omitempty"`
}

// WaitRequest waits, for at most its timeout, for one of: Text to be
// visible on the page; the element Target to reach State (visible by
// default; hidden, attached, detached); the URL to match URL (a glob, a
// path starting with /, or /REGEXP/); the document to reach LoadState (load
// or domcontentloaded).
type WaitRequest struct {
	Common
	Text      string `json:"text,omitempty"`
	Target    Target `json:"target,omitempty"`
	State     string `json:"state,omitempty"`
	URL       string `json:"url,omitempty"`
	LoadState string `json:"load_state,omitempty"`
}

// NavRequest is the shape of back, forward and reload.
type NavRequest struct {
	Common
}

// DialogRequest answers the pending JavaScript dialog: Response is accept
// or dismiss; Text, when set, is the answer to a prompt (accept only).
type DialogRequest struct {
	Common
	Response string  `json:"response"`
	Text     *string `json:"text,omitempty"`
}

// UploadRequest sets Files (absolute paths on the daemon's machine) on the
// file input Target names, or on the file chooser its click opens.
type UploadRequest struct {
	Common
	Target Target   `json:"target"`
	Files  []string `json:"files"`
}

// Methods are the JSON-RPC method names, in the order the README's
// "JSON-RPC and Go" section lists them.
var Methods = []string{"open", "close", "run", "observe", "tabs", "screenshot", "extract", "click", "type", "fill", "press",
	"hover", "select", "scroll", "wait", "back", "forward", "reload", "dialog", "upload",
	"network", "console", "har", "route", "unroute", "pdf", "emulate", "record", "replay"}

// ErrorResult builds a failed result from an error code, message and hint.
func ErrorResult(code errcode.Code, message string) *Result {
	return &Result{
		Content: []Content{TextContent(string(code) + ": " + message)},
		Details: map[string]any{"error": ErrorInfo{Code: code, Message: message, Hint: code.Hint()}},
		IsError: true,
	}
}

// ErrorInfo is details.error of a failed result.
type ErrorInfo struct {
	Code    errcode.Code `json:"code"`
	Message string       `json:"message"`
	Hint    string       `json:"hint,omitempty"`
}

// ErrorOf returns the details.error of a failed result, decoding it when the
// result came over the wire, or nil when the result did not fail.
func (r *Result) ErrorOf() *ErrorInfo {
	if r == nil || !r.IsError {
		return nil
	}
	switch v := r.Details["error"].(type) {
	case ErrorInfo:
		return &v
	case *ErrorInfo:
		return v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return &ErrorInfo{Code: errcode.Internal, Message: r.Text()}
		}
		var e ErrorInfo
		if json.Unmarshal(b, &e) != nil || e.Code == "" {
			return &ErrorInfo{Code: errcode.Internal, Message: r.Text()}
		}
		return &e
	}
}

// Target is an element number or a selector. In JSON it is a string, or a
// whole number (an element number from the latest observation).
type Target string

// UnmarshalJSON accepts a string or a JSON number.
func (t *Target) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Target(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errorString("target must be a string or an element number")
	}
	*t = Target(n.String())
	return nil
}

// NetworkRequest lists the requests of a tab's page since its last
// top-level navigation (All: across navigations), filtered, or with ID
// shows one request in full: headers, post data, and the response body
// (text up to 64 KiB inline, larger ones written to a 0600 file whose path
// is given).
type NetworkRequest struct {
	Common
	// ID is a request id from the list ("r12"): show that request.
	ID string `json:"id,omitempty"`
	// URL is a URL glob (** any characters, * any but '/').
	URL string `json:"url,omitempty"`
	// Type is a resource type (document, script, xhr, fetch, image, …);
	// several are separated by commas.
	Type string `json:"type,omitempty"`
	// Method is an HTTP method.
	Method string `json:"method,omitempty"`
	// Status is a status ("404"), a class ("4xx") or a range
	// ("400-499"); several are separated by commas.
	Status string `json:"status,omitempty"`
	// Failed keeps the requests that failed (Network.loadingFailed).
	Failed bool `json:"failed,omitempty"`
	All    bool `json:"all,omitempty"`
	// Limit keeps the newest Limit requests.
	Limit int `json:"limit,omitempty"`
}

// ConsoleRequest lists a tab's console messages (Level and up: debug,
// log, info, warning, error), or with Errors its uncaught exceptions and
// unhandled rejections with their stacks; since the last top-level
// navigation, or All.
type ConsoleRequest struct {
	Common
	Level  string `json:"level,omitempty"`
	Errors bool   `json:"errors,omitempty"`
	All    bool   `json:"all,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// HARRequest starts (Op "start") or stops (Op "stop") recording a HAR 1.2
// of a tab's traffic. Content is how start keeps response bodies: "omit"
// (default), "embed" or "file". Stop writes the HAR to Save (an absolute
// path on the daemon's machine; 0600).
type HARRequest struct {
	Common
	Op      string `json:"op"`
	Content string `json:"content,omitempty"`
	Save    string `json:"save,omitempty"`
}

// RouteRequest routes the requests of a tab's page that URL (a URL glob)
// and Types (resource types) match, until unroute: Abort fails them with
// a network error reason (failed, aborted, blockedbyclient,
// connectionrefused, …); Status, Headers, ContentType and Body (or
// BodyBase64) fulfil them; SetHeaders (an empty value removes a header),
// ContinueURL, Method and PostData change them and let them go on.
type RouteRequest struct {
	Common
	URL         string            `json:"url"`
	Abort       string            `json:"abort,omitempty"`
	Status      int               `json:"status,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Body        string            `json:"body,omitempty"`
	BodyBase64  string            `json:"body_base64,omitempty"`
	ContinueURL string            `json:"continue_url,omitempty"`
	Method      string            `json:"method,omitempty"`
	PostData    string            `json:"post_data,omitempty"`
	SetHeaders  map[string]string `json:"set_headers,omitempty"`
	Types       []string          `json:"types,omitempty"`
}

// UnrouteRequest removes the route of URL (the glob it was added with), or
// every route when it is empty.
type UnrouteRequest struct {
	Common
	URL string `json:"url,omitempty"`
}
