// Package rpc is tabpilot's JSON-RPC 2.0 transport
// (https://www.jsonrpc.org/specification): newline-delimited JSON messages,
// one per line, over stdio (tabpilot serve) and over the daemon's unix
// socket. Serve answers requests with a Handler (api/service.Service is
// one); Client calls a server.
//
// Methods are the actions of api.Methods; params are the request types of
// package api, and every result is an api.Result. A failed action is a
// result with isError, not a protocol error. Protocol errors use the
// standard codes: -32700 for a line that is not JSON (id null), -32600 for
// an invalid request or an over-long line, -32601 for an unknown method,
// -32602 for params of the wrong shape or types, -32603 for internal faults.
// Batches (a JSON array of requests) are answered with an array. The
// notification $/cancelRequest {"id": ID} cancels a request in flight; if
// the request then fails, its answer is the error -32800 (RequestCancelled,
// as in the Language Server Protocol), and a result it finished with is
// kept.
//
// The package imports no CDP stack: clients can use it alone.
package rpc
