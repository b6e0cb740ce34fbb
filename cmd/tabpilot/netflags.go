package main

import (
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/tabpilot/tabpilot/api"
)

// The network and console verbs.
func init() {
	actions = append(actions,
		&action{name: "network", args: "[show ID]", method: "network",
			summary: "list the tab's requests, or show one in full",
			about: `List the requests of the tab's page since its last navigation (--all: across
navigations), one per line: id, method, status, type, duration, URL. Filter
with --url GLOB, --type (document, script, xhr, fetch, image, …), --method,
--status (404, 4xx, 400-499) and --failed. "network show ID" prints one
request in full: its headers, post data and response body (a large body is
written to a file whose path is printed).`,
			flags: networkFlags},
		&action{name: "console", args: "", method: "console",
			summary: "list the tab's console messages",
			about: `List the console messages of the tab's page since its last navigation
(--all: across navigations): level, text and where it was logged. --level
error keeps errors only, warning keeps warnings and errors.`,
			flags: consoleFlags(false)},
		&action{name: "errors", args: "", method: "console",
			summary: "list the page's uncaught errors, with their stacks",
			about: `List the uncaught exceptions and unhandled promise rejections of the tab's
page since its last navigation (--all: across navigations), with their
stacks.`,
			flags: consoleFlags(true)},
		&action{name: "har", args: "(start | stop FILE)", method: "har",
			summary: "record the tab's traffic as a HAR 1.2 file",
			about: `"har start" starts recording the tab's traffic; "har stop FILE" writes it to
FILE as HAR 1.2 (mode 0600). --content embed keeps the response bodies in
the HAR (base64 for binary ones), --content file writes them to a new
private directory that har start names, and the default, omit, keeps
none.`,
			flags: harFlags},
		&action{name: "route", args: "GLOB (--abort REASON | --status N [--body FILE] | --set-header K:V)", method: "route",
			summary: "fulfil, fail or change the requests a URL glob matches",
			about: `Route the requests of the tab's page whose URL GLOB (and --type) match,
until unroute: --abort REASON fails them (failed, aborted, blockedbyclient,
connectionrefused, …); --status N, --body FILE, --content-type and --header
K:V fulfil them without the network; --set-header K:V (empty V removes it)
changes their headers and lets them go on. --type image,media,font with
--abort blockedbyclient saves loading what an agent does not need.`,
			flags: routeFlags},
		&action{name: "unroute", args: "[GLOB]", method: "unroute",
			summary: "remove a route, or all of them",
			about:   `Remove the route of GLOB (as route was given it), or every route of the tab.`,
			flags:   unrouteFlags},
	)
}

func networkFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	url := fs.String("url", "", "only requests whose URL matches `GLOB`")
	typ := fs.String("type", "", "only these resource `TYPES` (comma-separated)")
	method := fs.String("method", "", "only this HTTP `METHOD`")
	status := fs.String("status", "", "only these `STATUSES` (404, 4xx, 400-499)")
	failed := fs.Bool("failed", false, "only the requests that failed")
	all := fs.Bool("all", false, "across navigations, not only since the last one")
	limit := fs.Int("limit", 0, "the newest `N` only")
	return func(pos []string, common api.Common) (any, error) {
		req := api.NetworkRequest{Common: common, URL: *url, Type: *typ, Method: *method, Status: *status, Failed: *failed, All: *all, Limit: *limit}
		switch {
		case len(pos) == 0:
			return req, nil
		case pos[0] == "show" && len(pos) == 2:
			return api.NetworkRequest{Common: common, ID: pos[1]}, nil
		}
		return nil, usagef("network takes no argument, or show ID")
	}
}

func consoleFlags(errs bool) func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
		level := ""
		if !errs {
			fs.StringVar(&level, "level", "", "the lowest `LEVEL` kept: debug, log, info, warning or error")
		}
		all := fs.Bool("all", false, "across navigations, not only since the last one")
		limit := fs.Int("limit", 0, "the newest `N` only")
		return func(pos []string, common api.Common) (any, error) {
			if len(pos) > 0 {
				return nil, usagef("unexpected argument %q", pos[0])
			}
			if err := oneOf("level", level, []string{"debug", "log", "info", "warning", "error"}); err != nil {
				return nil, err
			}
			return api.ConsoleRequest{Common: common, Level: level, Errors: errs, All: *all, Limit: *limit}, nil
		}
	}
}

func harFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	content := fs.String("content", "", "har start: keep response bodies: omit (default), embed or file")
	return func(pos []string, common api.Common) (any, error) {
		switch {
		case len(pos) == 1 && pos[0] == "start":
			if err := oneOf("content", *content, []string{"omit", "embed", "file"}); err != nil {
				return nil, err
			}
			return api.HARRequest{Common: common, Op: "start", Content: *content}, nil
		case len(pos) == 2 && pos[0] == "stop":
			if *content != "" {
				return nil, usagef("--content goes with har start")
			}
			// The daemon writes the file; its working directory is not ours.
			abs, err := filepath.Abs(pos[1])
			if err != nil {
				return nil, usagef("har stop %q: %v", pos[1], err)
			}
			return api.HARRequest{Common: common, Op: "stop", Save: abs}, nil
		}
		return nil, usagef("har takes start, or stop FILE")
	}
}

// headerList is a repeatable K:V flag.
type headerList map[string]string

func (h headerList) String() string { return "" }

func (h headerList) Set(s string) error {
	k, v, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return usagef("header %q: want NAME:VALUE", s)
	}
	h[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

func routeFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	abort := fs.String("abort", "", "fail the requests with network error `REASON` (e.g. blockedbyclient)")
	status := fs.Int("status", 0, "fulfil the requests with HTTP status `N`")
	body := fs.String("body", "", "the fulfilled body, read from `FILE`")
	contentType := fs.String("content-type", "", "the fulfilled Content-Type")
	headers, setHeaders := headerList{}, headerList{}
	fs.Var(headers, "header", "a fulfilled response header `K:V` (repeatable)")
	fs.Var(setHeaders, "set-header", "set a request header `K:V` and let it go on (repeatable; empty V removes it)")
	typ := fs.String("type", "", "only requests of these resource `TYPES` (comma-separated)")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) != 1 {
			return nil, usagef("route takes one URL GLOB, got %d arguments", len(pos))
		}
		req := api.RouteRequest{Common: common, URL: pos[0], Abort: *abort, Status: *status, ContentType: *contentType}
		if len(headers) > 0 {
			req.Headers = headers
		}
		if len(setHeaders) > 0 {
			req.SetHeaders = setHeaders
		}
		if *typ != "" {
			req.Types = strings.Split(*typ, ",")
		}
		if *body != "" {
			b, err := os.ReadFile(*body)
			if err != nil {
				return nil, usagef("--body: %v", err)
			}
			if utf8.Valid(b) {
				req.Body = string(b)
			} else {
				req.BodyBase64 = base64.StdEncoding.EncodeToString(b)
			}
		}
		if req.Abort == "" && req.Status == 0 && req.Body == "" && req.BodyBase64 == "" && len(req.SetHeaders) == 0 {
			return nil, usagef("route needs --abort REASON, --status N / --body FILE, or --set-header K:V")
		}
		return req, nil
	}
}

func unrouteFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 1 {
			return nil, usagef("unroute takes at most one URL GLOB")
		}
		req := api.UnrouteRequest{Common: common}
		if len(pos) == 1 {
			req.URL = pos[0]
		}
		return req, nil
	}
}
