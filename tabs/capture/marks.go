package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/observe"
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
func (t *Capturer) drawMarks(ctx context.Context) (int, func(), error) {
	obs, err := t.Observe(ctx, observe.PageOptions{MaxTokens: math.MaxInt32 / 8})
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
