package main

import (
	"os"
	"os/exec"
	"testing"
)

// BenchmarkCLICall is one CLI invocation against a running daemon: process
// start, dial, one call (tabs, which launches no browser) and output.
func BenchmarkCLICall(b *testing.B) {
	xdg, err := os.MkdirTemp("", "tpb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(xdg)
	vars := append(os.Environ(), "XDG_RUNTIME_DIR="+xdg, "TABPILOT_IDLE_TIMEOUT=60")
	tp := func(args ...string) error {
		c := exec.Command(bin, args...)
		c.Env = vars
		return c.Run()
	}
	if err := tp("tabs"); err != nil { // starts the daemon
		b.Fatal(err)
	}
	defer tp("stop")
	b.ReportAllocs()
	for b.Loop() {
		if err := tp("tabs", "--json"); err != nil {
			b.Fatal(err)
		}
	}
}
