package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/client"
	"github.com/tabpilot/tabpilot/api/rpc"
	"github.com/tabpilot/tabpilot/errcode"
)

// action is a verb that calls the daemon: one JSON-RPC method.
type action struct {
	name, args, summary, about string
	method                     string
	noTab                      bool // the verb takes no --tab
	// flags registers the verb's own flags and returns the function that
	// builds the params from the positional arguments (a usageError for
	// bad usage).
	flags func(c *cli, fs *flag.FlagSet, inv *invocation) func(pos []string, common api.Common) (any, error)
}

// invocation holds the flags every action takes.
type invocation struct {
	session string
	timeout float64
	json    bool
	tab     string
	out     string // screenshot --out
	cfg     config
}

var actions []*action

func actionFor(name string) *action {
	for _, a := range actions {
		if a.name == name {
			return a
		}
	}
	return nil
}

func init() {
	actions = []*action{
		{name: "open", args: "[URL]", method: "open",
			summary: "open or reuse a tab, and navigate it to URL",
			about: `Open the tab named by --tab (default main), or reuse it when it lives, and
navigate it to URL when one is given. The browser is a headless Chromium, or
an app with --app-path, or an existing browser with --cdp-url.`,
			flags: openFlags},
		{name: "run", args: "(-e CODE | FILE | -)", method: "run",
			summary: "run JavaScript against a tab",
			about: `Run CODE, the body of an async function, against a tab. The code comes
from -e, from FILE, or from stdin with "-". Its globals are tab, cdp, browser,
display, assert, wait and console; the tab methods are listed in the README
and in 'go doc github.com/tabpilot/tabpilot/tabs/script'. The output is every
display() and then the return value.`,
			flags: runFlags},
		{name: "close", args: "", method: "close",
			summary: "close a tab (--tab) or every tab (--all)",
			about:   `Close the tab named by --tab (default main), or every tab with --all.`,
			flags:   closeFlags},
		{name: "observe", args: "", method: "observe",
			summary: "list the tab's interactive elements, numbered",
			about: `Observe the tab: its interactive elements, numbered, one per line. Act on
an element with its number (click 3). With --json the observation is in
details.`,
			flags: observeFlags},
		{name: "click", args: "N|SELECTOR", method: "click",
			summary: "click an element",
			about:   `Click the element numbered N in the latest observation, or matched by SELECTOR.`,
			flags:   targetFlags("click", false)},
		{name: "type", args: "N|SELECTOR TEXT", method: "type",
			summary: "type text into an element",
			about:   `Type TEXT into the element numbered N, or matched by SELECTOR, key by key.`,
			flags:   targetFlags("type", true)},
		{name: "fill", args: "N|SELECTOR VALUE", method: "fill",
			summary: "set the value of an input",
			about:   `Set the value of the input numbered N, or matched by SELECTOR, to VALUE.`,
			flags:   targetFlags("fill", true)},
		{name: "press", args: "KEY [N|SELECTOR]", method: "press",
			summary: "press a key",
			about: `Press KEY (Enter, Tab, Escape, ArrowDown, a, Control+a, …) in the tab: in
the element that has the focus, or, with N|SELECTOR, after focusing that
element.`,
			flags: pressFlags},
		{name: "hover", args: "N|SELECTOR", method: "hover",
			summary: "move the mouse over an element",
			about: `Move the mouse over the element numbered N in the latest observation, or
matched by SELECTOR, as a person does to open a menu or show a tooltip.
Observe again to see what the hover showed.`,
			flags: targetFlags("hover", false)},
		{name: "select", args: "N|SELECTOR VALUE…", method: "select",
			summary: "pick options of a select, listbox or combobox",
			about: `Pick the options named by the VALUEs (their label, value or text) in the
select, listbox or combobox numbered N, or matched by SELECTOR. Several
VALUEs pick several options of a multiple select. The text lists the labels
selected; with --json details.selected and, for a native select,
details.values.`,
			flags: selectFlags},
		{name: "scroll", args: "[DX] DY", method: "scroll",
			summary: "scroll the page, or the element under --selector",
			about: `Scroll by DY CSS pixels down (negative: up), and DX right (negative: left),
with a mouse wheel at the centre of the viewport, or over the element that
--selector names (its scroll container scrolls). The text and
details.x, details.y give the scroll position after it.`,
			flags: scrollFlags},
		{name: "wait", args: "(TEXT | --selector S | --url PATTERN | --load-state STATE)", method: "wait",
			summary: "wait for text, an element, a URL or a load state",
			about: `Wait, for at most --timeout, until TEXT is visible on the page; or until
the element that --selector names is visible (or in the --state given); or
until the URL matches PATTERN (a glob: * within a path segment, ** across;
a pattern starting with / is on the current origin), and the page loaded;
or until the document reached STATE (load or domcontentloaded). It fails
with timeout, naming what it waited for.`,
			flags: waitFlags},
		{name: "back", args: "", method: "back",
			summary: "go back one page in the tab's history",
			about: `Go back one page in the tab's history, as the back button does, and wait
until that page has loaded. Observe again: the element numbers are of the
page left.`,
			flags: navFlags("back")},
		{name: "forward", args: "", method: "forward",
			summary: "go forward one page in the tab's history",
			about: `Go forward one page in the tab's history, as the forward button does, and
wait until that page has loaded.`,
			flags: navFlags("forward")},
		{name: "reload", args: "", method: "reload",
			summary: "reload the tab's page",
			about:   `Reload the tab's page, as the reload button does, and wait until it has loaded.`,
			flags:   navFlags("reload")},
		{name: "dialog", args: "(accept [TEXT] | dismiss)", method: "dialog",
			summary: "answer the open alert, confirm or prompt",
			about: `Answer the JavaScript dialog open on the tab: accept it (OK), with TEXT as
the answer to a prompt (else its default), or dismiss it (Cancel). An action
that opens a dialog says so in its result. It fails with bad_request when no
dialog is open.`,
			flags: dialogFlags},
		{name: "upload", args: "N|SELECTOR FILE…", method: "upload",
			summary: "set files on a file input",
			about: `Set the FILEs on the file input numbered N, or matched by SELECTOR: the
input itself (even hidden), its label, or a button whose click opens a file
chooser. Every FILE must exist; they are checked before anything is sent.`,
			flags: uploadFlags},
		{name: "screenshot", args: "", method: "screenshot",
			summary: "take a screenshot of the tab",
			about: `Take a screenshot of the viewport, the full page (--full-page) or one
element (--selector). With --out the full-resolution PNG is written to FILE;
else the text says where the image went.`,
			flags: screenshotFlags},
		{name: "extract", args: "", method: "extract",
			summary: "extract the readable content of the tab",
			about:   `Extract the readable content of the tab (Readability), as markdown, text or html.`,
			flags:   extractFlags},
		{name: "tabs", args: "", method: "tabs", noTab: true,
			summary: "list the open tabs",
			about:   `List the open tabs of the session: name, browser, URL and title; then the pages of each browser attached with --cdp-url (or --app-path) that no tab holds, as not adopted, with their target ids (open --cdp-url URL --target ID adopts one).`,
			flags:   noFlags},
	}
}

// actionCommand builds the command of an action. envErr is a bad
// environment variable, reported once the arguments parse.
func (c *cli) actionCommand(a *action) (cmd *command, inv *invocation, build func([]string, api.Common) (any, error), envErr error) {
	cmd = newCommand(a.name, a.args, a.summary, a.about)
	inv = &invocation{session: c.getenv(envSession)}
	if inv.session == "" {
		inv.session = client.DefaultSession
	}
	inv.cfg, envErr = configFromEnv(c.getenv)
	build = a.flags(c, cmd.section("Flags"), inv)
	fs := cmd.section("Common flags")
	if !a.noTab {
		fs.StringVar(&inv.tab, "tab", "", "the tab's `name` (default main)")
	}
	c.commonFlags(fs, &inv.session, &inv.timeout, &inv.json)
	inv.cfg.addFlags(cmd.section("Daemon flags (they take effect when the call starts the daemon)"))
	return cmd, inv, build, envErr
}

func (c *cli) commonFlags(fs *flag.FlagSet, session *string, timeout *float64, jsonOut *bool) {
	fs.StringVar(session, "session", *session, "the daemon's session `name` ["+envSession+"]")
	fs.Float64Var(timeout, "timeout", 0, "the action's timeout in `seconds` (default 30, at most the max timeout)")
	fs.BoolVar(jsonOut, "json", false, `print the whole result as JSON: {"content", "details", "isError"}`)
}

// clientOptions are the options that reach (or start) the session daemon.
func (c *cli) clientOptions(session string, cfg *config, log *slog.Logger) *client.Options {
	return &client.Options{
		Session:    session,
		Dir:        client.DefaultDir(c.getenv(envRuntimeDir)),
		Executable: engineExecutable(),
		DaemonArgs: cfg.daemonArgs(),
		Logger:     log,
	}
}

func (c *cli) logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: level}))
}

// action runs an action verb.
func (c *cli) action(a *action, args []string) int {
	cmd, inv, build, envErr := c.actionCommand(a)
	pos, code, done := c.parse(cmd, args)
	if done {
		return code
	}
	if envErr != nil {
		return c.usageFail(cmd, envErr)
	}
	if err := client.ValidSession(inv.session); err != nil {
		return c.usageFail(cmd, err)
	}
	if inv.timeout < 0 {
		return c.usageFail(cmd, usagef("--timeout %v is negative", inv.timeout))
	}
	params, err := build(pos, api.Common{Name: inv.tab, Timeout: inv.timeout})
	if err != nil {
		return c.usageFail(cmd, err)
	}
	if err := inv.cfg.finish(); err != nil {
		return c.usageFail(cmd, err)
	}
	opts := c.clientOptions(inv.session, &inv.cfg, c.logger(slog.LevelWarn))
	// The daemon enforces the action's timeout; the CLI waits a little
	// longer, and for the daemon's start.
	wait := defaultTimeout
	if inv.timeout > 0 {
		wait = time.Duration(inv.timeout * float64(time.Second))
	}
	wait += 30 * time.Second
	ctx, cancel := context.WithTimeout(c.ctx, wait+client.DefaultStartTimeout)
	defer cancel()
	res, err := client.Call(ctx, opts, a.method, params)
	if err != nil {
		return c.emit(callError(ctx, a.method, err, wait), inv.json)
	}
	return c.emit(res, inv.json)
}

// callError turns a failure to get a result into a failed result.
func callError(ctx context.Context, method string, err error, wait time.Duration) *api.Result {
	var re *rpc.Error
	switch {
	case errors.Is(err, api.ErrMethodNotFound):
		return api.ErrorResult(errcode.Internal, fmt.Sprintf("the daemon does not know the method %q (%v); if it is an older tabpilot, run tabpilot stop", method, err))
	case errors.Is(err, api.ErrInvalidParams), errors.Is(err, rpc.ErrRequestTooLarge), errors.Is(err, rpc.ErrInvalidRequest):
		return api.ErrorResult(errcode.BadRequest, err.Error())
	case errors.As(err, &re):
		return api.ErrorResult(errcode.Internal, err.Error())
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return api.ErrorResult(errcode.Timeout, fmt.Sprintf("no answer from the daemon within %v", wait))
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		r := api.ErrorResult(errcode.Internal, "interrupted")
		if info, ok := r.Details["error"].(api.ErrorInfo); ok {
			info.Hint = "You interrupted the command: the daemon cancelled the action, and the tab is still usable."
			r.Details["error"] = info
		}
		return r
	case errors.Is(err, client.ErrStart):
		r := api.ErrorResult(errcode.Internal, "start the daemon: "+err.Error())
		// Retrying does not help a daemon that cannot start.
		if info, ok := r.Details["error"].(api.ErrorInfo); ok {
			info.Hint = "The daemon did not start; the end of its log, above, says why. Fix that, then run the command again."
			r.Details["error"] = info
		}
		return r
	}
	return api.ErrorResult(errcode.Internal, err.Error())
}

// emit prints a result and returns the exit code: with --json the whole
// result on stdout; else the text on stdout, or on failure the error and
// its hint on stderr.
func (c *cli) emit(res *api.Result, jsonOut bool) int {
	code := exitOK
	if res.IsError {
		code = exitFailed
	}
	if jsonOut {
		out := *res
		if out.Content == nil {
			out.Content = []api.Content{}
		}
		if out.Details == nil {
			out.Details = map[string]any{}
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&out); err != nil {
			fmt.Fprintf(c.stderr, "tabpilot: write the result: %v\n", err)
			return exitFailed
		}
		return code
	}
	text := res.Text()
	if !res.IsError {
		if text != "" {
			fmt.Fprintln(c.stdout, text)
		}
		return code
	}
	e := res.ErrorOf()
	if text != "" {
		fmt.Fprintln(c.stderr, text)
	}
	if e != nil {
		if head := string(e.Code) + ": " + e.Message; !strings.Contains(text, head) {
			fmt.Fprintln(c.stderr, head)
		}
		hint := e.Hint
		if hint == "" {
			hint = e.Code.Hint()
		}
		if hint != "" {
			fmt.Fprintln(c.stderr, "hint: "+hint)
		}
	}
	return code
}

func noFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, _ api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q", pos[0])
		}
		return api.TabsRequest{}, nil
	}
}

var (
	waitUntils = []string{"settled", "load", "domcontentloaded", "networkidle0", "networkidle2"}
	dialogs    = []string{"accept", "dismiss"}
	formats    = []string{"markdown", "text", "html"}
)

func oneOf(flagName, v string, allowed []string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usagef("--%s %q: want one of %s", flagName, v, strings.Join(allowed, ", "))
}

func openFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	waitUntil := fs.String("wait-until", "", "when navigation is done: "+strings.Join(waitUntils, ", ")+" (default settled: load, then until requests and DOM are quiet for 100 ms, at most 500 ms)")
	viewport := fs.String("viewport", "", "the viewport in CSS pixels, `WxH` or WxH@SCALE, e.g. 1280x800@2")
	dialog := fs.String("dialogs", "", "answer JavaScript dialogs by themselves: accept or dismiss")
	cdpURL := fs.String("cdp-url", "", "attach to a running browser's CDP endpoint `URL`, e.g. http://127.0.0.1:9222")
	appPath := fs.String("app-path", "", "start (or reuse) the app at `path` with remote debugging")
	target := fs.String("target", "", "with --cdp-url or --app-path: the page with that target id (tabpilot tabs lists them), else the first page whose URL or title contains `text`")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 1 {
			return nil, usagef("open takes one URL, got %d arguments", len(pos))
		}
		req := api.OpenRequest{Common: common, WaitUntil: *waitUntil, Dialogs: *dialog}
		if len(pos) == 1 {
			req.URL = pos[0]
		}
		if err := oneOf("wait-until", *waitUntil, waitUntils); err != nil {
			return nil, err
		}
		if err := oneOf("dialogs", *dialog, dialogs); err != nil {
			return nil, err
		}
		if *viewport != "" {
			v, err := parseViewport(*viewport)
			if err != nil {
				return nil, err
			}
			req.Viewport = v
		}
		switch {
		case *cdpURL != "" && *appPath != "":
			return nil, usagef("give --cdp-url or --app-path, not both")
		case *cdpURL != "":
			req.App = &api.App{CDPURL: *cdpURL, Target: *target}
		case *appPath != "":
			p, err := resolveApp(*appPath)
			if err != nil {
				return nil, err
			}
			req.App = &api.App{Path: p, Target: *target}
		case *target != "":
			return nil, usagef("--target needs --cdp-url or --app-path")
		}
		return req, nil
	}
}

// parseViewport reads WxH or WxH@SCALE.
func parseViewport(s string) (*api.Viewport, error) {
	bad := usagef("--viewport %q: want WxH or WxH@SCALE, e.g. 1280x800 or 390x844@3", s)
	size, scale, hasScale := strings.Cut(s, "@")
	w, h, ok := strings.Cut(size, "x")
	if !ok {
		return nil, bad
	}
	width, err1 := strconv.Atoi(w)
	height, err2 := strconv.Atoi(h)
	if err1 != nil || err2 != nil || width <= 0 || height <= 0 || width > 10000 || height > 10000 {
		return nil, bad
	}
	v := &api.Viewport{Width: width, Height: height}
	if hasScale {
		f, err := strconv.ParseFloat(scale, 64)
		if err != nil || f <= 0 || f > 10 {
			return nil, bad
		}
		v.Scale = f
	}
	return v, nil
}

// resolveApp makes an app path absolute: a bare name is looked up on PATH.
func resolveApp(p string) (string, error) {
	if !strings.ContainsRune(p, '/') {
		found, err := exec.LookPath(p)
		if err != nil {
			return "", usagef("--app-path %q: not found on PATH; give its path", p)
		}
		p = found
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", usagef("--app-path %q: %v", p, err)
	}
	return abs, nil
}

func runFlags(c *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	code := fs.String("e", "", "the `code` to run")
	return func(pos []string, common api.Common) (any, error) {
		given := 0
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "e" {
				given++
			}
		})
		if given+len(pos) != 1 {
			return nil, usagef("give the code once: -e CODE, a FILE, or - for stdin")
		}
		req := api.RunRequest{Common: common, Code: *code}
		switch {
		case given == 1:
		case pos[0] == "-":
			b, err := io.ReadAll(io.LimitReader(c.stdin, 16<<20))
			if err != nil {
				return nil, usagef("read the code from stdin: %v", err)
			}
			req.Code = string(b)
		default:
			b, err := os.ReadFile(pos[0])
			if err != nil {
				return nil, usagef("read the code: %v", err)
			}
			req.Code = string(b)
		}
		if strings.TrimSpace(req.Code) == "" {
			return nil, usagef("the code is empty")
		}
		return req, nil
	}
}

func closeFlags(_ *cli, fs *flag.FlagSet, inv *invocation) func([]string, api.Common) (any, error) {
	all := fs.Bool("all", false, "close every tab")
	kill := fs.Bool("kill", false, "when the last tab of a spawned app closes, end the app too")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q (close takes --tab NAME)", pos[0])
		}
		if *all && inv.tab != "" {
			return nil, usagef("give --tab or --all, not both")
		}
		return api.CloseRequest{Common: common, All: *all, Kill: *kill}, nil
	}
}

func observeFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	all := fs.Bool("all", false, "include the structure: headings, landmarks, text")
	viewportOnly := fs.Bool("viewport-only", false, "only what intersects the viewport")
	query := fs.String("query", "", "only elements whose name or text matches `Q`")
	maxTokens := fs.Int("max-tokens", 0, "the budget of the rendering in `tokens` (default 6000)")
	scroll := fs.Bool("scroll", false, "first scroll every scroll container through, collecting what virtualised lists render")
	boxes := fs.Bool("boxes", false, "give every element its box (box=X,Y,WxH in CSS pixels)")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q", pos[0])
		}
		if *maxTokens < 0 {
			return nil, usagef("--max-tokens %d is negative", *maxTokens)
		}
		return api.ObserveRequest{Common: common, IncludeAll: *all, ViewportOnly: *viewportOnly, Query: *query, MaxTokens: *maxTokens, Scroll: *scroll, Boxes: *boxes}, nil
	}
}

// targetFlags builds click and hover (N|SELECTOR), and type and fill
// (N|SELECTOR TEXT).
func targetFlags(verb string, withText bool) func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
		return func(pos []string, common api.Common) (any, error) {
			want, what := 1, "N|SELECTOR"
			if withText {
				want, what = 2, "N|SELECTOR TEXT"
				if verb == "fill" {
					what = "N|SELECTOR VALUE"
				}
			}
			if len(pos) != want {
				return nil, usagef("%s takes %s, got %d arguments", verb, what, len(pos))
			}
			if strings.TrimSpace(pos[0]) == "" {
				return nil, usagef("the target is empty")
			}
			req := api.ActRequest{Common: common, Target: api.Target(pos[0])}
			if withText {
				req.Text = pos[1]
			}
			return req, nil
		}
	}
}

func pressFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) < 1 || len(pos) > 2 || pos[0] == "" {
			return nil, usagef("press takes KEY [N|SELECTOR], got %d arguments", len(pos))
		}
		req := api.ActRequest{Common: common, Text: pos[0]}
		if len(pos) == 2 {
			if strings.TrimSpace(pos[1]) == "" {
				return nil, usagef("the target is empty")
			}
			req.Target = api.Target(pos[1])
		}
		return req, nil
	}
}

func screenshotFlags(_ *cli, fs *flag.FlagSet, inv *invocation) func([]string, api.Common) (any, error) {
	fs.StringVar(&inv.out, "out", "", "write the full-resolution PNG to `FILE`")
	fullPage := fs.Bool("full-page", false, "the whole page, not only the viewport")
	selector := fs.String("selector", "", "only the element matched by `S`")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q (use --out FILE)", pos[0])
		}
		req := api.ScreenshotRequest{Common: common, FullPage: *fullPage, Selector: *selector}
		if inv.out != "" {
			// The daemon writes the file; its working directory is not ours.
			abs, err := filepath.Abs(inv.out)
			if err != nil {
				return nil, usagef("--out %q: %v", inv.out, err)
			}
			req.Save = abs
		}
		return req, nil
	}
}

func extractFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	format := fs.String("format", "", "markdown, text or html (default markdown)")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q", pos[0])
		}
		if err := oneOf("format", *format, formats); err != nil {
			return nil, err
		}
		return api.ExtractRequest{Common: common, Format: *format}, nil
	}
}

// target checks the N|SELECTOR argument.
func target(s string) (api.Target, error) {
	if strings.TrimSpace(s) == "" {
		return "", usagef("the target is empty")
	}
	return api.Target(s), nil
}

func selectFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) < 2 {
			return nil, usagef("select takes N|SELECTOR VALUE…, got %d arguments", len(pos))
		}
		tg, err := target(pos[0])
		if err != nil {
			return nil, err
		}
		return api.SelectRequest{Common: common, Target: tg, Values: pos[1:]}, nil
	}
}

func scrollFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	selector := fs.String("selector", "", "scroll over the element `N|S` instead of the viewport's centre")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) < 1 || len(pos) > 2 {
			return nil, usagef("scroll takes [DX] DY in CSS pixels, got %d arguments", len(pos))
		}
		var d [2]float64
		for i, a := range pos {
			f, err := strconv.ParseFloat(a, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, usagef("scroll: %q is not a number of CSS pixels", a)
			}
			d[i] = f
		}
		req := api.ScrollRequest{Common: common, DY: d[0]}
		if len(pos) == 2 {
			req.DX, req.DY = d[0], d[1]
		}
		if req.DX == 0 && req.DY == 0 {
			return nil, usagef("scroll by 0: give DY (down; negative is up), or DX DY")
		}
		if *selector != "" {
			tg, err := target(*selector)
			if err != nil {
				return nil, err
			}
			req.Target = tg
		}
		return req, nil
	}
}

var (
	waitStates = []string{"visible", "hidden", "attached", "detached"}
	loadStates = []string{"load", "domcontentloaded", "networkidle"}
)

func waitFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	selector := fs.String("selector", "", "wait for the element `N|S`")
	state := fs.String("state", "", "with TEXT or --selector: the `STATE`, one of "+strings.Join(waitStates, ", ")+" (default visible)")
	urlPattern := fs.String("url", "", "wait until the URL matches `PATTERN`")
	loadState := fs.String("load-state", "", "wait until the document reached `STATE`: "+strings.Join(loadStates, " or "))
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 1 {
			return nil, usagef("wait takes one TEXT (quote it), got %d arguments", len(pos))
		}
		req := api.WaitRequest{Common: common, URL: *urlPattern, LoadState: *loadState, State: *state}
		if len(pos) == 1 {
			if strings.TrimSpace(pos[0]) == "" {
				return nil, usagef("the text is empty")
			}
			req.Text = pos[0]
		}
		if *selector != "" {
			tg, err := target(*selector)
			if err != nil {
				return nil, err
			}
			req.Target = tg
		}
		given := 0
		for _, v := range []string{req.Text, string(req.Target), req.URL, req.LoadState} {
			if v != "" {
				given++
			}
		}
		if given != 1 {
			return nil, usagef("wait takes one of TEXT, --selector S, --url PATTERN or --load-state STATE")
		}
		if err := oneOf("state", *state, waitStates); err != nil {
			return nil, err
		}
		if *state != "" && req.Text == "" && req.Target == "" {
			return nil, usagef("--state goes with TEXT or --selector")
		}
		if err := oneOf("load-state", *loadState, loadStates); err != nil {
			return nil, err
		}
		return req, nil
	}
}

func navFlags(verb string) func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
		return func(pos []string, common api.Common) (any, error) {
			if len(pos) > 0 {
				return nil, usagef("%s takes no arguments, got %q", verb, pos[0])
			}
			return api.NavRequest{Common: common}, nil
		}
	}
}

func dialogFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		switch {
		case len(pos) == 0:
			return nil, usagef("dialog takes accept [TEXT] or dismiss")
		case pos[0] == "accept" && len(pos) <= 2:
			req := api.DialogRequest{Common: common, Response: "accept"}
			if len(pos) == 2 {
				req.Text = &pos[1]
			}
			return req, nil
		case pos[0] == "dismiss" && len(pos) == 1:
			return api.DialogRequest{Common: common, Response: "dismiss"}, nil
		case pos[0] == "accept" || pos[0] == "dismiss":
			return nil, usagef("dialog takes accept [TEXT] or dismiss, got %d arguments", len(pos))
		}
		return nil, usagef("dialog %q: want accept [TEXT] or dismiss", pos[0])
	}
}

func uploadFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) < 2 {
			return nil, usagef("upload takes N|SELECTOR FILE…, got %d arguments", len(pos))
		}
		tg, err := target(pos[0])
		if err != nil {
			return nil, err
		}
		// The daemon sets the files; its working directory is not ours,
		// and a missing file is found here, before anything is sent.
		files := make([]string, 0, len(pos)-1)
		for _, f := range pos[1:] {
			abs, err := filepath.Abs(f)
			if err != nil {
				return nil, usagef("upload %q: %v", f, err)
			}
			st, err := os.Stat(abs)
			if err != nil {
				return nil, usagef("upload: no such file %s", abs)
			}
			if st.IsDir() {
				return nil, usagef("upload: %s is a directory, not a file", abs)
			}
			files = append(files, abs)
		}
		return api.UploadRequest{Common: common, Target: tg, Files: files}, nil
	}
}
