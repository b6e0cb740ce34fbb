//go:build thin

package main

// The thin CLI: built with the tag thin, tabpilot is only the client of the
// session daemon. It leaves out the engine (the service, the browsers, the
// script runtime, MCP), whose package initialisation alone costs a full
// build about 20 ms per call, and runs the engine binary instead: for a
// daemon it starts, and in place of itself (execve) for the modes serve,
// daemon and mcp. The engine is $TABPILOT_ENGINE, else tabpilot-engine
// next to this executable (make build puts both in bin/).

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

const envEngine = "TABPILOT_ENGINE"

// envThinExec marks a process a thin client made: a thin client that
// finds it set was started as the engine (TABPILOT_ENGINE names a thin
// client), and stops rather than start itself again.
const envThinExec = "TABPILOT_THIN_EXEC"

// findEngine returns the engine binary's path.
func findEngine() (string, error) {
	if os.Getenv(envThinExec) != "" {
		return "", fmt.Errorf("$%s (or the tabpilot-engine next to the client) is a thin client too, not the engine: build the engine without the tag thin (make build)", envEngine)
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the engine: %w", err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	if p := os.Getenv(envEngine); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("the engine $%s=%s: %w", envEngine, p, err)
		}
		if r, err := filepath.EvalSymlinks(p); err == nil && r == self {
			return "", fmt.Errorf("$%s=%s is this thin client, not the engine", envEngine, p)
		}
		return p, nil
	}
	p := filepath.Join(filepath.Dir(self), "tabpilot-engine")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("this tabpilot is the thin client, and its engine is not at %s nor in $%s (make build puts both in bin/)", p, envEngine)
	}
	return p, nil
}

// engineExecutable is the program a CLI call starts as the session's
// daemon: the engine, or "" (this program, whose daemon mode then reports
// the missing engine in the daemon's log) when there is none.
func engineExecutable() string {
	p, err := findEngine()
	if err != nil {
		return ""
	}
	return p
}

// execEngine replaces this process with the engine running args. It
// returns only on failure.
func (c *cli) execEngine(args ...string) int {
	p, err := findEngine()
	if err == nil {
		err = syscall.Exec(p, append([]string{p}, args...), append(os.Environ(), envThinExec+"=1"))
	}
	fmt.Fprintf(c.stderr, "tabpilot %s: %v\n", args[0], err)
	return exitFailed
}

func (c *cli) serve(args []string) int  { return c.execEngine(append([]string{"serve"}, args...)...) }
func (c *cli) daemon(args []string) int { return c.execEngine(append([]string{"daemon"}, args...)...) }
func (c *cli) mcp(args []string) int    { return c.execEngine(append([]string{"mcp"}, args...)...) }

// modeCommand shows the engine's help of a mode (the process becomes the
// engine); without an engine, a command whose help says it is missing.
func (c *cli) modeCommand(name string) *command {
	p, err := findEngine()
	if err == nil {
		err = syscall.Exec(p, []string{p, "help", name}, append(os.Environ(), envThinExec+"=1"))
	}
	return newCommand(name, "", "runs in the engine", fmt.Sprintf("tabpilot %s runs in the engine binary: %v.", name, err))
}
