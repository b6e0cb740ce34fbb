package mcp

import (
	"reflect"
	"testing"

	"github.com/tabpilot/tabpilot/api"
)

// TestOpenPoolFields: open's context, proxy and the remote app fields
// (cdp_headers, grid) reach the api request; another action refuses
// context.
func TestOpenPoolFields(t *testing.T) {
	in := &Input{Action: "open", Context: "agent1", Proxy: "http://127.0.0.1:3128",
		App: &api.App{Grid: "http://127.0.0.1:4444", GridUser: "u", GridPassword: "p"}}
	r, err := request(in, map[string]any{"action": "open", "context": "agent1", "proxy": "http://127.0.0.1:3128", "app": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	want := &api.OpenRequest{Context: "agent1", Proxy: "http://127.0.0.1:3128", App: in.App}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("request = %+v", r)
	}
	if _, err := request(&Input{Action: "observe", Context: "a"}, map[string]any{"action": "observe", "context": "a"}); err == nil {
		t.Fatal("observe took a context")
	}
}
