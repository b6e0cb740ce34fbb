package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabpilot/tabpilot/internal/jsonl"
)

// DefaultMaxLine is the longest message line a Transport reads: 4 MiB, the
// same cap as tabpilot's JSON-RPC door (api/rpc).
const DefaultMaxLine = 4 << 20

// Transport is the MCP stdio transport (newline-delimited JSON-RPC 2.0
// messages, https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#stdio)
// over any reader and writer, hardened so that no input ends the session
// but the end of the input:
//
//   - a line that is not JSON is answered with a parse error (-32700, id
//     null) and reading goes on;
//   - a line that is JSON but not a JSON-RPC 2.0 message (no "jsonrpc":
//     "2.0", an id that is not a string or number, a method that is not a
//     string or is empty) is answered with an invalid request error
//     (-32600, with the id when it can be read, else null);
//   - a batch (a JSON array) is answered with -32600: MCP has no batches
//     since protocol 2025-06-18, and the go-sdk ends the session on one;
//   - a line longer than MaxLine is discarded as it is read, never held
//     whole in memory, and answered with -32600 (id null).
//
// At the end of the input, Read reports io.EOF only once the calls read
// so far are answered, so a client that writes its calls and closes its
// side still gets every answer. The go-sdk's own StdioTransport ends the
// session on each of the faults above, and drops the answers due at the
// end of the input. Unknown
// methods (-32601) and params of the wrong types (-32602) are answered by
// the SDK's server.
//
// A Transport is used for one connection (one call of Connect).
type Transport struct {
	// Reader is the client's input, e.g. os.Stdin. When it implements
	// io.Closer, closing the connection closes it, which unblocks a pending
	// read.
	Reader io.Reader
	// Writer receives the server's messages, one per line, e.g. os.Stdout.
	// Nothing else is written to it.
	Writer io.Writer
	// MaxLine is the longest accepted line in bytes, without its newline;
	// 0 means DefaultMaxLine.
	MaxLine int
	// Logger receives logs; nil discards them.
	Logger *slog.Logger

	mu   sync.Mutex
	conn *conn
}

// close closes the connection, if Connect made one.
func (t *Transport) close() {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// Connect implements the go-sdk's mcp.Transport. It starts the goroutine
// that reads lines; it ends when the input ends or the connection closes
// (a read from an io.Reader that is not an io.Closer may stay blocked until
// the input ends).
func (t *Transport) Connect(context.Context) (sdk.Connection, error) {
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("mcp: Transport needs a Reader and a Writer")
	}
	max := t.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &conn{
		w:        t.Writer,
		log:      log,
		incoming: make(chan msgOrErr),
		closed:   make(chan struct{}),
		pending:  map[jsonrpc.ID]bool{},
		idle:     make(chan struct{}),
	}
	close(c.idle)
	if cl, ok := t.Reader.(io.Closer); ok {
		c.closer = cl
	}
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	go c.readLoop(jsonl.NewReader(t.Reader, max), max)
	return c, nil
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

// conn is the sdk.Connection of a Transport.
type conn struct {
	log    *slog.Logger
	closer io.Closer

	wmu  sync.Mutex
	w    io.Writer
	werr error

	incoming chan msgOrErr
	closed   chan struct{}
	once     sync.Once

	// The client's calls not answered yet: at the end of the input, their
	// answers are written before Read reports io.EOF.
	pmu     sync.Mutex
	pending map[jsonrpc.ID]bool
	idle    chan struct{} // closed while pending is empty
}

// readLoop reads lines, answers the invalid ones itself and hands the
// valid messages to Read.
func (c *conn) readLoop(lr *jsonl.Reader, max int) {
	for {
		line, tooLong, err := lr.Next()
		var m msgOrErr
		switch {
		case err != nil:
			if errors.Is(err, io.EOF) {
				c.drain()
			}
			m.err = err
		case tooLong:
			c.log.Warn("mcp: request line too long", "max_bytes", max)
			c.writeError(nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("invalid request: the line is longer than %d bytes and was discarded", max))
			continue
		default:
			msg, reply := DecodeLine(line)
			if reply != nil {
				c.writeRaw(reply)
				continue
			}
			if msg == nil {
				continue // a blank line
			}
			m.msg = msg
			c.track(msg)
		}
		select {
		case c.incoming <- m:
		case <-c.closed:
			return
		}
		if m.err != nil {
			return
		}
	}
}

// Read implements sdk.Connection: the next valid message, or io.EOF when
// the input ended or the connection closed.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m := <-c.incoming:
		return m.msg, m.err
	}
}

// Write implements sdk.Connection: msg as one line. Writes are serialised;
// after a failed write every later one fails.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
		var we *jsonrpc.Error
		if !errors.As(r.Error, &we) || we.Code == 0 {
			// The go-sdk sends some request faults (e.g. a call before
			// initialize) without a JSON-RPC code, as code 0.
			r2 := *r
			r2.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: r.Error.Error()}
			msg = &r2
		}
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcp: encode message: %w", err)
	}
	err = c.writeRaw(b)
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.answered(r.ID)
	}
	return err
}

// track records a call of the client that awaits its answer. A
// subscriptions/listen call (protocol 2026-07-28) is answered only when the
// session ends, so it is not awaited. A second call with the id of one in
// flight is not tracked either: the go-sdk refuses it with an id of null.
func (c *conn) track(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method == "subscriptions/listen" {
		return
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.pending[req.ID] {
		return
	}
	if len(c.pending) == 0 {
		c.idle = make(chan struct{})
	}
	c.pending[req.ID] = true
}

// answered records that a call was answered.
func (c *conn) answered(id jsonrpc.ID) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if !c.pending[id] {
		return
	}
	delete(c.pending, id)
	if len(c.pending) == 0 {
		close(c.idle)
	}
}

// drain waits until every tracked call is answered or the connection
// closes: at the end of the input the answers still due are written (each
// call ends by its own timeout), then the session ends.
func (c *conn) drain() {
	c.pmu.Lock()
	idle := c.idle
	c.pmu.Unlock()
	select {
	case <-idle:
	case <-c.closed:
	}
}

func (c *conn) writeRaw(b []byte) error {
	line := make([]byte, 0, len(b)+1)
	line = append(append(line, b...), '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return c.werr
	}
	select {
	case <-c.closed:
		return sdk.ErrConnectionClosed
	default:
	}
	if _, err := c.w.Write(line); err != nil {
		c.werr = fmt.Errorf("mcp: write: %w", err)
		c.log.Warn("mcp: write", "err", err)
		return c.werr
	}
	return nil
}

func (c *conn) writeError(id json.RawMessage, code int, msg string) {
	c.writeRaw(errorLine(id, code, msg))
}

// Close implements sdk.Connection. It may be called more than once.
func (c *conn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		if c.closer != nil {
			err = c.closer.Close()
		}
	})
	return err
}

// SessionID implements sdk.Connection: stdio has no session id.
func (c *conn) SessionID() string { return "" }

// errorLine is a JSON-RPC error response; a nil id is null.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	return b
}

// DecodeLine decodes one line of input into a JSON-RPC message. A blank
// line yields (nil, nil). A line that is not a valid message yields the
// error response to send instead (reply, one JSON object without a
// newline): -32700 with id null for invalid JSON, -32600 for a batch or
// anything that is not a JSON-RPC 2.0 request, notification or response
// (with the message's id when it is a string or a number, else null),
// among them a message whose method is the empty string. DecodeLine never
// panics.
func DecodeLine(line []byte) (msg jsonrpc.Message, reply []byte) {
	line = bytes.Trim(line, " \t\r\n")
	if len(line) == 0 {
		return nil, nil
	}
	if !json.Valid(line) {
		return nil, errorLine(nil, jsonrpc.CodeParseError, "parse error: the line is not valid JSON")
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches (JSON arrays) are not supported; send one message per line")
	default:
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, errorLine(nil, jsonrpc.CodeParseError, "parse error: "+err.Error())
	}
	var id json.RawMessage
	if raw, ok := m["id"]; ok {
		switch raw[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			id = raw
		case 'n':
		default:
			return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string, a number or null")
		}
	}
	var version string
	if v, ok := m["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return nil, errorLine(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if v, ok := m["method"]; ok {
		var method string
		if v[0] != '"' || json.Unmarshal(v, &method) != nil {
			return nil, errorLine(id, jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a string`)
		}
		if method == "" {
			// An empty string names no method, and the go-sdk's encoding
			// drops it (omitempty): the call would read as a response.
			return nil, errorLine(id, jsonrpc.CodeInvalidRequest, `invalid request: "method" must not be empty`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, errorLine(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}
