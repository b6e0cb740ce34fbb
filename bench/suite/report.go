package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sectionTitle is the heading of the suite's section of docs/benchmarks.md.
const sectionTitle = "## Tool comparison (issue 10)"

type report struct {
	c        *config
	tools    []*tool
	pages    []page
	info     map[string]pageInfo
	results  map[string]*result // tool key + "/" + page name
	machine  string
	versions []string
	started  time.Time
	elapsed  time.Duration
	loadMin  float64
	loadMax  float64
	loads    int
}

func newReport(c *config, tools []*tool, pages []page, info map[string]pageInfo) *report {
	return &report{c: c, tools: tools, pages: pages, info: info, results: map[string]*result{}, started: time.Now(), loadMin: 1e9}
}

func (r *report) result(tool, page string) *result {
	k := tool + "/" + page
	if r.results[k] == nil {
		r.results[k] = &result{tool: tool, page: page}
	}
	return r.results[k]
}

func (r *report) get(tool, page string) *result { return r.results[tool+"/"+page] }

// noteLoad records the 1-minute load average.
func (r *report) noteLoad() {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return
	}
	l, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return
	}
	r.loadMin, r.loadMax = min(r.loadMin, l), max(r.loadMax, l)
	r.loads++
}

func machineInfo() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(string(b))
		if len(f) > 1 {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			mem = fmt.Sprintf(", %.0f GiB memory", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%d cores (nproc), %s%s, %s/%s", runtime.NumCPU(), cpu, mem, runtime.GOOS, runtime.GOARCH)
}

func versions(c *config, e *env, tools []*tool) []string {
	v := []string{}
	chrome := commandVersion(c.chrome, "--version")
	v = append(v, "Chromium: "+cmp.Or(chrome, "?"))
	v = append(v, "Go: "+runtime.Version())
	chromedpV := "?"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/chromedp/chromedp" {
				chromedpV = d.Version
			}
		}
	}
	for _, t := range tools {
		switch t.key {
		case "floor":
			t.version = "chromedp " + chromedpV
		case "tp-cli", "tp-rpc", "tp-mcp":
			t.version = strings.TrimPrefix(commandVersion(e.tabpilot, "version"), "tabpilot ")
		case "agent-browser":
			t.version = npmVersion(c.npmDir, "agent-browser")
		case "playwright-mcp":
			t.version = npmVersion(c.npmDir, "@playwright/mcp")
			if pw := npmVersion(c.npmDir, "playwright-core"); pw != "" {
				t.version += " (playwright-core " + pw + ")"
			}
		case "devtools-mcp":
			t.version = npmVersion(c.npmDir, "chrome-devtools-mcp")
		}
	}
	if node := commandVersion("node", "--version"); node != "" {
		v = append(v, "Node.js: "+node)
	}
	if rev := gitRev(); rev != "" {
		v = append(v, "tabpilot commit: "+rev)
	}
	return v
}

func gitRev() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		rev += " (the working tree had uncommitted changes)"
	}
	return rev
}

// ---- statistics

func median[T cmp.Ordered](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func durMedian(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// ---- markdown

type table struct {
	title, about string
	cell         func(res *result, floor *result) string
	// has, when set, keeps the columns of the pages with a figure.
	has func(res *result) bool
}

func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", sectionTitle)
	b.WriteString("`make bench` (`go run ./bench/suite -out docs/benchmarks.md`; see `bench/README.md`) runs tabpilot and the browser tools agents use today on the same pages, with the same Debian Chromium, in one run, and writes this section.\n\n")
	fmt.Fprintf(&b, "- Date: %s; the run took %v.\n", r.started.Format("2006-01-02 15:04 MST"), r.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "- Machine: %s; load average (1 min) %.1f to %.1f during the run (other engineers' tests share the cores).\n", r.machine, r.loadMin, r.loadMax)
	fmt.Fprintf(&b, "- Repetitions: %d sessions per tool, each started cold and taken through every page, with %d warm round(s) per page; a figure is the median, with the min–max in brackets, and ×N is the ratio to the floor's median.\n", r.c.n, r.c.warm)
	if r.c.tpWait != "" {
		fmt.Fprintf(&b, "- tabpilot opened its pages with wait_until %q (not its default).\n", r.c.tpWait)
	}
	for _, v := range r.versions {
		fmt.Fprintf(&b, "- %s\n", v)
	}
	b.WriteString("\nTools (rows):\n\n")
	for _, t := range r.tools {
		line := fmt.Sprintf("- **%s** %s: %s", t.name, t.version, toolAbout[t.key])
		if t.na != "" {
			line += fmt.Sprintf(" **n/a here: %s.**", t.na)
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\nPages (columns), served from 127.0.0.1; every page gets a fixed \"Bench counter\" button at the top right that counts its clicks:\n\n")
	for _, p := range r.pages {
		fmt.Fprintf(&b, "- **%s**: %s; title %q, %d interactive elements (the census below).\n", p.name, p.about, r.info[p.name].title, r.info[p.name].trueCount)
	}
	b.WriteString("\n")
	for _, t := range r.tables() {
		fmt.Fprintf(&b, "### %s\n\n%s\n\n", t.title, t.about)
		pages := r.pages
		if t.has != nil {
			pages = slices.DeleteFunc(slices.Clone(pages), func(p page) bool {
				for _, tl := range r.tools {
					if res := r.get(tl.key, p.name); res != nil && t.has(res) {
						return false
					}
				}
				return true
			})
		}
		b.WriteString("| tool |")
		for _, p := range pages {
			fmt.Fprintf(&b, " %s |", p.name)
		}
		b.WriteString("\n| --- |")
		for range pages {
			b.WriteString(" ---: |")
		}
		b.WriteString("\n")
		for _, tl := range r.tools {
			if tl.na != "" {
				continue
			}
			fmt.Fprintf(&b, "| %s |", tl.name)
			for _, p := range pages {
				res := r.get(tl.key, p.name)
				cell := "–"
				if res != nil {
					cell = t.cell(res, r.get("floor", p.name))
				}
				fmt.Fprintf(&b, " %s |", cell)
			}
			b.WriteString("\n")
			if t.title == tableSize && tl.key == "tp-rpc" {
				// The same observation with no token budget.
				fmt.Fprintf(&b, "| tabpilot, no budget |")
				for _, p := range pages {
					res := r.get(tl.key, p.name)
					cell := "–"
					if res != nil && res.full != nil {
						cell = sizeCell(res.full.bytes, r.get("floor", p.name))
					}
					fmt.Fprintf(&b, " %s |", cell)
				}
				b.WriteString("\n")
			}
		}
		b.WriteString("\n")
	}
	r.writeErrors(&b)
	r.writeTargets(&b)
	b.WriteString("Why tabpilot misses what it misses, with the CDP traces and the changes that would close the gaps: `bench/README.md`, *Findings*.\n\n")
	return b.String()
}

var toolAbout = map[string]string{
	"floor":          "this program run with `-floor`: chromedp launching the browser, `Page.navigate` to the load event, observe = `Accessibility.getFullAXTree` (read raw, then decoded just enough to number the nodes with an interactive role), click = `DOM.getContentQuads` + `Input.dispatchMouseEvent` pressed/released at the centre, evaluate = `Runtime.evaluate`, screenshot = `Page.captureScreenshot` JPEG q70 of the 1280×720 viewport. No waiting for actionability, no rendering for a model: the lower bound of any tool on CDP",
	"tp-cli":         "`tabpilot open URL`, `observe`, `click N`, `run -e 'return await tab.evaluate(…)'`, `screenshot` (the model's JPEG copy, to a temp file): a new process per call, talking to the session's daemon (started by the first call) over its unix socket; `tabpilot stop` at the end",
	"tp-rpc":         "`tabpilot serve`, JSON-RPC 2.0 on stdio: the methods `open`, `observe`, `click` {target: N}, `run` (as the CLI), `screenshot` (the image content)",
	"tp-mcp":         "`tabpilot mcp` with the go-sdk MCP client over stdio: the tool `browser` with the actions `open`, `observe`, `click`, `run`, `screenshot`",
	"agent-browser":  "npm `agent-browser`, its native Linux binary (a process per call and a daemon): `--executable-path WRAPPER open URL`, `snapshot -i`, `click @eN`, `eval EXPR`, `--screenshot-format jpeg screenshot FILE`, `close`",
	"playwright-mcp": "npm `@playwright/mcp` (`node cli.js --headless --isolated --executable-path WRAPPER`): `browser_navigate`, `browser_snapshot`, `browser_click` {target: ref}, `browser_evaluate`, `browser_take_screenshot` {type: jpeg}",
	"devtools-mcp":   "npm `chrome-devtools-mcp` (`--headless --isolated --executablePath WRAPPER --no-usage-statistics --no-performance-crux`): `list_pages` once, `navigate_page`, `take_snapshot`, `click` {uid}, `evaluate_script`, `take_screenshot` {format: jpeg}",
}

const (
	tableCold  = "Cold start: process start to the first observation returned (ms)"
	tableFirst = "Open and first observe, the tool running (ms)"
	tableObs   = "Warm observe (ms)"
	tableClick = "Click on the counter by its element number, verified (ms)"
	tableEval  = "Evaluate document.title (ms)"
	tableShot  = "Screenshot of the viewport, JPEG (ms; size)"
	tableSize  = "Observation size: bytes (≈ tokens, bytes/4)"
	tableCount = "Interactive elements listed / the page's true count"
	tableMem   = "The tool's own memory, Chromium excluded: peak RSS / PSS (MB)"
	tableChrom = "Chromium's memory: peak total PSS (USS) of its processes (MB)"
)

func (r *report) tables() []table {
	timeCell := func(get func(*result) []time.Duration) func(*result, *result) string {
		return func(res, floor *result) string {
			ds := get(res)
			if len(ds) == 0 {
				return "error"
			}
			s := durCell(ds)
			if floor != nil && res.tool != "floor" && len(get(floor)) > 0 {
				s += fmt.Sprintf(" ×%.2f", float64(durMedian(ds))/float64(durMedian(get(floor))))
			}
			return s
		}
	}
	return []table{
		{title: tableCold, about: "From the start of the tool's process (for the CLIs, of the first call, which starts the daemon) through `open` to the first observation returned: what an agent waits for before it can act. Every session starts cold (a new process and a new browser) on the first page of the run; the other pages are measured in the same session (next table).", cell: timeCell(func(r *result) []time.Duration { return r.cold }), has: func(r *result) bool { return len(r.cold) > 0 }},
		{title: tableFirst, about: "With the tool running, `open` of the next page (each tool's own idea of a loaded page: tabpilot waits for `settled` by default: the load event, then until its requests and DOM are quiet for 50 ms, counted from DOMContentLoaded, and two frames have rendered, at most 500 ms; the floor for the load event) and the first observation returned.", cell: timeCell(func(r *result) []time.Duration { return r.first }), has: func(r *result) bool { return len(r.first) > 0 }},
		{title: tableObs, about: "An observation of the loaded page, the tool's default (tabpilot: the numbered list with a 6,000-token budget; agent-browser: `snapshot -i`; Playwright MCP and chrome-devtools-mcp: their whole snapshot; the floor: the raw accessibility tree).", cell: timeCell(func(r *result) []time.Duration { return r.obs })},
		{title: tableClick, about: "Clicking the counter button by the reference the observation gave it, as one call; the suite then reads the page's count back with the tool's evaluate (not timed) and marks a click the page did not count with ✗.", cell: func(res, floor *result) string {
			s := timeCell(func(r *result) []time.Duration { return r.click })(res, floor)
			if res.clicksBad > 0 {
				s += fmt.Sprintf(" ✗%d", res.clicksBad)
			}
			return s
		}},
		{title: tableEval, about: "`document.title` evaluated in the page, as one call (tabpilot: a `run` of `return await tab.evaluate(() => { return (document.title); })`; the function-taking tools get the same function); ✗ marks an answer without the title.", cell: func(res, floor *result) string {
			s := timeCell(func(r *result) []time.Duration { return r.eval })(res, floor)
			if res.evalBad > 0 {
				s += fmt.Sprintf(" ✗%d", res.evalBad)
			}
			return s
		}},
		{title: tableShot, about: "A JPEG of the viewport as the tool gives it to a model (tabpilot: downscaled to fit 1024×1024 and 150 KiB; the others: their own size and quality), and its median size.", cell: func(res, floor *result) string {
			s := timeCell(func(r *result) []time.Duration { return r.shot })(res, floor)
			if len(res.shotBytes) > 0 {
				s += fmt.Sprintf("; %.0f KiB", float64(median(res.shotBytes))/1024)
			}
			return s
		}},
		{title: tableSize, about: "The bytes of one default observation as the model (or, for the floor, the program) receives it: the text content of the MCP and JSON-RPC results, the CLIs' stdout, the floor's raw `getFullAXTree` JSON; ×N is the ratio to the floor. *tabpilot, no budget* is the same observation with `max_tokens` unlimited (every element in the text).", cell: func(res, floor *result) string {
			if len(res.obsBytes) == 0 {
				return "error"
			}
			return sizeCell(median(res.obsBytes), floor)
		}},
		{title: tableCount, about: "The interactive elements the default observation lists (tabpilot: its element numbers, and in brackets the ones its budget left out of the text and put in the full observation's file; the others: their lines with an interactive role), against the page's true count. The true count is the census: the page's own script counts the rendered links, buttons, fields, selects and ARIA widgets, in open shadow roots and in every frame (a cross-origin frame is counted on its own).", cell: func(res, _ *result) string {
			if len(res.listed) == 0 {
				return "error"
			}
			s := fmt.Sprintf("%d / %d", median(res.listed), r.info[res.page].trueCount)
			if o := median(res.omitted); o > 0 {
				s += fmt.Sprintf(" (+%d in the file)", o)
			}
			return s
		}},
		{title: tableMem, about: "The peak over the session of the summed RSS and PSS (`/proc/PID/smaps_rollup`, every 100 ms) of the tool's processes that are not Chromium: the Go process for the floor and tabpilot's stdio servers, the daemon for the CLIs (their short-lived per-call processes are left out), Node.js for the MCP servers. A page's figure is the peak while the session was on that page; the pages come from the smallest to the largest, so what a tool keeps of the earlier pages counts in the later ones.", cell: func(res, _ *result) string {
			if len(res.toolRSS) == 0 {
				return "error"
			}
			return fmt.Sprintf("%.1f / %.1f", mb(median(res.toolRSS)), mb(median(res.toolPSS)))
		}},
		{title: tableChrom, about: "The peak of the summed PSS of the Chromium processes of the session (browser, zygotes, GPU, utilities, renderers), with ×N its ratio to the floor's, and in brackets the summed USS (their private memory). PSS shares the pages of Chromium's binary among every Chromium on the machine, other engineers' tests included, so it moves with them; USS does not.", cell: func(res, floor *result) string {
			if len(res.chromePSS) == 0 {
				return "error"
			}
			s := fmt.Sprintf("%.0f", mb(median(res.chromePSS)))
			if floor != nil && res.tool != "floor" && len(floor.chromePSS) > 0 && median(floor.chromePSS) > 0 {
				s += fmt.Sprintf(" ×%.2f", float64(median(res.chromePSS))/float64(median(floor.chromePSS)))
			}
			return s + fmt.Sprintf(" (%.0f)", mb(median(res.chromeUSS)))
		}},
	}
}

func durCell(ds []time.Duration) string {
	return fmt.Sprintf("%s (%s–%s)", ms(durMedian(ds)), ms(slices.Min(ds)), ms(slices.Max(ds)))
}

func sizeCell(n int, floor *result) string {
	s := fmt.Sprintf("%s (%s)", thousands(n), thousands((n+3)/4))
	if floor != nil && len(floor.obsBytes) > 0 {
		s += fmt.Sprintf(" ×%.2f", float64(n)/float64(median(floor.obsBytes)))
	}
	return s
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (r *report) writeErrors(b *strings.Builder) {
	var lines []string
	for _, t := range r.tools {
		for _, p := range r.pages {
			res := r.get(t.key, p.name)
			if res == nil {
				continue
			}
			seen := map[string]int{}
			var order []string
			for _, e := range res.errs {
				if seen[e] == 0 {
					order = append(order, e)
				}
				seen[e]++
			}
			for _, e := range order {
				lines = append(lines, fmt.Sprintf("- %s on %s (%d of %d sessions): %s", t.name, p.name, seen[e], res.sessions, e))
			}
			if res.killed > 0 {
				lines = append(lines, fmt.Sprintf("- %s on %s: %d processes survived the session's close and were killed", t.name, p.name, res.killed))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("### Failures\n\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n\n")
}

// writeSection puts md in place of the section of file that starts with
// sectionTitle (up to the next "## " heading), or appends it.
func writeSection(file, md string) error {
	old, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	var out []byte
	if i := bytes.Index(old, []byte(sectionTitle+"\n")); i >= 0 && (i == 0 || old[i-1] == '\n') {
		rest := old[i+len(sectionTitle)+1:]
		end := len(rest)
		if j := bytes.Index(rest, []byte("\n## ")); j >= 0 {
			end = j + 1
		}
		out = append(out, old[:i]...)
		out = append(out, md...)
		out = append(out, rest[end:]...)
	} else {
		out = append(out, old...)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		}
		out = append(out, md...)
	}
	if err := os.WriteFile(file+".tmp", out, 0o644); err != nil {
		return err
	}
	logf("wrote %s", filepath.Clean(file))
	return os.Rename(file+".tmp", file)
}
