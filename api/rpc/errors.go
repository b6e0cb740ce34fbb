package rpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tabpilot/tabpilot/api"
)

// JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object),
// and the implementation-defined ones of this package (-32000 to -32099).
const (
	// CodeParseError: the line is not valid JSON. The response id is null.
	CodeParseError = -32700
	// CodeInvalidRequest: valid JSON but not a request object, or a line
	// longer than ServerOptions.MaxLine.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound: the handler returned api.ErrMethodNotFound.
	CodeMethodNotFound = -32601
	// CodeInvalidParams: params are not an object or array, or the handler
	// returned api.ErrInvalidParams.
	CodeInvalidParams = -32602
	// CodeInternalError: any other handler error, or a handler panic.
	CodeInternalError = -32603
	// CodeRequestCancelled: the request was cancelled before its handler
	// gave a result (the LSP code).
	CodeRequestCancelled = -32800
)

// Error is a JSON-RPC error object. Clients get it back from Call when the
// server answered with an error; errors.Is maps CodeMethodNotFound to
// api.ErrMethodNotFound and CodeInvalidParams to api.ErrInvalidParams.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is reports whether e corresponds to target: api.ErrMethodNotFound,
// api.ErrInvalidParams, ErrParse or ErrInvalidRequest.
func (e *Error) Is(target error) bool {
	switch target {
	case api.ErrMethodNotFound:
		return e.Code == CodeMethodNotFound
	case api.ErrInvalidParams:
		return e.Code == CodeInvalidParams
	case ErrParse:
		return e.Code == CodeParseError
	case ErrInvalidRequest:
		return e.Code == CodeInvalidRequest
	}
	return false
}

// Sentinels for the transport-level faults, usable with errors.Is against
// an *Error received by a Client.
var (
	// ErrParse matches an *Error with CodeParseError.
	ErrParse = errors.New("parse error")
	// ErrInvalidRequest matches an *Error with CodeInvalidRequest.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrClosed is returned by Client.Call when the connection is closed
	// before the answer arrives; it wraps the reason when there is one.
	ErrClosed = errors.New("rpc: connection closed")
	// ErrRequestTooLarge is returned by Client.Call for a request longer
	// than ClientOptions.MaxRequest; nothing was sent.
	ErrRequestTooLarge = errors.New("rpc: request too large")
	// ErrLineTooLong is the reason a Client's connection fails when the
	// server sends a line longer than ClientOptions.MaxLine.
	ErrLineTooLong = errors.New("rpc: line too long")
)

// errorFor turns a Handler error into its JSON-RPC error object.
func errorFor(err error) *Error {
	var re *Error
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, api.ErrMethodNotFound):
		return &Error{Code: CodeMethodNotFound, Message: err.Error()}
	case errors.Is(err, api.ErrInvalidParams):
		return &Error{Code: CodeInvalidParams, Message: err.Error()}
	default:
		return &Error{Code: CodeInternalError, Message: "internal error: " + err.Error()}
	}
}
