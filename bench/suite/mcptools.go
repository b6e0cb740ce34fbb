package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type mcpConn struct {
	cs *mcp.ClientSession
}

func startMCP(ctx context.Context, dir string, environ []string, name string, args ...string) (*mcpConn, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = environ
	client := mcp.NewClient(&mcp.Implementation{Name: "tabpilot-bench", Version: "v1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 20 * time.Second}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", filepath.Base(name), err)
	}
	return &mcpConn{cs: cs}, nil
}

// call calls a tool and returns its text contents joined by newlines and
// the bytes of its images; a result with isError is an error.
func (m *mcpConn) call(ctx context.Context, name string, args map[string]any) (string, int, error) {
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", name, err)
	}
	var b strings.Builder
	img := 0
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			img += len(c.Data)
		}
	}
	if res.IsError {
		msg := b.String()
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return b.String(), img, fmt.Errorf("%s: %s", name, msg)
	}
	return b.String(), img, nil
}

func (m *mcpConn) close() error { return m.cs.Close() }

// tpMCP is tabpilot mcp: one tool, browser.
type tpMCP struct {
	m    *mcpConn
	wait string
}

func (e *env) tabpilotMCP(ctx context.Context, tag string) (session, error) {
	m, err := startMCP(ctx, e.scratch, e.procEnv(tag), e.tabpilot, "mcp", "--chrome", e.chrome)
	if err != nil {
		return nil, err
	}
	return &tpMCP{m: m, wait: e.tpWait}, nil
}

func (s *tpMCP) open(ctx context.Context, url string) error {
	p := map[string]any{"action": "open", "url": url}
	if s.wait != "" {
		p["wait_until"] = s.wait
	}
	_, _, err := s.m.call(ctx, "browser", p)
	return err
}

func (s *tpMCP) observe(ctx context.Context) (observation, error) {
	text, _, err := s.m.call(ctx, "browser", map[string]any{"action": "observe"})
	return parseTabpilot(text), err
}

func (s *tpMCP) click(ctx context.Context, ref string) error {
	n, err := strconv.Atoi(ref)
	if err != nil {
		return fmt.Errorf("click: element %q is not a number", ref)
	}
	_, _, err = s.m.call(ctx, "browser", map[string]any{"action": "click", "target": n})
	return err
}

func (s *tpMCP) eval(ctx context.Context, expr string) (string, error) {
	text, _, err := s.m.call(ctx, "browser", map[string]any{"action": "run", "code": tpEvalCode(expr)})
	return text, err
}

func (s *tpMCP) screenshot(ctx context.Context) (int, error) {
	_, img, err := s.m.call(ctx, "browser", map[string]any{"action": "screenshot"})
	if err == nil && img == 0 {
		err = errors.New("screenshot: no image in the result")
	}
	return img, err
}

func (s *tpMCP) close(context.Context) error { return s.m.close() }

// playwrightMCP is @playwright/mcp.
type playwrightMCP struct{ m *mcpConn }

func (e *env) playwright(ctx context.Context, tag string) (session, error) {
	cli := filepath.Join(e.npmDir, "node_modules", "@playwright", "mcp", "cli.js")
	out := filepath.Join(e.scratch, "playwright-"+shortTag(tag))
	m, err := startMCP(ctx, e.scratch, e.procEnv(tag), "node", cli, "--headless", "--isolated",
		"--executable-path", e.chrome, "--output-dir", out)
	if err != nil {
		return nil, err
	}
	return &playwrightMCP{m: m}, nil
}

func (s *playwrightMCP) open(ctx context.Context, url string) error {
	_, _, err := s.m.call(ctx, "browser_navigate", map[string]any{"url": url})
	return err
}

func (s *playwrightMCP) observe(ctx context.Context) (observation, error) {
	text, _, err := s.m.call(ctx, "browser_snapshot", map[string]any{})
	return parseRoleLines(text, false), err
}

func (s *playwrightMCP) click(ctx context.Context, ref string) error {
	_, _, err := s.m.call(ctx, "browser_click", map[string]any{"target": ref, "element": counterName + " button"})
	return err
}

func (s *playwrightMCP) eval(ctx context.Context, expr string) (string, error) {
	text, _, err := s.m.call(ctx, "browser_evaluate", map[string]any{"function": evalFn(expr)})
	return text, err
}

func (s *playwrightMCP) screenshot(ctx context.Context) (int, error) {
	_, img, err := s.m.call(ctx, "browser_take_screenshot", map[string]any{"type": "jpeg"})
	if err == nil && img == 0 {
		err = errors.New("screenshot: no image in the result")
	}
	return img, err
}

func (s *playwrightMCP) close(context.Context) error { return s.m.close() }

// cdtMCP is chrome-devtools-mcp. Its page tools take the page's id, which
// the first open reads from list_pages, as an agent does.
type cdtMCP struct {
	m    *mcpConn
	page int
}

var selectedPage = regexp.MustCompile(`(?m)^(\d+): .*\[selected\]`)

func (e *env) devtools(ctx context.Context, tag string) (session, error) {
	bin, err := npmBin(e.npmDir, "chrome-devtools-mcp", "chrome-devtools-mcp")
	if err != nil {
		return nil, err
	}
	m, err := startMCP(ctx, e.scratch, e.procEnv(tag, "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1", "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS=1"), "node", bin,
		"--headless", "--isolated", "--executablePath", e.chrome, "--no-usage-statistics", "--no-performance-crux")
	if err != nil {
		return nil, err
	}
	return &cdtMCP{m: m}, nil
}

func (s *cdtMCP) open(ctx context.Context, url string) error {
	if s.page == 0 {
		text, _, err := s.m.call(ctx, "list_pages", map[string]any{})
		if err != nil {
			return err
		}
		m := selectedPage.FindStringSubmatch(text)
		if m == nil {
			return fmt.Errorf("list_pages: no selected page in %q", text)
		}
		s.page, _ = strconv.Atoi(m[1])
	}
	_, _, err := s.m.call(ctx, "navigate_page", map[string]any{"pageId": s.page, "url": url})
	return err
}

func (s *cdtMCP) observe(ctx context.Context) (observation, error) {
	text, _, err := s.m.call(ctx, "take_snapshot", map[string]any{"pageId": s.page})
	return parseRoleLines(text, true), err
}

func (s *cdtMCP) click(ctx context.Context, ref string) error {
	_, _, err := s.m.call(ctx, "click", map[string]any{"pageId": s.page, "uid": ref})
	return err
}

func (s *cdtMCP) eval(ctx context.Context, expr string) (string, error) {
	text, _, err := s.m.call(ctx, "evaluate_script", map[string]any{"pageId": s.page, "function": evalFn(expr)})
	return text, err
}

func (s *cdtMCP) screenshot(ctx context.Context) (int, error) {
	_, img, err := s.m.call(ctx, "take_screenshot", map[string]any{"pageId": s.page, "format": "jpeg"})
	if err == nil && img == 0 {
		err = errors.New("screenshot: no image in the result")
	}
	return img, err
}

func (s *cdtMCP) close(context.Context) error { return s.m.close() }
