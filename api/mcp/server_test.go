package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves h with Serve over pipes and returns a go-sdk client
// session on the other end; the cleanup closes it and checks that Serve
// returned nil.
func connect(t *testing.T, h Handler) *sdk.ClientSession {
	t.Helper()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), sr, sw, h, &Options{Version: "test"})
		sw.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cw.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("Serve did not return after the client closed")
		}
	})
	return cs
}

// call calls the browser tool and returns its result.
func call(t *testing.T, cs *sdk.ClientSession, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolName, Arguments: args})
	if err != nil {
		t.Fatalf("call %v: %v", args, err)
	}
	return res
}

func resultText(res *sdk.CallToolResult) string {
	var s []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			s = append(s, tc.Text)
		}
	}
	return strings.Join(s, "\n")
}

func TestToolDefinitionBudget(t *testing.T) {
	// The tool as a client lists it (name, title, description, input
	// schema, annotations, _meta) stays under 1,500 tokens, counted as
	// bytes/4.
	const budget = 1500
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(initLine+"\n"+readyLine+"\n"+`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"), &out, &fakeHandler{}, nil); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	ls := lines(out.String())
	if err := json.Unmarshal([]byte(ls[len(ls)-1]), &list); err != nil || len(list.Result.Tools) != 1 {
		t.Fatalf("tools/list: %v %s", err, out.String())
	}
	n := len(list.Result.Tools[0])
	t.Logf("the browser tool's definition: %d bytes, %d tokens (bytes/4); description %d bytes", n, n/4, len(description))
	if n/4 >= budget {
		t.Errorf("the tool definition is %d tokens (bytes/4), want under %d", n/4, budget)
	}
	var tool struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
		Annotations map[string]any `json:"annotations"`
		Meta        map[string]any `json:"_meta"`
	}
	json.Unmarshal(list.Result.Tools[0], &tool)
	if tool.Name != "browser" || !strings.Contains(tool.Description, "observe again") || tool.InputSchema["type"] != "object" ||
		tool.Annotations["readOnlyHint"] != false || len(tool.Meta[MetaReadOnlyActions].([]any)) != len(ReadOnlyActions) {
		t.Errorf("tool: %+v", tool)
	}
	props := tool.InputSchema["properties"].(map[string]any)
	if enum := props["action"].(map[string]any)["enum"].([]any); len(enum) != len(Actions) {
		t.Errorf("action enum %v", enum)
	}
}

func TestCancelledRun(t *testing.T) {
	// A client's notifications/cancelled (sent by the go-sdk client when
	// the call's context ends) cancels the run in progress: the tab is free
	// again long before the run's own wait would end.
	skipShort(t)
	cs := connect(t, svc)
	if res := call(t, cs, map[string]any{"action": "open", "name": "cancel", "url": pageSrv.URL}); res.IsError {
		t.Fatalf("open: %s", resultText(res))
	}
	defer call(t, cs, map[string]any{"action": "close", "name": "cancel"})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolName, Arguments: map[string]any{
			"action": "run", "name": "cancel", "timeout": 30, "code": "await wait(25000); return 'finished'"}})
		errc <- err
	}()
	busy := func() bool {
		return strings.Contains(resultText(call(t, cs, map[string]any{"action": "tabs"})), "cancel (busy)")
	}
	waitUntil(t, "the run starts", 20*time.Second, busy)
	cancel()
	if err := <-errc; err == nil {
		t.Error("the cancelled call returned no error to its client")
	}
	waitUntil(t, "the cancelled run frees the tab", 15*time.Second, func() bool { return !busy() })
	if res := call(t, cs, map[string]any{"action": "run", "name": "cancel", "code": "return 'free'"}); res.IsError || resultText(res) != "free" {
		t.Errorf("after the cancelled run: %s", resultText(res))
	}
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var shotSize = regexp.MustCompile(`Screenshot \d+: (\d+)x(\d+) image/jpeg`)

func TestScreenshotContent(t *testing.T) {
	// The image content is the downscaled copy: a JPEG of the size the
	// text says, at most 1024x1024 and 150 KiB; with a target, only that
	// element.
	skipShort(t)
	cs := connect(t, svc)
	if res := call(t, cs, map[string]any{"action": "open", "name": "shot", "url": pageSrv.URL, "viewport": map[string]any{"width": 1600, "height": 1200}}); res.IsError {
		t.Fatalf("open: %s", resultText(res))
	}
	defer call(t, cs, map[string]any{"action": "close", "name": "shot"})
	button := elementNumber(t, resultText(call(t, cs, map[string]any{"action": "observe", "name": "shot"})), `button "Press me"`)
	for _, args := range []map[string]any{
		{"action": "screenshot", "name": "shot"},
		{"action": "screenshot", "name": "shot", "full_page": true},
		{"action": "screenshot", "name": "shot", "marks": true},
		{"action": "screenshot", "name": "shot", "target": button},
	} {
		res := call(t, cs, args)
		if res.IsError || len(res.Content) != 2 {
			t.Fatalf("%v: %s", args, resultText(res))
		}
		img, ok := res.Content[1].(*sdk.ImageContent)
		if !ok || img.MIMEType != "image/jpeg" {
			t.Fatalf("%v: second content is %T", args, res.Content[1])
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
		if err != nil || format != "jpeg" {
			t.Fatalf("%v: image: %v %s", args, err, format)
		}
		m := shotSize.FindStringSubmatch(resultText(res))
		if m == nil {
			t.Fatalf("%v: text %q", args, resultText(res))
		}
		w, _ := strconv.Atoi(m[1])
		h, _ := strconv.Atoi(m[2])
		if cfg.Width != w || cfg.Height != h || w > 1024 || h > 1024 || len(img.Data) > 150<<10 {
			t.Errorf("%v: image %dx%d, %d bytes; text says %dx%d", args, cfg.Width, cfg.Height, len(img.Data), w, h)
		}
		if args["target"] != nil && (w > 300 || h > 100) {
			t.Errorf("an element screenshot of %dx%d: not just the button", w, h)
		}
		if args["target"] == nil && w != 1024 {
			t.Errorf("a 1600-wide page shot is %d wide, want downscaled to 1024: %s", w, resultText(res))
		}
	}
}

// elementNumber finds the number of the element whose line in an
// observation's text has role and name (e.g. `button "OK"`): the line's
// first number.
func elementNumber(t *testing.T, observation, roleName string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\D*?(\d+)\D[^\n]*\b` + regexp.QuoteMeta(roleName))
	m := re.FindStringSubmatch(observation)
	if name, ok := strings.CutPrefix(roleName, `button "`); m == nil && ok {
		// The compact rendering writes a button as its name in brackets.
		m = regexp.MustCompile(`(?m)^(\d+) \[` + regexp.QuoteMeta(strings.TrimSuffix(name, `"`)) + `\]`).FindStringSubmatch(observation)
	}
	if m == nil {
		t.Fatalf("no %s in the observation:\n%s", roleName, observation)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
