package observe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// walkOpts are the walker's options (js/js).
type walkOpts struct {
	All    bool            `json:"all,omitempty"`
	VP     bool            `json:"vp,omitempty"`
	BX     bool            `json:"bx,omitempty"`
	Refs   int             `json:"refs,omitempty"`
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
	f      *pagecore.Frame
	ctxID  runtime.ExecutionContextID
	walk   *Walk
	report *ScrollReport
	// backend holds the backend node ids the walk serialized: of the
	// iframes, hosts and media, and of all numbered items when refsAll.
	backend map[int]cdp.BackendNodeID
	refsAll bool
	// ms and bytes are the walk's time in the page and the size of its
	// result, for the log.
	ms, bytes int
	// inline are the same-origin frames the walk took in.
	inline []inlineFrame
}

// inlineFrame is a frame the walker walked in line (js/js "fr").
type inlineFrame struct {
	K  int     `json:"k"`
	P  int     `json:"p"`
	U  string  `json:"u"`
	VW float64 `json:"vw"`
	VH float64 `json:"vh"`
	SW float64 `json:"sw"`
	SH float64 `json:"sh"`
}

// gather walks the frames and returns the input of BuildDOM, the
// walk that holds the nodes of each of its frames, and all the walks. It walks in rounds,
// the frames of a round concurrently: first the top frame and the top
// frames of out-of-process iframes, whose walks take in their same-origin
// frames in line (about:blank, srcdoc and same-site frames: most ad
// frames); then the frames none of those took in (a cross-origin frame in
// the same process), and so on. Frames whose <iframe> is hidden are not
// walked.
func (t *Observer) gather(ctx context.Context, o PageOptions) (*DOMInput, []*walked, []*walked, *ScrollReport, error) {
	wo := walkOpts{All: o.IncludeAll, VP: o.ViewportOnly, BX: o.Boxes, Refs: refsAll}
	if o.Scroll {
		ms := int64(20000)
		if dl, ok := ctx.Deadline(); ok {
			// Leave room for the walk after the scrolling.
			ms = min(ms, max(500, time.Until(dl).Milliseconds()*2/3))
		}
		wo.Scroll = &walkScrollOpts{MS: ms, Steps: 200}
	}
	t.obs.mu.Lock()
	anchor := t.obs.lastActed
	t.obs.mu.Unlock()
	early := t.earlyTopArgs(ctx, wo, anchor)
	if early != nil {
		defer func() { <-early.done }()
	}
	frames, owners, err := t.Frames(ctx, true)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	keep := t.PruneWorlds(frames)
	t.obs.mu.Lock()
	for k := range t.obs.clickables {
		if !keep[k] {
			delete(t.obs.clickables, k)
		}
	}
	t.obs.mu.Unlock()
	byID := make(map[cdp.FrameID]*pagecore.Frame, len(frames))
	for _, f := range frames {
		byID[f.ID] = f
	}
	done := map[cdp.FrameID]bool{}
	var round []*pagecore.Frame
	for _, f := range frames {
		if p := byID[f.Parent]; f.Top || p == nil || p.Sess != f.Sess {
			round = append(round, f)
		}
	}
	var parts []DOMFrame
	var holders []*walked
	var walks []*walked
	var report *ScrollReport
	ownersKnown := false
	for len(round) > 0 {
		results := make([]*walked, len(round))
		errs := make([]error, len(round))
		var wg sync.WaitGroup
		for i, f := range round {
			done[f.ID] = true
			wg.Go(func() {
				results[i], errs[i] = t.walkFrame(ctx, f, wo, anchor, early)
			})
		}
		wg.Wait()
		if !ownersKnown {
			owners()
			ownersKnown = true
		}
		if round[0].Top && errs[0] != nil {
			return nil, nil, nil, nil, errs[0]
		}
		for i, w := range results {
			if errs[i] != nil || w == nil {
				t.log.Debug("walk frame", "tab", t.Name(), "frame", round[i].URL, "err", errs[i])
				continue
			}
			walks = append(walks, w)
			if w.report != nil {
				if report == nil {
					report = &ScrollReport{}
				}
				report.Containers += w.report.Containers
				report.Complete += w.report.Complete
				report.Steps += w.report.Steps
				report.Found += w.report.Found
				report.TimedOut = report.TimedOut || w.report.TimedOut
			}
			for _, p := range splitWalk(w, frames, done) {
				parts = append(parts, p)
				holders = append(holders, w)
			}
		}
		// Next: the frames no walk took in, whose parent was walked and
		// whose <iframe> was seen and shown (or is unknown).
		seen := map[cdp.BackendNodeID]bool{}
		for _, p := range parts {
			for _, it := range p.Walk.Items {
				if it.Kind == KindFrame && it.Hidden == 0 {
					seen[p.Backend[it.Node]] = true
				}
			}
		}
		round = round[:0:0]
		for _, f := range frames {
			if !done[f.ID] && done[f.Parent] && (f.Owner == 0 || seen[f.Owner]) {
				round = append(round, f)
			}
		}
	}
	if len(parts) == 0 || parts[0].Walk == nil {
		return nil, nil, nil, nil, &pagecore.Error{Code: errcode.Internal, Msg: "observe: the top frame was not walked"}
	}
	top := parts[0].Walk
	in := &DOMInput{
		URL: top.URL, Title: top.Title,
		Viewport: Size{Width: int(top.VW), Height: int(top.VH)},
		Scroll:   Scroll{X: int(top.SX), Y: int(top.SY), Width: int(top.SW), Height: int(top.SH)},
		Frames:   parts,
	}
	return in, holders, walks, report, nil
}

// splitWalk turns a walk into the frames it holds: its own, then each
// frame it took in line (its items, under the frame id whose <iframe> is
// the item's, found in frames; done records those). They share the walk's
// map of backend node ids.
func splitWalk(w *walked, frames []*pagecore.Frame, done map[cdp.FrameID]bool) []DOMFrame {
	f := w.f
	own := DOMFrame{FrameID: f.ID, Session: f.Session, URL: f.URL, Name: f.Name, Parent: f.Parent, Owner: f.Owner, Backend: w.backend}
	if len(w.inline) == 0 {
		own.Walk = w.walk
		return []DOMFrame{own}
	}
	parts := []DOMFrame{own}
	index := map[int]int{0: 0} // inline frame number → parts index
	for _, fr := range w.inline {
		parts = append(parts, DOMFrame{Session: f.Session, URL: fr.U, Backend: w.backend,
			Walk: &Walk{URL: fr.U, VW: fr.VW, VH: fr.VH, SW: fr.SW, SH: fr.SH}})
		index[fr.K] = len(parts) - 1
	}
	ownWalk := *w.walk
	ownWalk.Items = nil
	parts[0].Walk = &ownWalk
	for _, it := range w.walk.Items {
		pi, ok := index[it.Frame]
		if !ok {
			pi = 0
		}
		p := &parts[pi]
		p.Walk.Items = append(p.Walk.Items, it)
		if it.Kind != KindFrame || it.Inline == 0 {
			continue
		}
		ci, ok := index[it.Inline]
		if !ok {
			continue
		}
		c := &parts[ci]
		c.Parent, c.Owner = p.FrameID, w.backend[it.Node]
		// The frame the iframe shows, by its owner; else one made up.
		c.FrameID = cdp.FrameID(fmt.Sprintf("%s/%d", f.ID, it.Inline))
		for _, fr := range frames {
			if fr.Parent == p.FrameID && fr.Owner != 0 && fr.Owner == c.Owner {
				c.FrameID, c.Name = fr.ID, fr.Name
				if fr.URL != "" {
					c.URL = fr.URL
				}
				done[fr.ID] = true
				break
			}
		}
	}
	return parts
}

// earlyArgs are the top frame's walker arguments, asked for while the
// frame tree is (walkArgs in the world of the top document the previous
// observation walked): if that document is still the top one, the walk
// starts a round trip sooner.
type earlyArgs struct {
	key  pagecore.WorldKey
	w    pagecore.World
	done chan struct{}
	args []*runtime.CallArgument
	err  error
}

// earlyTopArgs starts walkArgs in the last top-level world, if any.
func (t *Observer) earlyTopArgs(ctx context.Context, wo walkOpts, anchor Ref) *earlyArgs {
	k, w, ok := t.TopWorld()
	if !ok {
		return nil
	}
	e := &earlyArgs{key: k, w: w, done: make(chan struct{})}
	f := &pagecore.Frame{ID: k.Frame, Loader: k.Loader, Sess: t.Target(), Top: true}
	go func() {
		defer close(e.done)
		e.args, e.err = t.walkArgs(ctx, f, w, wo, anchor)
	}()
	return e
}

// walkFrame runs the walker in frame f, then in the closed shadow roots it
// found (spliced in place of their hosts), and asks the accessibility tree
// for the controls of its media elements.
func (t *Observer) walkFrame(ctx context.Context, f *pagecore.Frame, wo walkOpts, anchor Ref, early *earlyArgs) (*walked, error) {
	w, err := t.World(ctx, f, false)
	if err != nil {
		return nil, pagecore.CDPErr("create isolated world", err)
	}
	var args []*runtime.CallArgument
	if early != nil && early.key == (pagecore.WorldKey{Session: f.Sess.SessionID, Frame: f.ID, Loader: f.Loader}) && early.w == w {
		<-early.done
		args, err = early.args, early.err
	} else {
		args, err = t.walkArgs(ctx, f, w, wo, anchor)
	}
	if err == nil {
		var res *walked
		res, err = t.walkIn(ctx, f, w.CtxID, args, wo)
		if err == nil {
			return res, nil
		}
	}
	if !isGoneContext(err) {
		return nil, err
	}
	// The document changed since the world was made, or came back from
	// the back/forward cache, which dropped the remote objects kept in it
	// (the clickable nodes): make both afresh.
	t.obs.mu.Lock()
	delete(t.obs.clickables, pagecore.WorldKey{Session: f.Sess.SessionID, Frame: f.ID, Loader: f.Loader})
	t.obs.mu.Unlock()
	if w, err = t.World(ctx, f, true); err != nil {
		return nil, pagecore.CDPErr("create isolated world", err)
	}
	if args, err = t.walkArgs(ctx, f, w, wo, anchor); err == nil {
		var res *walked
		if res, err = t.walkIn(ctx, f, w.CtxID, args, wo); err == nil {
			return res, nil
		}
	}
	if isGoneContext(err) {
		// Gone again: the frame navigates on and on (a refresh loop).
		return nil, pagecore.CDPErr("observe", err)
	}
	return nil, err
}

func (t *Observer) walkIn(ctx context.Context, f *pagecore.Frame, ctxID runtime.ExecutionContextID, args []*runtime.CallArgument, wo walkOpts) (*walked, error) {
	w, nodes, err := t.callWalker(ctx, f.Sess, runtime.CallFunctionOnParams{ExecutionContextID: ctxID, Arguments: args}, wo.Scroll != nil)
	if err != nil {
		return nil, err
	}
	res := &walked{f: f, ctxID: ctxID, walk: &w.Walk, backend: map[int]cdp.BackendNodeID{}, refsAll: w.refsAll, report: w.scroll, ms: w.ms, bytes: w.bytes, inline: w.inline}
	if err := t.closedRoots(ctx, res, nodes, args[1:], wo, 0); err != nil {
		return nil, err
	}
	t.mediaControls(ctx, res)
	return res, nil
}

// errNoWalker is a world without the walker: one to make afresh.
var errNoWalker = errors.New("no tabpilot walker in this world")

// isGoneContext reports whether err says an execution context is gone (or
// is not the one tabpilot set up).
func isGoneContext(err error) bool {
	return errors.Is(err, errNoWalker) || err != nil && (strings.Contains(err.Error(), "Cannot find context") || strings.Contains(err.Error(), "context with specified id") ||
		strings.Contains(err.Error(), "Cannot find default execution context") || strings.Contains(err.Error(), "Could not find object"))
}

// walkArgs returns the walker's arguments: its options, the anchor (the
// element last acted on, when it is in this frame) and the nodes of the
// frame with click-like listeners (DOMDebugger.getEventListeners on the
// document, the whole subtree, piercing shadow roots), resolved in the
// world.
func (t *Observer) walkArgs(ctx context.Context, f *pagecore.Frame, w pagecore.World, wo walkOpts, anchor Ref) ([]*runtime.CallArgument, error) {
	ob, _ := json.Marshal(wo)
	args := []*runtime.CallArgument{{Value: ob}, {Value: jsonv2.Value("null")}}
	var wg sync.WaitGroup
	if anchor.BackendNodeID != 0 && anchor.FrameID == f.ID && anchor.Session == f.Session {
		wg.Go(func() {
			r, err := cdp.Call(ctx, f.Sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: anchor.BackendNodeID, ExecutionContextID: w.CtxID, ObjectGroup: obsGroup})
			if err == nil && r.Object != nil {
				args[1] = &runtime.CallArgument{ObjectID: r.Object.ObjectID}
			}
		})
	}
	ids, err := t.listenerNodes(ctx, f, w)
	if err != nil {
		wg.Wait()
		if isGoneContext(err) {
			return nil, err
		}
		return args, nil // listeners are a hint; walk without them
	}
	objs := t.clickableObjects(ctx, f, w, ids)
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
	Walk
	scroll  *ScrollReport
	refsAll bool
	ms      int
	bytes   int
	inline  []inlineFrame
}

type walkJSON struct {
	Walk
	SC *ScrollReport `json:"sc,omitempty"`
	RA int           `json:"ra,omitempty"`
	MS int           `json:"ms,omitempty"`
	FR []inlineFrame `json:"fr,omitempty"`
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

// walkerStub calls the walker that world installed in the isolated world.
// Without it (a world tabpilot did not set up), callWalker returns
// errNoWalker, and the caller makes the world afresh.
const walkerStub = `function (...args) {
  if (typeof globalThis.__tpWalk !== 'function') throw new Error('no tabpilot walker in this world');
  return globalThis.__tpWalk.apply(this, args);
}`

// callWalker calls the walker (Runtime.callFunctionOn with p's target and
// arguments) and decodes its [json, nodes] result.
func (t *Observer) callWalker(ctx context.Context, s *chromedp.Target, p runtime.CallFunctionOnParams, await bool) (*walkResult, []deepNode, error) {
	p.FunctionDeclaration = walkerStub
	p.SerializationOptions = deepSerialization
	p.ObjectGroup = obsGroup
	if await {
		p.AwaitPromise = new(true)
	}
	var res runtime.CallFunctionOnResult
	err := t.Blocking(ctx, func(ctx context.Context) error {
		var err error
		res, err = cdp.Call(ctx, s, runtime.CallFunctionOn, p)
		return err
	})
	if err != nil {
		if isGoneContext(err) {
			return nil, nil, err
		}
		return nil, nil, pagecore.EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		msg := pagecore.ExceptionText(res.ExceptionDetails)
		if strings.Contains(msg, "no tabpilot walker") {
			return nil, nil, errNoWalker
		}
		return nil, nil, &pagecore.Error{Code: errcode.Internal, Msg: "observe: page walker failed: " + msg}
	}
	if res.Result == nil || res.Result.DeepSerializedValue == nil {
		return nil, nil, &pagecore.Error{Code: errcode.Internal, Msg: "observe: the page walker returned nothing"}
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
	if err := jsonv2.Unmarshal([]byte(text), &wj); err != nil {
		return nil, nil, fmt.Errorf("observe: decode walk: %w", err)
	}
	nodes, err := decodeNodes(parts[1].Value)
	if err != nil {
		return nil, nil, err
	}
	return &walkResult{Walk: wj.Walk, scroll: wj.SC, refsAll: wj.RA != 0, ms: wj.MS, bytes: len(res.Result.DeepSerializedValue.Value), inline: wj.FR}, nodes, nil
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
