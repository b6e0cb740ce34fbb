package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

type mcpResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *struct {
		Content []struct{ Type, Text string } `json:"content"`
		IsError bool                          `json:"isError"`
		Tools   []struct{ Name string }       `json:"tools"`
	} `json:"result"`
	Error *struct{ Code int } `json:"error"`
}

// mcpResponses decodes every stdout line as a JSON-RPC message, by id.
func mcpResponses(t *testing.T, stdout string) map[string]mcpResponse {
	t.Helper()
	m := map[string]mcpResponse{}
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var r mcpResponse
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.JSONRPC != "2.0" {
			t.Fatalf("stdout line %q is not a JSON-RPC message: %v", l, err)
		}
		m[string(r.ID)] = r
	}
	return m
}

func TestMCPMode(t *testing.T) {
	// Without a browser: the handshake, the tool list, a malformed line
	// (answered, and serving goes on), an unknown method; at the end of
	// stdin, exit 0. Nothing but the protocol on stdout, nothing on stderr.
	e := newEnv(t)
	in := mcpInit + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{oops
{"jsonrpc":"2.0","id":3,"method":"nosuch/method"}
{"jsonrpc":"2.0","id":4,"method":"ping"}
`
	stdout, stderr, code := e.runStdin(in, "mcp")
	if code != 0 || stderr != "" {
		t.Fatalf("mcp: exit %d, stderr %q", code, stderr)
	}
	m := mcpResponses(t, stdout)
	if len(m) != 5 {
		t.Errorf("%d answers, want 5:\n%s", len(m), stdout)
	}
	if r := m["2"]; r.Result == nil || len(r.Result.Tools) != 1 || r.Result.Tools[0].Name != "browser" {
		t.Errorf("tools/list: %+v", r)
	}
	if r := m["null"]; r.Error == nil || r.Error.Code != -32700 {
		t.Errorf("malformed line: %+v", r)
	}
	if r := m["3"]; r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("unknown method: %+v", r)
	}
	if r := m["4"]; r.Result == nil {
		t.Errorf("ping after the errors: %+v", r)
	}
	if exists(e.dir()) {
		t.Error("mcp started a daemon")
	}
}

func TestMCPEndToEnd(t *testing.T) {
	// With a browser: open, then run, through the binary (each call
	// waits for the previous answer: a busy tab refuses a second action);
	// when stdin ends, the browser is closed and it exits 0.
	e, marker := browserEnv(t)
	srv := testServer(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Env = e.vars
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewReader(out)
	exchange := func(send string) mcpResponse {
		t.Helper()
		io.WriteString(stdin, send)
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer to %s: %v (stderr %s)", send, err, stderr.String())
		}
		return mcpResponses(t, l)[strings.TrimSpace(string(mustID(t, send)))]
	}
	call := func(id int, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"browser","arguments":%s}}`+"\n", id, args)
	}
	first, ready, _ := strings.Cut(mcpInit, "\n")
	if r := exchange(first + "\n"); r.Result == nil {
		t.Fatalf("initialize: %+v", r)
	}
	io.WriteString(stdin, ready)
	if r := exchange(call(2, fmt.Sprintf(`{"action":"open","url":%q}`, srv.URL))); r.Result == nil || r.Result.IsError ||
		!strings.HasPrefix(r.Result.Content[0].Text, `Opened tab "main"`) {
		t.Fatalf("open: %+v (stderr %s)", r, stderr.String())
	}
	if len(markedProcs(marker)) == 0 {
		t.Fatal("no Chromium of the test runs after open")
	}
	if r := exchange(call(3, `{"action":"run","code":"return await tab.title()"}`)); r.Result == nil || r.Result.IsError ||
		r.Result.Content[0].Text != "Tabpilot Test" {
		t.Errorf("run: %+v", r)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcp at the end of stdin: %v, want exit 0 (stderr %s)", err, stderr.String())
	}
	checkNoBrowser(t, marker)
}

func mustID(t *testing.T, line string) json.RawMessage {
	t.Helper()
	var m struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	return m.ID
}
