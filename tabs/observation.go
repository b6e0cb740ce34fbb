package tabs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"

	"github.com/tabpilot/tabpilot/tabs/observe"
)

// ObserveOptions are the options of tab.observe (DESIGN.md section 4).
type ObserveOptions struct {
	IncludeAll   bool
	ViewportOnly bool
	// MaxTokens is the budget of the text rendering (bytes/4); 0 means 6000.
	MaxTokens int
	Query     string
}

type pageInfo struct {
	URL   string  `json:"url"`
	Title string  `json:"title"`
	VW    float64 `json:"vw"`
	VH    float64 `json:"vh"`
	SX    float64 `json:"sx"`
	SY    float64 `json:"sy"`
	SW    float64 `json:"sw"`
	SH    float64 `json:"sh"`
}

const pageInfoJS = `({url: location.href, title: document.title, vw: innerWidth, vh: innerHeight,
 sx: scrollX, sy: scrollY, sw: document.documentElement.scrollWidth, sh: document.documentElement.scrollHeight})`

// Observe reads the accessibility tree of every frame of the page
// (Page.getFrameTree, then Accessibility.getFullAXTree per frame) and
// returns the numbered observation. Element numbers are stable for as long
// as their DOM node lives. Over the token budget, the observation keeps the
// main content first, counts what it left out, and writes the full
// observation to a 0600 temp file (Observation.FullPath).
// Errors: not_actionable when a JavaScript dialog blocks the page.
func (t *Tab) Observe(ctx context.Context, o ObserveOptions) (*observe.Observation, error) {
	if d := t.PendingDialog(); d != nil {
		return nil, &Error{Code: CodeNotActionable, Msg: fmt.Sprintf("a %s dialog is open (%q); handle it with tab.acceptDialog() or tab.dismissDialog() before observing", d.Type, d.Message)}
	}
	var info pageInfo
	if err := t.evalJSON(ctx, pageInfoJS, &info); err != nil {
		return nil, err
	}
	tree, err := cdp.Call(ctx, t.target, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, cdpErr("get frame tree", err)
	}
	var frames []observe.Frame
	var walk func(ft *page.FrameTree, top bool)
	walk = func(ft *page.FrameTree, top bool) {
		if ft == nil || ft.Frame == nil {
			return
		}
		f := observe.Frame{FrameID: ft.Frame.ID}
		if !top {
			f.URL, f.Name = ft.Frame.URL, ft.Frame.Name
		}
		frames = append(frames, f)
		for _, c := range ft.ChildFrames {
			walk(c, false)
		}
	}
	walk(tree.FrameTree, true)

	// Fetch the frames' trees concurrently; a frame whose document lives in
	// another process (an out-of-process iframe) fails here and is skipped.
	var wg sync.WaitGroup
	errs := make([]error, len(frames))
	for i := range frames {
		wg.Go(func() {
			r, err := cdp.Call(ctx, t.target, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: frames[i].FrameID})
			frames[i].Nodes, errs[i] = r.Nodes, err
		})
	}
	wg.Wait()
	if errs[0] != nil {
		return nil, cdpErr("get accessibility tree", errs[0])
	}
	kept := frames[:0]
	for i, f := range frames {
		if errs[i] == nil {
			kept = append(kept, f)
		}
	}
	in := &observe.Input{
		URL: info.URL, Title: info.Title,
		Viewport: observe.Size{Width: int(info.VW), Height: int(info.VH)},
		Scroll:   observe.Scroll{X: int(info.SX), Y: int(info.SY), Width: int(info.SW), Height: int(info.SH)},
		Frames:   kept,
	}
	bo := observe.Options{IncludeAll: o.IncludeAll, Query: o.Query, MaxTokens: o.MaxTokens}
	t.mu.Lock()
	full := observe.Build(in, t.num, bo)
	t.mu.Unlock()
	if o.ViewportOnly {
		in.Boxes = t.boxes(ctx, full.Elements)
		bo.ViewportOnly = true
		t.mu.Lock()
		full = observe.Build(in, t.num, bo)
		t.mu.Unlock()
	}
	obs, omitted := observe.Trim(full, o.MaxTokens)
	if omitted > 0 {
		path, err := writeFull(full)
		if err != nil {
			return nil, fmt.Errorf("save full observation: %w", err)
		}
		obs.FullPath = path
	}
	t.mu.Lock()
	t.lastObs = full
	t.mu.Unlock()
	return obs, nil
}

// boxes returns the layout boxes of elements (DOM.getBoxModel border box),
// in top-level viewport CSS pixels; nodes without a box are absent.
func (t *Tab) boxes(ctx context.Context, els []observe.Element) map[observe.Ref]observe.Rect {
	out := make(map[observe.Ref]observe.Rect, len(els))
	var mu sync.Mutex
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, e := range els {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			q, err := cdp.Call(ctx, t.target, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: e.Ref.BackendNodeID})
			if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
				return
			}
			qd := q.Quads[0]
			minX, minY, maxX, maxY := qd[0], qd[1], qd[0], qd[1]
			for i := 0; i < 8; i += 2 {
				minX, maxX = min(minX, qd[i]), max(maxX, qd[i])
				minY, maxY = min(minY, qd[i+1]), max(maxY, qd[i+1])
			}
			mu.Lock()
			out[e.Ref] = observe.Rect{X: minX, Y: minY, Width: maxX - minX, Height: maxY - minY}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func writeFull(o *observe.Observation) (string, error) {
	f, err := os.CreateTemp("", "tabpilot-observation-*.json")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		return "", err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", " ")
	if err := enc.Encode(o); err != nil {
		return "", err
	}
	return f.Name(), nil
}
