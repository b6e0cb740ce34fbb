package tabs

import (
	"context"
	"time"

	"github.com/chromedp/chromedp/kb"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/act"
	"github.com/tabpilot/tabpilot/tabs/capture"
	"github.com/tabpilot/tabpilot/tabs/observe"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// The page core's types and errors, under the names callers of tabs use.
type (
	// Error is a tab failure with a stable code and an optional hint.
	Error = pagecore.Error
	// Dialog is a JavaScript dialog (Page.javascriptDialogOpening).
	Dialog = pagecore.Dialog
	// Popup is a page that a tab's page opened, registered as a tab.
	Popup = pagecore.Popup
	// Guard checks the destinations of navigations (the egress guard).
	Guard = pagecore.Guard
	// NavResult is the outcome of a navigation.
	NavResult = pagecore.NavResult
	// Download is a file the page downloaded.
	Download = pagecore.Download
	// Cookie is a browser cookie.
	Cookie = pagecore.Cookie
	// StorageState is a context's cookies and local storage.
	StorageState = pagecore.StorageState
	// StorageItem is one local storage entry.
	StorageItem = pagecore.StorageItem
	// Response is a network response a script waited for.
	Response = pagecore.Response
	// ObserveOptions are the options of tab.observe.
	ObserveOptions = observe.PageOptions
	// Target names an element: a number or a selector.
	Target = act.Target
	// ActionResult is the outcome of an action on an element.
	ActionResult = act.ActionResult
	// Point is a point in viewport CSS pixels.
	Point = act.Point
	// DragEnd is where a drag starts or ends: an element or a point.
	DragEnd = act.DragEnd
	// DragOptions tune a drag.
	DragOptions = act.DragOptions
	// ScrollResult is the outcome of a scroll.
	ScrollResult = act.ScrollResult
	// ClickAtResult is the outcome of a click at a point.
	ClickAtResult = act.ClickAtResult
	// SelectResult is the outcome of a select.
	SelectResult = act.SelectResult
	// UploadResult is the outcome of an upload.
	UploadResult = act.UploadResult
	// ScreenshotOptions are the options of tab.screenshot.
	ScreenshotOptions = capture.ScreenshotOptions
	// Screenshot is a captured image sized for a model.
	Screenshot = capture.Screenshot
)

// Sentinels callers branch on with errors.Is.
var (
	ErrBusy      = pagecore.ErrBusy
	ErrNoSuchTab = pagecore.ErrNoSuchTab
	ErrNotAlive  = pagecore.ErrNotAlive
	ErrStale     = pagecore.ErrStale
	ErrClosed    = pagecore.ErrClosed
)

// Errorf returns an *Error with code and a formatted message. A %w verb in
// format sets the cause.
func Errorf(code errcode.Code, format string, args ...any) *Error {
	return pagecore.Errorf(code, format, args...)
}

// DefaultIdle is how long the network must stay quiet for
// WaitForLoadState("networkidle") when no idle time is given.
const DefaultIdle = pagecore.DefaultIdle

// ParseTarget parses a target: an element number ("12") or a selector
// (act.ParseTarget).
func ParseTarget(s string) (Target, error) { return act.ParseTarget(s) }

// ParseKey parses a key or chord such as "Enter" or "Control+A"
// (act.ParseKey).
func ParseKey(s string) (*kb.Key, int64, error) { return act.ParseKey(s) }

// WithActionTimeout bounds the auto-wait of the actions run with ctx
// (act.WithActionTimeout).
func WithActionTimeout(ctx context.Context, d time.Duration) context.Context {
	return act.WithActionTimeout(ctx, d)
}
