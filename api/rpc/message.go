package rpc

import (
	"bytes"
	"encoding/json"
)

// Version is the value of every message's "jsonrpc" member.
const Version = "2.0"

// MethodCancel is the notification that cancels a request in flight:
// {"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":ID}}. The
// request's handler context is cancelled; the request still gets a response
// (whatever the handler returns once it stops).
const MethodCancel = "$/cancelRequest"

// Request is a JSON-RPC 2.0 request or notification as it travels on the
// wire, one per line.
type Request struct {
	JSONRPC string `json:"jsonrpc"`
	// ID is the raw id (a string, a number or null); nil means the
	// message is a notification, which gets no response.
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	// Params is the raw params: an object, an array, or nil.
	Params json.RawMessage `json:"params,omitempty"`
}

// IsNotification reports whether the request has no id member.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Response is a JSON-RPC 2.0 response: exactly one of Result and Error is
// set. ID is null when the request's id could not be read.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// CancelParams are the params of MethodCancel.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}

var nullID = json.RawMessage("null")

// item is one decoded message of a line: a request to handle, or the
// error response that an invalid message gets.
type item struct {
	req  *Request
	resp *Response
}

func errorResponse(id json.RawMessage, code int, msg string) *Response {
	if id == nil {
		id = nullID
	}
	return &Response{JSONRPC: Version, ID: id, Error: &Error{Code: code, Message: msg}}
}

// Decode decodes one line of input: a single message or a batch (a JSON
// array of messages). It returns the requests to handle and, for every
// message that is not a valid request, its error response (parse error
// -32700 with a null id for invalid JSON, invalid request -32600, invalid
// params -32602 when params are neither an object nor an array). A blank
// line yields nothing. batch reports whether the line was a non-empty array,
// whose responses go back together as one array. Decode never panics.
func Decode(line []byte) (reqs []*Request, errs []*Response, batch bool) {
	items, batch := decodeLine(line)
	for _, it := range items {
		switch {
		case it.req != nil:
			reqs = append(reqs, it.req)
		case it.resp != nil:
			errs = append(errs, it.resp)
		}
	}
	return reqs, errs, batch
}

func decodeLine(line []byte) ([]item, bool) {
	line = trimJSONSpace(line)
	if len(line) == 0 {
		return nil, false
	}
	if !json.Valid(line) {
		return []item{{resp: errorResponse(nil, CodeParseError, "parse error: the line is not valid JSON")}}, false
	}
	if line[0] != '[' {
		return []item{decodeOne(line)}, false
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return []item{{resp: errorResponse(nil, CodeParseError, "parse error: "+err.Error())}}, false
	}
	if len(raws) == 0 {
		return []item{{resp: errorResponse(nil, CodeInvalidRequest, "invalid request: empty batch")}}, false
	}
	items := make([]item, len(raws))
	for i, raw := range raws {
		items[i] = decodeOne(raw)
	}
	return items, true
}

// decodeOne decodes one message (a JSON value known to be valid). Member
// names are matched exactly (encoding/json's struct decoding would accept
// "ID" or "Method").
func decodeOne(raw json.RawMessage) item {
	raw = trimJSONSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return item{resp: errorResponse(nil, CodeInvalidRequest, "invalid request: a request must be a JSON object")}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return item{resp: errorResponse(nil, CodeParseError, "parse error: "+err.Error())}
	}
	id, hasID := m["id"]
	if hasID {
		switch firstByte(id) {
		case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			return item{resp: errorResponse(nil, CodeInvalidRequest, "invalid request: id must be a string, a number or null")}
		}
	}
	var version string
	if v, ok := m["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != Version {
		return item{resp: errorResponse(id, CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)}
	}
	var method string
	if v, ok := m["method"]; !ok || firstByte(v) != '"' || json.Unmarshal(v, &method) != nil {
		return item{resp: errorResponse(id, CodeInvalidRequest, `invalid request: "method" must be a string`)}
	}
	req := &Request{JSONRPC: Version, Method: method}
	if hasID {
		req.ID = id
	}
	if p, ok := m["params"]; ok {
		switch firstByte(p) {
		case '{', '[':
			req.Params = p
		case 'n': // null: as if absent
		default:
			if !hasID {
				return item{} // a notification never gets a response: drop it
			}
			return item{resp: errorResponse(id, CodeInvalidParams, "invalid params: params must be an object or an array")}
		}
	}
	return item{req: req}
}

func firstByte(b []byte) byte {
	b = trimJSONSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// trimJSONSpace trims JSON whitespace (RFC 8259: space, tab, CR, LF), not
// Unicode spaces such as \v, which JSON does not allow.
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }
