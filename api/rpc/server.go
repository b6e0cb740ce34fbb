package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/internal/jsonl"
)

// Handler answers requests. It is called concurrently, once per request, in
// its own goroutine. A failed action is a Result with IsError and a nil
// error; a non-nil error is a protocol fault: errors.Is(err,
// api.ErrMethodNotFound) becomes -32601, api.ErrInvalidParams -32602, an
// *Error is sent as is, anything else -32603. api/service.Service is a
// Handler.
type Handler interface {
	Call(ctx context.Context, method string, params json.RawMessage) (*api.Result, error)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, method string, params json.RawMessage) (*api.Result, error)

// Call calls f.
func (f HandlerFunc) Call(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
	return f(ctx, method, params)
}

// Defaults of ServerOptions.
const (
	DefaultMaxLine     = 4 << 20
	DefaultMaxInFlight = 64
)

// ServerOptions configure Serve. A nil *ServerOptions means the defaults.
type ServerOptions struct {
	// MaxLine is the longest request line in bytes; 0 means DefaultMaxLine
	// (4 MiB). A longer line is discarded as it is read (never held whole in
	// memory) and answered with CodeInvalidRequest and a null id.
	MaxLine int
	// MaxInFlight caps the requests handled at once; 0 means
	// DefaultMaxInFlight. At the cap Serve reads no further until a request
	// finishes (backpressure: pipelined requests wait, none is refused).
	MaxInFlight int
	// CancelOnEOF cancels the requests in flight when the input ends, as
	// suits a socket whose client went away. Without it (stdio, where a
	// client may close its input and still read the answers) Serve waits
	// for them and writes their responses.
	CancelOnEOF bool
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

// flight is a request in flight.
type flight struct{ cancel context.CancelFunc }

// errClientCancelled is the cause of a request context that the client
// ended with $/cancelRequest.
var errClientCancelled = errors.New("cancelled by the client ($/cancelRequest)")

type server struct {
	h    Handler
	opts ServerOptions
	log  *slog.Logger

	wmu  sync.Mutex
	w    io.Writer
	werr error

	mu       sync.Mutex
	inflight map[string]*flight
	sem      chan struct{} // one token per request in flight
	wg       sync.WaitGroup

	cancel context.CancelFunc
}

// Serve reads newline-delimited JSON-RPC 2.0 messages from r and writes one
// line per response to w, until r ends (it returns nil), ctx is done (it
// returns ctx.Err()), reading fails or writing fails (it returns that
// error). Requests run concurrently, each in its own goroutine with a
// context derived from ctx; responses are written whole, one at a time, in
// the order they finish. Notifications get no response. A malformed line is
// answered with a parse error (id null) and serving goes on; so does an
// over-long line (see ServerOptions.MaxLine). Before returning, Serve
// cancels or waits for (see ServerOptions.CancelOnEOF) every request in
// flight and writes their responses when it can. When Serve returns
// because ctx is done or writing failed, a goroutine may still be blocked
// reading r: close r to release it. A panic in the handler is recovered and
// answered with CodeInternalError.
func Serve(ctx context.Context, r io.Reader, w io.Writer, h Handler, opts *ServerOptions) error {
	s := &server{h: h, w: w, inflight: map[string]*flight{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.MaxLine <= 0 {
		s.opts.MaxLine = DefaultMaxLine
	}
	if s.opts.MaxInFlight <= 0 {
		s.opts.MaxInFlight = DefaultMaxInFlight
	}
	s.sem = make(chan struct{}, s.opts.MaxInFlight)
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	parent := ctx
	ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()

	type line struct {
		items   []item
		batch   bool
		tooLong bool
		err     error
	}
	lines := make(chan line)
	go func() {
		lr := jsonl.NewReader(r, s.opts.MaxLine)
		for {
			b, tooLong, err := lr.Next()
			var l line
			switch {
			case err != nil:
				l.err = err
			case tooLong:
				l.tooLong = true
			default:
				l.items, l.batch = decodeLine(b)
			}
			select {
			case lines <- l:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	for {
		select {
		case <-ctx.Done():
			s.wg.Wait()
			if err := s.writeErr(); err != nil {
				return err
			}
			return parent.Err()
		case l := <-lines:
			switch {
			case l.err != nil:
				if !errors.Is(l.err, io.EOF) || s.opts.CancelOnEOF {
					s.cancel()
				}
				s.wg.Wait()
				if err := s.writeErr(); err != nil {
					return err
				}
				if errors.Is(l.err, io.EOF) {
					return nil
				}
				return fmt.Errorf("rpc: read request: %w", l.err)
			case l.tooLong:
				s.log.Warn("rpc: request line too long", "max_bytes", s.opts.MaxLine)
				s.write(errorResponse(nil, CodeInvalidRequest,
					fmt.Sprintf("invalid request: the line is longer than %d bytes and was discarded", s.opts.MaxLine)))
			case l.batch:
				s.batch(ctx, l.items)
			case len(l.items) == 1:
				s.one(ctx, l.items[0])
			}
		}
	}
}

// writeErr returns the first write error.
func (s *server) writeErr() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.werr != nil {
		return fmt.Errorf("rpc: write response: %w", s.werr)
	}
	return nil
}

// write writes v as one line. After a write error it writes nothing more
// and stops serving.
func (s *server) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// A Result that cannot be marshalled (a handler bug): say so.
		s.log.Error("rpc: marshal response", "err", err)
		if r, ok := v.(*Response); ok {
			b, _ = json.Marshal(errorResponse(r.ID, CodeInternalError, "internal error: marshal result: "+err.Error()))
		} else {
			return
		}
	}
	b = append(b, '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.werr != nil {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.werr = err
		s.log.Warn("rpc: write response", "err", err)
		s.cancel()
	}
}

// one handles a single (non-batch) message.
func (s *server) one(ctx context.Context, it item) {
	if it.resp != nil {
		s.write(it.resp)
		return
	}
	if it.req == nil {
		return
	}
	if it.req.Method == MethodCancel {
		s.cancelRequest(it.req)
		return
	}
	rctx, release, refused := s.begin(ctx, it.req)
	if refused != nil {
		if !it.req.IsNotification() {
			s.write(refused)
		}
		return
	}
	go func() {
		defer release()
		if resp := s.handle(rctx, it.req); resp != nil {
			s.write(resp)
		}
	}()
}

// batch handles a batch: every message concurrently, their responses
// written together as one array once all are done (nothing when all were
// notifications).
func (s *server) batch(ctx context.Context, items []item) {
	resps := make([]*Response, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		switch {
		case it.resp != nil:
			resps[i] = it.resp
		case it.req == nil:
		case it.req.Method == MethodCancel:
			s.cancelRequest(it.req)
		default:
			rctx, release, refused := s.begin(ctx, it.req)
			if refused != nil {
				if !it.req.IsNotification() {
					resps[i] = refused
				}
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer release()
				resps[i] = s.handle(rctx, it.req)
			}()
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		wg.Wait()
		out := make([]*Response, 0, len(resps))
		for _, r := range resps {
			if r != nil {
				out = append(out, r)
			}
		}
		if len(out) > 0 {
			s.write(out)
		}
	}()
}

// begin waits for a slot (MaxInFlight), registers the request in flight
// and returns its context; when ctx ends first it returns the response of
// a request that was never run. release must be called when the request
// is done.
func (s *server) begin(ctx context.Context, req *Request) (rctx context.Context, release func(), refused *Response) {
	select {
	case s.sem <- struct{}{}:
	default:
		s.log.Debug("rpc: at the in-flight cap; waiting", "max", s.opts.MaxInFlight)
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, nil, errorResponse(req.ID, CodeRequestCancelled, "request cancelled: the server is stopping")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wg.Add(1)
	key := ""
	if !req.IsNotification() {
		key = string(req.ID)
	}
	rctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	f := &flight{cancel: func() { cancelCause(errClientCancelled) }}
	if key != "" {
		s.inflight[key] = f // a duplicate id in flight: the newest wins
	}
	return rctx, func() {
		cancel()
		s.mu.Lock()
		if key != "" && s.inflight[key] == f {
			delete(s.inflight, key)
		}
		s.mu.Unlock()
		<-s.sem
		s.wg.Done()
	}, nil
}

func (s *server) cancelRequest(req *Request) {
	var p CancelParams
	if json.Unmarshal(req.Params, &p) != nil || p.ID == nil {
		s.log.Debug("rpc: cancel without a valid id")
		if !req.IsNotification() {
			s.write(errorResponse(req.ID, CodeInvalidParams, `invalid params: $/cancelRequest needs {"id": ID}`))
		}
		return
	}
	s.mu.Lock()
	f := s.inflight[string(p.ID)]
	s.mu.Unlock()
	if f != nil {
		f.cancel()
	}
	if !req.IsNotification() {
		b, _ := json.Marshal(&api.Result{Content: []api.Content{}, Details: map[string]any{"cancelled": f != nil}})
		s.write(&Response{JSONRPC: Version, ID: req.ID, Result: b})
	}
}

// handle calls the handler, recovering a panic, and returns the response
// (nil for a notification).
func (s *server) handle(rctx context.Context, req *Request) (resp *Response) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("rpc: handler panic", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			resp = nil
			if !req.IsNotification() {
				resp = errorResponse(req.ID, CodeInternalError, fmt.Sprintf("internal error: panic: %v", p))
			}
		}
	}()
	res, err := s.h.Call(rctx, req.Method, req.Params)
	if req.IsNotification() {
		if err != nil {
			s.log.Debug("rpc: notification failed", "method", req.Method, "err", err)
		}
		return nil
	}
	if (err != nil || res == nil || res.IsError) && errors.Is(context.Cause(rctx), errClientCancelled) {
		// The client asked for the end: a failure that follows from it
		// is the cancellation (the LSP's RequestCancelled), not a timeout.
		msg := "request cancelled"
		if res != nil {
			if e := res.ErrorOf(); e != nil && e.Message != "" {
				msg += ": " + e.Message
			}
		}
		return errorResponse(req.ID, CodeRequestCancelled, msg)
	}
	if err != nil {
		return &Response{JSONRPC: Version, ID: req.ID, Error: errorFor(err)}
	}
	if res == nil {
		if rctx.Err() != nil {
			return errorResponse(req.ID, CodeRequestCancelled, "request cancelled")
		}
		return errorResponse(req.ID, CodeInternalError, "internal error: the handler returned no result")
	}
	out := *res // content and details are arrays and objects on the wire, never null
	if out.Content == nil {
		out.Content = []api.Content{}
	}
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	b, err := json.Marshal(&out)
	if err != nil {
		return errorResponse(req.ID, CodeInternalError, "internal error: marshal result: "+err.Error())
	}
	return &Response{JSONRPC: Version, ID: req.ID, Result: b}
}
