package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/errcode"
)

// Handler answers the actions: method is one of api.Methods and params
// the JSON of its api request. A failed action is a Result with IsError; a
// non-nil error (api.ErrMethodNotFound, api.ErrInvalidParams) becomes a
// bad_request tool result. *api/service.Service is a Handler.
type Handler interface {
	Call(ctx context.Context, method string, params json.RawMessage) (*api.Result, error)
}

// Options configure NewServer and Serve. A nil *Options means the defaults.
type Options struct {
	// Version is the server version sent in the initialize result; empty
	// means "devel".
	Version string
	// MaxLine is the longest message line Serve reads, in bytes; 0 means
	// DefaultMaxLine (4 MiB).
	MaxLine int
	// Logger receives logs, the go-sdk's included; nil discards them. It
	// must not write to the protocol's output.
	Logger *slog.Logger
}

// NewServer returns a go-sdk MCP server named "tabpilot" with one tool,
// browser (Tool), whose calls go to h. Serve it with Serve, or with
// Server.Run and any go-sdk transport (e.g. streamable HTTP). It
// advertises the tools capability only.
func NewServer(h Handler, opts *Options) *sdk.Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Version == "" {
		o.Version = "devel"
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tool := Tool()
	resolved, err := tool.InputSchema.(*jsonschema.Schema).Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: resolve the input schema: %v", err)) // a programming error
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "tabpilot", Title: "tabpilot", Version: o.Version}, &sdk.ServerOptions{
		Logger:       log,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	th := &toolHandler{h: h, schema: resolved, log: log}
	s.AddTool(tool, th.call)
	return s
}

// Serve serves MCP over newline-delimited JSON on r and w (the stdio
// transport; see Transport for how malformed input is answered) until r
// ends (it returns nil) or ctx is done (it returns ctx.Err()). When r ends,
// the answers to the calls in flight are written first (each call ends by
// its own timeout, see api/service); when ctx is done, the calls in flight
// are cancelled and r, if it is an io.Closer, is closed to release the
// read. Serve does not shut the Handler down.
func Serve(ctx context.Context, r io.Reader, w io.Writer, h Handler, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	t := &Transport{Reader: r, Writer: w, MaxLine: o.MaxLine, Logger: o.Logger}
	ss, err := NewServer(h, &o).Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcp: connect: %w", err)
	}
	// The go-sdk's Server.Run, on ctx done, waits for the calls in flight
	// without cancelling them. Closing the connection instead ends the
	// input: the calls in flight are cancelled, then the session ends.
	stop := context.AfterFunc(ctx, func() { t.close() })
	defer stop()
	err = ss.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp: serve: %w", err)
	}
	return nil
}

type toolHandler struct {
	h      Handler
	schema *jsonschema.Resolved
	log    *slog.Logger
}

// call is the browser tool's handler. Every failure is a result with
// isError (the code, message and hint in its text), never a protocol
// error: the model sees it and can correct itself.
func (th *toolHandler) call(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			th.log.Error("mcp: tool panic", "panic", p, "stack", string(debug.Stack()))
			res, err = toolResult(api.ErrorResult(errcode.Internal, fmt.Sprintf("panic: %v", p))), nil
		}
	}()
	var args json.RawMessage
	if req != nil && req.Params != nil {
		args = req.Params.Arguments
	}
	in, params, action, bad := decodeArgs(args, th.schema)
	if bad != nil {
		return toolResult(bad), nil
	}
	r, err := th.h.Call(ctx, action, params)
	switch {
	case err != nil && (errors.Is(err, api.ErrInvalidParams) || errors.Is(err, api.ErrMethodNotFound)):
		r = api.ErrorResult(errcode.BadRequest, err.Error())
	case err != nil:
		r = api.ErrorResult(errcode.Internal, err.Error())
	case r == nil:
		r = api.ErrorResult(errcode.Internal, "no result")
		if ctx.Err() != nil {
			r = api.ErrorResult(errcode.Timeout, "the call was cancelled")
		}
	}
	th.log.Debug("mcp: call", "action", action, "name", in.Name, "is_error", r.IsError)
	return toolResult(r), nil
}

// decodeArgs validates the tool's arguments against its schema, decodes
// them and builds the action's params; a failure is a bad_request result.
func decodeArgs(args json.RawMessage, schema *jsonschema.Resolved) (in *Input, params json.RawMessage, action string, bad *api.Result) {
	in = &Input{}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return in, nil, "", api.ErrorResult(errcode.BadRequest, "arguments are not JSON: "+err.Error())
	}
	if err := schema.Validate(v); err != nil {
		return in, nil, "", api.ErrorResult(errcode.BadRequest, "invalid arguments: "+schemaError(err))
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return in, nil, "", api.ErrorResult(errcode.BadRequest, "invalid arguments: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	set, _ := v.(map[string]any)
	req, err := request(in, set)
	if err != nil {
		return in, nil, in.Action, api.ErrorResult(errcode.BadRequest, err.Error())
	}
	b, err := json.Marshal(req)
	if err != nil {
		return in, nil, in.Action, api.ErrorResult(errcode.Internal, "encode the request: "+err.Error())
	}
	return in, b, in.Action, nil
}

// schemaError shortens a jsonschema-go validation error: "validating
// root: validating /properties/url: type: …" becomes "url: type: …".
func schemaError(err error) string {
	s := strings.ReplaceAll(err.Error(), "validating root: ", "")
	return strings.ReplaceAll(s, "validating /properties/", "")
}

// toolResult turns an api.Result into MCP content: text items as text,
// images (base64 in the api) as image content. A failure keeps isError
// and gets its code, message and hint as the first text.
func toolResult(r *api.Result) *sdk.CallToolResult {
	out := &sdk.CallToolResult{Content: make([]sdk.Content, 0, len(r.Content)+1), IsError: r.IsError}
	content := r.Content
	if info := r.ErrorOf(); info != nil {
		text := string(info.Code) + ": " + info.Message
		if info.Hint != "" {
			text += "\nHint: " + info.Hint
		}
		out.Content = append(out.Content, &sdk.TextContent{Text: text})
		if len(content) > 0 && content[0].Type == "text" && strings.HasPrefix(content[0].Text, string(info.Code)+": ") {
			content = content[1:] // api.ErrorResult's text, replaced by the one above
		}
	}
	for _, c := range content {
		switch c.Type {
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				out.Content = append(out.Content, &sdk.TextContent{Text: "(an image that could not be decoded: " + err.Error() + ")"})
				continue
			}
			out.Content = append(out.Content, &sdk.ImageContent{Data: data, MIMEType: c.MimeType})
		default:
			out.Content = append(out.Content, &sdk.TextContent{Text: c.Text})
		}
	}
	return out
}
