package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}`,
	`{"jsonrpc":"2.0","method":"echo"}`,
	`{"jsonrpc":"2.0","id":"x","method":"typed","params":[1,2]}`,
	`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","method":"echo"},3]`,
	`[]`, `[[]]`, `{}`, `null`, `"str"`, `{"jsonrpc":"2.0","id":null,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1.5e3,"method":"x","params":null}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`,
	`{not json`, "\xff\xfe", `{"jsonrpc":"2.0","id":1,"method":"$/cancelRequest","params":{"id":1}}`,
}

// FuzzDecode: Decode never panics, and what it returns is well formed.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		reqs, errs, batch := Decode(line)
		if batch && !json.Valid(line) {
			t.Fatalf("batch from invalid JSON %q", line)
		}
		for _, r := range reqs {
			if r.JSONRPC != Version {
				t.Fatalf("request with jsonrpc %q", r.JSONRPC)
			}
			if r.ID != nil && !json.Valid(r.ID) {
				t.Fatalf("request id %q is not JSON", r.ID)
			}
			if r.Params != nil && r.Params[0] != '{' && r.Params[0] != '[' {
				t.Fatalf("params %q are not structured", r.Params)
			}
			// A request re-encodes and decodes to itself.
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("marshal %+v: %v", r, err)
			}
			again, errs2, _ := Decode(b)
			if len(again) != 1 || len(errs2) != 0 || again[0].Method != r.Method ||
				!bytes.Equal(again[0].ID, r.ID) || again[0].IsNotification() != r.IsNotification() {
				t.Fatalf("round trip of %s: %+v %+v", b, again, errs2)
			}
		}
		for _, e := range errs {
			if e.Error == nil || e.Result != nil {
				t.Fatalf("error response %+v", e)
			}
			b, err := json.Marshal(e)
			if err != nil || !json.Valid(b) {
				t.Fatalf("error response does not marshal: %v", err)
			}
		}
		if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
			if len(reqs) != 0 || len(errs) != 1 || errs[0].Error.Code != CodeParseError || string(errs[0].ID) != "null" {
				t.Fatalf("invalid JSON %q: %+v %+v, want one parse error with id null", line, reqs, errs)
			}
		}
	})
}

// FuzzServe: Serve ends on any input, and every line it writes is a JSON
// response (or an array of them).
func FuzzServe(f *testing.F) {
	f.Add([]byte(strings.Join(fuzzSeeds, "\n")))
	for _, s := range fuzzSeeds {
		f.Add([]byte(s + "\n"))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := Serve(context.Background(), bytes.NewReader(in), &out, &testHandler{}, &ServerOptions{MaxLine: 256}); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			if !json.Valid([]byte(l)) {
				t.Fatalf("output line %q is not JSON", l)
			}
			if l[0] == '{' {
				var r Response
				if json.Unmarshal([]byte(l), &r) != nil || r.JSONRPC != Version || (r.Error == nil) == (r.Result == nil) {
					t.Fatalf("bad response %q", l)
				}
			}
		}
	})
}
