package mcp

import (
	"context"
	"io"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkDecodeLine: reading one tools/call line of a client.
func BenchmarkDecodeLine(b *testing.B) {
	line := []byte(callLine(42, `{"action":"click","name":"main","target":4}`))
	b.ReportAllocs()
	for b.Loop() {
		if msg, reply := DecodeLine(line); msg == nil || reply != nil {
			b.Fatal("not decoded")
		}
	}
}

// BenchmarkCallTool: one browser tool call through the MCP layer (a go-sdk
// client, the transport, argument validation, the result's conversion),
// with an in-test handler: the overhead the MCP door adds to an action.
func BenchmarkCallTool(b *testing.B) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), sr, sw, &fakeHandler{}, nil); sw.Close() }()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	params := &sdk.CallToolParams{Name: ToolName, Arguments: map[string]any{"action": "click", "target": 4}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.StopTimer()
	cs.Close()
	cw.Close()
	<-done
}
