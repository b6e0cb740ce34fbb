// Command tabpilot drives a real Chromium over the Chrome DevTools Protocol
// for AI agents, Go programs and shell scripts (README.md: "The CLI").
//
// The CLI verbs (open, run, close, observe, click, type, fill, press,
// hover, select, scroll, wait, back, forward, reload, dialog, upload,
// screenshot, extract, tabs, stop, version) talk to a per-session daemon
// over a unix socket; the first call of a session starts it, `tabpilot
// stop` ends it, and an idle daemon exits by itself. `tabpilot serve` speaks
// JSON-RPC 2.0 on stdio with an in-process service; `tabpilot daemon` is the
// daemon itself; `tabpilot mcp` is the MCP server.
//
// Built with the tag thin, the command is only the client of the daemon
// (thin.go): it starts tabpilot-engine, a default build of this command
// found next to it or in TABPILOT_ENGINE, as the daemon, and becomes it
// for the modes. A default build does everything in one binary.
//
// Exit codes: 0 success, 1 the action failed, 2 bad usage. With --json a
// verb prints the whole result ({"content", "details", "isError"}).
//
// This package is the only one that reads flags and environment variables
// (TABPILOT_*; see `tabpilot --help`).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unicode/utf8"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli is one invocation's world: its arguments, environment and streams.
type cli struct {
	ctx    context.Context // done on SIGINT, SIGTERM, SIGHUP
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// Exit codes (the README's "The CLI").
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// run runs one invocation and returns its exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		c.mainUsage(stderr)
		return exitUsage
	}
	args = verbFirst(args)
	verb, rest := args[0], args[1:]
	switch verb {
	case "-h", "-help", "--help", "help":
		if verb == "help" && len(rest) > 0 {
			if cmd := c.lookup(rest[0]); cmd != nil {
				cmd.usage(stdout)
				return exitOK
			}
			fmt.Fprintf(stderr, "tabpilot: unknown verb %q\n\n", rest[0])
			c.mainUsage(stderr)
			return exitUsage
		}
		c.mainUsage(stdout)
		return exitOK
	case "-version", "--version":
		verb = "version"
	}
	switch verb {
	case "serve":
		return c.serve(rest)
	case "daemon":
		return c.daemon(rest)
	case "mcp":
		return c.mcp(rest)
	case "stop":
		return c.stop(rest)
	case "version":
		return c.version(rest)
	}
	if a := actionFor(verb); a != nil {
		return c.action(a, rest)
	}
	if strings.HasPrefix(verb, "-") && onlyLeadingFlags(args) {
		fmt.Fprintf(stderr, "tabpilot: no verb after %s\nRun 'tabpilot --help' for the verbs.\n", strings.Join(args, " "))
		return exitUsage
	}
	if strings.HasPrefix(verb, "-") {
		fmt.Fprintf(stderr, "tabpilot: %s: give the verb first, then its flags (only --session, --timeout, --tab and --json may also come before it)\nRun 'tabpilot --help' for the verbs.\n", verb)
		return exitUsage
	} else {
		fmt.Fprintf(stderr, "tabpilot: unknown verb %q\n\n", verb)
	}
	c.mainUsage(stderr)
	return exitUsage
}

// leadingFlags are the flags every verb takes that may also come before
// the verb (tabpilot --session s observe), with whether they take a value.
var leadingFlags = map[string]bool{"session": true, "timeout": true, "tab": true, "json": false}

// verbFirst moves the common flags that come before the verb to after it,
// where the verb's own flag set parses them. Anything else is left as it
// is (an unknown leading flag is then reported as bad usage).
func verbFirst(args []string) []string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		takes, ok := leadingFlags[name]
		if !ok {
			return args
		}
		i++
		if takes && !hasValue {
			i++
		}
	}
	if i == 0 || i >= len(args) {
		return args
	}
	out := append([]string{args[i]}, args[:i]...)
	return append(out, args[i+1:]...)
}

// onlyLeadingFlags reports whether args are common flags (and their
// values) with no verb after them.
func onlyLeadingFlags(args []string) bool {
	i := 0
	for i < len(args) {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		takes, ok := leadingFlags[name]
		if !ok || !strings.HasPrefix(args[i], "-") {
			return false
		}
		i++
		if takes && !hasValue {
			i++
		}
	}
	return true
}

// lookup returns the command of a verb or mode, for help.
func (c *cli) lookup(name string) *command {
	switch name {
	case "serve", "daemon", "mcp":
		return c.modeCommand(name)
	case "stop":
		cmd, _ := c.stopCommand()
		return cmd
	case "version":
		cmd, _ := versionCommand()
		return cmd
	}
	if a := actionFor(name); a != nil {
		cmd, _, _, _ := c.actionCommand(a)
		return cmd
	}
	return nil
}

func (c *cli) mainUsage(w io.Writer) {
	fmt.Fprint(w, `tabpilot drives a real Chromium for AI agents, Go programs and shell scripts.

Usage: tabpilot VERB [flags] [arguments]

Verbs (they talk to the session's daemon, which the first call starts):
`)
	for _, a := range actions {
		if head := a.name + " " + a.args; utf8.RuneCountInString(head) > 24 {
			fmt.Fprintf(w, "  %s\n  %-24s %s\n", head, "", a.summary)
		} else {
			fmt.Fprintf(w, "  %-24s %s\n", head, a.summary)
		}
	}
	fmt.Fprintf(w, "  %-24s %s\n", "stop", "stop the session's daemon, closing its tabs and browsers")
	fmt.Fprintf(w, "  %-24s %s\n", "version", "print the version")
	fmt.Fprint(w, `
Modes:
  serve                    JSON-RPC 2.0 on stdin and stdout, with its own browser
  daemon                   the session daemon (the first call of a session starts it)
  mcp                      the MCP server on stdio (one tool, browser), with its own browser

Every verb takes --session NAME (or TABPILOT_SESSION; default "default"),
--timeout SEC and --json; the actions take --tab NAME (default "main").
Flags may follow the arguments; "--" ends the flags.
Run 'tabpilot VERB --help' for the flags of a verb.

Exit codes: 0 success, 1 the action failed (the error on stderr, or in the
JSON with --json), 2 bad usage.

Environment: TABPILOT_SESSION, TABPILOT_CHROME, TABPILOT_HEADED,
TABPILOT_NO_STEALTH, TABPILOT_BROWSER_ARGS, TABPILOT_SCREENSHOT_DIR,
TABPILOT_MAX_TIMEOUT, TABPILOT_IDLE_TIMEOUT, TABPILOT_LOG_LEVEL,
TABPILOT_EGRESS, TABPILOT_ALLOW_ORIGINS, TABPILOT_ALLOW_SUBRESOURCE_ORIGINS,
TABPILOT_BLOCK_ORIGINS, TABPILOT_AUDIT, TABPILOT_SECRETS, TABPILOT_CDP_HEADERS and
TABPILOT_GRID_PASSWORD (open's, read by the CLI), and
XDG_RUNTIME_DIR (the socket directory is $XDG_RUNTIME_DIR/tabpilot, else
/tmp/tabpilot-UID).
`)
}

// usageFail prints a usage error, the command's synopsis and where its
// help is to stderr: three lines, not the whole help, which an agent
// reading the error would pay for.
func (c *cli) usageFail(cmd *command, err error) int {
	fmt.Fprintf(c.stderr, "tabpilot %s: %v\nUsage: %s [flags]\nRun 'tabpilot %s --help' for its flags.\n", cmd.name, err, cmd.synopsis(), cmd.name)
	return exitUsage
}

// parse parses a command's arguments; done reports that the invocation is
// over (help printed: exit 0; bad usage: exit 2) with code.
func (c *cli) parse(cmd *command, args []string) (pos []string, code int, done bool) {
	pos, err := cmd.parse(args)
	if err == nil {
		return pos, 0, false
	}
	if errHelp(err) {
		cmd.usage(c.stdout)
		return nil, exitOK, true
	}
	return nil, c.usageFail(cmd, err), true
}
