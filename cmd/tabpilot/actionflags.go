package main

import (
	"flag"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tabpilot/tabpilot/api"
)

func noFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, _ api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q", pos[0])
		}
		return api.TabsRequest{}, nil
	}
}

var (
	waitUntils = []string{"settled", "load", "domcontentloaded", "networkidle0", "networkidle2", "networkidle"}
	dialogs    = []string{"accept", "dismiss"}
	formats    = []string{"markdown", "text", "html"}
)

func oneOf(flagName, v string, allowed []string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usagef("--%s %q: want one of %s", flagName, v, strings.Join(allowed, ", "))
}

// Variables of open's remote browsers, read by the CLI (not the daemon):
// TABPILOT_CDP_HEADERS holds header lines for --cdp-url, one "Name:
// value" per line (newline-separated: a value may hold ';', as a Cookie
// does); TABPILOT_GRID_PASSWORD is --grid-password, kept off the command
// line.
const (
	envCDPHeaders   = "TABPILOT_CDP_HEADERS"
	envGridPassword = "TABPILOT_GRID_PASSWORD"
)

// headerValue is a repeatable "Name: value" flag whose String never shows
// a value (the help would print it).
type headerValue struct{ lines *[]string }

func (v headerValue) String() string { return "" }

func (v headerValue) Set(s string) error {
	name, _, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(strings.TrimSpace(name), " \t") {
		return usagef("want 'Name: value'")
	}
	*v.lines = append(*v.lines, s)
	return nil
}

// envHeaders returns the header lines of TABPILOT_CDP_HEADERS.
func envHeaders(getenv func(string) string) ([]string, error) {
	var out []string
	for line := range strings.SplitSeq(getenv(envCDPHeaders), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if err := (headerValue{&out}).Set(line); err != nil {
			name, _, _ := strings.Cut(line, ":")
			return nil, usagef("%s: line %q…: want 'Name: value', one per line", envCDPHeaders, name)
		}
	}
	return out, nil
}

func openFlags(c *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	waitUntil := fs.String("wait-until", "", "when navigation is done: "+strings.Join(waitUntils, ", ")+" (default settled: load, then until requests and DOM are quiet for 50 ms and two frames have rendered, at most 500 ms)")
	viewport := fs.String("viewport", "", "the viewport in CSS pixels, `WxH` or WxH@SCALE, e.g. 1280x800@2")
	dialog := fs.String("dialogs", "", "answer JavaScript dialogs by themselves: accept or dismiss")
	cdpURL := fs.String("cdp-url", "", "attach to a running browser's CDP endpoint `URL`, e.g. http://127.0.0.1:9222")
	appPath := fs.String("app-path", "", "start (or reuse) the app at `path` with remote debugging")
	target := fs.String("target", "", "with --cdp-url or --app-path: the page with that target id (tabpilot tabs lists them), else the first page whose URL or title contains `text`")
	var headers []string
	fs.Var(headerValue{&headers}, "cdp-header", "with --cdp-url: a header on the websocket upgrade, `'Name: value'` (repeatable; also "+envCDPHeaders+", one per line); values are never shown")
	grid := fs.String("grid", "", "open the tab on a new WebDriver session of the Selenium Grid 4 at `URL`, e.g. http://127.0.0.1:4444")
	gridUser := fs.String("grid-user", "", "with --grid: the Grid's basic auth `user`")
	gridPassword := fs.String("grid-password", "", "with --grid: the Grid's basic auth `password` (or "+envGridPassword+")")
	connectTimeout := fs.Float64("connect-timeout", 0, "with --cdp-url or --grid: `seconds` to connect (default 10; a Grid 60)")
	bctx := fs.String("context", "", "put a new tab in the isolated browser context `NAME` (own cookies, storage, cache), disposed with its last tab")
	proxy := fs.String("proxy", "", "with --context: the context's upstream proxy `URL`, SCHEME://host:port")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 1 {
			return nil, usagef("open takes one URL, got %d arguments", len(pos))
		}
		req := api.OpenRequest{Common: common, WaitUntil: *waitUntil, Dialogs: *dialog}
		if len(pos) == 1 {
			req.URL = pos[0]
		}
		if err := oneOf("wait-until", *waitUntil, waitUntils); err != nil {
			return nil, err
		}
		if err := oneOf("dialogs", *dialog, dialogs); err != nil {
			return nil, err
		}
		if *viewport != "" {
			v, err := parseViewport(*viewport)
			if err != nil {
				return nil, err
			}
			req.Viewport = v
		}
		req.Context, req.Proxy = *bctx, *proxy
		if *proxy != "" && *bctx == "" {
			return nil, usagef("--proxy needs --context: a proxy is per browser context")
		}
		if *connectTimeout < 0 {
			return nil, usagef("--connect-timeout %v is negative", *connectTimeout)
		}
		if len(headers) > 0 && *cdpURL == "" {
			return nil, usagef("--cdp-header needs --cdp-url")
		}
		if (*gridUser != "" || *gridPassword != "") && *grid == "" {
			return nil, usagef("--grid-user and --grid-password need --grid")
		}
		switch {
		case (*cdpURL != "") && (*appPath != "" || *grid != "") || *appPath != "" && *grid != "":
			return nil, usagef("give one of --cdp-url, --grid and --app-path")
		case *grid != "":
			if *target != "" {
				return nil, usagef("--target does not apply to --grid: a Grid session is a browser of its own")
			}
			pw := *gridPassword
			if pw == "" {
				pw = c.getenv(envGridPassword)
			}
			req.App = &api.App{Grid: *grid, GridUser: *gridUser, GridPassword: pw, ConnectTimeout: *connectTimeout}
		case *cdpURL != "":
			env, err := envHeaders(c.getenv)
			if err != nil {
				return nil, err
			}
			req.App = &api.App{CDPURL: *cdpURL, Target: *target, CDPHeaders: append(env, headers...), ConnectTimeout: *connectTimeout}
		case *appPath != "":
			p, err := resolveApp(*appPath)
			if err != nil {
				return nil, err
			}
			req.App = &api.App{Path: p, Target: *target}
		case *target != "":
			return nil, usagef("--target needs --cdp-url or --app-path")
		}
		return req, nil
	}
}

// parseViewport reads WxH or WxH@SCALE.
func parseViewport(s string) (*api.Viewport, error) {
	bad := usagef("--viewport %q: want WxH or WxH@SCALE, e.g. 1280x800 or 390x844@3", s)
	size, scale, hasScale := strings.Cut(s, "@")
	w, h, ok := strings.Cut(size, "x")
	if !ok {
		return nil, bad
	}
	width, err1 := strconv.Atoi(w)
	height, err2 := strconv.Atoi(h)
	if err1 != nil || err2 != nil || width <= 0 || height <= 0 || width > 10000 || height > 10000 {
		return nil, bad
	}
	v := &api.Viewport{Width: width, Height: height}
	if hasScale {
		f, err := strconv.ParseFloat(scale, 64)
		if err != nil || f <= 0 || f > 10 {
			return nil, bad
		}
		v.Scale = f
	}
	return v, nil
}

// resolveApp makes an app path absolute: a bare name is looked up on PATH.
func resolveApp(p string) (string, error) {
	if !strings.ContainsRune(p, '/') {
		found, err := exec.LookPath(p)
		if err != nil {
			return "", usagef("--app-path %q: not found on PATH; give its path", p)
		}
		p = found
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", usagef("--app-path %q: %v", p, err)
	}
	return abs, nil
}

func runFlags(c *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	code := fs.String("e", "", "the `code` to run")
	return func(pos []string, common api.Common) (any, error) {
		given := 0
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "e" {
				given++
			}
		})
		if given+len(pos) != 1 {
			return nil, usagef("give the code once: -e CODE, a FILE, or - for stdin")
		}
		req := api.RunRequest{Common: common, Code: *code}
		switch {
		case given == 1:
		case pos[0] == "-":
			b, err := io.ReadAll(io.LimitReader(c.stdin, 16<<20))
			if err != nil {
				return nil, usagef("read the code from stdin: %v", err)
			}
			req.Code = string(b)
		default:
			b, err := os.ReadFile(pos[0])
			if err != nil {
				return nil, usagef("read the code: %v", err)
			}
			req.Code = string(b)
		}
		if strings.TrimSpace(req.Code) == "" {
			return nil, usagef("the code is empty")
		}
		return req, nil
	}
}

func closeFlags(_ *cli, fs *flag.FlagSet, inv *invocation) func([]string, api.Common) (any, error) {
	all := fs.Bool("all", false, "close every tab")
	kill := fs.Bool("kill", false, "when the last tab of a spawned app closes, end the app too")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q (close takes --tab NAME)", pos[0])
		}
		if *all && inv.tab != "" {
			return nil, usagef("give --tab or --all, not both")
		}
		return api.CloseRequest{Common: common, All: *all, Kill: *kill}, nil
	}
}

func observeFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	all := fs.Bool("all", false, "include the structure: headings, landmarks, text")
	viewportOnly := fs.Bool("viewport-only", false, "only what intersects the viewport")
	query := fs.String("query", "", "only elements whose name or text matches `Q`")
	maxTokens := fs.Int("max-tokens", 0, "the budget of the rendering in `tokens` (default 6000)")
	scroll := fs.Bool("scroll", false, "first scroll every scroll container through, collecting what virtualised lists render")
	boxes := fs.Bool("boxes", false, "give every element its box (box=X,Y,WxH in CSS pixels)")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q", pos[0])
		}
		if *maxTokens < 0 {
			return nil, usagef("--max-tokens %d is negative", *maxTokens)
		}
		return api.ObserveRequest{Common: common, IncludeAll: *all, ViewportOnly: *viewportOnly, Query: *query, MaxTokens: *maxTokens, Scroll: *scroll, Boxes: *boxes}, nil
	}
}

// targetFlags builds click and hover (N|SELECTOR), and type and fill
// (N|SELECTOR TEXT).
func targetFlags(verb string, withText bool) func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
		return func(pos []string, common api.Common) (any, error) {
			want, what := 1, "N|SELECTOR"
			if withText {
				want, what = 2, "N|SELECTOR TEXT"
				if verb == "fill" {
					what = "N|SELECTOR VALUE"
				}
			}
			if len(pos) != want {
				return nil, usagef("%s takes %s, got %d arguments", verb, what, len(pos))
			}
			if strings.TrimSpace(pos[0]) == "" {
				return nil, usagef("the target is empty")
			}
			req := api.ActRequest{Common: common, Target: api.Target(pos[0])}
			if withText {
				req.Text = pos[1]
			}
			return req, nil
		}
	}
}

func pressFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) < 1 || len(pos) > 2 || pos[0] == "" {
			return nil, usagef("press takes KEY [N|SELECTOR], got %d arguments", len(pos))
		}
		req := api.ActRequest{Common: common, Text: pos[0]}
		if len(pos) == 2 {
			if strings.TrimSpace(pos[1]) == "" {
				return nil, usagef("the target is empty")
			}
			req.Target = api.Target(pos[1])
		}
		return req, nil
	}
}

func screenshotFlags(_ *cli, fs *flag.FlagSet, inv *invocation) func([]string, api.Common) (any, error) {
	fs.StringVar(&inv.out, "out", "", "write the full-resolution PNG to `FILE`")
	fullPage := fs.Bool("full-page", false, "the whole page, not only the viewport")
	selector := fs.String("selector", "", "only the element matched by `S`")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q (use --out FILE)", pos[0])
		}
		req := api.ScreenshotRequest{Common: common, FullPage: *fullPage, Selector: *selector}
		if inv.out != "" {
			// The daemon writes the file; its working directory is not ours.
			abs, err := filepath.Abs(inv.out)
			if err != nil {
				return nil, usagef("--out %q: %v", inv.out, err)
			}
			req.Save = abs
		}
		return req, nil
	}
}

func extractFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	format := fs.String("format", "", "markdown, text or html (default markdown)")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 0 {
			return nil, usagef("unexpected argument %q", pos[0])
		}
		if err := oneOf("format", *format, formats); err != nil {
			return nil, err
		}
		return api.ExtractRequest{Common: common, Format: *format}, nil
	}
}

// target checks the N|SELECTOR argument.
func target(s string) (api.Target, error) {
	if strings.TrimSpace(s) == "" {
		return "", usagef("the target is empty")
	}
	return api.Target(s), nil
}

func selectFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) < 2 {
			return nil, usagef("select takes N|SELECTOR VALUE…, got %d arguments", len(pos))
		}
		tg, err := target(pos[0])
		if err != nil {
			return nil, err
		}
		return api.SelectRequest{Common: common, Target: tg, Values: pos[1:]}, nil
	}
}

func scrollFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	selector := fs.String("selector", "", "scroll over the element `N|S` instead of the viewport's centre")
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) < 1 || len(pos) > 2 {
			return nil, usagef("scroll takes [DX] DY in CSS pixels, got %d arguments", len(pos))
		}
		var d [2]float64
		for i, a := range pos {
			f, err := strconv.ParseFloat(a, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, usagef("scroll: %q is not a number of CSS pixels", a)
			}
			d[i] = f
		}
		req := api.ScrollRequest{Common: common, DY: d[0]}
		if len(pos) == 2 {
			req.DX, req.DY = d[0], d[1]
		}
		if req.DX == 0 && req.DY == 0 {
			return nil, usagef("scroll by 0: give DY (down; negative is up), or DX DY")
		}
		if *selector != "" {
			tg, err := target(*selector)
			if err != nil {
				return nil, err
			}
			req.Target = tg
		}
		return req, nil
	}
}

var (
	waitStates = []string{"visible", "hidden", "attached", "detached"}
	loadStates = []string{"load", "domcontentloaded", "networkidle"}
)

func waitFlags(_ *cli, fs *flag.FlagSet, _ *invocation) func([]string, api.Common) (any, error) {
	selector := fs.String("selector", "", "wait for the element `N|S`")
	state := fs.String("state", "", "with TEXT or --selector: the `STATE`, one of "+strings.Join(waitStates, ", ")+" (default visible)")
	urlPattern := fs.String("url", "", "wait until the URL matches `PATTERN`")
	loadState := fs.String("load-state", "", "wait until the document reached `STATE`: "+strings.Join(loadStates, " or "))
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) > 1 {
			return nil, usagef("wait takes one TEXT (quote it), got %d arguments", len(pos))
		}
		req := api.WaitRequest{Common: common, URL: *urlPattern, LoadState: *loadState, State: *state}
		if len(pos) == 1 {
			if strings.TrimSpace(pos[0]) == "" {
				return nil, usagef("the text is empty")
			}
			req.Text = pos[0]
		}
		if *selector != "" {
			tg, err := target(*selector)
			if err != nil {
				return nil, err
			}
			req.Target = tg
		}
		given := 0
		for _, v := range []string{req.Text, string(req.Target), req.URL, req.LoadState} {
			if v != "" {
				given++
			}
		}
		if given != 1 {
			return nil, usagef("wait takes one of TEXT, --selector S, --url PATTERN or --load-state STATE")
		}
		if err := oneOf("state", *state, waitStates); err != nil {
			return nil, err
		}
		if *state != "" && req.Text == "" && req.Target == "" {
			return nil, usagef("--state goes with TEXT or --selector")
		}
		if err := oneOf("load-state", *loadState, loadStates); err != nil {
			return nil, err
		}
		return req, nil
	}
}

func navFlags(verb string) func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
		return func(pos []string, common api.Common) (any, error) {
			if len(pos) > 0 {
				return nil, usagef("%s takes no arguments, got %q", verb, pos[0])
			}
			return api.NavRequest{Common: common}, nil
		}
	}
}

func dialogFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		switch {
		case len(pos) == 0:
			return nil, usagef("dialog takes accept [TEXT] or dismiss")
		case pos[0] == "accept" && len(pos) <= 2:
			req := api.DialogRequest{Common: common, Response: "accept"}
			if len(pos) == 2 {
				req.Text = &pos[1]
			}
			return req, nil
		case pos[0] == "dismiss" && len(pos) == 1:
			return api.DialogRequest{Common: common, Response: "dismiss"}, nil
		case pos[0] == "accept" || pos[0] == "dismiss":
			return nil, usagef("dialog takes accept [TEXT] or dismiss, got %d arguments", len(pos))
		}
		return nil, usagef("dialog %q: want accept [TEXT] or dismiss", pos[0])
	}
}

func uploadFlags(*cli, *flag.FlagSet, *invocation) func([]string, api.Common) (any, error) {
	return func(pos []string, common api.Common) (any, error) {
		if len(pos) < 2 {
			return nil, usagef("upload takes N|SELECTOR FILE…, got %d arguments", len(pos))
		}
		tg, err := target(pos[0])
		if err != nil {
			return nil, err
		}
		// The daemon sets the files; its working directory is not ours,
		// and a missing file is found here, before anything is sent.
		files := make([]string, 0, len(pos)-1)
		for _, f := range pos[1:] {
			abs, err := filepath.Abs(f)
			if err != nil {
				return nil, usagef("upload %q: %v", f, err)
			}
			st, err := os.Stat(abs)
			if err != nil {
				return nil, usagef("upload: no such file %s", abs)
			}
			if st.IsDir() {
				return nil, usagef("upload: %s is a directory, not a file", abs)
			}
			files = append(files, abs)
		}
		return api.UploadRequest{Common: common, Target: tg, Files: files}, nil
	}
}
