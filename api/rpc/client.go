package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/internal/jsonl"
)

// DefaultClientMaxLine is the longest response line a Client accepts by
// default (64 MiB): results carry base64 images.
const DefaultClientMaxLine = 64 << 20

// ClientOptions configure a Client. A nil *ClientOptions means the defaults.
type ClientOptions struct {
	// MaxLine is the longest response line in bytes; 0 means
	// DefaultClientMaxLine. A longer line fails the connection (every
	// pending call gets ErrClosed wrapping ErrLineTooLong).
	MaxLine int
	// MaxRequest is the longest request line in bytes; 0 means
	// DefaultMaxLine, the server's default. Call refuses a longer request
	// with ErrRequestTooLarge instead of sending it.
	MaxRequest int
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

// Client is a JSON-RPC 2.0 client over one connection (newline-delimited
// JSON). Calls may be made concurrently; they are multiplexed by id. It is
// safe for concurrent use.
type Client struct {
	conn io.ReadWriteCloser
	opts ClientOptions
	log  *slog.Logger

	wmu sync.Mutex

	mu      sync.Mutex
	pending map[string]chan *Response
	next    int64
	err     error // why the connection ended

	done      chan struct{}
	closeOnce sync.Once
}

// Dial connects to the JSON-RPC server listening on the unix socket path.
// ctx bounds the dial only.
func Dial(ctx context.Context, path string, opts *ClientOptions) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("rpc: dial %s: %w", path, err)
	}
	return NewClient(conn, opts), nil
}

// NewClient returns a Client speaking over conn, and starts the goroutine
// that reads its responses. Close closes conn.
func NewClient(conn io.ReadWriteCloser, opts *ClientOptions) *Client {
	c := &Client{conn: conn, pending: map[string]chan *Response{}, done: make(chan struct{})}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxLine <= 0 {
		c.opts.MaxLine = DefaultClientMaxLine
	}
	if c.opts.MaxRequest <= 0 {
		c.opts.MaxRequest = DefaultMaxLine
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	go c.read()
	return c
}

func (c *Client) read() {
	lr := jsonl.NewReader(c.conn, c.opts.MaxLine)
	for {
		line, tooLong, err := lr.Next()
		if err != nil {
			c.fail(err)
			return
		}
		if tooLong {
			c.fail(fmt.Errorf("%w: a response exceeds %d bytes", ErrLineTooLong, c.opts.MaxLine))
			return
		}
		var resp Response
		if err := json.Unmarshal(line, &resp); err != nil {
			c.log.Warn("rpc: undecodable response", "err", err)
			continue
		}
		c.mu.Lock()
		key := string(resp.ID)
		if resp.ID == nil || key == "null" {
			// The server could not read a request's id. With one call
			// pending it can only be that one's; else it is unattributable.
			key = ""
			if len(c.pending) == 1 {
				for k := range c.pending {
					key = k
				}
			}
		}
		ch := c.pending[key]
		delete(c.pending, key)
		c.mu.Unlock()
		if ch == nil {
			c.log.Warn("rpc: unattributable response", "id", string(resp.ID), "error", resp.Error)
			continue
		}
		ch <- &resp
	}
}

// fail ends the connection with reason err.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.closeOnce.Do(func() {
		close(c.done)
		c.conn.Close()
	})
}

// Done is closed when the connection has ended (closed by either side).
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (io.EOF when the server closed it),
// or nil while it is open.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection. Pending calls return ErrClosed.
func (c *Client) Close() error {
	c.fail(net.ErrClosed)
	return nil
}

func (c *Client) send(req *Request) error {
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("rpc: marshal %s request: %w", req.Method, err)
	}
	if len(b) > c.opts.MaxRequest {
		return fmt.Errorf("%w: the %s request is %d bytes, over the limit of %d", ErrRequestTooLarge, req.Method, len(b), c.opts.MaxRequest)
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.conn.Write(b); err != nil {
		c.fail(err)
		return fmt.Errorf("%w: write %s request: %v", ErrClosed, req.Method, err)
	}
	return nil
}

func marshalParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	}
	return json.Marshal(params)
}

// Call sends a request and waits for its response. params is marshalled
// with encoding/json (nil omits it; a json.RawMessage is sent as is). It
// returns the result, an *Error when the server answered with an error
// (errors.Is(err, api.ErrMethodNotFound) and api.ErrInvalidParams work on
// it), ErrRequestTooLarge, ErrClosed when the connection ended first, or
// ctx.Err() when ctx is
// done first, in which case the server is sent MethodCancel for the
// request.
func (c *Client) Call(ctx context.Context, method string, params any) (*api.Result, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("rpc: marshal %s params: %w", method, err)
	}
	ch := make(chan *Response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", ErrClosed, err)
	}
	c.next++
	id := json.RawMessage(strconv.FormatInt(c.next, 10))
	c.pending[string(id)] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, string(id))
		c.mu.Unlock()
	}
	if err := c.send(&Request{JSONRPC: Version, ID: id, Method: method, Params: p}); err != nil {
		forget()
		return nil, err
	}
	select {
	case resp := <-ch:
		return resultOf(method, resp)
	case <-ctx.Done():
		forget()
		if err := c.Notify(MethodCancel, CancelParams{ID: id}); err != nil {
			c.log.Debug("rpc: send cancel", "err", err)
		}
		return nil, ctx.Err()
	case <-c.done:
		select { // the response may have arrived just before the end
		case resp := <-ch:
			return resultOf(method, resp)
		default:
		}
		return nil, fmt.Errorf("%w before the %s response: %v", ErrClosed, method, c.Err())
	}
}

// Notify sends a notification (a request without id, which gets no
// response).
func (c *Client) Notify(method string, params any) error {
	p, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("rpc: marshal %s params: %w", method, err)
	}
	select {
	case <-c.done:
		return fmt.Errorf("%w: %v", ErrClosed, c.Err())
	default:
	}
	return c.send(&Request{JSONRPC: Version, Method: method, Params: p})
}

func resultOf(method string, resp *Response) (*api.Result, error) {
	if resp.Error != nil {
		return nil, resp.Error
	}
	var res api.Result
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, fmt.Errorf("rpc: decode %s result: %w", method, err)
	}
	return &res, nil
}
