package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// session is one tool, started cold, driving one page. Every method is
// one round trip as an agent makes it: a process per call for the CLIs,
// one request on the open connection for the servers.
type session interface {
	open(ctx context.Context, url string) error
	// observe returns the tool's observation of the page (its default:
	// what an agent reads).
	observe(ctx context.Context) (observation, error)
	// click clicks the element whose reference (from the last observe) is
	// ref.
	click(ctx context.Context, ref string) error
	// eval evaluates the JavaScript expression expr in the page and
	// returns the tool's output.
	eval(ctx context.Context, expr string) (string, error)
	// screenshot takes a JPEG of the viewport and returns its size in
	// bytes.
	screenshot(ctx context.Context) (int, error)
	close(ctx context.Context) error
}

// fullObserver is a session that can also observe with no token budget.
type fullObserver interface {
	observeFull(ctx context.Context) (observation, error)
}

// tool is one row of the tables.
type tool struct {
	key     string // the name for -tools
	name    string // the row label
	version string
	na      string // why it cannot run here, or ""
	start   func(ctx context.Context, tag string) (session, error)
}

// env is what the tools need from the machine.
type env struct {
	tabpilot string // the tabpilot binary
	self     string // this program, for the floor
	chrome   string // the Chromium wrapper with the launch flags
	npmDir   string // the npm tools' prefix
	scratch  string // a private work directory
	home     string // HOME for the npm tools
	xdg      string // XDG_RUNTIME_DIR for the tabpilot daemons
	tmp      string // TMPDIR for every tool
	tpWait   string // tabpilot's wait_until, or "" for its default
}

// procEnv is the environment of a tool process of the session tag.
func (e *env) procEnv(tag string, extra ...string) []string {
	out := make([]string, 0, len(os.Environ())+len(extra)+4)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case tagVar, "HOME", "XDG_RUNTIME_DIR", "TMPDIR", "TABPILOT_SESSION":
			continue
		}
		out = append(out, kv)
	}
	// TMPDIR: the tools' temporary files (tabpilot's screenshots and full
	// observations, the browsers' profiles) go to the scratch directory,
	// which the suite removes.
	out = append(out, tagVar+"="+tag, "HOME="+e.home, "XDG_RUNTIME_DIR="+e.xdg, "TMPDIR="+e.tmp)
	return append(out, extra...)
}

// runCmd runs a command to its end and returns its stdout; a non-zero exit
// is an error with the end of stderr.
func runCmd(ctx context.Context, dir string, environ []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = environ
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if len(msg) > 400 {
			msg = msg[len(msg)-400:]
		}
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(name), args[0], err, msg)
	}
	return stdout.String(), nil
}

// ---- tabpilot CLI: a process per call, the session's daemon in between.

type tpCLI struct {
	e       *env
	tag     string
	session string
	environ []string
}

func (e *env) tabpilotCLI(_ context.Context, tag string) (session, error) {
	return &tpCLI{e: e, tag: tag, session: "b" + strconv.Itoa(os.Getpid()) + "-" + shortTag(tag),
		environ: e.procEnv(tag, "TABPILOT_CHROME="+e.chrome)}, nil
}

func (s *tpCLI) run(ctx context.Context, args ...string) (string, error) {
	return runCmd(ctx, s.e.scratch, s.environ, s.e.tabpilot, append(args, "--session", s.session)...)
}

func (s *tpCLI) open(ctx context.Context, url string) error {
	args := []string{"open", url}
	if s.e.tpWait != "" {
		args = append(args, "--wait-until", s.e.tpWait)
	}
	_, err := s.run(ctx, args...)
	return err
}

func (s *tpCLI) observe(ctx context.Context) (observation, error) {
	out, err := s.run(ctx, "observe")
	return parseTabpilot(out), err
}

func (s *tpCLI) click(ctx context.Context, ref string) error {
	_, err := s.run(ctx, "click", ref)
	return err
}

func (s *tpCLI) eval(ctx context.Context, expr string) (string, error) {
	return s.run(ctx, "run", "-e", tpEvalCode(expr))
}

var savedTo = regexp.MustCompile(`saved to (\S+)`)

func (s *tpCLI) screenshot(ctx context.Context) (int, error) {
	out, err := s.run(ctx, "screenshot")
	if err != nil {
		return 0, err
	}
	m := savedTo.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("screenshot: no file in %q", out)
	}
	fi, err := os.Stat(m[1])
	if err != nil {
		return 0, err
	}
	os.Remove(m[1])
	return int(fi.Size()), nil
}

func (s *tpCLI) close(ctx context.Context) error {
	_, err := s.run(ctx, "stop")
	return err
}

// tpEvalCode is the run action that evaluates expr in the page.
func tpEvalCode(expr string) string {
	return "return await tab.evaluate(" + evalFn(expr) + ")"
}

// evalFn is a function that returns expr, for the tools that evaluate a
// function. Its body is a block: goja (tabpilot's runtime) prints an arrow
// function whose body is a parenthesized expression without its closing
// parenthesis, so tab.evaluate(() => (x)) fails with a SyntaxError.
func evalFn(expr string) string { return "() => { return (" + expr + "); }" }

// ---- a line-delimited JSON-RPC client over a child's stdio (tabpilot
// serve, and the floor's simpler protocol).

type lineConn struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []byte
	mu    sync.Mutex
	done  chan struct{}
}

func startLineConn(ctx context.Context, dir string, environ []string, name string, args ...string) (*lineConn, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = environ
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &lineConn{cmd: cmd, stdin: stdin, lines: make(chan []byte, 16), done: make(chan struct{})}
	go func() {
		defer close(c.lines)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case c.lines <- line:
				case <-c.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return c, nil
}

// roundTrip writes one line and returns the first line read for which
// match is true.
func (c *lineConn) roundTrip(ctx context.Context, line []byte, match func([]byte) bool) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case l, ok := <-c.lines:
			if !ok {
				return nil, errors.New("the process closed its output")
			}
			if match(l) {
				return l, nil
			}
		}
	}
}

// shut closes stdin (the server's cue to close its browser and exit) and
// waits up to grace, then kills the process.
func (c *lineConn) shut(grace time.Duration) error {
	c.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		close(c.done)
		return err
	case <-time.After(grace):
		c.cmd.Process.Kill()
		close(c.done)
		return fmt.Errorf("%s did not exit within %v of closing stdin", filepath.Base(c.cmd.Path), grace)
	}
}

// ---- tabpilot serve: JSON-RPC 2.0 on stdio.

type tpRPC struct {
	c    *lineConn
	id   int
	wait string
}

type rpcResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
		Data string `json:"data"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func (e *env) tabpilotRPC(ctx context.Context, tag string) (session, error) {
	c, err := startLineConn(ctx, e.scratch, e.procEnv(tag), e.tabpilot, "serve", "--chrome", e.chrome)
	if err != nil {
		return nil, err
	}
	return &tpRPC{c: c, wait: e.tpWait}, nil
}

func (s *tpRPC) call(ctx context.Context, method string, params any) (text string, img int, err error) {
	s.id++
	id := s.id
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	line, err := s.c.roundTrip(ctx, req, func(l []byte) bool {
		var m struct {
			ID int `json:"id"`
		}
		return json.Unmarshal(l, &m) == nil && m.ID == id
	})
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", method, err)
	}
	var resp struct {
		Result *rpcResult `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return "", 0, fmt.Errorf("%s: %w", method, err)
	}
	if resp.Error != nil {
		return "", 0, fmt.Errorf("%s: %d %s", method, resp.Error.Code, resp.Error.Message)
	}
	var b strings.Builder
	for _, c := range resp.Result.Content {
		switch c.Type {
		case "text":
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		case "image":
			img += base64.StdEncoding.DecodedLen(len(c.Data)) - strings.Count(c.Data[max(0, len(c.Data)-2):], "=")
		}
	}
	if resp.Result.IsError {
		return b.String(), img, fmt.Errorf("%s: %s", method, b.String())
	}
	return b.String(), img, nil
}

func (s *tpRPC) open(ctx context.Context, url string) error {
	p := map[string]any{"url": url}
	if s.wait != "" {
		p["wait_until"] = s.wait
	}
	_, _, err := s.call(ctx, "open", p)
	return err
}

func (s *tpRPC) observe(ctx context.Context) (observation, error) {
	text, _, err := s.call(ctx, "observe", map[string]any{})
	return parseTabpilot(text), err
}

// observeFull measures the observation with no token budget inside a run
// (a result's text over 100,000 bytes would be cut).
func (s *tpRPC) observeFull(ctx context.Context) (observation, error) {
	text, _, err := s.call(ctx, "run", map[string]any{"code": `const o = await tab.observe({maxTokens: 1 << 24});
return JSON.stringify({bytes: new TextEncoder().encode(o.text).length, listed: o.elements.length, omitted: o.omitted || 0})`})
	if err != nil {
		return observation{}, err
	}
	var o struct{ Bytes, Listed, Omitted int }
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		return observation{}, fmt.Errorf("observe with no budget: %w: %q", err, text)
	}
	return observation{bytes: o.Bytes, listed: o.Listed, omitted: o.Omitted}, nil
}

func (s *tpRPC) click(ctx context.Context, ref string) error {
	n, err := strconv.Atoi(ref)
	if err != nil {
		return fmt.Errorf("click: element %q is not a number", ref)
	}
	_, _, err = s.call(ctx, "click", map[string]any{"target": n})
	return err
}

func (s *tpRPC) eval(ctx context.Context, expr string) (string, error) {
	text, _, err := s.call(ctx, "run", map[string]any{"code": tpEvalCode(expr)})
	return text, err
}

func (s *tpRPC) screenshot(ctx context.Context) (int, error) {
	_, img, err := s.call(ctx, "screenshot", map[string]any{})
	if err == nil && img == 0 {
		err = errors.New("screenshot: no image in the result")
	}
	return img, err
}

func (s *tpRPC) close(context.Context) error { return s.c.shut(30 * time.Second) }

// ---- the floor: this program with -floor.

type floorSession struct{ c *lineConn }

func (e *env) floor(ctx context.Context, tag string) (session, error) {
	c, err := startLineConn(ctx, e.scratch, e.procEnv(tag), e.self, "-floor", "-chrome", e.chrome)
	if err != nil {
		return nil, err
	}
	return &floorSession{c: c}, nil
}

func (s *floorSession) do(ctx context.Context, req floorReq) (floorResp, error) {
	b, _ := json.Marshal(req)
	line, err := s.c.roundTrip(ctx, b, func([]byte) bool { return true })
	var resp floorResp
	if err == nil {
		err = json.Unmarshal(line, &resp)
	}
	if err == nil && resp.Err != "" {
		err = errors.New(resp.Err)
	}
	if err != nil {
		return resp, fmt.Errorf("floor %s: %w", req.Op, err)
	}
	return resp, nil
}

func (s *floorSession) open(ctx context.Context, url string) error {
	_, err := s.do(ctx, floorReq{Op: "open", URL: url})
	return err
}

func (s *floorSession) observe(ctx context.Context) (observation, error) {
	r, err := s.do(ctx, floorReq{Op: "observe"})
	o := observation{bytes: r.Bytes, listed: r.Listed}
	if r.Counter > 0 {
		o.counter = strconv.Itoa(r.Counter)
	}
	return o, err
}

func (s *floorSession) click(ctx context.Context, ref string) error {
	n, _ := strconv.Atoi(ref)
	_, err := s.do(ctx, floorReq{Op: "click", N: n})
	return err
}

func (s *floorSession) eval(ctx context.Context, expr string) (string, error) {
	r, err := s.do(ctx, floorReq{Op: "eval", Expr: expr})
	return r.Text, err
}

func (s *floorSession) screenshot(ctx context.Context) (int, error) {
	r, err := s.do(ctx, floorReq{Op: "screenshot"})
	return r.Bytes, err
}

func (s *floorSession) close(context.Context) error { return s.c.shut(15 * time.Second) }

// ---- MCP servers over stdio, with the go-sdk client.

// agentBrowser is the agent-browser CLI (its native binary): a process per
// call, its daemon in between.
type agentBrowser struct {
	e       *env
	bin     string
	session string
	environ []string
	opened  bool
	shots   int
}

func (e *env) agentBrowser(_ context.Context, tag string) (session, error) {
	bin, err := agentBrowserBin(e.npmDir)
	if err != nil {
		return nil, err
	}
	return &agentBrowser{e: e, bin: bin, session: "tpb-" + shortTag(tag), environ: e.procEnv(tag)}, nil
}

func (s *agentBrowser) run(ctx context.Context, args ...string) (string, error) {
	return runCmd(ctx, s.e.scratch, s.environ, s.bin, append([]string{"--session", s.session}, args...)...)
}

func (s *agentBrowser) open(ctx context.Context, url string) error {
	args := []string{"open", url}
	if !s.opened {
		args = append([]string{"--executable-path", s.e.chrome}, args...)
	}
	_, err := s.run(ctx, args...)
	s.opened = err == nil
	return err
}

func (s *agentBrowser) observe(ctx context.Context) (observation, error) {
	out, err := s.run(ctx, "snapshot", "-i")
	return parseRoleLines(out, false), err
}

func (s *agentBrowser) click(ctx context.Context, ref string) error {
	_, err := s.run(ctx, "click", "@"+ref)
	return err
}

func (s *agentBrowser) eval(ctx context.Context, expr string) (string, error) {
	return s.run(ctx, "eval", expr)
}

func (s *agentBrowser) screenshot(ctx context.Context) (int, error) {
	s.shots++
	path := filepath.Join(s.e.scratch, fmt.Sprintf("ab-%s-%d.jpg", s.session, s.shots))
	if _, err := s.run(ctx, "--screenshot-format", "jpeg", "screenshot", path); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	os.Remove(path)
	return int(fi.Size()), nil
}

func (s *agentBrowser) close(ctx context.Context) error {
	_, err := s.run(ctx, "close")
	return err
}

// shortTag keeps the characters of a tag that every tool accepts in a
// session name.
func shortTag(tag string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, tag)
}
