package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tabpilot/tabpilot/api"
	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/netlog"
)

// callNetwork decodes and runs the network and console methods.
func (s *Service) callNetwork(ctx context.Context, method string, params json.RawMessage) (*api.Result, error) {
	switch method {
	case "network":
		var r api.NetworkRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Network(ctx, &r), nil
	case "console":
		var r api.ConsoleRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Console(ctx, &r), nil
	case "har":
		var r api.HARRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.HAR(ctx, &r), nil
	case "route":
		var r api.RouteRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Route(ctx, &r), nil
	default:
		var r api.UnrouteRequest
		if err := decode(params, &r); err != nil {
			return nil, err
		}
		return s.Unroute(ctx, &r), nil
	}
}

// Network lists a tab's requests, one per line (id, method, status, type,
// duration, URL, failure), or with r.ID shows one request in full. The
// list is cut by the result limits, the rest spilled to a file.
func (s *Service) Network(ctx context.Context, r *api.NetworkRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	details := map[string]any{"action": "network", "name": name}
	var text string
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		t.NetSettle(ctx)
		if r.ID != "" {
			e, err := t.Request(ctx, r.ID)
			if err != nil {
				return err
			}
			details["request"] = e
			text = requestText(e)
			return nil
		}
		list, err := t.Requests(netlog.Filter{URL: r.URL, Type: r.Type, Method: r.Method, Status: r.Status, Failed: r.Failed, All: r.All, Limit: r.Limit})
		if err != nil {
			return err
		}
		details["requests"] = list
		details["count"] = len(list)
		var b strings.Builder
		if len(list) == 0 {
			filtered := r.URL != "" || r.Type != "" || r.Method != "" || r.Status != "" || r.Failed
			switch {
			case filtered && r.All:
				b.WriteString("No request matches the filter")
			case filtered:
				b.WriteString("No request since the last navigation matches the filter (all looks across navigations)")
			case r.All:
				b.WriteString("No requests")
			default:
				b.WriteString("No requests since the last navigation (all looks across navigations)")
			}
		}
		for _, e := range list {
			fmt.Fprintf(&b, "%s %s %s %s %.0fms %s%s%s\n", e.ID, e.Method, statusOf(&e), e.Type, e.Duration, e.URL, failure(&e), workerNote(&e))
		}
		text = strings.TrimRight(b.String(), "\n")
		return nil
	})
	if err != nil {
		return fail("network", name, err)
	}
	return &api.Result{Content: []api.Content{api.TextContent(s.capText(text))}, Details: details}
}

func statusOf(e *netlog.Entry) string {
	switch {
	case e.Failed:
		return "failed"
	case e.Status == 0 && !e.Finished && e.Worker:
		return "-"
	case e.Status == 0 && !e.Finished:
		return "pending"
	}
	return fmt.Sprint(e.Status)
}

// workerNote says, of a worker's main script, why it stays unfinished.
func workerNote(e *netlog.Entry) string {
	if e.Worker && !e.Finished {
		return " (a worker's script: its end is reported to the worker)"
	}
	return ""
}

func failure(e *netlog.Entry) string {
	if e.FailureText != "" {
		return " (" + e.FailureText + ")"
	}
	return ""
}

// requestText renders one request in full: the request line, its headers
// and post data, then the response's status, headers and body (or where
// the body is).
func requestText(e *netlog.Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s (%s, %s, %.0fms)%s%s\n", e.ID, e.Method, e.URL, e.Type, statusOf(e), e.Duration, failure(e), workerNote(e))
	for _, h := range e.RequestHeaders {
		fmt.Fprintf(&b, "> %s: %s\n", h.Name, h.Value)
	}
	if e.PostData != "" {
		fmt.Fprintf(&b, "> (body) %s\n", e.PostData)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "< %d %s\n", e.Status, e.StatusText)
	}
	for _, h := range e.ResponseHeaders {
		fmt.Fprintf(&b, "< %s: %s\n", h.Name, h.Value)
	}
	switch {
	case e.Body == nil:
		if e.Finished && !e.Failed {
			b.WriteString("(body not kept: not text, too large, or no longer held by the browser)\n")
		}
	case e.Body.Path != "":
		fmt.Fprintf(&b, "(body: %d bytes in %s)\n", e.Body.Size, e.Body.Path)
	case e.Body.Base64:
		fmt.Fprintf(&b, "(body: %d bytes, binary, base64 in details.request.body.text)\n", e.Body.Size)
	default:
		b.WriteString("\n" + e.Body.Text)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Console lists a tab's console messages, or its page errors with their
// stacks (r.Errors).
func (s *Service) Console(ctx context.Context, r *api.ConsoleRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	action := "console"
	if r.Errors {
		action = "errors"
	}
	details := map[string]any{"action": action, "name": name}
	var b strings.Builder
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		t.NetSettle(ctx)
		if r.Errors {
			if r.Level != "" {
				return tabs.Errorf(errcode.BadRequest, "console: errors lists the page errors and takes no level")
			}
			errs := t.PageErrors(r.All)
			if r.Limit > 0 && len(errs) > r.Limit {
				errs = errs[len(errs)-r.Limit:]
			}
			details["errors"] = errs
			details["count"] = len(errs)
			if len(errs) == 0 {
				b.WriteString("No page errors")
			}
			for _, e := range errs {
				kind := "Uncaught"
				if e.Rejection {
					kind = "Uncaught (in promise)"
				}
				fmt.Fprintf(&b, "%s %s\n", kind, e.Message)
				for _, f := range e.Stack {
					fmt.Fprintf(&b, "    at %s (%s:%d:%d)\n", orAnonymous(f.Function), f.URL, f.Line, f.Column)
				}
			}
			return nil
		}
		msgs, err := t.Console(netlog.ConsoleFilter{Level: r.Level, All: r.All, Limit: r.Limit})
		if err != nil {
			return err
		}
		details["messages"] = msgs
		details["count"] = len(msgs)
		if len(msgs) == 0 {
			b.WriteString("No console messages")
		}
		for _, m := range msgs {
			loc := ""
			if m.URL != "" {
				loc = fmt.Sprintf(" (%s:%d)", m.URL, m.Line)
			}
			fmt.Fprintf(&b, "[%s] %s%s\n", m.Level, m.Text, loc)
		}
		return nil
	})
	if err != nil {
		return fail(action, name, err)
	}
	return &api.Result{Content: []api.Content{api.TextContent(s.capText(strings.TrimRight(b.String(), "\n")))}, Details: details}
}

func orAnonymous(fn string) string {
	if fn == "" {
		return "<anonymous>"
	}
	return fn
}

// HAR starts or stops a tab's HAR recording.
func (s *Service) HAR(ctx context.Context, r *api.HARRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	details := map[string]any{"action": "har", "name": name, "op": r.Op}
	var text string
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		switch r.Op {
		case "start":
			if r.Save != "" {
				return tabs.Errorf(errcode.BadRequest, "har start takes no save path: give it to har stop")
			}
			content := r.Content
			if content == "" {
				content = "omit"
			}
			dir, err := t.StartHAR(netlog.HAROptions{Content: content})
			if err != nil {
				return err
			}
			details["content"] = content
			text = fmt.Sprintf("Recording a HAR of tab %q (content: %s); har stop FILE writes it", name, content)
			if dir != "" {
				details["dir"] = dir
				text += "; the bodies go to " + dir
			}
		case "stop":
			if r.Save == "" {
				return tabs.Errorf(errcode.BadRequest, "har stop: give the path of the file to write")
			}
			h, err := t.StopHAR(ctx, r.Save)
			if err != nil {
				return err
			}
			details["path"] = r.Save
			details["entries"] = len(h.Log.Entries)
			details["pages"] = len(h.Log.Pages)
			text = fmt.Sprintf("Wrote a HAR of %d requests (%d pages) to %s", len(h.Log.Entries), len(h.Log.Pages), r.Save)
		default:
			return tabs.Errorf(errcode.BadRequest, "har: op %q: use start or stop", r.Op)
		}
		return nil
	})
	if err != nil {
		return fail("har", name, err)
	}
	return &api.Result{Content: []api.Content{api.TextContent(text)}, Details: details}
}

// Route adds a route to a tab.
func (s *Service) Route(ctx context.Context, r *api.RouteRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	spec := tabs.RouteSpec{Abort: r.Abort, Status: r.Status, Headers: r.Headers, ContentType: r.ContentType, Body: r.Body, BodyBase64: r.BodyBase64,
		URL: r.ContinueURL, Method: r.Method, PostData: r.PostData, SetHeaders: r.SetHeaders, Types: r.Types}
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		if r.URL == "" {
			return tabs.Errorf(errcode.BadRequest, "route: give a URL pattern (a glob: ** any characters, * any but '/')")
		}
		return t.Route(ctx, r.URL, spec)
	})
	if err != nil {
		return fail("route", name, err)
	}
	text := fmt.Sprintf("Routed %s on tab %q: %s", r.URL, name, spec.Kind())
	return &api.Result{Content: []api.Content{api.TextContent(text)},
		Details: map[string]any{"action": "route", "name": name, "pattern": r.URL, "route": spec.Kind()}}
}

// Unroute removes a tab's route, or all of them.
func (s *Service) Unroute(ctx context.Context, r *api.UnrouteRequest) (result *api.Result) {
	defer s.redactResult(&result)
	name := tabName(r.Name)
	var n int
	err := s.do(ctx, name, r.Timeout, func(ctx context.Context, t *tabs.Tab) error {
		var err error
		n, err = t.Unroute(ctx, r.URL)
		return err
	})
	if err != nil {
		return fail("unroute", name, err)
	}
	what := r.URL
	if what == "" {
		what = "every route"
	}
	return &api.Result{Content: []api.Content{api.TextContent(fmt.Sprintf("Removed %d route(s) (%s) from tab %q", n, what, name))},
		Details: map[string]any{"action": "unroute", "name": name, "removed": n}}
}
