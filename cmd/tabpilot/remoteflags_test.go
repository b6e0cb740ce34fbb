package main

import (
	"reflect"
	"testing"

	"github.com/tabpilot/tabpilot/api"
)

// openRequest builds the open request of args with the environment env.
func openRequest(t *testing.T, env map[string]string, args ...string) api.OpenRequest {
	t.Helper()
	c := &cli{getenv: func(k string) string { return env[k] }}
	var open *action
	for _, a := range actions {
		if a.name == "open" {
			open = a
		}
	}
	cmd, _, build, _ := c.actionCommand(open)
	pos, err := cmd.parse(args)
	if err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	req, err := build(pos, api.Common{})
	if err != nil {
		t.Fatalf("build %q: %v", args, err)
	}
	return req.(api.OpenRequest)
}

// TestOpenRemoteFlags: --cdp-url with --cdp-header (repeatable, after the
// lines of TABPILOT_CDP_HEADERS), --grid with its credentials (the
// password from TABPILOT_GRID_PASSWORD when not given), --context and
// --proxy reach the open request.
func TestOpenRemoteFlags(t *testing.T) {
	env := map[string]string{envCDPHeaders: "X-Pool: p1\n\n  X-Env: two; three  \n", envGridPassword: "envpw"}
	r := openRequest(t, env, "http://x/", "--cdp-url", "wss://pool:3000/chromium?token=T&timeout=60000",
		"--cdp-header", "Authorization: Bearer T", "--cdp-header", "X-Two: 2", "--connect-timeout", "7.5")
	want := &api.App{CDPURL: "wss://pool:3000/chromium?token=T&timeout=60000", ConnectTimeout: 7.5,
		CDPHeaders: []string{"X-Pool: p1", "X-Env: two; three", "Authorization: Bearer T", "X-Two: 2"}}
	if r.URL != "http://x/" || !reflect.DeepEqual(r.App, want) {
		t.Fatalf("cdp: %+v app %+v", r, r.App)
	}
	r = openRequest(t, env, "--grid", "http://127.0.0.1:4444", "--grid-user", "u", "--context", "agent1", "--proxy", "socks5://127.0.0.1:1080")
	want = &api.App{Grid: "http://127.0.0.1:4444", GridUser: "u", GridPassword: "envpw"}
	if !reflect.DeepEqual(r.App, want) || r.Context != "agent1" || r.Proxy != "socks5://127.0.0.1:1080" {
		t.Fatalf("grid: %+v app %+v", r, r.App)
	}
	if r = openRequest(t, env, "--grid", "http://g:4444", "--grid-password", "flagpw"); r.App.GridPassword != "flagpw" {
		t.Fatalf("--grid-password: %+v", r.App)
	}
	// The headers of the variable go only with --cdp-url.
	if r = openRequest(t, env, "--context", "c"); r.App != nil || r.Context != "c" {
		t.Fatalf("context only: %+v", r)
	}
}
