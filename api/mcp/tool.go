package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabpilot/tabpilot/api"
)

// ToolName is the name of the one tool the server offers.
const ToolName = "browser"

// Actions are the values of Input.Action, in the order of the issue that
// defined the tool: each is a method of api.Methods.
var Actions = []string{"open", "close", "run", "observe", "click", "type", "fill", "press", "screenshot", "extract", "tabs",
	"hover", "select", "scroll", "wait", "back", "forward", "reload", "dialog", "upload",
	"network", "console", "har", "route", "unroute", "pdf", "emulate", "record", "replay"}

// ReadOnlyActions are the actions that only read the page: they are listed
// in the tool's annotations (Tool._meta, key MetaReadOnlyActions) and its
// description.
var ReadOnlyActions = []string{"observe", "screenshot", "extract", "tabs", "wait", "network", "console"}

// MetaReadOnlyActions is the key, in the tool's _meta, of the list of the
// actions that only read (MCP's annotations are per tool, not per action).
const MetaReadOnlyActions = "io.github.tabpilot/readOnlyActions"

// Input is the arguments of the browser tool: the union of the fields of
// the actions' requests (package api), with the same JSON names. The tool's
// input schema is derived from it (github.com/google/jsonschema-go), with
// the jsonschema tags as descriptions and enums added for the string
// choices. Fields that do not apply to Action are refused when set to a
// value other than their zero value; Name and Timeout apply to every
// action (tabs ignores them).
type Input struct {
	Action  string  `json:"action" jsonschema:"what to do"`
	Name    string  `json:"name,omitempty" jsonschema:"tab name (default main)"`
	Timeout float64 `json:"timeout,omitempty" jsonschema:"seconds (default 30)"`
	// open
	URL       string        `json:"url,omitempty" jsonschema:"open: page; wait, network, route, unroute: URL glob"`
	WaitUntil string        `json:"wait_until,omitempty" jsonschema:"open: default settled"`
	Dialogs   string        `json:"dialogs,omitempty" jsonschema:"open: answer dialogs"`
	Viewport  *api.Viewport `json:"viewport,omitempty" jsonschema:"open, emulate: CSS pixels"`
	App       *api.App      `json:"app,omitempty" jsonschema:"open: cdp_url, grid or spawn path"`
	Context   string        `json:"context,omitempty" jsonschema:"open: isolated context"`
	Proxy     string        `json:"proxy,omitempty" jsonschema:"open: the context's proxy"`
	// close
	All  bool `json:"all,omitempty" jsonschema:"close: every tab; network, console: all pages"`
	Kill bool `json:"kill,omitempty" jsonschema:"close: end a spawned app"`
	// run
	Code string `json:"code,omitempty" jsonschema:"run, replay"`
	// click, type, fill, press, hover, select, upload, scroll, wait, screenshot
	Target Target `json:"target,omitempty" jsonschema:"element number, or a selector (css, text/…, aria/…)"`
	Text   string `json:"text,omitempty" jsonschema:"type, fill: text; press: key (Enter); wait: text; dialog: prompt answer"`
	// select, upload
	Values []string `json:"values,omitempty" jsonschema:"select: options"`
	Files  []string `json:"files,omitempty" jsonschema:"upload: absolute paths"`
	// scroll
	DX float64 `json:"dx,omitempty" jsonschema:"scroll: CSS px right"`
	DY float64 `json:"dy,omitempty" jsonschema:"scroll: CSS px down"`
	// wait
	State     string `json:"state,omitempty" jsonschema:"wait: default visible"`
	LoadState string `json:"load_state,omitempty" jsonschema:"wait: for the document"`
	// dialog
	Response string `json:"response,omitempty" jsonschema:"dialog"`
	// observe
	IncludeAll   bool   `json:"include_all,omitempty" jsonschema:"observe: headings, landmarks, text"`
	ViewportOnly bool   `json:"viewport_only,omitempty" jsonschema:"observe: on screen only"`
	Query        string `json:"query,omitempty" jsonschema:"observe: matching elements only"`
	MaxTokens    int    `json:"max_tokens,omitempty" jsonschema:"observe: default 6000"`
	Scroll       bool   `json:"scroll,omitempty" jsonschema:"observe: scroll lists first"`
	Boxes        bool   `json:"boxes,omitempty" jsonschema:"observe: element boxes"`
	// screenshot
	FullPage bool   `json:"full_page,omitempty" jsonschema:"screenshot"`
	Save     string `json:"save,omitempty" jsonschema:"file to write"`
	Marks    bool   `json:"marks,omitempty" jsonschema:"screenshot: draw numbers"`
	// extract, pdf
	Format string `json:"format,omitempty" jsonschema:"extract: default markdown; pdf: paper"`
	// pdf (the other print options are run's tab.pdf)
	Landscape bool `json:"landscape,omitempty"`
	// emulate (the other fields are run's tab.emulate)
	Device   string `json:"device,omitempty" jsonschema:"emulate"`
	Timezone string `json:"timezone,omitempty" jsonschema:"emulate"`
	Locale   string `json:"locale,omitempty" jsonschema:"emulate"`
	Reset    bool   `json:"reset,omitempty"`
	List     bool   `json:"list,omitempty" jsonschema:"emulate: devices"`
	// network, console, har, route
	ID          string `json:"id,omitempty" jsonschema:"network"`
	Failed      bool   `json:"failed,omitempty" jsonschema:"network"`
	Level       string `json:"level,omitempty" jsonschema:"console"`
	Errors      bool   `json:"errors,omitempty" jsonschema:"console"`
	Op          string `json:"op,omitempty" jsonschema:"har, record"`
	File        string `json:"file,omitempty"`
	Content     string `json:"content,omitempty" jsonschema:"har start: bodies"`
	Abort       string `json:"abort,omitempty" jsonschema:"route: error reason"`
	Status      int    `json:"status,omitempty" jsonschema:"route: fulfil status"`
	Body        string `json:"body,omitempty" jsonschema:"route: fulfil body"`
	ContentType string `json:"content_type,omitempty"`
}

// Target is an element number from the latest observation or a selector.
// In JSON it is an integer or a string.
type Target string

// UnmarshalJSON accepts a JSON string or an integer.
func (t *Target) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Target(s)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("target %s is neither an element number nor a selector string", b)
	}
	*t = Target(strconv.FormatInt(n, 10))
	return nil
}

// actionFields are the fields each action takes beyond name and timeout.
var actionFields = map[string][]string{
	"open":       {"url", "wait_until", "dialogs", "viewport", "app", "context", "proxy"},
	"close":      {"all", "kill"},
	"run":        {"code"},
	"observe":    {"include_all", "viewport_only", "query", "max_tokens", "scroll", "boxes"},
	"click":      {"target"},
	"type":       {"target", "text"},
	"fill":       {"target", "text"},
	"press":      {"target", "text"},
	"screenshot": {"target", "full_page", "save", "marks"},
	"extract":    {"format"},
	"tabs":       {},
	"hover":      {"target"},
	"select":     {"target", "values"},
	"scroll":     {"dx", "dy", "target"},
	"wait":       {"text", "target", "state", "url", "load_state"},
	"back":       {},
	"forward":    {},
	"reload":     {},
	"dialog":     {"response", "text"},
	"upload":     {"target", "files"},
	"network":    {"id", "url", "failed", "all"},
	"console":    {"level", "errors", "all"},
	"har":        {"op", "content", "save"},
	"route":      {"url", "abort", "status", "body", "content_type"},
	"unroute":    {"url"},
	"pdf":        {"save", "format", "landscape"},
	"emulate":    {"device", "viewport", "timezone", "locale", "reset", "list"},
	"record":     {"op", "save"},
	"replay":     {"code", "file"},
}

// description is the tool's description: an operating playbook.
const description = `Drive a real Chromium browser. Each call does one action on a named tab (default "main").
1. open {url} loads a page.
2. observe lists what a person can act on: number, role, "name", value, states.
3. Act by number: click {target: 4}; fill {target: 2, text} replaces a value; type appends; press {text: "Enter"}; hover; select {target, values}; upload {target, files}; scroll {dy: 600}.
   wait {text} (or {target}, {url}, {load_state}); back, forward, reload; dialog {response} answers an alert/confirm/prompt.
4. After a navigation or a big change, observe again: older numbers fail with stale_element.
Multi-step work goes in one run: code is an async function body with tab (goto, observe, click, fill, press, waitFor, evaluate, screenshot, extract, requests, route, pdf, emulate), assert, display; it returns the result.
network {url} lists requests (id: one in full); console {level} (errors: uncaught); har {op, save}; route {url, abort | status, body}; emulate {device} then reload; pdf {save}.
record {op: start|stop, save} turns actions into a script; replay {file} reruns it.
observe, screenshot, extract, tabs, wait, network, console only read. A failure has isError, a code and a hint: follow it.`

// Tool returns the definition of the browser tool: its description, its
// input schema (derived from Input) and its annotations. Each call returns
// a new value.
func Tool() *sdk.Tool {
	schema, err := jsonschema.For[Input](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Target](): {Types: []string{"integer", "string"}},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcp: input schema: %v", err)) // a programming error, caught by every test
	}
	enum := func(field string, values ...string) {
		p := schema.Properties[field]
		for _, v := range values {
			p.Enum = append(p.Enum, v)
		}
	}
	enum("action", Actions...)
	enum("wait_until", "settled", "load", "domcontentloaded", "networkidle0", "networkidle2")
	enum("dialogs", "accept", "dismiss")
	enum("format", "markdown", "text", "html", "Letter", "Legal", "Tabloid", "A3", "A4", "A5")
	enum("state", "visible", "hidden", "attached", "detached")
	enum("load_state", "load", "domcontentloaded", "networkidle")
	enum("response", "accept", "dismiss")
	enum("level", "debug", "log", "info", "warning", "error")
	enum("op", "start", "stop")
	enum("content", "omit", "embed", "file")
	t := true
	return &sdk.Tool{
		Name:        ToolName,
		Title:       "Browser",
		Description: description,
		InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{
			ReadOnlyHint:    false, // observe, screenshot, extract and tabs only read: see _meta
			DestructiveHint: &t,    // a click may submit or delete
			IdempotentHint:  false,
			OpenWorldHint:   &t,
		},
		Meta: sdk.Meta{MetaReadOnlyActions: append([]string(nil), ReadOnlyActions...)},
	}
}

// request turns validated arguments into the action's api request. set is
// the arguments object as decoded JSON, to tell which fields were given.
func request(in *Input, set map[string]any) (any, error) {
	allowed, ok := actionFields[in.Action]
	if !ok {
		return nil, fmt.Errorf("unknown action %q; actions: %s", in.Action, strings.Join(Actions, ", "))
	}
	for k, v := range set {
		if k == "action" || k == "name" || k == "timeout" || isZero(v) || slices.Contains(allowed, k) {
			continue
		}
		takes := "name, timeout"
		if len(allowed) > 0 {
			takes += ", " + strings.Join(allowed, ", ")
		}
		return nil, fmt.Errorf("%s does not apply to action %s (it takes %s)", k, in.Action, takes)
	}
	common := api.Common{Name: in.Name, Timeout: in.Timeout}
	switch in.Action {
	case "open":
		return &api.OpenRequest{Common: common, URL: in.URL, Viewport: in.Viewport, WaitUntil: in.WaitUntil, Dialogs: in.Dialogs, App: in.App,
			Context: in.Context, Proxy: in.Proxy}, nil
	case "close":
		return &api.CloseRequest{Common: common, All: in.All, Kill: in.Kill}, nil
	case "run":
		return &api.RunRequest{Common: common, Code: in.Code}, nil
	case "observe":
		return &api.ObserveRequest{Common: common, IncludeAll: in.IncludeAll, ViewportOnly: in.ViewportOnly, Query: in.Query, MaxTokens: in.MaxTokens, Scroll: in.Scroll, Boxes: in.Boxes}, nil
	case "click", "type", "fill", "press":
		return &api.ActRequest{Common: common, Target: api.Target(in.Target), Text: in.Text}, nil
	case "screenshot":
		return &api.ScreenshotRequest{Common: common, Selector: string(in.Target), FullPage: in.FullPage, Save: in.Save, Marks: in.Marks}, nil
	case "extract":
		return &api.ExtractRequest{Common: common, Format: in.Format}, nil
	case "hover":
		return &api.ActRequest{Common: common, Target: api.Target(in.Target)}, nil
	case "select":
		return &api.SelectRequest{Common: common, Target: api.Target(in.Target), Values: in.Values}, nil
	case "scroll":
		return &api.ScrollRequest{Common: common, DX: in.DX, DY: in.DY, Target: api.Target(in.Target)}, nil
	case "wait":
		return &api.WaitRequest{Common: common, Text: in.Text, Target: api.Target(in.Target), State: in.State, URL: in.URL, LoadState: in.LoadState}, nil
	case "back", "forward", "reload":
		return &api.NavRequest{Common: common}, nil
	case "dialog":
		r := &api.DialogRequest{Common: common, Response: in.Response}
		if _, ok := set["text"]; ok && in.Text != "" {
			r.Text = &in.Text
		}
		return r, nil
	case "upload":
		return &api.UploadRequest{Common: common, Target: api.Target(in.Target), Files: in.Files}, nil
	case "network":
		return &api.NetworkRequest{Common: common, ID: in.ID, URL: in.URL, Failed: in.Failed, All: in.All}, nil
	case "console":
		return &api.ConsoleRequest{Common: common, Level: in.Level, Errors: in.Errors, All: in.All}, nil
	case "har":
		return &api.HARRequest{Common: common, Op: in.Op, Content: in.Content, Save: in.Save}, nil
	case "route":
		return &api.RouteRequest{Common: common, URL: in.URL, Abort: in.Abort, Status: in.Status, Body: in.Body, ContentType: in.ContentType}, nil
	case "unroute":
		return &api.UnrouteRequest{Common: common, URL: in.URL}, nil
	case "pdf", "emulate":
		return printEmulateRequest(in, common), nil
	case "record":
		return &api.RecordRequest{Common: common, Op: in.Op, Save: in.Save}, nil
	case "replay":
		return &api.ReplayRequest{Common: common, Code: in.Code, File: in.File}, nil
	default: // tabs
		return &api.TabsRequest{}, nil
	}
}

// printEmulateRequest builds the request of pdf or emulate (issue 21).
func printEmulateRequest(in *Input, common api.Common) any {
	if in.Action == "pdf" {
		return &api.PDFRequest{Common: common, Path: in.Save, Format: in.Format, Landscape: in.Landscape}
	}
	return &api.EmulateRequest{Common: common, Device: in.Device, Viewport: in.Viewport, Timezone: in.Timezone, Locale: in.Locale, Reset: in.Reset, List: in.List}
}

// isZero reports whether a decoded JSON value is null, false, 0 or "".
func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case float64:
		return v == 0
	case string:
		return v == ""
	}
	return false
}
