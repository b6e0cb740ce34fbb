package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabpilot/tabpilot/api/mcp"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// A go-sdk client calls tabpilot's MCP server in the same program, over
// in-memory transports: open a page, observe it, click by number, read the
// effect with a run. (To drive the binary instead, connect with
// &sdk.CommandTransport{Command: exec.Command("tabpilot", "mcp")}.)
func Example() {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hello, tabpilot</title>
<button onclick="document.title = 'Thanks!'">OK</button>`)
	}))
	defer page.Close()
	ctx := context.Background()

	svc := service.New(&service.Options{BrowserArgs: testenv.BrowserArgs})
	defer svc.Shutdown(ctx)
	serverSide, clientSide := sdk.NewInMemoryTransports()
	if _, err := mcp.NewServer(svc, nil).Connect(ctx, serverSide, nil); err != nil {
		log.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "example", Version: "v1"}, nil)
	session, err := client.Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	for _, args := range []map[string]any{
		{"action": "open", "url": page.URL},
		{"action": "observe"},
		{"action": "click", "target": 1},
		{"action": "run", "code": "return await tab.title()"},
		{"action": "close"},
	} {
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolName, Arguments: args})
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range res.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				fmt.Println(strings.TrimSpace(strings.ReplaceAll(t.Text, page.URL, "URL")))
			}
		}
	}
	// Output:
	// Opened tab "main" (headless browser): URL/ — "Hello, tabpilot"
	// page "Hello, tabpilot" URL/
	// 1 [OK]
	// Clicked 1
	// Thanks!
	// Closed tab "main"
}
