package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/testenv"
)

// testHandler is a small in-test Handler: this is a transport test.
type testHandler struct {
	started   chan string   // receives the method of every call, when set
	cancelled chan struct{} // closed by "block" when its context ends
	once      sync.Once
	barrier   *sync.WaitGroup // "barrier" waits for this
}

func (h *testHandler) Call(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
	if h.started != nil {
		h.started <- method
	}
	switch method {
	case "echo":
		return &api.Result{Content: []api.Content{api.TextContent(string(params))}, Details: map[string]any{"method": method}}, nil
	case "fail":
		return api.ErrorResult(errcode.ElementNotFound, "no such element"), nil
	case "typed":
		var p struct {
			N int `json:"n"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("%w: %v", api.ErrInvalidParams, err)
		}
		return &api.Result{Content: []api.Content{api.TextContent(fmt.Sprint(p.N * 2))}}, nil
	case "panic":
		panic("boom")
	case "nil":
		return nil, nil
	case "oops":
		return nil, errors.New("disk on fire")
	case "block":
		<-ctx.Done()
		if h.cancelled != nil {
			h.once.Do(func() { close(h.cancelled) })
		}
		return &api.Result{Content: []api.Content{api.TextContent("cancelled")}}, nil
	case "blockfail":
		<-ctx.Done()
		return api.ErrorResult(errcode.Timeout, "run stopped: "+context.Cause(ctx).Error()), nil
	case "barrier":
		h.barrier.Done()
		h.barrier.Wait()
		return &api.Result{Content: []api.Content{api.TextContent("through")}}, nil
	}
	return nil, fmt.Errorf("%w: %s", api.ErrMethodNotFound, method)
}

// serveString runs Serve over input and returns the response lines.
func serveString(t *testing.T, input string, h Handler, opts *ServerOptions) []string {
	t.Helper()
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(input), &out, h, opts); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	s := strings.TrimSuffix(out.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func decodeResp(t *testing.T, line string) Response {
	t.Helper()
	var r Response
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("response %q is not JSON: %v", line, err)
	}
	if r.JSONRPC != "2.0" {
		t.Fatalf("response %q: jsonrpc = %q", line, r.JSONRPC)
	}
	return r
}

// byID indexes responses by their raw id (responses may come in any order).
func byID(t *testing.T, lines []string) map[string]Response {
	t.Helper()
	m := map[string]Response{}
	for _, l := range lines {
		r := decodeResp(t, l)
		m[string(r.ID)] = r
	}
	return m
}

func TestMalformedLineThenServed(t *testing.T) {
	in := "{not json\n" + `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":1}}` + "\n"
	lines := serveString(t, in, &testHandler{}, nil)
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2: %q", len(lines), lines)
	}
	// The parse error is answered first: the echo runs in its own goroutine,
	// but the parse error is written before the next line is even read.
	first := decodeResp(t, lines[0])
	if first.Error == nil || first.Error.Code != CodeParseError || string(first.ID) != "null" {
		t.Fatalf("first response = %s, want a -32700 error with id null", lines[0])
	}
	if !strings.Contains(lines[0], `"id":null`) {
		t.Errorf("the parse error must carry an explicit null id: %s", lines[0])
	}
	second := decodeResp(t, lines[1])
	if string(second.ID) != "7" || second.Error != nil {
		t.Fatalf("second response = %s, want the echo result for id 7", lines[1])
	}
	var res api.Result
	if err := json.Unmarshal(second.Result, &res); err != nil {
		t.Fatal(err)
	}
	if got := res.Text(); got != `{"a":1}` {
		t.Errorf("echo text = %q, want %q", got, `{"a":1}`)
	}
	if res.IsError || res.Details["method"] != "echo" {
		t.Errorf("echo result = %+v", res)
	}
}

func TestProtocolErrors(t *testing.T) {
	cases := []struct {
		name, line string
		id         string
		code       int
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, "1", CodeMethodNotFound},
		{"wrong param types", `{"jsonrpc":"2.0","id":2,"method":"typed","params":{"n":"x"}}`, "2", CodeInvalidParams},
		{"primitive params", `{"jsonrpc":"2.0","id":3,"method":"typed","params":5}`, "3", CodeInvalidParams},
		{"string id", `{"jsonrpc":"2.0","id":"a\"b","method":"nope"}`, `"a\"b"`, CodeMethodNotFound},
		{"not an object", `42`, "null", CodeInvalidRequest},
		{"empty batch", `[]`, "null", CodeInvalidRequest},
		{"wrong version", `{"jsonrpc":"1.0","id":4,"method":"echo"}`, "4", CodeInvalidRequest},
		{"no version", `{"id":5,"method":"echo"}`, "5", CodeInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":6,"method":1}`, "6", CodeInvalidRequest},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"echo"}`, "null", CodeInvalidRequest},
		{"member names are exact", `{"jsonrpc":"2.0","id":8,"Method":"echo"}`, "8", CodeInvalidRequest},
		{"handler error", `{"jsonrpc":"2.0","id":9,"method":"oops"}`, "9", CodeInternalError},
		{"handler panic", `{"jsonrpc":"2.0","id":10,"method":"panic"}`, "10", CodeInternalError},
		{"nil result", `{"jsonrpc":"2.0","id":11,"method":"nil"}`, "11", CodeInternalError},
		{"truncated", `{"jsonrpc":"2.0","id":12,"method":"echo"`, "null", CodeParseError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Each bad line is followed by a good one: serving goes on.
			in := c.line + "\n" + `{"jsonrpc":"2.0","id":"next","method":"typed","params":{"n":21}}` + "\n"
			m := byID(t, serveString(t, in, &testHandler{}, nil))
			r, ok := m[c.id]
			if !ok {
				t.Fatalf("no response with id %s in %v", c.id, m)
			}
			if r.Error == nil || r.Error.Code != c.code {
				t.Fatalf("response = %+v, want error code %d", r, c.code)
			}
			if r.Error.Message == "" {
				t.Error("error without message")
			}
			next := m[`"next"`]
			var res api.Result
			if next.Error != nil || json.Unmarshal(next.Result, &res) != nil || res.Text() != "42" {
				t.Fatalf("the next line was not served: %+v", next)
			}
		})
	}
}

func TestFailedActionIsAResult(t *testing.T) {
	lines := serveString(t, `{"jsonrpc":"2.0","id":1,"method":"fail"}`+"\n", &testHandler{}, nil)
	r := decodeResp(t, lines[0])
	if r.Error != nil {
		t.Fatalf("a failed action must be a result, got error %v", r.Error)
	}
	var res api.Result
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	e := res.ErrorOf()
	if !res.IsError || e == nil || e.Code != errcode.ElementNotFound || e.Hint == "" {
		t.Fatalf("result = %s, want isError with details.error element_not_found and a hint", r.Result)
	}
}

func TestNotificationsGetNoResponse(t *testing.T) {
	h := &testHandler{started: make(chan string, 10)}
	in := `{"jsonrpc":"2.0","method":"echo","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","method":"nope"}` + "\n" +
		`{"jsonrpc":"2.0","method":"panic"}` + "\n" +
		`{"jsonrpc":"2.0","method":"typed","params":"primitive"}` + "\n" +
		"\n   \n" // blank lines are ignored
	if lines := serveString(t, in, h, nil); len(lines) != 0 {
		t.Fatalf("notifications got responses: %q", lines)
	}
	close(h.started)
	var got []string
	for m := range h.started {
		got = append(got, m)
	}
	// The notification with primitive params is dropped before the handler.
	if len(got) != 3 {
		t.Errorf("handler saw %q, want echo, nope, panic", got)
	}
}

func TestBatch(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"method":"typed","params":{"n":1}},` +
		`{"jsonrpc":"2.0","method":"echo"},` +
		`{"jsonrpc":"2.0","id":2,"method":"nope"},` +
		`7]` + "\n"
	lines := serveString(t, in, &testHandler{}, nil)
	if len(lines) != 1 {
		t.Fatalf("got %d lines, want one array: %q", len(lines), lines)
	}
	var resps []Response
	if err := json.Unmarshal([]byte(lines[0]), &resps); err != nil {
		t.Fatalf("batch response is not an array: %v: %s", err, lines[0])
	}
	if len(resps) != 3 {
		t.Fatalf("got %d responses, want 3 (the notification gets none): %s", len(resps), lines[0])
	}
	if string(resps[0].ID) != "1" || resps[0].Error != nil {
		t.Errorf("resps[0] = %+v", resps[0])
	}
	if string(resps[1].ID) != "2" || resps[1].Error == nil || resps[1].Error.Code != CodeMethodNotFound {
		t.Errorf("resps[1] = %+v", resps[1])
	}
	if string(resps[2].ID) != "null" || resps[2].Error == nil || resps[2].Error.Code != CodeInvalidRequest {
		t.Errorf("resps[2] = %+v", resps[2])
	}
	// A batch of notifications only gets nothing at all.
	if lines := serveString(t, `[{"jsonrpc":"2.0","method":"echo"}]`+"\n", &testHandler{}, nil); len(lines) != 0 {
		t.Errorf("all-notification batch got %q", lines)
	}
}

// countingReader produces a line of n filler bytes inside a JSON string, then
// a good request, without ever holding the big line in memory, and counts
// what it handed out.
type countingReader struct {
	head, tail []byte
	n          int64 // filler bytes left
	read       int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		switch {
		case len(r.head) > 0:
			k := copy(p, r.head)
			r.head = r.head[k:]
			p, total = p[k:], total+k
		case r.n > 0:
			k := int(min(int64(len(p)), r.n))
			for i := range k {
				p[i] = 'A'
			}
			r.n -= int64(k)
			p, total = p[k:], total+k
		case len(r.tail) > 0:
			k := copy(p, r.tail)
			r.tail = r.tail[k:]
			p, total = p[k:], total+k
		default:
			r.read += int64(total)
			if total == 0 {
				return 0, io.EOF
			}
			return total, nil
		}
	}
	r.read += int64(total)
	return total, nil
}

func TestOversizeLineRefused(t *testing.T) {
	for _, max := range []int{0, 1 << 20} { // the default 4 MiB, and 1 MiB
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			const filler = 10 << 20 // a 10 MB request
			head := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":"`)
			tail := []byte(`"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"typed","params":{"n":4}}` + "\n")
			r := &countingReader{head: head, tail: tail, n: filler}
			var out bytes.Buffer
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := Serve(context.Background(), r, &out, &testHandler{}, &ServerOptions{MaxLine: max})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			if want := int64(len(head) + filler + len(tail)); r.read != want {
				t.Errorf("read %d bytes, want all %d (the rest of the line is discarded, then serving goes on)", r.read, want)
			}
			limit := uint64(DefaultMaxLine)
			if max > 0 {
				limit = uint64(max)
			}
			// Everything allocated during Serve stays well below the 10 MB
			// line: at most the line cap twice (buffer growth) plus slack.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*limit+(1<<20) {
				t.Errorf("Serve allocated %d bytes for a %d-byte line with a %d-byte cap", alloc, filler, limit)
			}
			m := byID(t, strings.Split(strings.TrimSpace(out.String()), "\n"))
			if len(m) != 2 {
				t.Fatalf("responses: %q", out.String())
			}
			if e := m["null"].Error; e == nil || e.Code != CodeInvalidRequest || !strings.Contains(e.Message, "longer than") {
				t.Errorf("oversize response = %+v, want -32600 saying the line is too long", m["null"])
			}
			var res api.Result
			if json.Unmarshal(m["2"].Result, &res) != nil || res.Text() != "8" {
				t.Errorf("the next request was not served: %+v", m["2"])
			}
		})
	}
}

func TestEOFWaitsForInFlight(t *testing.T) {
	// stdio: the client may close its input and still read the answers.
	lines := serveString(t, `{"jsonrpc":"2.0","id":1,"method":"typed","params":{"n":5}}`, &testHandler{}, nil)
	if len(lines) != 1 {
		t.Fatalf("lines = %q", lines)
	}
	var res api.Result
	if r := decodeResp(t, lines[0]); json.Unmarshal(r.Result, &res) != nil || res.Text() != "10" {
		t.Fatalf("response = %s", lines[0])
	}
}

func TestEOFCancelsWhenAsked(t *testing.T) {
	h := &testHandler{cancelled: make(chan struct{})}
	lines := serveString(t, `{"jsonrpc":"2.0","id":1,"method":"block"}`+"\n", h, &ServerOptions{CancelOnEOF: true})
	select {
	case <-h.cancelled:
	default:
		t.Fatal("the request in flight was not cancelled at EOF")
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "cancelled") {
		t.Fatalf("lines = %q", lines)
	}
}

func TestServeContextDone(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	h := &testHandler{cancelled: make(chan struct{}), started: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	var out testenv.SyncBuffer
	go func() { errc <- Serve(ctx, pr, &out, h, nil) }()
	if _, err := io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"block"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	<-h.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v, want context.Canceled", err)
	}
	<-h.cancelled
	if !strings.Contains(out.String(), `"id":1`) {
		t.Errorf("the cancelled request got no response: %q", out.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriteErrorEndsServe(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	errc := make(chan error, 1)
	go func() { errc <- Serve(context.Background(), pr, failWriter{}, &testHandler{}, nil) }()
	io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"echo"}`+"\n")
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("Serve = %v, want the write error", err)
	}
}

func TestMaxInFlight(t *testing.T) {
	// 40 pipelined requests with a cap of 2: never more than 2 run at once,
	// and every one is answered (backpressure, not refusal).
	var cur, peak atomic.Int32
	h := HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		cur.Add(-1)
		return &api.Result{Content: []api.Content{api.TextContent("ok")}}, nil
	})
	var in strings.Builder
	for i := range 40 {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"x"}`+"\n", i)
	}
	m := byID(t, serveString(t, in.String(), h, &ServerOptions{MaxInFlight: 2}))
	if len(m) != 40 {
		t.Fatalf("%d responses, want 40", len(m))
	}
	for id, r := range m {
		if r.Error != nil {
			t.Fatalf("id %s: %+v", id, r.Error)
		}
	}
	if p := peak.Load(); p > 2 || p < 1 {
		t.Fatalf("peak concurrency %d, want at most 2", p)
	}
}

// socketServer serves h on a fresh unix socket, one Serve per connection
// with CancelOnEOF, as the daemon does.
func socketServer(t *testing.T, h Handler) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				Serve(context.Background(), conn, conn, h, &ServerOptions{CancelOnEOF: true})
			}()
		}
	}()
	return path
}

func TestClientConcurrentCalls(t *testing.T) {
	const n = 8
	var barrier sync.WaitGroup
	barrier.Add(n)
	path := socketServer(t, &testHandler{barrier: &barrier})
	c, err := Dial(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Each "barrier" call waits for all n: they complete only if the server
	// runs them concurrently.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var okCount atomic.Int32
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Call(ctx, "barrier", nil)
			if err != nil {
				t.Errorf("Call: %v", err)
				return
			}
			if res.Text() == "through" {
				okCount.Add(1)
			}
		}()
	}
	wg.Wait()
	if okCount.Load() != n {
		t.Fatalf("%d of %d concurrent calls went through", okCount.Load(), n)
	}
	// Results and protocol errors come back typed.
	res, err := c.Call(ctx, "typed", map[string]int{"n": 3})
	if err != nil || res.Text() != "6" {
		t.Fatalf("typed = %v, %v", res, err)
	}
	_, err = c.Call(ctx, "nope", nil)
	var re *Error
	if !errors.Is(err, api.ErrMethodNotFound) || !errors.As(err, &re) || re.Code != CodeMethodNotFound {
		t.Fatalf("nope: err = %v, want ErrMethodNotFound", err)
	}
	_, err = c.Call(ctx, "typed", map[string]string{"n": "x"})
	if !errors.Is(err, api.ErrInvalidParams) {
		t.Fatalf("typed with a string: err = %v, want ErrInvalidParams", err)
	}
	res, err = c.Call(ctx, "fail", nil)
	if err != nil || !res.IsError || res.ErrorOf().Code != errcode.ElementNotFound {
		t.Fatalf("fail = %+v, %v", res, err)
	}
}

// A request the client cancels, and that fails because of it, is answered
// with the JSON-RPC error RequestCancelled (-32800), not a timeout result.
func TestCancelRequestAnswersRequestCancelled(t *testing.T) {
	lines := serveString(t, `{"jsonrpc":"2.0","id":7,"method":"blockfail"}`+"\n"+
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`+"\n", &testHandler{}, nil)
	if len(lines) != 1 {
		t.Fatalf("responses %q", lines)
	}
	r := decodeResp(t, lines[0])
	if r.Error == nil || r.Error.Code != CodeRequestCancelled || !strings.Contains(r.Error.Message, "$/cancelRequest") {
		t.Fatalf("response %s, want error %d", lines[0], CodeRequestCancelled)
	}
}

func TestClientCancelSendsCancelRequest(t *testing.T) {
	h := &testHandler{started: make(chan string, 1), cancelled: make(chan struct{})}
	c, err := Dial(context.Background(), socketServer(t, h), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Call(ctx, "block", nil); errc <- err }()
	<-h.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	<-h.cancelled // the server-side handler saw the cancellation
	// The connection is still usable.
	res, err := c.Call(context.Background(), "typed", map[string]int{"n": 1})
	if err != nil || res.Text() != "2" {
		t.Fatalf("after cancel: %v, %v", res, err)
	}
}

func TestDroppedConnectionCancelsRun(t *testing.T) {
	h := &testHandler{started: make(chan string, 1), cancelled: make(chan struct{})}
	path := socketServer(t, h)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, `{"jsonrpc":"2.0","id":1,"method":"block"}`+"\n")
	<-h.started
	conn.Close() // the CLI was killed
	<-h.cancelled
}

func TestClientConnectionEnds(t *testing.T) {
	h := &testHandler{started: make(chan string, 1)}
	server, client := net.Pipe()
	c := NewClient(client, nil)
	go func() {
		// Read the request, then hang up without answering.
		buf := make([]byte, 256)
		server.Read(buf)
		server.Close()
	}()
	_, err := c.Call(context.Background(), "echo", nil)
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Call = %v, want ErrClosed", err)
	}
	<-c.Done()
	if !errors.Is(c.Err(), io.EOF) {
		t.Errorf("Err = %v, want EOF", c.Err())
	}
	if _, err := c.Call(context.Background(), "echo", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after the end = %v, want ErrClosed", err)
	}
	_ = h
}

func TestClientResponseTooLong(t *testing.T) {
	server, client := net.Pipe()
	c := NewClient(client, &ClientOptions{MaxLine: 1024})
	defer c.Close()
	go func() {
		buf := make([]byte, 256)
		server.Read(buf)
		io.WriteString(server, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 4096)+`"}]}}`+"\n")
	}()
	_, err := c.Call(context.Background(), "echo", nil)
	if !errors.Is(err, ErrClosed) || !errors.Is(c.Err(), ErrLineTooLong) {
		t.Fatalf("Call = %v (conn err %v), want ErrClosed after ErrLineTooLong", err, c.Err())
	}
}

func TestCancelRequestAsRequest(t *testing.T) {
	lines := serveString(t, `{"jsonrpc":"2.0","id":1,"method":"$/cancelRequest","params":{"id":99}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"$/cancelRequest"}`+"\n", &testHandler{}, nil)
	m := byID(t, lines)
	if !strings.Contains(string(m["1"].Result), `"cancelled":false`) {
		t.Errorf("cancel of an unknown id = %s", lines)
	}
	if e := m["2"].Error; e == nil || e.Code != CodeInvalidParams {
		t.Errorf("cancel without id = %+v", m["2"])
	}
}

// TestNoCDPStack checks that the transport does not pull in a CDP stack.
func TestNoCDPStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "chromedp") || strings.HasSuffix(dep, "/api/service") || strings.Contains(dep, "tabpilot/tabs") || strings.Contains(dep, "tabpilot/browser") {
			t.Errorf("api/rpc depends on %s", dep)
		}
	}
}

func TestClientRequestTooLarge(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	c := NewClient(client, &ClientOptions{MaxRequest: 100})
	defer c.Close()
	_, err := c.Call(context.Background(), "echo", map[string]string{"x": strings.Repeat("y", 200)})
	if !errors.Is(err, ErrRequestTooLarge) {
		t.Fatalf("Call = %v, want ErrRequestTooLarge", err)
	}
}

// A server that refuses an over-long line answers with a null id: the only
// pending call gets that error instead of waiting forever.
func TestClientGetsNullIDError(t *testing.T) {
	server, client := net.Pipe()
	go Serve(context.Background(), server, server, &testHandler{}, &ServerOptions{MaxLine: 64})
	c := NewClient(client, &ClientOptions{MaxRequest: 1 << 20})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Call(ctx, "echo", map[string]string{"x": strings.Repeat("y", 200)})
	var re *Error
	if !errors.As(err, &re) || re.Code != CodeInvalidRequest || !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("Call = %v, want the -32600 line-too-long error", err)
	}
	res, err := c.Call(ctx, "typed", map[string]int{"n": 2})
	if err != nil || res.Text() != "4" {
		t.Fatalf("next call = %v, %v", res, err)
	}
}

func listenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }
