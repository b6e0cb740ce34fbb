package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
)

// The floor is the same operations as raw CDP calls from a minimal
// chromedp program, run as a process of its own (this program started
// with -floor), so that its start, memory and round trips are measured
// like a tool's. It reads one JSON request a line on stdin and answers
// one JSON line on stdout:
//
//	{"op":"open","url":U}  Page.navigate, waiting for the load event (chromedp.Navigate)
//	{"op":"observe"}       Accessibility.getFullAXTree, decoded just enough to number
//	                       the nodes with an interactive role
//	{"op":"click","n":N}   DOM.getContentQuads of the node of element N, then
//	                       Input.dispatchMouseEvent mousePressed and mouseReleased at its centre
//	{"op":"eval","expr":E} Runtime.evaluate with returnByValue
//	{"op":"screenshot"}    Page.captureScreenshot, JPEG quality 70, the viewport
//
// The browser starts before the first request is read.

type floorReq struct {
	Op   string `json:"op"`
	URL  string `json:"url,omitempty"`
	N    int    `json:"n,omitempty"`
	Expr string `json:"expr,omitempty"`
}

type floorResp struct {
	Err     string `json:"err,omitempty"`
	Text    string `json:"text,omitempty"`
	Bytes   int    `json:"bytes,omitempty"`
	Listed  int    `json:"listed,omitempty"`
	Counter int    `json:"counter,omitempty"`
}

// axNode is the part of an AXNode the floor reads.
type axNode struct {
	Ignored bool `json:"ignored"`
	Role    *struct {
		Value string `json:"value"`
	} `json:"role"`
	Name *struct {
		Value string `json:"value"`
	} `json:"name"`
	BackendDOMNodeID int64 `json:"backendDOMNodeId"`
}

// runFloor is the floor process: chrome is the Chromium executable (the
// wrapper with the launch flags).
func runFloor(chrome string, in io.Reader, out io.Writer) error {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Headless,
		chromedp.WindowSize(1280, 720),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // launch, with no deadline
		return fmt.Errorf("floor: launch: %w", err)
	}
	t := chromedp.FromContext(ctx).Target
	var nodes []int64 // element number - 1 -> backend node id
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var req floorReq
		var resp floorResp
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			resp.Err = err.Error()
			enc.Encode(resp)
			continue
		}
		var err error
		switch req.Op {
		case "open":
			err = chromedp.Do(ctx, chromedp.Navigate(req.URL))
		case "observe":
			var raw jsonv2.Value
			if err = t.Call(ctx, "Accessibility.getFullAXTree", map[string]any{}, &raw); err != nil {
				break
			}
			resp.Bytes = len(raw)
			var tree struct {
				Nodes []axNode `json:"nodes"`
			}
			if err = jsonv2.Unmarshal(raw, &tree); err != nil {
				break
			}
			nodes = nodes[:0]
			for _, n := range tree.Nodes {
				if n.Ignored || n.Role == nil || !interactiveRoles[n.Role.Value] {
					continue
				}
				nodes = append(nodes, n.BackendDOMNodeID)
				if n.Name != nil && n.Name.Value == counterName && n.Role.Value == "button" {
					resp.Counter = len(nodes)
				}
			}
			resp.Listed = len(nodes)
		case "click":
			if req.N < 1 || req.N > len(nodes) {
				err = fmt.Errorf("no element %d", req.N)
				break
			}
			var q struct {
				Quads [][]float64 `json:"quads"`
			}
			if err = t.Call(ctx, "DOM.getContentQuads", map[string]any{"backendNodeId": nodes[req.N-1]}, &q); err != nil {
				break
			}
			if len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
				err = errors.New("element has no box")
				break
			}
			x := (q.Quads[0][0] + q.Quads[0][2] + q.Quads[0][4] + q.Quads[0][6]) / 4
			y := (q.Quads[0][1] + q.Quads[0][3] + q.Quads[0][5] + q.Quads[0][7]) / 4
			for _, typ := range []string{"mousePressed", "mouseReleased"} {
				if err = t.Call(ctx, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}, nil); err != nil {
					break
				}
			}
		case "eval":
			var r struct {
				Result struct {
					Value json.RawMessage `json:"value"`
				} `json:"result"`
				ExceptionDetails *struct {
					Text string `json:"text"`
				} `json:"exceptionDetails"`
			}
			var raw jsonv2.Value
			if err = t.Call(ctx, "Runtime.evaluate", map[string]any{"expression": req.Expr, "returnByValue": true}, &raw); err != nil {
				break
			}
			if err = json.Unmarshal(raw, &r); err != nil {
				break
			}
			if r.ExceptionDetails != nil {
				err = errors.New(r.ExceptionDetails.Text)
				break
			}
			var s string
			if json.Unmarshal(r.Result.Value, &s) == nil {
				resp.Text = s
			} else {
				resp.Text = strings.TrimSpace(string(r.Result.Value))
			}
		case "screenshot":
			var r struct {
				Data string `json:"data"`
			}
			if err = t.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "jpeg", "quality": 70}, &r); err != nil {
				break
			}
			resp.Bytes = base64.StdEncoding.DecodedLen(len(r.Data))
		default:
			err = fmt.Errorf("unknown op %q", req.Op)
		}
		if err != nil {
			resp.Err = err.Error()
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
	return sc.Err()
}

// floorMain is main for -floor.
func floorMain(chrome string) {
	if err := runFloor(chrome, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
