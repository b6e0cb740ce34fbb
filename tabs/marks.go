package tabs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/tabpilot/tabpilot/tabs/js"
)

type mark struct {
	ID int     `json:"id"`
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	W  float64 `json:"w"`
	H  float64 `json:"h"`
}

// drawMarks observes the page and draws each element's number at its box
// (js/marks.js); the returned func removes the overlay.
func (t *Tab) drawMarks(ctx context.Context) (int, func(), error) {
	obs, err := t.Observe(ctx, ObserveOptions{MaxTokens: math.MaxInt32 / 8})
	if err != nil {
		return 0, nil, err
	}
	boxes := t.Boxes(ctx, obs.Elements)
	var marks []mark
	for _, e := range obs.Elements {
		if b, ok := boxes[e.Ref]; ok && b.Width > 0 && b.Height > 0 {
			marks = append(marks, mark{ID: e.ID, X: b.X, Y: b.Y, W: b.Width, H: b.Height})
		}
	}
	arg, _ := json.Marshal(marks)
	var n int
	if err := t.EvalJSON(ctx, fmt.Sprintf("(%s)(%s)", js.Marks, arg), &n); err != nil {
		return 0, nil, err
	}
	remove := func() {
		_ = t.EvalJSON(context.WithoutCancel(ctx), `document.getElementById('__tabpilot_marks')?.remove()`, nil)
	}
	return n, remove, nil
}

// hitTest describes the element at a viewport point
// (DOM.getNodeForLocation, then DOM.describeNode).
func (t *Tab) hitTest(ctx context.Context, x, y float64) string {
	loc, err := cdp.Call(ctx, t.Target(), dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(x), Y: int64(y), IgnorePointerEventsNone: new(true)})
	if err != nil || loc.BackendNodeID == 0 {
		return "nothing"
	}
	el := &element{desc: "the hit element", backend: loc.BackendNodeID}
	r, err := cdp.Call(ctx, t.Target(), dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: loc.BackendNodeID})
	if err != nil || r.Object == nil {
		return "a node"
	}
	el.obj = r.Object.ObjectID
	var d string
	_ = t.callOn(ctx, el, `function(){ let e = this.nodeType === 1 ? this : this.parentElement; if (!e) return 'a node';
  let s = e.tagName.toLowerCase(); if (e.id) s += '#' + e.id;
  const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim();
  if (t) s += ' "' + (t.length > 40 ? t.slice(0, 40) + '…' : t) + '"'; return s; }`, &d)
	if strings.TrimSpace(d) == "" {
		return "a node"
	}
	return d
}
