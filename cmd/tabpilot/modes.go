package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/client"
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
