package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tabpilot/tabpilot/api"
)

func BenchmarkDecode(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":17,"method":"run","params":{"name":"main","timeout":30,"code":"return await tab.title()"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		reqs, _, _ := Decode(line)
		if len(reqs) != 1 {
			b.Fatal("no request")
		}
	}
}

// BenchmarkServe measures the transport alone: decode, dispatch to a
// goroutine, encode and write, for a stream of requests.
func BenchmarkServe(b *testing.B) {
	line := `{"jsonrpc":"2.0","id":1,"method":"typed","params":{"n":21}}` + "\n"
	in := strings.Repeat(line, 1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if err := Serve(context.Background(), strings.NewReader(in), io.Discard, &testHandler{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientCall is one round trip over a unix socket, as the CLI
// makes to the daemon (without the process start and the dial).
func BenchmarkClientCall(b *testing.B) {
	path := benchSocket(b)
	c, err := Dial(context.Background(), path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	params := map[string]int{"n": 21}
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Call(context.Background(), "typed", params)
		if err != nil || res.Text() != "42" {
			b.Fatal(res, err)
		}
	}
}

func benchSocket(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp("", "rpcb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	path := dir + "/s.sock"
	ln, err := listenUnix(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				Serve(context.Background(), conn, conn, &testHandler{}, &ServerOptions{CancelOnEOF: true})
			}()
		}
	}()
	return path
}

func ExampleServe() {
	h := HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
		if method != "echo" {
			return nil, api.ErrMethodNotFound
		}
		return &api.Result{Content: []api.Content{api.TextContent(string(params))}}, nil
	})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"hi":true}}` + "\n" +
		`{oops` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"nope"}` + "\n")
	var out bytes.Buffer
	// Requests run concurrently: responses come in the order they finish.
	Serve(context.Background(), in, &out, h, nil)
	os.Stdout.Write(out.Bytes())
	// Unordered output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"hi\":true}"}],"details":{},"isError":false}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not valid JSON"}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found"}}
}
