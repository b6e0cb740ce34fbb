package tabs

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domdebugger"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/tabs/observe"
)

//go:embed js/observe.js
var observeJS string

// ObserveOptions are the options of tab.observe (DESIGN.md section 4).
type ObserveOptions struct {
	// IncludeAll adds the structure a reader needs: headings with their
	// level, landmarks, dialogs, alerts, lists and text (trimmed).
	IncludeAll bool
	// ViewportOnly keeps what intersects the viewport.
	ViewportOnly bool
	// MaxTokens is the budget of the text rendering (bytes/4); 0 means
	// 6000 (observe.DefaultMaxTokens).
	MaxTokens int
	// Query keeps the elements whose name, value or context contains it,
	// case-insensitively; it finds and numbers any element of a page too
	// large for the budget.
	Query string
	// Scroll first scrolls every scroll container (the page included)
	// through its content, collecting the elements that virtualised and
	// infinite lists render only while visible, then restores the scroll
	// positions; Observation.Scrolled says how far it got.
	Scroll bool
	// Since "last" returns only what changed since the tab's previous
	// observation (added, changed and removed elements).
	Since string
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

// refsAll is the number of numbered items up to which an observation
// fetches the backend node ids of all of them (so the full observation is
// numbered throughout); above it, only of those the budget shows.
const refsAll = 2500

// maxClickables caps the nodes with click listeners passed to the walker.
const maxClickables = 400

// obsGroup is the object group of the observation's remote objects,
// released when it is done.
const obsGroup = "tabpilot-observe"

// Observe returns the tab's numbered observation (DESIGN.md section 4).
//
// It runs the walker (js/observe.js) in an isolated world of every frame:
// the frames of the page (Page.getFrameTree), and those of its
// out-of-process iframes (Target.getTargets, attached once and kept),
// concurrently. The walker reads the DOM's flat tree (open shadow roots in
// place; closed ones are walked through CDP: DOM.resolveNode of the root,
// then the walker on it), computes roles, names, states and contexts, and
// reports elements with click listeners (DOMDebugger.getEventListeners) or a
// pointer cursor. The items come back as JSON; the backend node ids of the
// elements shown (of all of them up to refsAll) come from a second call,
// deep-serialized. Numbers are keyed by backend node id and frame: an
// element keeps its number for as long as its node lives.
//
// Over the token budget the observation keeps dialogs and the region
// around the element last acted on (else the focused one) first, then the
// main landmark, and navigation, footers and sidebars last; says how many
// elements it left out; and writes the full observation (JSON, 0600) to a
// temp file whose path is Observation.FullPath. On a page too large to
// number whole, Query finds and numbers any element.
//
// Errors: bad_request for an unknown Since, not_actionable when a
// JavaScript dialog blocks the page, not_alive when the tab is gone.
func (t *Tab) Observe(ctx context.Context, o ObserveOptions) (*observe.Observation, error) {
	if o.Since != "" && o.Since != "last" {
		return nil, Errorf(CodeBadRequest, "invalid since %q: use \"last\"", o.Since)
	}
	if d := t.PendingDialog(); d != nil {
		return nil, &Error{Code: CodeNotActionable, Msg: fmt.Sprintf("a %s dialog is open (%q); handle it with tab.acceptDialog() or tab.dismissDialog() before observing", d.Type, d.Message)}
	}
	t.observeSetup()
	tm0 := time.Now()
	in, walks, report, err := t.gather(ctx, o)
	tm1 := time.Now()
	if err != nil {
		return nil, err
	}
	bo := observe.Options{IncludeAll: o.IncludeAll, ViewportOnly: o.ViewportOnly, Query: o.Query, MaxTokens: o.MaxTokens}
	if o.Since != "" {
		// A diff compares whole observations.
		bo.ViewportOnly, bo.Query = false, ""
	}
	if err := t.fetchRefs(ctx, in, walks, bo); err != nil {
		return nil, err
	}
	tm2 := time.Now()
	t.ob.mu.Lock()
	anchor := t.ob.lastActed
	t.ob.mu.Unlock()
	t.mu.Lock()
	full := observe.BuildDOM(in, t.num, bo)
	prev := t.lastObs
	t.lastObs = full
	t.mu.Unlock()
	full.Scrolled = report
	shown := full
	if o.Since != "" {
		if prev == nil {
			full.Notes = append(full.Notes, "no previous observation of this page to compare with: this is the whole observation")
		} else {
			shown = observe.Diff(prev, full)
		}
	}
	obs, omitted := observe.TrimWith(shown, observe.TrimOptions{MaxTokens: o.MaxTokens, Anchor: anchor})
	if omitted > 0 {
		path, err := writeFull(shown)
		if err != nil {
			return nil, fmt.Errorf("save full observation: %w", err)
		}
		obs.FullPath = path
	}
	if os.Getenv("TP_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "observe: gather %v refs %v build+trim %v\n", tm1.Sub(tm0), tm2.Sub(tm1), time.Since(tm2))
	}
	return obs, nil
}

// obsFrame is a frame to walk.
type obsFrame struct {
	id     cdp.FrameID
	loader cdp.LoaderID
	sess   *chromedp.Target
	// session is the CDP session id of an out-of-process iframe's target,
	// empty for the page's frames.
	session   string
	url, name string
	parent    cdp.FrameID
	owner     cdp.BackendNodeID
	top       bool
}

// frames lists the frames of the page: the page target's frame tree, and
// the frame trees of its out-of-process iframes (Target.getTargets:
// iframe targets whose parent frame is one of the page's, in turn), with
// the backend node id of each child frame's <iframe> (DOM.getFrameOwner
// in its parent).
func (t *Tab) frames(ctx context.Context) ([]*obsFrame, error) {
	tree, err := cdp.Call(ctx, t.target, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, cdpErr("get frame tree", err)
	}
	var out []*obsFrame
	byID := map[cdp.FrameID]*obsFrame{}
	var add func(ft *page.FrameTree, sess *chromedp.Target, session string, parent cdp.FrameID, top bool)
	add = func(ft *page.FrameTree, sess *chromedp.Target, session string, parent cdp.FrameID, top bool) {
		if ft == nil || ft.Frame == nil {
			return
		}
		f := &obsFrame{id: ft.Frame.ID, loader: ft.Frame.LoaderID, sess: sess, session: session, parent: parent, top: top}
		if !top {
			f.url, f.name = ft.Frame.URL, ft.Frame.Name
		}
		if old := byID[f.id]; old != nil {
			*old = *f // an out-of-process frame replaces its placeholder
		} else {
			out = append(out, f)
			byID[f.id] = f
		}
		for _, c := range ft.ChildFrames {
			add(c, sess, session, f.id, false)
		}
	}
	add(tree.FrameTree, t.target, "", "", true)

	browser := chromedp.FromContext(t.ctx).Browser
	live := map[target.ID]bool{}
	if browser != nil {
		infos, err := cdp.Call(ctx, browser, target.GetTargets, target.GetTargetsParams{})
		if err == nil {
			attached := map[target.ID]bool{}
			for progress := true; progress; {
				progress = false
				for _, ti := range infos.TargetInfos {
					if ti.Type != "iframe" || attached[ti.TargetID] {
						continue
					}
					pf := byID[ti.ParentFrameID]
					if pf == nil {
						continue
					}
					attached[ti.TargetID] = true
					progress = true
					of, err := t.attachFrame(ctx, ti, pf.sess)
					if err != nil {
						if ctx.Err() != nil {
							return nil, cdpErr("attach to iframe", ctx.Err())
						}
						t.sup.log.Debug("attach iframe", "tab", t.name, "url", ti.URL, "err", err)
						continue
					}
					live[ti.TargetID] = true
					sub, err := cdp.Call(ctx, of.t, page.GetFrameTree, cdp.Empty{})
					if err != nil {
						continue
					}
					add(sub.FrameTree, of.t, string(of.t.SessionID), ti.ParentFrameID, false)
				}
			}
		}
	}
	t.dropFrames(live)

	// The owners of the child frames, concurrently.
	var wg sync.WaitGroup
	for _, f := range out {
		if f.top {
			continue
		}
		p := byID[f.parent]
		if p == nil {
			continue
		}
		wg.Go(func() {
			r, err := cdp.Call(ctx, p.sess, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: f.id})
			if err == nil {
				f.owner = r.BackendNodeID
			}
		})
	}
	wg.Wait()
	return out, nil
}

// world returns the walker's isolated world in a frame
// (Page.createIsolatedWorld), made once per document.
func (t *Tab) world(ctx context.Context, f *obsFrame, fresh bool) (runtime.ExecutionContextID, error) {
	k := worldKey{session: f.sess.SessionID, frame: f.id, loader: f.loader}
	t.ob.mu.Lock()
	id, ok := t.ob.worlds[k]
	t.ob.mu.Unlock()
	if ok && !fresh {
		return id, nil
	}
	r, err := cdp.Call(ctx, f.sess, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.id, WorldName: "tabpilot"})
	if err != nil {
		return 0, err
	}
	t.ob.mu.Lock()
	if t.ob.worlds == nil {
		t.ob.worlds = map[worldKey]runtime.ExecutionContextID{}
	}
	t.ob.worlds[k] = r.ExecutionContextID
	t.ob.mu.Unlock()
	return r.ExecutionContextID, nil
}

// pruneWorlds forgets the worlds of documents not in frames.
func (t *Tab) pruneWorlds(frames []*obsFrame) {
	keep := map[worldKey]bool{}
	for _, f := range frames {
		keep[worldKey{session: f.sess.SessionID, frame: f.id, loader: f.loader}] = true
	}
	t.ob.mu.Lock()
	for k := range t.ob.worlds {
		if !keep[k] {
			delete(t.ob.worlds, k)
		}
	}
	t.ob.mu.Unlock()
}

// walkOpts are the walker's options (js/observe.js).
type walkOpts struct {
	All    bool            `json:"all,omitempty"`
	VP     bool            `json:"vp,omitempty"`
	Sub    bool            `json:"sub,omitempty"`
	Inh    *walkInherit    `json:"inh,omitempty"`
	Scroll *walkScrollOpts `json:"scroll,omitempty"`
}

type walkInherit struct {
	G  string `json:"g,omitempty"`
	LM string `json:"lm,omitempty"`
	HD string `json:"hd,omitempty"`
	II bool   `json:"ii,omitempty"`
}

type walkScrollOpts struct {
	MS    int64 `json:"ms"`
	Steps int   `json:"steps"`
}

// walked is one frame's walk, with its world.
type walked struct {
	f      *obsFrame
	ctxID  runtime.ExecutionContextID
	walk   *observe.Walk
	report *observe.ScrollReport
	// backend holds the backend node ids of the iframes and hosts.
	backend map[int]cdp.BackendNodeID
}

// gather walks every frame (concurrently) and returns the input of
// observe.BuildDOM, with the backend node ids of the iframes only.
func (t *Tab) gather(ctx context.Context, o ObserveOptions) (*observe.DOMInput, []*walked, *observe.ScrollReport, error) {
	frames, err := t.frames(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	t.pruneWorlds(frames)
	wo := walkOpts{All: o.IncludeAll, VP: o.ViewportOnly}
	if o.Scroll {
		ms := int64(10000)
		if dl, ok := ctx.Deadline(); ok {
			// Leave room for the walk after the scrolling.
			ms = min(ms, max(500, time.Until(dl).Milliseconds()*2/3))
		}
		wo.Scroll = &walkScrollOpts{MS: ms, Steps: 200}
	}
	t.ob.mu.Lock()
	anchor := t.ob.lastActed
	t.ob.mu.Unlock()
	results := make([]*walked, len(frames))
	errs := make([]error, len(frames))
	var wg sync.WaitGroup
	for i, f := range frames {
		wg.Go(func() {
			results[i], errs[i] = t.walkFrame(ctx, f, wo, anchor)
		})
	}
	wg.Wait()
	if errs[0] != nil {
		return nil, nil, nil, errs[0]
	}
	top := results[0].walk
	in := &observe.DOMInput{
		URL: top.URL, Title: top.Title,
		Viewport: observe.Size{Width: int(top.VW), Height: int(top.VH)},
		Scroll:   observe.Scroll{X: int(top.SX), Y: int(top.SY), Width: int(top.SW), Height: int(top.SH)},
	}
	var report *observe.ScrollReport
	for i, w := range results {
		if errs[i] != nil || w == nil {
			if errs[i] != nil {
				t.sup.log.Debug("walk frame", "tab", t.name, "frame", frames[i].url, "err", errs[i])
			}
			continue
		}
		if w.report != nil {
			if report == nil {
				report = &observe.ScrollReport{}
			}
			report.Containers += w.report.Containers
			report.Complete += w.report.Complete
			report.Steps += w.report.Steps
			report.Found += w.report.Found
			report.TimedOut = report.TimedOut || w.report.TimedOut
		}
		f := w.f
		in.Frames = append(in.Frames, observe.DOMFrame{FrameID: f.id, Session: f.session, URL: f.url, Name: f.name,
			Parent: f.parent, Owner: f.owner, Walk: w.walk, Backend: w.backend})
	}
	return in, results, report, nil
}

// walkFrame runs the walker in frame f, then in the closed shadow roots it
// found (spliced in place of their hosts).
func (t *Tab) walkFrame(ctx context.Context, f *obsFrame, wo walkOpts, anchor observe.Ref) (*walked, error) {
	ctxID, err := t.world(ctx, f, false)
	if err != nil {
		return nil, cdpErr("create isolated world", err)
	}
	args, err := t.walkArgs(ctx, f, ctxID, wo, anchor)
	if err != nil && isGoneContext(err) {
		// The document changed since the world was made.
		if ctxID, err = t.world(ctx, f, true); err != nil {
			return nil, cdpErr("create isolated world", err)
		}
		args, err = t.walkArgs(ctx, f, ctxID, wo, anchor)
	}
	if err != nil {
		return nil, err
	}
	tw := time.Now()
	w, nodes, err := t.callWalker(ctx, f.sess, runtime.CallFunctionOnParams{ExecutionContextID: ctxID, Arguments: args}, wo.Scroll != nil)
	if os.Getenv("TP_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "walk %s: args %d call %v\n", f.url, len(args), time.Since(tw))
	}
	if err != nil {
		return nil, err
	}
	res := &walked{f: f, ctxID: ctxID, walk: &w.Walk, backend: map[int]cdp.BackendNodeID{}}
	if wo.Scroll != nil {
		res.report = w.scroll
	}
	if err := t.closedRoots(ctx, res, nodes, args[1:], wo, 0); err != nil {
		return nil, err
	}
	return res, nil
}

// isGoneContext reports whether err says an execution context is gone.
func isGoneContext(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "Cannot find context") || strings.Contains(err.Error(), "context with specified id") ||
		strings.Contains(err.Error(), "Cannot find default execution context"))
}

// walkArgs returns the walker's arguments: its options, the anchor (the
// element last acted on, when it is in this frame) and the nodes of the
// frame with click-like listeners (DOMDebugger.getEventListeners on the
// document, the whole subtree, piercing shadow roots), resolved in ctxID.
func (t *Tab) walkArgs(ctx context.Context, f *obsFrame, ctxID runtime.ExecutionContextID, wo walkOpts, anchor observe.Ref) ([]*runtime.CallArgument, error) {
	ob, _ := json.Marshal(wo)
	args := []*runtime.CallArgument{{Value: ob}, {Value: jsonv2.Value("null")}}
	doc, err := cdp.Call(ctx, f.sess, runtime.Evaluate, runtime.EvaluateParams{Expression: "document", ContextID: ctxID, ObjectGroup: obsGroup})
	if err != nil {
		return nil, err
	}
	if doc.Result == nil || doc.Result.ObjectID == "" {
		return nil, errors.New("no document in the frame")
	}
	if anchor.BackendNodeID != 0 && anchor.FrameID == f.id && anchor.Session == f.session {
		if r, err := cdp.Call(ctx, f.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: anchor.BackendNodeID, ExecutionContextID: ctxID, ObjectGroup: obsGroup}); err == nil && r.Object != nil {
			args[1] = &runtime.CallArgument{ObjectID: r.Object.ObjectID}
		}
	}
	ls, err := cdp.Call(ctx, f.sess, domdebugger.GetEventListeners, domdebugger.GetEventListenersParams{ObjectID: doc.Result.ObjectID, Depth: new(int64(-1)), Pierce: new(true)})
	if err != nil {
		return args, nil // listeners are a hint; walk without them
	}
	seen := map[cdp.BackendNodeID]bool{}
	var ids []cdp.BackendNodeID
	for _, l := range ls.Listeners {
		switch l.Type {
		case "click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend", "dblclick":
		default:
			continue
		}
		if l.BackendNodeID == 0 || seen[l.BackendNodeID] || len(ids) >= maxClickables {
			continue
		}
		seen[l.BackendNodeID] = true
		ids = append(ids, l.BackendNodeID)
	}
	objs := make([]runtime.RemoteObjectID, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r, err := cdp.Call(ctx, f.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ExecutionContextID: ctxID, ObjectGroup: obsGroup})
			if err == nil && r.Object != nil && r.Object.Subtype == "node" {
				objs[i] = r.Object.ObjectID
			}
		})
	}
	wg.Wait()
	for _, o := range objs {
		if o != "" {
			args = append(args, &runtime.CallArgument{ObjectID: o})
		}
	}
	return args, nil
}

// walkResult is a walk as decoded from the walker.
type walkResult struct {
	observe.Walk
	scroll *observe.ScrollReport
}

type walkJSON struct {
	observe.Walk
	SC *observe.ScrollReport `json:"sc,omitempty"`
}

// deepNode is a node of a deep-serialized value.
type deepNode struct {
	BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
	ShadowRoot    *struct {
		Value *struct {
			BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
			Mode          string            `json:"mode"`
		} `json:"value"`
	} `json:"shadowRoot"`
}

type deepValue struct {
	Type  string       `json:"type"`
	Value jsonv2.Value `json:"value"`
}

// deepSerialization asks for nodes with their backend node ids (and their
// shadow root's, open or closed), without their children.
var deepSerialization = &runtime.SerializationOptions{
	Serialization:        runtime.SerializationOptionsSerializationDeep,
	MaxDepth:             new(int64(4)),
	AdditionalParameters: jsonv2.Value(`{"maxNodeDepth":0,"includeShadowTree":"all"}`),
}

// callWalker calls the walker (Runtime.callFunctionOn with p's target and
// arguments) and decodes its [json, nodes] result.
func (t *Tab) callWalker(ctx context.Context, s *chromedp.Target, p runtime.CallFunctionOnParams, await bool) (*walkResult, []deepNode, error) {
	p.FunctionDeclaration = observeJS
	p.SerializationOptions = deepSerialization
	p.ObjectGroup = obsGroup
	if await {
		p.AwaitPromise = new(true)
	}
	var res runtime.CallFunctionOnResult
	err := t.blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, s, runtime.CallFunctionOn, p)
		return err
	})
	if err != nil {
		if isGoneContext(err) {
			return nil, nil, err
		}
		return nil, nil, evalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, nil, &Error{Code: CodeInternal, Msg: "observe: page walker failed: " + exceptionText(res.ExceptionDetails)}
	}
	if res.Result == nil || res.Result.DeepSerializedValue == nil {
		return nil, nil, &Error{Code: CodeInternal, Msg: "observe: the page walker returned nothing"}
	}
	var parts []deepValue
	if err := jsonv2.Unmarshal(res.Result.DeepSerializedValue.Value, &parts); err != nil || len(parts) != 2 {
		return nil, nil, fmt.Errorf("observe: decode walker result: %v", err)
	}
	var text string
	if err := jsonv2.Unmarshal(parts[0].Value, &text); err != nil {
		return nil, nil, fmt.Errorf("observe: decode walker text: %w", err)
	}
	var wj walkJSON
	td := time.Now()
	if err := jsonv2.Unmarshal([]byte(text), &wj); err != nil {
		return nil, nil, fmt.Errorf("observe: decode walk: %w", err)
	}
	if os.Getenv("TP_DEBUG") != "" {
		var ms struct{ MS float64 `json:"ms"` }
		_ = jsonv2.Unmarshal([]byte(text), &ms)
		fmt.Fprintf(os.Stderr, "walker js %.0fms, %d bytes, %d items, decode %v\n", ms.MS, len(text), len(wj.Items), time.Since(td))
	}
	nodes, err := decodeNodes(parts[1].Value)
	if err != nil {
		return nil, nil, err
	}
	return &walkResult{Walk: wj.Walk, scroll: wj.SC}, nodes, nil
}

// decodeNodes decodes a deep-serialized array of nodes.
func decodeNodes(raw jsonv2.Value) ([]deepNode, error) {
	var vals []deepValue
	if len(raw) > 0 {
		if err := jsonv2.Unmarshal(raw, &vals); err != nil {
			return nil, fmt.Errorf("observe: decode nodes: %w", err)
		}
	}
	out := make([]deepNode, len(vals))
	for i, v := range vals {
		if v.Type != "node" || len(v.Value) == 0 {
			continue
		}
		if err := jsonv2.Unmarshal(v.Value, &out[i]); err != nil {
			return nil, fmt.Errorf("observe: decode node: %w", err)
		}
	}
	return out, nil
}

// closedRoots records the backend node ids of the iframes and hosts of a
// walk, and walks the closed shadow roots of the hosts into it (in their
// place), in turn for the roots they hold.
func (t *Tab) closedRoots(ctx context.Context, w *walked, nodes []deepNode, extra []*runtime.CallArgument, wo walkOpts, depth int) error {
	items := w.walk.Items
	type sub struct {
		at    int
		items []observe.Item
	}
	var subs []sub
	for k, ii := range w.walk.NodeItems {
		if k >= len(nodes) || ii < 0 || ii >= len(items) {
			continue
		}
		it := &items[ii]
		n := nodes[k]
		if n.BackendNodeID != 0 {
			w.backend[it.Node] = n.BackendNodeID
		}
		if it.Kind != observe.KindHost || n.ShadowRoot == nil || n.ShadowRoot.Value == nil || n.ShadowRoot.Value.Mode != "closed" || depth > 8 {
			continue
		}
		root, err := cdp.Call(ctx, w.f.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: n.ShadowRoot.Value.BackendNodeID, ExecutionContextID: w.ctxID, ObjectGroup: obsGroup})
		if err != nil || root.Object == nil {
			continue
		}
		so := wo
		so.Sub, so.Scroll = true, nil
		so.Inh = &walkInherit{G: it.Region, LM: it.Landmark, HD: it.Heading, II: it.Inside != 0}
		ob, _ := json.Marshal(so)
		args := append([]*runtime.CallArgument{{Value: ob}}, extra...)
		sw, snodes, err := t.callWalker(ctx, w.f.sess, runtime.CallFunctionOnParams{ObjectID: root.Object.ObjectID, Arguments: args}, false)
		if err != nil {
			return err
		}
		inner := &walked{f: w.f, ctxID: w.ctxID, walk: &sw.Walk, backend: w.backend}
		if err := t.closedRoots(ctx, inner, snodes, extra, wo, depth+1); err != nil {
			return err
		}
		subs = append(subs, sub{at: ii, items: inner.walk.Items})
	}
	// Splice from the last, so earlier positions hold.
	for i := len(subs) - 1; i >= 0; i-- {
		s := subs[i]
		items = append(items[:s.at+1], append(s.items, items[s.at+1:]...)...)
	}
	w.walk.Items = items
	w.walk.NodeItems = nil
	return nil
}

// fetchRefs fetches the backend node ids of the elements the observation
// numbers: all of them up to refsAll, else those observe.PickDOM keeps
// within the budget (after the filters) (__tpObs.pick, deep-serialized).
func (t *Tab) fetchRefs(ctx context.Context, in *observe.DOMInput, walks []*walked, bo observe.Options) error {
	want := make([][]int, len(in.Frames))
	total := 0
	for fi := range in.Frames {
		for _, it := range in.Frames[fi].Walk.Items {
			switch it.Kind {
			case observe.KindElement, observe.KindHeading, observe.KindDialog:
				if !bo.IncludeAll && it.Kind != observe.KindElement {
					continue
				}
				want[fi] = append(want[fi], it.Node)
				total++
			}
		}
	}
	if total > refsAll {
		for fi := range want {
			want[fi] = want[fi][:0]
		}
		tp := time.Now()
		t.mu.Lock()
		picks := observe.PickDOM(in, t.num, bo)
		t.mu.Unlock()
		if os.Getenv("TP_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "pick %d of %d: %v\n", len(picks), total, time.Since(tp))
		}
		for _, p := range picks {
			want[p.Frame] = append(want[p.Frame], p.Node)
		}
	}
	byFrame := map[cdp.FrameID]*walked{}
	for _, w := range walks {
		if w != nil {
			byFrame[w.f.id] = w
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(in.Frames))
	tf := time.Now()
	defer func() {
		if os.Getenv("TP_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "fetch+release: %v\n", time.Since(tf))
		}
	}()
	for fi := range in.Frames {
		f := &in.Frames[fi]
		w := byFrame[f.FrameID]
		if len(want[fi]) == 0 || w == nil {
			continue
		}
		wg.Go(func() {
			ix, _ := json.Marshal(want[fi])
			var res runtime.CallFunctionOnResult
			res, errs[fi] = cdp.Call(ctx, w.f.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
				FunctionDeclaration: `function(ix){ return globalThis.__tpObs ? globalThis.__tpObs.pick(ix) : []; }`,
				ExecutionContextID:  w.ctxID, Arguments: []*runtime.CallArgument{{Value: ix}},
				SerializationOptions: &runtime.SerializationOptions{Serialization: runtime.SerializationOptionsSerializationDeep,
					MaxDepth: new(int64(2)), AdditionalParameters: jsonv2.Value(`{"maxNodeDepth":0,"includeShadowTree":"none"}`)},
				ObjectGroup: obsGroup,
			})
			if errs[fi] != nil || res.Result == nil || res.Result.DeepSerializedValue == nil {
				return
			}
			nodes, err := decodeNodes(res.Result.DeepSerializedValue.Value)
			if err != nil {
				errs[fi] = err
				return
			}
			if f.Backend == nil {
				f.Backend = map[int]cdp.BackendNodeID{}
			}
			for k, n := range nodes {
				if k < len(want[fi]) && n.BackendNodeID != 0 {
					f.Backend[want[fi][k]] = n.BackendNodeID
				}
			}
		})
	}
	wg.Wait()
	// Release the objects of this observation, page by page.
	sessions := map[*chromedp.Target]bool{}
	for _, w := range walks {
		if w != nil && !sessions[w.f.sess] {
			sessions[w.f.sess] = true
			_, _ = cdp.Call(ctx, w.f.sess, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: obsGroup})
		}
	}
	if errs[0] != nil {
		return cdpErr("observe: fetch element ids", errs[0])
	}
	return nil
}

// boxes returns the layout boxes of elements in top-level viewport CSS
// pixels: those the walker measured, else DOM.getBoxModel's border box
// (DOM.getContentQuads); elements without a box are absent.
func (t *Tab) boxes(ctx context.Context, els []observe.Element) map[observe.Ref]observe.Rect {
	out := make(map[observe.Ref]observe.Rect, len(els))
	var mu sync.Mutex
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, e := range els {
		if r, ok := e.Box(); ok {
			if r.Width > 0 && r.Height > 0 {
				out[e.Ref] = r
			}
			continue
		}
		if e.Ref.BackendNodeID == 0 {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s := t.sessionFor(e.Ref)
			if s == nil {
				return
			}
			q, err := cdp.Call(ctx, s, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: e.Ref.BackendNodeID})
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

// writeFull writes an observation as JSON to a new private (0600) temp
// file and returns its path.
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
