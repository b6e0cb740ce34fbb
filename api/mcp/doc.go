// Package mcp is tabpilot's MCP server (https://modelcontextprotocol.io),
// built on github.com/modelcontextprotocol/go-sdk: `tabpilot mcp` serves it
// on stdio (the README's "MCP" section).
//
// It offers one tool, browser, whose "action" argument is one of Actions
// (open, close, run, observe, click, type, fill, press, screenshot,
// extract, tabs, and the steps hover, select, scroll, wait, back, forward,
// reload, dialog, upload, and the network actions network, console, har,
// route, unroute). Its input schema is derived from the Go type Input, its
// description is an operating playbook, and its _meta lists the actions
// that only read (MetaReadOnlyActions). Each call goes to a Handler
// (api/service.Service) as the action's api request. Results are text
// content and image content (the downscaled screenshot); a failed action,
// and arguments that do not validate, are results with isError whose first
// text is "code: message" and "Hint: …", never protocol errors.
//
// Transport is the stdio transport hardened for any input: a line that is
// not JSON gets a parse error (-32700, id null), a batch or an invalid
// message -32600, a line longer than the cap is discarded as it is read
// and refused with -32600, and the session goes on. The go-sdk answers
// unknown methods (-32601) and params of the wrong types (-32602). When the
// input ends, the answers to the calls in flight are written (each call
// ends by its own timeout), then the session ends; when Serve's context is
// done, the calls in flight are cancelled. A client's
// notifications/cancelled cancels its call, e.g. a run.
package mcp
