//go:build !thin

package main

// The engine: the modes that hold a Service and its browsers (serve, mcp;
// the daemon is daemon.go). A build with the tag thin leaves them out
// (thin.go), for a small CLI that starts the engine binary instead.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tabpilot/tabpilot/api/mcp"
	"github.com/tabpilot/tabpilot/api/rpc"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/browser/egress"
)

// shutdownTimeout bounds the closing of tabs and browsers at exit.
const shutdownTimeout = 20 * time.Second

// engineExecutable is the program a CLI call starts as the session's
// daemon: "" is this one.
func engineExecutable() string { return "" }

// modeCommand returns the command of a mode (serve, daemon, mcp), for
// help.
func (c *cli) modeCommand(name string) *command {
	switch name {
	case "serve":
		cmd, _, _ := c.serveCommand()
		return cmd
	case "daemon":
		cmd, _, _, _, _ := c.daemonCommand()
		return cmd
	case "mcp":
		cmd, _, _ := c.mcpCommand()
		return cmd
	}
	return nil
}

// startService starts what the configuration asks for around a Service:
// the egress proxy (public-only) and the audit log; stop shuts the service
// down and then closes them. ctx is the process's lifetime.
func (c *config) startService(ctx context.Context, log *slog.Logger, stateDir string) (svc *service.Service, stop func(context.Context) error, err error) {
	opts := c.serviceOptions(log)
	opts.StateDir = stateDir
	if stateDir != "" {
		opts.DownloadDir = strings.TrimSuffix(stateDir, ".browsers") + ".downloads"
	}
	var proxy *egress.Proxy
	policy, _ := egress.ParsePolicy(c.egress)
	rules, err := c.rules()
	if err != nil {
		return nil, nil, err
	}
	if policy.Guarded() || !rules.Empty() {
		// The guard proxy enforces the origin rules too, so any rule
		// starts it, under either policy.
		proxy = egress.New(&egress.Options{Policy: policy, Rules: rules, Logger: log.With("src", "egress")})
		if _, err := proxy.Start(ctx); err != nil {
			return nil, nil, fmt.Errorf("start the egress proxy: %w", err)
		}
		opts.Egress = proxy
		log.Info("egress guard", "policy", string(policy), "allow", len(rules.Allow), "allow_subresource", len(rules.AllowSubresource), "block", len(rules.Block), "proxy", proxy.Addr())
	}
	if c.audit != "" {
		a, err := service.OpenAudit(c.audit)
		if err != nil {
			if proxy != nil {
				proxy.Close()
			}
			return nil, nil, fmt.Errorf("open the audit log: %w", err)
		}
		opts.Audit = a
	}
	svc = service.New(opts)
	go func() {
		if n := service.SweepTemp("", service.DefaultTempAge); n > 0 {
			log.Info("removed old temporary files", "count", n, "dir", os.TempDir())
		}
	}()
	stop = func(ctx context.Context) error {
		err := svc.Shutdown(ctx)
		if opts.Audit != nil {
			opts.Audit.Close()
		}
		if proxy != nil {
			proxy.Close()
		}
		return err
	}
	return svc, stop, nil
}

func (c *config) serviceOptions(log *slog.Logger) *service.Options {
	return &service.Options{
		ChromePath:    c.chrome,
		Headed:        c.headed,
		BrowserArgs:   c.browserArgs,
		NoStealth:     c.noStealth,
		MaxTimeout:    c.maxTimeout,
		ScreenshotDir: c.screenshotDir,
		Secrets:       c.secrets,
		Logger:        log,
	}
}

func (c *cli) serveCommand() (*command, *config, error) {
	cmd := newCommand("serve", "", "JSON-RPC 2.0 on stdio",
		`Serve JSON-RPC 2.0 on stdin and stdout, one message per line, with a browser of
its own (no daemon). Methods: open, close, run, observe, tabs, screenshot,
extract, click, type, fill, press, hover, select, scroll, wait, back,
forward, reload, dialog, upload; their params are listed in the README
(JSON-RPC and Go).
$/cancelRequest {"id": ID} cancels a request in flight. When stdin ends, the
answers still due are written, the tabs are closed and tabpilot exits 0.
Logs go to stderr.`)
	return c.stdioFlags(cmd)
}

// stdioFlags gives a stdio mode's command its configuration flags; its
// logs default to warnings, since stderr is the client's.
func (c *cli) stdioFlags(cmd *command) (*command, *config, error) {
	cfg, envErr := configFromEnv(c.getenv)
	if c.getenv(envLogLevel) == "" {
		cfg.logLevel = slog.LevelWarn
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
	log := cfg.secrets.Logger(c.logger(cfg.logLevel))
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
screenshot, extract, tabs, hover, select, scroll, wait, back, forward,
reload, dialog or upload. A client's notifications/cancelled cancels its
call. When stdin ends, the answers still due are written, the tabs are closed
and tabpilot exits 0. Nothing but the protocol goes to stdout; logs go to
stderr.

In an MCP client's configuration:
  {"mcpServers": {"tabpilot": {"command": "tabpilot", "args": ["mcp"]}}}`)
	return c.stdioFlags(cmd)
}

func (c *cli) mcp(args []string) int {
	cmd, cfg, envErr := c.mcpCommand()
	return c.stdioMode("mcp", cmd, cfg, envErr, args, func(svc *service.Service, log *slog.Logger) error {
		v, _ := versionString()
		return mcp.Serve(c.ctx, c.stdin, c.stdout, svc, &mcp.Options{Version: v, Logger: log})
	})
}
