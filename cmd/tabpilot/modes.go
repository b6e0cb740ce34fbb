package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/client"
	"github.com/tabpilot/tabpilot/api/mcp"
	"github.com/tabpilot/tabpilot/api/rpc"
	"github.com/tabpilot/tabpilot/api/service"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// else the module version of the build, else "devel".
var version string

func versionString() (v, commit string) {
	v = version
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	return v, commit
}

// shutdownTimeout bounds the closing of tabs and browsers at exit.
const shutdownTimeout = 20 * time.Second

func versionCommand() (*command, *bool) {
	cmd := newCommand("version", "", "print the version", "Print the version of tabpilot and of the Go toolchain that built it.")
	jsonOut := cmd.section("Flags").Bool("json", false, "print the result as JSON")
	return cmd, jsonOut
}

func (c *cli) version(args []string) int {
	cmd, jsonOut := versionCommand()
	pos, code, done := c.parse(cmd, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.usageFail(cmd, usagef("unexpected argument %q", pos[0]))
	}
	v, commit := versionString()
	text := fmt.Sprintf("tabpilot %s (%s %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	details := map[string]any{"version": v, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}
	if commit != "" {
		details["commit"] = commit
	}
	return c.emit(&api.Result{Content: []api.Content{api.TextContent(text)}, Details: details}, *jsonOut)
}

type stopFlags struct {
	session string
	timeout float64
	json    bool
}

func (c *cli) stopCommand() (*command, *stopFlags) {
	cmd := newCommand("stop", "", "stop the session's daemon",
		`Stop the session's daemon: it closes every tab and browser, removes its socket
and exits. It waits for that (--timeout, default 60 seconds). Stopping a
session without a daemon succeeds.`)
	f := &stopFlags{session: c.getenv(envSession)}
	if f.session == "" {
		f.session = client.DefaultSession
	}
	c.commonFlags(cmd.section("Flags"), &f.session, &f.timeout, &f.json)
	return cmd, f
}

func (c *cli) stop(args []string) int {
	cmd, f := c.stopCommand()
	pos, code, done := c.parse(cmd, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.usageFail(cmd, usagef("unexpected argument %q", pos[0]))
	}
	if err := client.ValidSession(f.session); err != nil {
		return c.usageFail(cmd, err)
	}
	if f.timeout < 0 {
		return c.usageFail(cmd, usagef("--timeout %v is negative", f.timeout))
	}
	wait := 60 * time.Second
	if f.timeout > 0 {
		wait = time.Duration(f.timeout * float64(time.Second))
	}
	ctx, cancel := context.WithTimeout(c.ctx, wait)
	defer cancel()
	opts := &client.Options{Session: f.session, Dir: client.DefaultDir(c.getenv(envRuntimeDir)), Logger: c.logger(slog.LevelWarn)}
	stopped, err := client.Stop(ctx, opts)
	if err != nil {
		return c.emit(callError(ctx, client.MethodStop, err, wait), f.json)
	}
	text := fmt.Sprintf("Stopped the daemon of session %q", f.session)
	if !stopped {
		text = fmt.Sprintf("No daemon runs for session %q", f.session)
	}
	return c.emit(&api.Result{Content: []api.Content{api.TextContent(text)},
		Details: map[string]any{"action": "stop", "session": f.session, "stopped": stopped}}, f.json)
}

func (c *cli) serveCommand() (*command, *config, error) {
	cmd := newCommand("serve", "", "JSON-RPC 2.0 on stdio",
		`Serve JSON-RPC 2.0 on stdin and stdout, one message per line, with a browser of
its own (no daemon). Methods: open, close, run, observe, tabs, screenshot,
extract, click, type, fill, press; params are the fields of DESIGN.md section 3.
$/cancelRequest {"id": ID} cancels a request in flight. When stdin ends, the
answers still due are written, the tabs are closed and tabpilot exits 0.
Logs go to stderr.`)
	cfg, envErr := configFromEnv(c.getenv)
	if c.getenv(envLogLevel) == "" {
		cfg.logLevel = slog.LevelWarn // stderr is the client's
	}
	cfg.addFlags(cmd.section("Flags"))
	return cmd, &cfg, envErr
}

func (c *cli) serve(args []string) int {
	cmd, cfg, envErr := c.serveCommand()
	return c.stdioMode("serve", cmd, cfg, envErr, args, func(svc *service.Service, log *slog.Logger) error {
		return rpc.Serve(c.ctx, c.stdin, c.stdout, svc, &rpc.ServerOptions{Logger: log})
	})
}

// stdioMode runs a protocol server on stdin and stdout (serve, mcp) with a
// service of its own: it parses the mode's flags, starts the service, runs
// serveFn until stdin ends or the process is signalled, then shuts the
// browsers down.
func (c *cli) stdioMode(name string, cmd *command, cfg *config, envErr error, args []string, serveFn func(*service.Service, *slog.Logger) error) int {
	pos, code, done := c.parse(cmd, args)
	if done {
		return code
	}
	if envErr != nil {
		return c.usageFail(cmd, envErr)
	}
	if len(pos) > 0 {
		return c.usageFail(cmd, usagef("unexpected argument %q", pos[0]))
	}
	if err := cfg.finish(); err != nil {
		return c.usageFail(cmd, err)
	}
	log := c.logger(cfg.logLevel)
	// A client that closes our stdout must not kill us with SIGPIPE before
	// the browsers are closed: the write fails with EPIPE instead.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)

	svc, stopSvc, err := cfg.startService(c.ctx, log, "")
	if err != nil {
		fmt.Fprintf(c.stderr, "tabpilot %s: %v\n", name, err)
		return exitFailed
	}
	err = serveFn(svc, log)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), shutdownTimeout)
	defer cancel()
	if serr := stopSvc(sctx); serr != nil {
		log.Error(name+": shutdown", "err", serr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error(name+": stopped", "err", err)
		return exitFailed
	}
	return exitOK
}

func (c *cli) mcpCommand() (*command, *config, error) {
	cmd := newCommand("mcp", "", "the MCP server on stdio",
		`Serve the Model Context Protocol on stdin and stdout (newline-delimited
JSON-RPC 2.0), with a browser of its own (no daemon). It offers one tool,
browser, whose action is open, close, run, observe, click, type, fill, press,
screenshot, extract or tabs. A client's notifications/cancelled cancels its
call. When stdin ends, the answers still due are written, the tabs are closed
and tabpilot exits 0. Nothing but the protocol goes to stdout; logs go to
stderr.

In an MCP client's configuration:
  {"mcpServers": {"tabpilot": {"command": "tabpilot", "args": ["mcp"]}}}`)
	cfg, envErr := configFromEnv(c.getenv)
	if c.getenv(envLogLevel) == "" {
		cfg.logLevel = slog.LevelWarn // stderr is the client's
	}
	cfg.addFlags(cmd.section("Flags"))
	return cmd, &cfg, envErr
}

func (c *cli) mcp(args []string) int {
	cmd, cfg, envErr := c.mcpCommand()
	return c.stdioMode("mcp", cmd, cfg, envErr, args, func(svc *service.Service, log *slog.Logger) error {
		v, _ := versionString()
		return mcp.Serve(c.ctx, c.stdin, c.stdout, svc, &mcp.Options{Version: v, Logger: log})
	})
}
