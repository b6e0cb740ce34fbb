package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
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
an app with --app-path, an existing or remote browser with --cdp-url (ws:// and
wss:// dialed as given, with --cdp-header), or a WebDriver session on a Selenium
Grid with --grid. --context NAME isolates the tab's cookies and storage.`,
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
or until the document reached STATE (load, domcontentloaded or networkidle:
loaded and no request in flight for 500 ms). It fails
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
		pdfAction, emulateAction,
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

// configFlagSet reports whether a daemon flag (config.addFlags) was given
// on the command line: the call then checks that a running daemon has
// those settings (client.Options.CheckArgs).
func configFlagSet(fs *flag.FlagSet) bool {
	names := flag.NewFlagSet("", flag.ContinueOnError)
	(&config{}).addFlags(names)
	set := false
	fs.Visit(func(f *flag.Flag) {
		if names.Lookup(f.Name) != nil {
			set = true
		}
	})
	return set
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
	opts.CheckArgs = configFlagSet(cmd.fs)
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
	case errors.Is(err, client.ErrSettings):
		// A usage error: the call's daemon flags are not the running
		// daemon's, and retrying changes nothing.
		r := api.ErrorResult(errcode.BadRequest, err.Error())
		if info, ok := r.Details["error"].(api.ErrorInfo); ok {
			info.Hint = "Stop the session's daemon first (tabpilot stop), give the call the daemon's own flags, or use another --session."
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
