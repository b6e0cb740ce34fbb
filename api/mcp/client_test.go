package mcp

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoClientCommand is the README's Go snippet: a go-sdk client starts
// `tabpilot mcp` with CommandTransport and calls the browser tool; closing
// the session ends the binary and its browser.
func TestGoClientCommand(t *testing.T) {
	skipShort(t)
	bin := tabpilotBinary(t)
	env, marker := binaryEnv(t)
	ctx := context.Background()

	cmd := exec.Command(bin, "mcp")
	cmd.Env = env
	client := sdk.NewClient(&sdk.Implementation{Name: "my-agent", Version: "v1"}, nil)
	// TerminateDuration: how long Close waits for the exit before SIGTERM
	// (default 5s); generous here, for a loaded test machine.
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	browse := func(args map[string]any) string {
		t.Helper()
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "browser", Arguments: args})
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if res.IsError {
			t.Fatalf("%v: %s", args, resultText(res))
		}
		return resultText(res)
	}
	if got := browse(map[string]any{"action": "open", "url": pageSrv.URL}); !strings.Contains(got, `"Tabpilot MCP Test"`) {
		t.Errorf("open: %s", got)
	}
	n := elementNumber(t, browse(map[string]any{"action": "observe", "query": "Press"}), `button "Press me"`)
	browse(map[string]any{"action": "click", "target": n})
	if got := browse(map[string]any{"action": "run", "code": "return await tab.evaluate(() => document.getElementById('out').textContent)"}); got != "clicked" {
		t.Errorf("after the click: %q", got)
	}
	// Close closes stdin and returns the command's Wait error: nil is exit 0
	// (not killed: the process had a minute).
	if err := session.Close(); err != nil {
		t.Errorf("close: %v, want exit 0", err)
	}
	waitUntil(t, "no Chromium of tabpilot mcp remains", 10*time.Second, func() bool { return len(markedProcs(marker)) == 0 })
}
