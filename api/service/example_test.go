package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/api/service"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// Open a page, read its title in a run, and close the browser: the Go
// door, without the daemon.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hello, tabpilot</title><button>OK</button>`)
	}))
	defer srv.Close()

	svc := service.New(&service.Options{BrowserArgs: testenv.BrowserArgs})
	defer svc.Shutdown(context.Background())
	ctx := context.Background()

	res := svc.Open(ctx, &api.OpenRequest{URL: srv.URL})
	if res.IsError {
		fmt.Println(res.Text())
		return
	}
	res = svc.Run(ctx, &api.RunRequest{Code: `return await tab.title()`})
	fmt.Println(res.Text())

	// The same call through the JSON-RPC dispatcher.
	res, _ = svc.Call(ctx, "observe", json.RawMessage(`{"name": "main"}`))
	fmt.Println(len(res.Details["elements"].([]any)), "element")
	// Output:
	// Hello, tabpilot
	// 1 element
}
