package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

var fuzzSeeds = []string{
	initLine, readyLine,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	callLine(2, `{"action":"tabs"}`),
	callLine(3, `{"action":"click","target":4}`),
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
	`{"jsonrpc":"2.0","id":5,"result":{}}`,
	`{"jsonrpc":"2.0","id":6,"error":{"code":-1,"message":"x"}}`,
	`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, `[]`, `{}`, `null`, `"str"`, `42`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.5e3,"method":"ping","params":null}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{not json`, "\xff\xfe", `{"jsonrpc":"2.0","id":8,"method":5}`,
	`{"jsonrpc":"2.0","id":9,"method":""}`, `{"jsonrpc":"2.0","method":""}`,
}

// FuzzDecodeLine: DecodeLine never panics; a line is either a message that
// encodes and decodes to itself, or one JSON-RPC error response (a parse
// error with id null for invalid JSON), or nothing for a blank line.
//
// In CI: go test -run '^$' -fuzz '^FuzzDecodeLine$' -fuzztime 20000x ./api/mcp
func FuzzDecodeLine(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, reply := DecodeLine(line)
		blank := len(bytes.Trim(line, " \t\r\n")) == 0
		switch {
		case blank:
			if msg != nil || reply != nil {
				t.Fatalf("blank line %q: %v %s", line, msg, reply)
			}
		case reply != nil:
			if msg != nil {
				t.Fatalf("%q: both a message and a reply", line)
			}
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal(reply, &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil || r.ID == nil {
				t.Fatalf("%q: reply %s is not an error response", line, reply)
			}
			if !json.Valid(bytes.Trim(line, " \t\r\n")) && (r.Error.Code != jsonrpc.CodeParseError || string(r.ID) != "null") {
				t.Fatalf("invalid JSON %q: reply %s, want a parse error with id null", line, reply)
			}
		case msg == nil:
			t.Fatalf("%q: neither a message nor a reply", line)
		default:
			b, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				t.Fatalf("%q: encode %v: %v", line, msg, err)
			}
			again, reply := DecodeLine(b)
			if reply != nil || again == nil {
				t.Fatalf("%q: %s does not decode again: %s", line, b, reply)
			}
			b2, _ := jsonrpc.EncodeMessage(again)
			if !bytes.Equal(b, b2) {
				t.Fatalf("%q: round trip %s != %s", line, b, b2)
			}
		}
	})
}

// FuzzServe: Serve ends on any input, and writes only JSON lines.
//
// go test -run '^$' -fuzz '^FuzzServe$' -fuzztime 10s ./api/mcp
func FuzzServe(f *testing.F) {
	f.Add([]byte(strings.Join(fuzzSeeds, "\n")))
	for _, s := range fuzzSeeds {
		f.Add([]byte(initLine + "\n" + readyLine + "\n" + s + "\n"))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out testenv.SyncBuffer
		done := make(chan error, 1)
		go func() {
			done <- Serve(context.Background(), bytes.NewReader(in), &out, &fakeHandler{}, &Options{MaxLine: 512})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("Serve hangs on %q; goroutines:\n%s", in, buf[:runtime.Stack(buf, true)])
		}
		for _, l := range lines(out.String()) {
			if !json.Valid([]byte(l)) {
				t.Fatalf("output line %q is not JSON", l)
			}
		}
	})
}
