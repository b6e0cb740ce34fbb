// Command suite is the tool comparison benchmark of issue 10: it measures
// tabpilot (its CLI, its JSON-RPC stdio server and its MCP server) side by
// side with the browser tools agents use today (agent-browser, Playwright
// MCP, chrome-devtools-mcp) and with the floor, the same operations as raw
// CDP calls from a minimal chromedp program, on the same pages and the
// same Debian Chromium, in one run.
//
//	go build -o bin/tabpilot ./cmd/tabpilot && go run ./bench/suite           # tables on stdout
//	go run ./bench/suite -n 1 -tools floor,tp-rpc -pages login                # a quick look
//	make bench                                                                # writes docs/benchmarks.md
//
// The pages are served from 127.0.0.1 by the suite (a login form, a news
// article with a cookie banner, a generated page of 5,000 interactive
// elements, a page of shadow roots and frames, and three saved real pages
// of ../shared/pages/readability); every page gets a "Bench counter"
// button that counts its clicks. Every browser is /usr/bin/chromium,
// headless, started through a wrapper script that adds the launch flags
// (no sandbox, no GPU, every host but localhost and 127.0.0.1
// unreachable). The npm tools are installed into a scratch directory
// (-npm-dir) on the first run; a tool that cannot be installed or run is
// reported as n/a with the reason.
//
// For each repetition, page and tool (interleaved, so that every tool sees
// the same machine load), the suite starts the tool cold and times: the
// cold start (process start to the first observation returned), a warm
// observe, a click on the counter by its element number (verified: the
// page's count is read back with the tool's evaluate), an evaluate of
// document.title and a viewport JPEG screenshot. It samples the memory of
// the session's processes (found by an environment variable they inherit)
// from /proc/PID/smaps_rollup every 100 ms, and kills what survives the
// session's close. Each figure is the median with the min–max over the
// repetitions, with its ratio to the floor; the output is one markdown
// table per figure, tools as rows and pages as columns, with the machine,
// the versions, the load and the targets, met or missed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	n, warm   int
	tools     string
	pages     string
	out       string
	bin       string
	chrome    string
	npmDir    string
	npmUpdate bool
	pagesDir  string
	timeout   time.Duration
	verbose   bool
	full      bool
	tpWait    string
}

func main() {
	var c config
	floorMode := flag.Bool("floor", false, "run as the floor process (used by the suite itself)")
	serveOnly := flag.Bool("serve", false, "only serve the pages (and print their URLs) until interrupted, to look at them or drive a tool by hand")
	flag.IntVar(&c.n, "n", 5, "repetitions: cold sessions per tool and page")
	flag.IntVar(&c.warm, "warm", 1, "warm rounds (observe, click, evaluate, screenshot) per session")
	flag.StringVar(&c.tools, "tools", "", "comma-separated tools to run (default all): "+strings.Join(toolKeys, ","))
	flag.StringVar(&c.pages, "pages", "", "comma-separated pages to run (default all): "+strings.Join(pageNames(), ","))
	flag.StringVar(&c.out, "out", "", "write the report into this markdown `file`, replacing its section \""+sectionTitle+"\" (default: print to stdout)")
	flag.StringVar(&c.bin, "bin", "bin/tabpilot", "the tabpilot binary")
	flag.StringVar(&c.chrome, "chrome", "/usr/bin/chromium", "the Chromium executable")
	flag.StringVar(&c.npmDir, "npm-dir", filepath.Join(os.TempDir(), "tabpilot-bench-npm"), "where the npm tools are installed")
	flag.BoolVar(&c.npmUpdate, "npm-update", false, "reinstall the npm tools at their latest versions")
	flag.StringVar(&c.pagesDir, "pages-dir", "../shared/pages/readability", "the saved real pages")
	flag.DurationVar(&c.timeout, "timeout", 120*time.Second, "the timeout of one operation")
	flag.BoolVar(&c.verbose, "v", false, "print every session's figures to stderr")
	flag.StringVar(&c.tpWait, "tp-wait", "", "tabpilot's open wait_until (settled, load, domcontentloaded, networkidle0, networkidle2; default: tabpilot's own, settled), to see what the wait costs")
	flag.BoolVar(&c.full, "full", true, "also measure tabpilot's observation with no token budget (JSON-RPC, after the session's last page)")
	flag.Parse()
	if *floorMode {
		floorMain(c.chrome)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *serveOnly {
		srv, err := startServer(c.pagesDir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "suite:", err)
			os.Exit(1)
		}
		for _, p := range allPages() {
			fmt.Println(srv.url(p))
		}
		<-ctx.Done()
		srv.Close()
		return
	}
	if err := run(ctx, &c); err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(1)
	}
}

// toolKeys are the -tools names, in the order of the table rows.
var toolKeys = []string{"floor", "tp-cli", "tp-rpc", "tp-mcp", "agent-browser", "playwright-mcp", "devtools-mcp"}

func pageNames() []string {
	var out []string
	for _, p := range allPages() {
		out = append(out, p.name)
	}
	return out
}

// pick returns the items of all whose key is in the comma-separated list
// (all when it is empty), in the order of all.
func pick[T any](all []T, key func(T) string, list, what string) ([]T, error) {
	if list == "" {
		return all, nil
	}
	want := strings.Split(list, ",")
	var out []T
	for _, x := range all {
		if slices.Contains(want, key(x)) {
			out = append(out, x)
		}
	}
	for _, w := range want {
		if !slices.ContainsFunc(all, func(x T) bool { return key(x) == w }) {
			return nil, fmt.Errorf("unknown %s %q", what, w)
		}
	}
	return out, nil
}

func run(ctx context.Context, c *config) error {
	pages, err := pick(allPages(), func(p page) string { return p.name }, c.pages, "page")
	if err != nil {
		return err
	}
	if c.n < 1 || c.warm < 1 {
		return fmt.Errorf("-n and -warm must be at least 1")
	}
	scratch, err := os.MkdirTemp("", "tabpilot-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	e := &env{chrome: filepath.Join(scratch, "chromium"), npmDir: c.npmDir, scratch: scratch, tpWait: c.tpWait,
		home: filepath.Join(scratch, "home"), xdg: filepath.Join(scratch, "xdg"), tmp: filepath.Join(scratch, "tmp")}
	for _, d := range []string{e.home, e.xdg, e.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	if e.tabpilot, err = filepath.Abs(c.bin); err != nil {
		return err
	}
	if e.self, err = os.Executable(); err != nil {
		return err
	}
	if _, err := os.Stat(c.chrome); err != nil {
		return fmt.Errorf("no Chromium at %s (make chromium installs Debian's)", c.chrome)
	}
	if err := os.WriteFile(e.chrome, []byte(chromeWrapper(c.chrome)), 0o755); err != nil {
		return err
	}
	tools := c.makeTools(ctx, e)
	if tools, err = pick(tools, func(t *tool) string { return t.key }, c.tools, "tool"); err != nil {
		return err
	}
	srv, err := startServer(c.pagesDir)
	if err != nil {
		return err
	}
	defer srv.Close()
	for _, p := range pages {
		if strings.HasPrefix(p.path, "/real/") {
			if _, err := os.Stat(filepath.Join(c.pagesDir, p.name, "source.html")); err != nil {
				return fmt.Errorf("page %s: %w (set -pages-dir)", p.name, err)
			}
		}
	}
	logf("census of the pages")
	info, err := census(ctx, e.chrome, srv, pages)
	if err != nil {
		return err
	}
	rep := newReport(c, tools, pages, info)
	rep.machine = machineInfo()
	rep.versions = versions(c, e, tools)
	start := time.Now()
	for r := range c.n {
		for i := range tools {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			t := tools[(i+r)%len(tools)] // rotate the order between repetitions
			if t.na != "" {
				continue
			}
			rep.noteLoad()
			runSession(ctx, c, e, t, pages, srv, info, r, func(page string) *result { return rep.result(t.key, page) })
			logf("repetition %d/%d: %s done (%v)", r+1, c.n, t.key, time.Since(start).Round(time.Second))
		}
	}
	rep.noteLoad()
	rep.elapsed = time.Since(start)
	md := rep.markdown()
	if c.out == "" {
		fmt.Print(md)
		return nil
	}
	return writeSection(c.out, md)
}

// chromeWrapper is the script every tool gets as its Chromium: it adds the
// launch flags of the suite to whatever the tool passes.
func chromeWrapper(chrome string) string {
	return "#!/bin/sh\nexec " + chrome + " --no-sandbox --disable-gpu --disable-quic " +
		"'--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1' " +
		"--disable-background-networking --disable-component-update --disable-sync --no-first-run \"$@\"\n"
}

// makeTools describes every tool, with why it cannot run when it cannot.
func (c *config) makeTools(ctx context.Context, e *env) []*tool {
	tp := func(key, name string, start func(context.Context, string) (session, error)) *tool {
		t := &tool{key: key, name: name, start: start}
		if _, err := os.Stat(e.tabpilot); err != nil {
			t.na = "no tabpilot binary at " + e.tabpilot + " (make build)"
		}
		return t
	}
	tools := []*tool{
		{key: "floor", name: "floor (raw CDP, chromedp)", start: e.floor},
		tp("tp-cli", "tabpilot CLI", e.tabpilotCLI),
		tp("tp-rpc", "tabpilot JSON-RPC", e.tabpilotRPC),
		tp("tp-mcp", "tabpilot MCP", e.tabpilotMCP),
		{key: "agent-browser", name: "agent-browser", start: e.agentBrowser},
		{key: "playwright-mcp", name: "Playwright MCP", start: e.playwright},
		{key: "devtools-mcp", name: "chrome-devtools-mcp", start: e.devtools},
	}
	wantNPM := c.tools == ""
	for _, k := range []string{"agent-browser", "playwright-mcp", "devtools-mcp"} {
		wantNPM = wantNPM || slices.Contains(strings.Split(c.tools, ","), k)
	}
	if !wantNPM {
		return tools
	}
	logf("npm tools in %s", c.npmDir)
	na := npmInstall(ctx, c.npmDir, c.npmUpdate)
	major := nodeMajor()
	for _, t := range tools[4:] {
		switch {
		case na != "":
			t.na = na
		case t.key == "agent-browser":
			if _, err := agentBrowserBin(c.npmDir); err != nil {
				t.na = err.Error()
			}
		case major < 20:
			t.na = fmt.Sprintf("node %d is too old (it needs node 20 or later)", major)
		}
	}
	return tools
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
