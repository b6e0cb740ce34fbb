package observe

import (
	"context"
	"encoding/json"
	"maps"
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
)

// closedRoots records the backend node ids the walk serialized, and walks
// the closed shadow roots of its hosts into it (in their place, up to 8 at
// a time), in turn for the roots they hold.
func (t *Observer) closedRoots(ctx context.Context, w *walked, nodes []deepNode, extra []*runtime.CallArgument, wo walkOpts, depth int) error {
	items := w.walk.Items
	type sub struct {
		at      int
		it      Item
		root    cdp.BackendNodeID
		items   []Item
		backend map[int]cdp.BackendNodeID
		refsAll bool
		err     error
	}
	var subs []*sub
	for k, ii := range w.walk.NodeItems {
		if k >= len(nodes) || ii < 0 || ii >= len(items) {
			continue
		}
		it := &items[ii]
		n := nodes[k]
		if n.BackendNodeID != 0 {
			w.backend[it.Node] = n.BackendNodeID
		}
		if it.Kind == KindHost && n.ShadowRoot != nil && n.ShadowRoot.Value != nil && n.ShadowRoot.Value.Mode == "closed" && depth <= 8 {
			subs = append(subs, &sub{at: ii, it: *it, root: n.ShadowRoot.Value.BackendNodeID})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, s := range subs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			root, err := cdp.Call(ctx, w.f.Sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: s.root, ExecutionContextID: w.ctxID, ObjectGroup: obsGroup})
			if err != nil || root.Object == nil {
				return
			}
			so := wo
			so.Sub, so.Scroll = true, nil
			so.Inh = &walkInherit{G: s.it.Region, LM: s.it.Landmark, HD: s.it.Heading, II: s.it.Inside != 0}
			ob, _ := json.Marshal(so)
			args := append([]*runtime.CallArgument{{Value: ob}}, extra...)
			sw, snodes, err := t.callWalker(ctx, w.f.Sess, runtime.CallFunctionOnParams{ObjectID: root.Object.ObjectID, Arguments: args}, false)
			if err != nil {
				s.err = err
				return
			}
			inner := &walked{f: w.f, ctxID: w.ctxID, walk: &sw.Walk, backend: map[int]cdp.BackendNodeID{}, refsAll: sw.refsAll}
			s.err = t.closedRoots(ctx, inner, snodes, extra, wo, depth+1)
			s.items, s.backend, s.refsAll = inner.walk.Items, inner.backend, inner.refsAll
		})
	}
	wg.Wait()
	// Splice from the last, so earlier positions hold.
	for i := len(subs) - 1; i >= 0; i-- {
		s := subs[i]
		if s.err != nil {
			return s.err
		}
		maps.Copy(w.backend, s.backend)
		if s.items != nil && !s.refsAll {
			w.refsAll = false
		}
		items = append(items[:s.at+1], append(s.items, items[s.at+1:]...)...)
	}
	w.walk.Items = items
	w.walk.NodeItems = nil
	return nil
}

// mediaControls adds the controls of the walk's media elements (in their
// user-agent shadow roots, which page scripts cannot reach) after them:
// the buttons and sliders Accessibility.queryAXTree finds under each.
func (t *Observer) mediaControls(ctx context.Context, w *walked) {
	items := w.walk.Items
	next := -1 // synthetic node indexes, below the walker's
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		be := w.backend[it.Node]
		if it.Kind != KindMedia || be == 0 {
			continue
		}
		var add []Item
		roles := []string{"button", "slider"}
		var found [2][]*accessibility.Node
		var wg sync.WaitGroup
		for k, role := range roles {
			wg.Go(func() {
				if r, err := cdp.Call(ctx, w.f.Sess, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{BackendNodeID: be, Role: role}); err == nil {
					found[k] = r.Nodes
				}
			})
		}
		wg.Wait()
		for k, role := range roles {
			for _, n := range found[k] {
				if n.Ignored || n.BackendDOMNodeID == 0 || n.BackendDOMNodeID == be {
					continue
				}
				name := ""
				if n.Name != nil {
					_ = jsonv2.Unmarshal(n.Name.Value, &name)
				}
				w.backend[next] = n.BackendDOMNodeID
				add = append(add, Item{Kind: KindElement, Node: next, Role: role, Name: name,
					Region: it.Region, Landmark: it.Landmark, Heading: it.Heading})
				next--
			}
		}
		items = append(items[:i+1], append(add, items[i+1:]...)...)
	}
	w.walk.Items = items
}
