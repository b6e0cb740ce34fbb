package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/internal/cdptap"
)

// VersionInfo is the answer of a CDP endpoint's /json/version.
type VersionInfo struct {
	Browser string `json:"Browser"`
	WSURL   string `json:"webSocketDebuggerUrl"`
}

// ProbeVersion asks a CDP HTTP endpoint (http://host:port) for
// /json/version once, bounded by ctx.
func ProbeVersion(ctx context.Context, endpoint string) (*VersionInfo, error) {
	return probeVersion(ctx, endpoint, nil)
}

// probeVersion is ProbeVersion with header on the request.
func probeVersion(ctx context.Context, endpoint string, header http.Header) (*VersionInfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+"/json/version", nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/json/version: HTTP %d", resp.StatusCode)
	}
	var v VersionInfo
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&v); err != nil {
		return nil, fmt.Errorf("/json/version: %w", err)
	}
	return &v, nil
}

// waitVersion polls /json/version every interval until it answers or
// limit passes (or ctx ends).
func waitVersion(ctx context.Context, endpoint string, limit, interval time.Duration) (*VersionInfo, error) {
	return waitVersionHeader(ctx, endpoint, nil, limit, interval)
}

// waitVersionHeader is waitVersion with header on each request.
func waitVersionHeader(ctx context.Context, endpoint string, header http.Header, limit, interval time.Duration) (*VersionInfo, error) {
	deadline := time.Now().Add(limit)
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		v, err := probeVersion(pctx, endpoint, header)
		cancel()
		if err == nil {
			return v, nil
		}
		last = err
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no CDP endpoint at %s within %v: %w", endpoint, limit, last)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// Connect attaches to a browser that runs already (the connected kind)
// at endpoint, with no headers: RemoteKey's rules, through the key
// RemoteKey(endpoint, nil) makes. Closing the handle only disconnects.
// Errors: *Error with errcode.BadRequest or errcode.AttachFailed.
func Connect(parent, ctx context.Context, endpoint string, o *Options) (*Handle, error) {
	return connectKey(parent, ctx, Key{Kind: Connected, Endpoint: endpoint}, o)
}

// attach opens a websocket connection to a running browser without
// creating a tab.
func attach(parent, ctx context.Context, wsURL string, o *Options) (*Handle, error) {
	return attachRemote(parent, ctx, wsURL, nil, 0, o)
}

// attachRemote opens a websocket connection to a running browser at
// wsURL (dialed as given: remote.NoModifyURL keeps its query), with
// header on the upgrade (remote.WithDialHTTPHeader), without creating a
// tab. timeout, when positive, bounds the dial and the first exchange.
func attachRemote(parent, ctx context.Context, wsURL string, header http.Header, timeout time.Duration, o *Options) (*Handle, error) {
	log := loggerOf(o)
	aopts := []remote.Option{remote.NoModifyURL}
	if len(header) > 0 {
		aopts = append(aopts, remote.WithDialHTTPHeader(header))
	}
	if timeout > 0 {
		aopts = append(aopts, remote.WithDialTimeout(timeout))
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	allocCtx, allocCancel := remote.NewAllocator(context.WithoutCancel(parent), wsURL, aopts...)
	// chromedp's complaints (about the sessions of other clients, or of
	// ProbePage) go to the log, not to stderr.
	bctx, bcancel := newBrowserContext(allocCtx, log)
	h := &Handle{log: log, allocCancel: allocCancel, ctx: bctx, cancel: bcancel,
		done: make(chan struct{}), closed: make(chan struct{})}
	errc := make(chan error, 1)
	// Targets only connects the browser: no tab is created in the app.
	go func() { _, err := chromedp.Targets(bctx); errc <- err }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) && timeout > 0 {
			err = fmt.Errorf("no CDP connection within %v", timeout)
		}
	}
	if err != nil {
		bcancel()
		allocCancel()
		return nil, err
	}
	c := chromedp.FromContext(bctx)
	if v, err := cdp.Call(ctx, c.Browser, browser.GetVersion, cdp.Empty{}); err == nil {
		h.product, h.version = v.Product, v.UserAgent
	}
	h.lost = c.Browser.LostConnection
	return h, nil
}

func loggerOf(o *Options) *slog.Logger {
	if o != nil && o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.DiscardHandler)
}

var absPath = regexp.MustCompile(`^/`)

// Spawn starts (or reuses) an app with remote debugging (the spawned
// kind): path must be absolute. A running process of that executable that
// exposes CDP already is reused; else processes of that path are stopped,
// a free loopback port picked, and the app started with
// --remote-debugging-port, waiting up to 30 s (polling every 150 ms) for
// CDP. Errors: *Error with errcode.BadRequest (path),
// errcode.BrowserUnavailable (start), errcode.AttachFailed (no CDP).
func Spawn(parent, ctx context.Context, path string, args []string, o *Options) (*Handle, error) {
	if !absPath.MatchString(path) || filepath.Clean(path) != path {
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("app.path %q must be an absolute, clean executable path", path)}
	}
	st, err := os.Stat(path)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, &Error{Code: errcode.BadRequest, Msg: fmt.Sprintf("app.path %q is not an executable file", path)}
	}
	log := loggerOf(o)
	var port int
	var owned *exec.Cmd
	for _, p := range processesOf(path) {
		if p.port > 0 {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err := ProbeVersion(pctx, fmt.Sprintf("http://127.0.0.1:%d", p.port))
			cancel()
			if err == nil {
				port = p.port
				log.Info("reusing app", "path", path, "pid", p.pid, "port", port)
				break
			}
		}
	}
	if port == 0 {
		stopProcesses(processesOf(path), 5*time.Second)
		port, err = freePort()
		if err != nil {
			return nil, &Error{Code: errcode.BrowserUnavailable, Msg: fmt.Sprintf("pick a port for %s: %v", path, err), Err: err}
		}
		argv := append(append([]string{}, args...), fmt.Sprintf("--remote-debugging-port=%d", port), "--remote-debugging-address=127.0.0.1")
		cmd := exec.Command(path, argv...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return nil, &Error{Code: errcode.BrowserUnavailable, Msg: fmt.Sprintf("start %s: %v", path, err), Err: err}
		}
		owned = cmd
		go cmd.Wait() // reap
		log.Info("spawned app", "path", path, "pid", cmd.Process.Pid, "port", port)
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	v, err := waitVersion(ctx, endpoint, 30*time.Second, 150*time.Millisecond)
	if err != nil {
		if owned != nil {
			_ = syscall.Kill(-owned.Process.Pid, syscall.SIGKILL)
		}
		return nil, &Error{Code: errcode.AttachFailed, Msg: fmt.Sprintf("app %s: %v", path, err), Err: err}
	}
	h, err := attach(parent, ctx, v.WSURL, o)
	if err != nil {
		return nil, &Error{Code: errcode.AttachFailed, Msg: fmt.Sprintf("attach to app %s: %v", path, err), Err: err}
	}
	h.kind, h.key, h.appPath = Spawned, Key{Kind: Spawned, Path: path}, path
	if owned != nil {
		h.pid = owned.Process.Pid
	}
	go h.watch(h.lost)
	return h, nil
}

// KillApp ends the whole process tree of a spawned app: its process group
// when tabpilot started it, else every process of its executable path and
// their descendants.
func (h *Handle) KillApp() {
	if h.kind != Spawned {
		return
	}
	if h.pid > 0 {
		_ = syscall.Kill(-h.pid, syscall.SIGKILL)
	}
	stopProcesses(processesOf(h.appPath), 2*time.Second)
}

type proc struct {
	pid  int
	port int
}

var portArg = regexp.MustCompile(`^--remote-debugging-port=(\d+)$`)

// processesOf lists the main processes (no --type= child processes) whose
// executable or argv[0] is path.
func processesOf(path string) []proc {
	real, _ := filepath.EvalSymlinks(path)
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		raw, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if len(argv) == 0 {
			continue
		}
		if exe != path && exe != real && argv[0] != path && argv[0] != real {
			continue
		}
		p := proc{pid: pid}
		child := false
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "--type=") {
				child = true
			}
			if m := portArg.FindStringSubmatch(a); m != nil {
				p.port, _ = strconv.Atoi(m[1])
			}
		}
		if !child {
			out = append(out, p)
		}
	}
	return out
}

// stopProcesses sends SIGTERM, waits up to grace, then SIGKILLs what is
// left.
func stopProcesses(ps []proc, grace time.Duration) {
	if len(ps) == 0 {
		return
	}
	for _, p := range ps {
		_ = syscall.Kill(p.pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		alive := false
		for _, p := range ps {
			if syscall.Kill(p.pid, 0) == nil && !zombie(p.pid) {
				alive = true
			}
		}
		if !alive {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range ps {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Page is a page target of a browser.
type Page struct {
	ID    target.ID
	URL   string
	Title string
}

// defaultSkip matches pages that are not what a person looks at.
var defaultSkip = regexp.MustCompile(`(?i)request handler|devtools|background page|background host|service worker`)

// Pages lists the browser's page targets (Target.getTargets).
func (h *Handle) Pages(ctx context.Context) ([]Page, error) {
	res, err := cdp.Call(ctx, chromedp.FromContext(h.ctx).Browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	var out []Page
	for _, t := range res.TargetInfos {
		if t.Type == "page" {
			out = append(out, Page{ID: t.TargetID, URL: t.URL, Title: t.Title})
		}
	}
	return out, nil
}

// PickPage picks the page a connected or spawned tab attaches to: the
// page whose target id is want, else the first whose URL or title contains
// want (case-insensitively), or without
// want the first page that is not a DevTools, background or service-worker
// page (else the first page). skip lists pages other tabs hold already.
// Errors: *Error with errcode.TargetNotFound listing the pages.
func PickPage(pages []Page, want string, skip map[target.ID]bool) (Page, error) {
	lw := strings.ToLower(want)
	for _, p := range pages {
		if want != "" && string(p.ID) == want {
			if skip[p.ID] {
				return Page{}, &Error{Code: errcode.TargetNotFound, Msg: fmt.Sprintf("page %s (%q %s) is held by another tab already", p.ID, p.Title, p.URL)}
			}
			return p, nil
		}
	}
	var fallback *Page
	for i, p := range pages {
		if skip[p.ID] {
			continue
		}
		if want != "" {
			if strings.Contains(strings.ToLower(p.URL), lw) || strings.Contains(strings.ToLower(p.Title), lw) {
				return p, nil
			}
			continue
		}
		if defaultSkip.MatchString(p.Title) || defaultSkip.MatchString(p.URL) || strings.HasPrefix(p.URL, "devtools://") {
			if fallback == nil {
				fallback = &pages[i]
			}
			continue
		}
		return p, nil
	}
	if want == "" && fallback != nil {
		return *fallback, nil
	}
	var list []string
	for _, p := range pages {
		list = append(list, fmt.Sprintf("%q %s", p.Title, p.URL))
	}
	if len(list) == 0 {
		list = []string{"(none)"}
	}
	msg := "no page to attach to"
	if want != "" {
		msg = fmt.Sprintf("no page whose URL or title contains %q", want)
	}
	return Page{}, &Error{Code: errcode.TargetNotFound, Msg: msg + "; available pages: " + strings.Join(list, "; ")}
}

// ErrProfileInUse is wrapped when a profile directory is locked by a live
// browser.
var ErrProfileInUse = errors.New("profile in use")

// checkProfile refuses a profile directory that a live browser holds
// (Chromium's SingletonLock symlink, "host-pid"), naming the holder,
// instead of letting the launch hang or hand over to that browser.
func checkProfile(dir string) error {
	link, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(link, '-')
	if i < 0 {
		return nil
	}
	pid, err := strconv.Atoi(link[i+1:])
	if err != nil || pid <= 0 {
		return nil
	}
	host, _ := os.Hostname()
	if link[:i] != host {
		return &Error{Code: errcode.BrowserUnavailable, Msg: fmt.Sprintf("profile %s is locked by a browser on host %s (pid %d)", dir, link[:i], pid), Err: ErrProfileInUse,
			Hint: "Close that browser, or use another --profile directory."}
	}
	if syscall.Kill(pid, 0) != nil || zombie(pid) {
		return nil // stale lock; Chromium removes it
	}
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	cmd := strings.ReplaceAll(strings.TrimRight(string(raw), "\x00"), "\x00", " ")
	if cmd == "" { // mid-exec, or a kernel thread: the command name is all there is
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		cmd = strings.TrimSpace(string(comm))
	}
	if len(cmd) > 120 {
		cmd = cmd[:117] + "..."
	}
	return &Error{Code: errcode.BrowserUnavailable, Msg: fmt.Sprintf("profile %s is in use by process %d (%s)", dir, pid, cmd), Err: ErrProfileInUse,
		Hint: "Close that browser, or use another --profile directory."}
}

// newBrowserContext returns the chromedp context that allocates a browser
// from allocCtx. chromedp's complaints go to log at debug level, and the
// context carries the cdptap.Tap that is the connection's protocol logger,
// so the actions can send a command once the one before it is written.
func newBrowserContext(allocCtx context.Context, log *slog.Logger) (context.Context, context.CancelFunc) {
	tap := cdptap.New()
	ctx, cancel := chromedp.NewContext(allocCtx,
		chromedp.WithLogf(func(f string, a ...any) { log.Debug(fmt.Sprintf(f, a...), "src", "chromedp") }),
		chromedp.WithErrorf(func(f string, a ...any) { log.Debug(fmt.Sprintf(f, a...), "src", "chromedp") }),
		chromedp.WithDebugf(tap.Logf),
	)
	return cdptap.NewContext(ctx, tap), cancel
}
