// Package service is the one dispatcher behind every door of tabpilot: it
// turns api requests into tabs.Supervisor calls, and errors into stable codes
// with hints (errcode.Code). The CLI daemon, the JSON-RPC and MCP servers and Go
// programs all call it.
package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/browser"
	"github.com/tabpilot/tabpilot/browser/egress"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/secrets"
	"github.com/tabpilot/tabpilot/tabs"
)

// Options configure a Service. A nil *Options means the defaults. Options are
// copied by New.
type Options struct {
	// ChromePath is the Chromium executable; empty means discovery (PATH
	// names chromium, chromium-browser, google-chrome, google-chrome-stable
	// and their usual paths).
	ChromePath string
	// Headed launches a visible browser instead of a headless one.
	Headed bool
	// BrowserArgs are extra Chromium command-line flags for launched browsers.
	BrowserArgs []string
	// NoStealth turns the stealth patches off for headless browsers.
	NoStealth bool
	// MaxTimeout caps every request's timeout; 0 means 30s.
	MaxTimeout time.Duration
	// ScreenshotDir, when set, receives a timestamped full-resolution PNG of
	// every screenshot not saved elsewhere.
	ScreenshotDir string
	// Egress, when set, is the running egress proxy of the public-only
	// policy: launched browsers send all their traffic through it, every
	// top-level navigation is vetted, and spawned or connected browsers
	// (which it cannot guard) are refused. The caller starts and closes it.
	Egress *egress.Proxy
	// Audit, when set, receives an intent before and an outcome after every
	// action that can change a page. The caller opens and closes it.
	Audit *Audit
	// Limits bound results, screenshots, tabs and run time; zero fields
	// mean the defaults (DefaultLimits).
	Limits Limits
	// DownloadDir receives downloads (absolute); empty means a private
	// temporary directory.
	DownloadDir string
	// StateDir, when set, records each launched browser so a later daemon
	// can sweep what this one leaves if it is killed (browser.Sweep).
	StateDir string
	// Secrets, when set, are the session's named secrets (--secrets FILE,
	// package secrets): type and fill send the value of each
	// {{secret:NAME}} in their text, a run's secret("NAME") names one, and
	// no value appears in a result, an error, the audit log, a log line
	// or a file tabpilot writes (HARs, spilled bodies and results, full
	// observations): each is shown as "••••".
	Secrets *secrets.Store
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

// Service dispatches requests. It is safe for concurrent use.
type Service struct {
	opts   Options
	log    *slog.Logger
	sup    *tabs.Supervisor
	limits Limits
	budget *RunBudget
	chains chains
}

// New returns a Service. It starts no browser until the first open.
func New(opts *Options) *Service {
	s := &Service{}
	if opts != nil {
		s.opts = *opts
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.opts.Secrets.Logger(s.log)
	s.opts.Audit.setRedact(s.opts.Secrets.Redact)
	s.limits = s.opts.Limits.WithDefaults()
	s.budget = NewRunBudget(s.limits.MaxRunTime)
	args := append([]string(nil), s.opts.BrowserArgs...)
	var g tabs.Guard
	var chain func(context.Context, string) (string, error)
	if s.opts.Egress != nil {
		chain = s.chains.proxyFor
		// Last, so that the proxy's flags win over any earlier ones.
		args = append(args, egress.LaunchFlags(s.opts.Egress.Addr())...)
		g = guard{s.opts.Egress}
		s.chains.main = s.opts.Egress
	}
	s.sup = tabs.NewSupervisor(&tabs.Options{
		Browser: browser.Options{ExecPath: s.opts.ChromePath, Headed: s.opts.Headed,
			Args: args, StateDir: s.opts.StateDir},
		MaxTimeout:    s.opts.MaxTimeout,
		NoStealth:     s.opts.NoStealth,
		ScreenshotDir: s.opts.ScreenshotDir,
		Guard:         g,
		ContextProxy:  chain,
		Secrets:       s.opts.Secrets,
		Logger:        s.log,
	})
	if s.opts.DownloadDir != "" {
		if err := s.sup.SetDownloadDir(s.opts.DownloadDir); err != nil {
			s.log.Warn("download dir", "err", err)
		}
	}
	return s
}

// Supervisor returns the service's supervisor, for Go programs that want
// the lower-level API.
func (s *Service) Supervisor() *tabs.Supervisor { return s.sup }

// Shutdown closes every tab and browser, waiting at most until ctx is done.
func (s *Service) Shutdown(ctx context.Context) error {
	err := s.sup.Shutdown(ctx)
	s.chains.close()
	return err
}

// Call dispatches one JSON-RPC method (api.Methods) with its params. A failed
// action is a Result with IsError set and a nil error; the error is non-nil
// only for protocol faults: api.ErrMethodNotFound or api.ErrInvalidParams
// (wrapped with the reason).
func (s *Service) Call(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
	switch method {
	case "open":
		var r api.OpenRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Open(ctx, &r), nil
	case "close":
		var r api.CloseRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Close(ctx, &r), nil
	case "run":
		var r api.RunRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Run(ctx, &r), nil
	case "observe":
		var r api.ObserveRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Observe(ctx, &r), nil
	case "screenshot":
		var r api.ScreenshotRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Screenshot(ctx, &r), nil
	case "extract":
		var r api.ExtractRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Extract(ctx, &r), nil
	case "tabs":
		var r api.TabsRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Tabs(ctx), nil
	case "click", "type", "fill", "press", "hover":
		var r api.ActRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Act(ctx, method, &r), nil
	case "select":
		var r api.SelectRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Select(ctx, &r), nil
	case "scroll":
		var r api.ScrollRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Scroll(ctx, &r), nil
	case "wait":
		var r api.WaitRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Wait(ctx, &r), nil
	case "back", "forward", "reload":
		var r api.NavRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Nav(ctx, method, &r), nil
	case "dialog":
		var r api.DialogRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Dialog(ctx, &r), nil
	case "upload":
		var r api.UploadRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Upload(ctx, &r), nil
	case "network", "console", "har", "route", "unroute":
		return s.callNetwork(ctx, method, params)
	case "pdf", "emulate":
		return s.callPrintEmulate(ctx, method, params)
	case "record", "replay":
		return s.callRecord(ctx, method, params) // record.go
	}
	return nil, fmt.Errorf("%w: %q (methods: %s)", api.ErrMethodNotFound, method, strings.Join(api.Methods, ", "))
}

// decode reads params strictly: unknown fields and wrong types are
// api.ErrInvalidParams naming the problem. Empty params mean {}.
func decode(params json.RawMessage, v any) error {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// Not "Go struct field OpenRequest.timeout of type float64".
			// An embedded struct's Go name ("Common.timeout") is not on
			// the wire.
			field := te.Field
			for i := strings.IndexByte(field, '.'); i > 0 && field[0] >= 'A' && field[0] <= 'Z'; i = strings.IndexByte(field, '.') {
				field = field[i+1:]
			}
			msg = fmt.Sprintf("field %q must be %s, not %s", field, jsonKind(te.Type), te.Value)
		}
		if strings.HasPrefix(msg, "unknown field") {
			msg += " (the fields: " + strings.Join(jsonFields(reflect.TypeOf(v)), ", ") + ")"
		}
		return fmt.Errorf("%w: %s", api.ErrInvalidParams, msg)
	}
	if rv := reflect.Indirect(reflect.ValueOf(v)); rv.Kind() == reflect.Struct {
		if f := rv.FieldByName("Timeout"); f.IsValid() && f.Kind() == reflect.Float64 && f.Float() < 0 {
			return fmt.Errorf("%w: field \"timeout\" must be at least 0 seconds (0 means the default), not %g", api.ErrInvalidParams, f.Float())
		}
		if f := rv.FieldByName("MaxTokens"); f.IsValid() && f.Kind() == reflect.Int && f.Int() < 0 {
			return fmt.Errorf("%w: field \"max_tokens\" must be at least 0 (0 means the default), not %d", api.ErrInvalidParams, f.Int())
		}
	}
	return nil
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of another type"
}

// jsonFields lists the JSON names of a struct's fields (through pointers
// and embedded structs), for an error that names an unknown one.
func jsonFields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

func seconds(f float64) time.Duration {
	if f <= 0 {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

// fail turns an error into a failed result with its code and hint.
func fail(action, name string, err error) *api.Result {
	code := errcode.Of(err)
	if !code.Valid() {
		code = errcode.Internal
	}
	r := api.ErrorResult(code, err.Error())
	var h errcode.Hinter
	if errors.As(err, &h) && h.ErrorHint() != "" {
		info := r.Details["error"].(api.ErrorInfo)
		info.Hint = h.ErrorHint()
		r.Details["error"] = info
	}
	r.Details["action"] = action
	if name != "" {
		r.Details["name"] = name
	}
	return r
}

func tabName(n string) string {
	if n == "" {
		return tabs.DefaultName
	}
	return n
}

// Open opens or reuses a tab (its params and waits: the README's
// "JSON-RPC and Go").
func (s *Service) Open(ctx context.Context, r *api.OpenRequest) (result *api.Result) {
	defer s.redactResult(&result)
	o := tabs.OpenOptions{Name: r.Name, Timeout: seconds(r.Timeout), URL: r.URL, WaitUntil: r.WaitUntil, Dialogs: r.Dialogs, StorageState: r.StorageState,
		Context: r.Context, Proxy: r.Proxy}
	if r.Viewport != nil {
		o.Viewport = &tabs.Viewport{Width: r.Viewport.Width, Height: r.Viewport.Height, Scale: r.Viewport.Scale}
	}
	if r.App != nil {
		app, err := tabsApp(r.App)
		if err != nil {
			return fail("open", tabName(r.Name), err)
		}
		o.App = app
	}
	if s.opts.Egress != nil && r.App != nil && (r.App.Path != "" || r.App.CDPURL != "" || r.App.Grid != "") {
		return fail("open", tabName(r.Name), &egress.BlockedError{Dest: r.App.Path + browser.RedactURL(r.App.CDPURL+r.App.Grid), Reason: "scheme",
			Detail: "the egress guard (--egress public-only, or an origin rule) guards only browsers tabpilot launches; spawned, connected and Grid browsers are refused"})
	}
	if !s.hasTab(r.Name) {
		if err := s.limits.CheckTabs(s.sup.TabCount()); err != nil {
			return fail("open", tabName(r.Name), err)
		}
	}
	var res *tabs.OpenResult
	err := s.audited(ctx, tabName(r.Name), "goto", r.URL, "", r.URL != "", func() error {
		var err error
		res, err = s.sup.Open(ctx, o)
		return err
	})
	if err != nil {
		return fail("open", tabName(r.Name), err)
	}
	verb := "Opened"
	if res.Reused {
		verb = "Reused"
	}
	where := res.Browser + " browser"
	if r.Context != "" {
		where += fmt.Sprintf(", context %q", r.Context)
	}
	text := fmt.Sprintf("%s tab %q (%s): %s", verb, res.Name, where, res.URL)
	if res.Title != "" {
		text += fmt.Sprintf(" — %q", res.Title)
	}
	if res.Status >= 400 {
		// The page loaded, but it is the server's error page.
		text += fmt.Sprintf(" (HTTP %d %s)", res.Status, http.StatusText(int(res.Status)))
	}
	for _, n := range res.Notes {
		text += "\nNote: " + n
	}
	details := map[string]any{"action": "open", "name": res.Name, "browser": res.Browser, "url": res.URL,
		"title": res.Title, "viewport": res.Viewport}
	if res.Status != 0 {
		details["status"] = res.Status
	}
	if r.Context != "" {
		details["context"] = r.Context
	}
	if len(res.Notes) > 0 {
		details["notes"] = res.Notes
	}
	if res.Dialog != nil {
		text += fmt.Sprintf("\n%s dialog is open: %q (handle it in a run with tab.acceptDialog() or tab.dismissDialog())", capFirst(res.Dialog.Article()), res.Dialog.Message)
		details["dialog"] = res.Dialog
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)}, Details: details}
}

// tabsApp is the tabs.App of a request's app: its CDP header lines parsed
// (errors name the header, never its value).
func tabsApp(a *api.App) (*tabs.App, error) {
	app := &tabs.App{Path: a.Path, CDPURL: a.CDPURL, Args: a.Args, Target: a.Target, Profile: a.Profile,
		Grid: a.Grid, GridUser: a.GridUser, GridPassword: a.GridPassword, ConnectTimeout: seconds(a.ConnectTimeout)}
	if a.ConnectTimeout < 0 {
		return nil, tabs.Errorf(errcode.BadRequest, "app.connect_timeout %v is negative", a.ConnectTimeout)
	}
	if len(a.CDPHeaders) > 0 {
		app.CDPHeader = http.Header{}
		for _, line := range a.CDPHeaders {
			if err := browser.ParseHeader(app.CDPHeader, line); err != nil {
				return nil, tabs.Errorf(errcode.BadRequest, "app.cdp_headers: %v", err)
			}
		}
	}
	return app, nil
}

// Close closes one tab or all.
func (s *Service) Close(ctx context.Context, r *api.CloseRequest) (result *api.Result) {
	defer s.redactResult(&result)
	names, err := s.sup.Close(ctx, r.Name, r.All, seconds(r.Timeout), r.Kill)
	if err != nil {
		return fail("close", tabName(r.Name), err)
	}
	var text string
	switch {
	case len(names) == 0 && r.All:
		text = "No tabs to close"
	case len(names) == 0:
		text = fmt.Sprintf("No tab named %q", tabName(r.Name))
	case len(names) == 1:
		text = fmt.Sprintf("Closed tab %q", names[0])
	default:
		text = fmt.Sprintf("Closed %d tabs: %s", len(names), strings.Join(names, ", "))
	}
	if names == nil {
		names = []string{}
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)}, Details: map[string]any{"action": "close", "closed": names}}
}

// hasTab reports whether a tab of that name exists.
func (s *Service) hasTab(name string) bool {
	_, err := s.sup.Tab(name)
	return err == nil || errcode.Of(err) == errcode.NotAlive
}

// audited runs fn between an audit intent and its outcome when the audit
// log is on and on is true. An intent that cannot be written stops the
// action: nothing runs unlogged.
func (s *Service) audited(ctx context.Context, tab, action, target, text string, on bool, fn func() error) error {
	if s.opts.Audit == nil || !on {
		return fn()
	}
	origin := ""
	if t, err := s.sup.Tab(tab); err == nil {
		origin = OriginOf(t.URL(ctx))
	}
	id, err := s.opts.Audit.Intent(tab, origin, action, target, text)
	if err != nil {
		return tabs.Errorf(errcode.Internal, "audit log: %v", err)
	}
	err = fn()
	if oerr := s.opts.Audit.Outcome(id, err); oerr != nil {
		s.log.Error("audit outcome", "err", oerr)
	}
	return err
}

// do runs fn on a tab's action slot, for the shortcuts.
func (s *Service) do(ctx context.Context, name string, timeout float64, fn func(ctx context.Context, t *tabs.Tab) error) error {
	return s.sup.Run(ctx, tabName(name), seconds(timeout), tabs.JobFunc(fn))
}

// Observe is the observe shortcut: the observation (the README's "What an
// observation shows") in details, its text rendering as content.
func (s *Service) Observe(ctx context.Context, r *api.ObserveRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	var text string
	var details map[string]any
	var before []tabs.Popup // opened between calls
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		before = t.PopupsBefore(time.Second)
		obs, err := t.Observe(ctx, tabs.ObserveOptions{IncludeAll: r.IncludeAll, ViewportOnly: r.ViewportOnly, MaxTokens: r.MaxTokens, Query: r.Query, Scroll: r.Scroll, Since: r.Since, Boxes: r.Boxes})
		if err != nil {
			return err
		}
		if len(before) > 0 {
			cp := *obs
			cp.Notes = append(slices.Clone(obs.Notes), popupNotes(before)...)
			obs = &cp
		}
		text = obs.Text()
		b, err := json.Marshal(obs)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &details); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return fail("observe", name, err)
	}
	if details["elements"] == nil {
		details["elements"] = []any{} // the wire shape is a list, even when empty
	}
	details["action"] = "observe"
	details["name"] = name
	if len(before) > 0 {
		details["popups"] = before
	}
	return &api.Result{Content: []api.Content{api.TextContent(s.capText(text))}, Details: details}
}

// Screenshot is the screenshot shortcut.
func (s *Service) Screenshot(ctx context.Context, r *api.ScreenshotRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	o := tabs.ScreenshotOptions{FullPage: r.FullPage, Save: r.Save, Marks: r.Marks}
	if r.Selector != "" {
		tg, err := tabs.ParseTarget(r.Selector)
		if err != nil {
			return fail("screenshot", name, err)
		}
		o.Target = &tg
	}
	var shot *tabs.Screenshot
	var before []tabs.Popup // opened between calls
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		before = t.PopupsBefore(time.Second)
		var err error
		shot, err = t.Screenshot(ctx, o)
		return err
	})
	if err != nil {
		return fail("screenshot", name, err)
	}
	text := shot.Summary()
	for _, n := range popupNotes(before) {
		text += "\nnote: " + n
	}
	details := map[string]any{"action": "screenshot", "name": name, "screenshots": []map[string]any{{
		"id": shot.ID, "dest": shot.Dest, "fullResolution": shot.FullResolution, "mimeType": shot.MimeType, "bytes": shot.Bytes, "width": shot.Width, "height": shot.Height, "scale": shot.Scale}}}
	if len(before) > 0 {
		details["popups"] = before
	}
	return &api.Result{
		Content: []api.Content{api.TextContent(text), {Type: "image", MimeType: shot.MimeType, Data: shot.Base64()}},
		Details: details,
	}
}

// Extract is the extract shortcut.
func (s *Service) Extract(ctx context.Context, r *api.ExtractRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	var details map[string]any
	var text string
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		ex, err := t.Extract(ctx, r.Format)
		if err != nil {
			return err
		}
		details = map[string]any{"format": ex.Format, "title": ex.Title, "byline": ex.Byline, "excerpt": ex.Excerpt,
			"siteName": ex.SiteName, "lang": ex.Lang, "dir": ex.Dir, "source": ex.Source, "empty": ex.Empty}
		text = ex.Content
		if ex.Empty {
			text = "(nothing readable on the page)"
		}
		return nil
	})
	if err != nil {
		return fail("extract", name, err)
	}
	details["action"] = "extract"
	details["name"] = name
	return &api.Result{Content: []api.Content{api.TextContent(s.capText(text))}, Details: details}
}

// Tabs lists the tabs.
func (s *Service) Tabs(ctx context.Context) (result *api.Result) {
	defer s.redactResult(&result)
	list := s.sup.Tabs(ctx)
	var b strings.Builder
	if len(list) == 0 {
		b.WriteString("No tabs")
	}
	for i, t := range list {
		if i > 0 {
			b.WriteByte('\n')
		}
		if !t.Adopted {
			fmt.Fprintf(&b, "(not adopted) [%s] %s %q target %s: open --target %s to act on it", t.Browser, t.URL, t.Title, t.TargetID, t.TargetID)
			continue
		}
		state := ""
		if !t.Alive {
			state = " (dead)"
		} else if t.Busy {
			state = " (busy)"
		}
		where := t.Browser
		if t.Context != "" {
			where += " context " + t.Context
		}
		fmt.Fprintf(&b, "%s%s [%s] %s %q", t.Name, state, where, t.URL, t.Title)
	}
	return &api.Result{Content: []api.Content{api.TextContent(b.String())}, Details: map[string]any{"action": "tabs", "tabs": list}}
}
