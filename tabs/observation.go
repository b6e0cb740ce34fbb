package tabs

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domdebugger"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/observe"
)

//go:embed js/observe.js
var observeJS string

//go:embed js/rowkey.js
var rowKeyJS string

// walkerJS is the walker with the row key and area box functions in
// place.
var walkerJS = strings.NewReplacer("/*ROWKEY*/", rowKeyJS, "/*AREABOX*/", areaBoxJS).Replace(observeJS)

// actionableJS is the actionability check with the area box function in
// place.
var actionableJS = strings.Replace(actionableSrc, "/*AREABOX*/", areaBoxJS, 1)

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
	// Boxes gives every element its box (Element.Bounds: CSS pixels of
	// the top viewport), for a click or drag at a point.
	Boxes bool
}

// observeLoadWait bounds how long Observe waits for a committed document's
// load event.
const observeLoadWait = 3 * time.Second

// waitLoaded waits, at most limit and while ctx lives, until the top
// document has fired load (Page.loadEventFired after Page.frameNavigated)
// and no top-level navigation is requested and uncommitted. It reports
// whether the page is still loading. It never fails: an observation of a
// page still loading is still useful. A document that did not load within
// one wait is not waited for again (a stuck tracker or image would cost
// every observation the whole limit).
func (t *Tab) waitLoaded(ctx context.Context, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		t.evMu.Lock()
		loading := (t.loading || t.navPending) && t.dialog == nil
		doc := t.navSeq
		t.evMu.Unlock()
		if !loading {
			return false
		}
		t.ob.mu.Lock()
		gaveUp := t.ob.loadGaveUp == doc && t.ob.loadGaveUpSet
		t.ob.mu.Unlock()
		if gaveUp {
			return true
		}
		if time.Now().After(deadline) {
			t.ob.mu.Lock()
			t.ob.loadGaveUp, t.ob.loadGaveUpSet = doc, true
			t.ob.mu.Unlock()
			return true
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return true
		}
	}
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
// It runs the page walker (js/observe.js) in an isolated world
// (Page.createIsolatedWorld, made once per document) of the top frame and
// of each out-of-process iframe (Target.getTargets; attached once and kept
// while the iframe lives), concurrently; each walk takes in its same-origin
// frames, and frames none took in (cross-origin in the same process) are
// walked after. The walker reads the DOM's flat tree (open shadow roots in
// place; a closed root is resolved over CDP, DOM.resolveNode, and walked in
// its host's place), computes roles, names, states and contexts, and counts
// as clickable the elements with click listeners
// (DOMDebugger.getEventListeners, asked in the document's main world and
// released at once: see listenerNodes) or a pointer cursor; the controls of
// <video>/<audio> come from Accessibility.queryAXTree. It returns its items
// as JSON and, deep-serialized, the nodes of up to refsAll numbered
// elements, for their backend node ids; on a larger page a second call
// fetches those of the elements the budget (or Query) keeps. Numbers are
// keyed by backend node id and frame: an element keeps its number for as
// long as its node lives.
//
// Over the token budget the observation keeps dialogs and the
// neighbourhood of the element last acted on (else the focused one) first,
// then the main landmark, and navigation, footers and sidebars last; says
// how many elements it left out; and writes the full observation (JSON,
// 0600) to a temp file whose path is Observation.FullPath. On a page too
// large to number whole, Query finds and numbers any element. With Since,
// the observation is compared with the tab's previous one (taken with the
// same IncludeAll; its filters do not count) and only the differences are
// shown.
//
// A page whose document committed but has not fired load (a click that
// navigated, observed at once) is given up to 3 s to load first, so that
// its frames are there; the Page.loadEventFired event ends the wait.
//
// Errors: bad_request for an unknown Since, not_actionable when a
// JavaScript dialog blocks the page, not_alive when the tab is gone,
// timeout past the deadline of ctx.
func (t *Tab) Observe(ctx context.Context, o ObserveOptions) (*observe.Observation, error) {
	if o.Since != "" && o.Since != "last" {
		return nil, Errorf(errcode.BadRequest, "invalid since %q: use \"last\"", o.Since)
	}
	if d := t.PendingDialog(); d != nil {
		return nil, dialogBlocked(d, "be observed")
	}
	stillLoading := t.waitLoaded(ctx, observeLoadWait)
	t.observeSetup()
	in, holders, walks, report, err := t.gather(ctx, o)
	if err != nil {
		return nil, err
	}
	bo := observe.Options{IncludeAll: o.IncludeAll, ViewportOnly: o.ViewportOnly, Query: o.Query, MaxTokens: o.MaxTokens, Boxes: o.Boxes}
	if o.Since != "" {
		// A diff compares whole observations.
		bo.ViewportOnly, bo.Query = false, ""
	}
	if err := t.fetchRefs(ctx, in, holders, walks, bo); err != nil {
		return nil, err
	}
	if observeRecorder != nil {
		observeRecorder(t.name, in)
	}
	t.ob.mu.Lock()
	anchor := t.ob.lastActed
	t.ob.mu.Unlock()
	t.mu.Lock()
	full := observe.BuildDOM(in, t.num, bo)
	full.Scrolled = report
	// The base of the next diff is the whole observation, unfiltered.
	base := full
	if bo.Query != "" || bo.ViewportOnly {
		base = observe.BuildDOM(in, t.num, observe.Options{IncludeAll: bo.IncludeAll})
	}
	prev := t.lastObs
	t.lastObs = base
	t.mu.Unlock()
	shown := full
	if o.Since != "" {
		if prev == nil {
			cp := *full
			cp.Notes = append(slices.Clone(cp.Notes), "no previous observation of this page to compare with: this is the whole observation")
			shown = &cp
		} else {
			shown = observe.Diff(prev, full)
		}
	}
	obs, omitted := observe.TrimWith(shown, observe.TrimOptions{MaxTokens: o.MaxTokens, Anchor: anchor})
	if stillLoading {
		obs.Notes = append(slices.Clone(obs.Notes), "the page is still loading (no load event yet): observed as it is now")
	}
	if omitted > 0 {
		path, err := writeFull(shown)
		if err != nil {
			return nil, fmt.Errorf("save full observation: %w", err)
		}
		obs.FullPath = path
	}
	return obs, nil
}

// observeRecorder, when set (by tests), receives each observation's input.
var observeRecorder func(tab string, in *observe.DOMInput)

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
// iframe targets whose parent frame is one of the page's, in turn),
// leaving out error pages (a frame that failed to load). It returns a func
// that waits for the backend node ids of the child frames' <iframe>s
// (DOM.getFrameOwner in their parents), looked up meanwhile. With drop, it
// detaches from the out-of-process iframes that are gone.
func (t *Tab) frames(ctx context.Context, drop bool) ([]*obsFrame, func(), error) {
	var infos []*target.Info
	var wg sync.WaitGroup
	if browser := chromedp.FromContext(t.ctx).Browser; browser != nil {
		wg.Go(func() {
			if r, err := cdp.Call(ctx, browser, target.GetTargets, target.GetTargetsParams{}); err == nil {
				infos = r.TargetInfos
			}
		})
	}
	tree, err := cdp.Call(ctx, t.target, page.GetFrameTree, cdp.Empty{})
	wg.Wait()
	if err != nil {
		return nil, nil, cdpErr("get frame tree", err)
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

	live := map[target.ID]bool{}
	attached := map[target.ID]bool{}
	for progress := true; progress; {
		progress = false
		for _, ti := range infos {
			if ti.Type != "iframe" || attached[ti.TargetID] || strings.HasPrefix(ti.URL, "chrome-error:") {
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
					return nil, nil, cdpErr("attach to iframe", ctx.Err())
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
	if drop {
		t.dropFrames(live)
	}
	kept := out[:0]
	for _, f := range out {
		if f.top || !strings.HasPrefix(f.url, "chrome-error:") {
			kept = append(kept, f)
		}
	}
	out = kept

	// The owners of the child frames, concurrently with the walks.
	var owners sync.WaitGroup
	for _, f := range out {
		if f.top {
			continue
		}
		p := byID[f.parent]
		if p == nil {
			continue
		}
		owners.Go(func() {
			r, err := cdp.Call(ctx, p.sess, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: f.id})
			if err == nil {
				f.owner = r.BackendNodeID
			}
		})
	}
	return out, owners.Wait, nil
}

// obsWorld is the walker's isolated world in a document, and the backend
// node id of that document (for DOMDebugger.getEventListeners, which is
// asked in the document's main world; see listenerNodes).
type obsWorld struct {
	ctxID runtime.ExecutionContextID
	doc   cdp.BackendNodeID
}

// worldGroup is the object group of the kept document objects.
const worldGroup = "tabpilot-world"

// world returns the walker's isolated world in a frame
// (Page.createIsolatedWorld), made once per document.
func (t *Tab) world(ctx context.Context, f *obsFrame, fresh bool) (obsWorld, error) {
	k := worldKey{session: f.sess.SessionID, frame: f.id, loader: f.loader}
	for {
		t.ob.mu.Lock()
		w, ok := t.ob.worlds[k]
		making := t.ob.making[k]
		if ok && !fresh {
			t.ob.mu.Unlock()
			return w, nil
		}
		if making == nil || fresh {
			// This call makes the world; a concurrent one (the
			// preparation at load, an observation) waits for it.
			done := make(chan struct{})
			if t.ob.making == nil {
				t.ob.making = map[worldKey]chan struct{}{}
			}
			t.ob.making[k] = done
			t.ob.mu.Unlock()
			defer func() {
				t.ob.mu.Lock()
				if t.ob.making[k] == done {
					delete(t.ob.making, k)
				}
				t.ob.mu.Unlock()
				close(done)
			}()
			break
		}
		t.ob.mu.Unlock()
		select {
		case <-making:
		case <-ctx.Done():
			return obsWorld{}, ctx.Err()
		}
	}
	r, err := cdp.Call(ctx, f.sess, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.id, WorldName: "tabpilot"})
	if err != nil {
		return obsWorld{}, err
	}
	// The walker is compiled once per world, where page scripts cannot
	// reach it; each observation then sends a one-line stub.
	// The document comes back deep-serialized, for its backend node id.
	doc, err := cdp.Call(ctx, f.sess, runtime.Evaluate, runtime.EvaluateParams{Expression: "(globalThis.__tpWalk = (" + walkerJS + "\n), document)",
		ContextID: r.ExecutionContextID, ObjectGroup: worldGroup, SerializationOptions: docSerialization})
	if err != nil {
		return obsWorld{}, err
	}
	var dn deepNode
	if doc.Result == nil || doc.Result.DeepSerializedValue == nil || jsonv2.Unmarshal(doc.Result.DeepSerializedValue.Value, &dn) != nil || dn.BackendNodeID == 0 {
		return obsWorld{}, errors.New("no document in the frame")
	}
	w := obsWorld{ctxID: r.ExecutionContextID, doc: dn.BackendNodeID}
	t.ob.mu.Lock()
	if t.ob.worlds == nil {
		t.ob.worlds = map[worldKey]obsWorld{}
	}
	t.ob.worlds[k] = w
	if f.top {
		t.ob.topWorld = k
	}
	t.ob.mu.Unlock()
	return w, nil
}

// prepareWait bounds prepareObservation.
const prepareWait = 5 * time.Second

// prepareObservation makes, once the top document has loaded and while the
// settled wait runs, what the document's first observation would otherwise
// make on its way: the sessions of the out-of-process iframes
// (Target.attachToTarget) and the walker's isolated worlds, with the
// walker compiled in them (Page.createIsolatedWorld, Runtime.evaluate).
// Same-origin frames are walked in line from their parent and need no
// world of their own. Nothing here touches the page's main world. It runs
// once at a time per tab; errors are left to the observation.
func (t *Tab) prepareObservation() {
	if !t.ob.preparing.CompareAndSwap(false, true) {
		return
	}
	defer t.ob.preparing.Store(false)
	ctx, cancel := context.WithTimeout(t.ctx, prepareWait)
	defer cancel()
	frames, _, err := t.frames(ctx, false)
	if err != nil {
		return
	}
	byID := make(map[cdp.FrameID]*obsFrame, len(frames))
	for _, f := range frames {
		byID[f.id] = f
	}
	var wg sync.WaitGroup
	for _, f := range frames {
		if p := byID[f.parent]; f.top || p == nil || p.sess != f.sess {
			wg.Go(func() { _, _ = t.world(ctx, f, false) })
		}
	}
	wg.Wait()
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
	for k := range t.ob.clickables {
		if !keep[k] {
			delete(t.ob.clickables, k)
		}
	}
	t.ob.mu.Unlock()
}

// walkOpts are the walker's options (js/observe.js).
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
	f      *obsFrame
	ctxID  runtime.ExecutionContextID
	walk   *observe.Walk
	report *observe.ScrollReport
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

// inlineFrame is a frame the walker walked in line (js/observe.js "fr").
type inlineFrame struct {
	K  int     `json:"k"`
	P  int     `json:"p"`
	U  string  `json:"u"`
	VW float64 `json:"vw"`
	VH float64 `json:"vh"`
	SW float64 `json:"sw"`
	SH float64 `json:"sh"`
}

// gather walks the frames and returns the input of observe.BuildDOM, the
// walk that holds the nodes of each of its frames, and all the walks. It walks in rounds,
// the frames of a round concurrently: first the top frame and the top
// frames of out-of-process iframes, whose walks take in their same-origin
// frames in line (about:blank, srcdoc and same-site frames: most ad
// frames); then the frames none of those took in (a cross-origin frame in
// the same process), and so on. Frames whose <iframe> is hidden are not
// walked.
func (t *Tab) gather(ctx context.Context, o ObserveOptions) (*observe.DOMInput, []*walked, []*walked, *observe.ScrollReport, error) {
	wo := walkOpts{All: o.IncludeAll, VP: o.ViewportOnly, BX: o.Boxes, Refs: refsAll}
	if o.Scroll {
		ms := int64(20000)
		if dl, ok := ctx.Deadline(); ok {
			// Leave room for the walk after the scrolling.
			ms = min(ms, max(500, time.Until(dl).Milliseconds()*2/3))
		}
		wo.Scroll = &walkScrollOpts{MS: ms, Steps: 200}
	}
	t.ob.mu.Lock()
	anchor := t.ob.lastActed
	t.ob.mu.Unlock()
	early := t.earlyTopArgs(ctx, wo, anchor)
	if early != nil {
		defer func() { <-early.done }()
	}
	frames, owners, err := t.frames(ctx, true)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	t.pruneWorlds(frames)
	byID := make(map[cdp.FrameID]*obsFrame, len(frames))
	for _, f := range frames {
		byID[f.id] = f
	}
	done := map[cdp.FrameID]bool{}
	var round []*obsFrame
	for _, f := range frames {
		if p := byID[f.parent]; f.top || p == nil || p.sess != f.sess {
			round = append(round, f)
		}
	}
	var parts []observe.DOMFrame
	var holders []*walked
	var walks []*walked
	var report *observe.ScrollReport
	ownersKnown := false
	for len(round) > 0 {
		results := make([]*walked, len(round))
		errs := make([]error, len(round))
		var wg sync.WaitGroup
		for i, f := range round {
			done[f.id] = true
			wg.Go(func() {
				results[i], errs[i] = t.walkFrame(ctx, f, wo, anchor, early)
			})
		}
		wg.Wait()
		if !ownersKnown {
			owners()
			ownersKnown = true
		}
		if round[0].top && errs[0] != nil {
			return nil, nil, nil, nil, errs[0]
		}
		for i, w := range results {
			if errs[i] != nil || w == nil {
				t.sup.log.Debug("walk frame", "tab", t.name, "frame", round[i].url, "err", errs[i])
				continue
			}
			walks = append(walks, w)
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
				if it.Kind == observe.KindFrame && it.Hidden == 0 {
					seen[p.Backend[it.Node]] = true
				}
			}
		}
		round = round[:0:0]
		for _, f := range frames {
			if !done[f.id] && done[f.parent] && (f.owner == 0 || seen[f.owner]) {
				round = append(round, f)
			}
		}
	}
	if len(parts) == 0 || parts[0].Walk == nil {
		return nil, nil, nil, nil, &Error{Code: errcode.Internal, Msg: "observe: the top frame was not walked"}
	}
	top := parts[0].Walk
	in := &observe.DOMInput{
		URL: top.URL, Title: top.Title,
		Viewport: observe.Size{Width: int(top.VW), Height: int(top.VH)},
		Scroll:   observe.Scroll{X: int(top.SX), Y: int(top.SY), Width: int(top.SW), Height: int(top.SH)},
		Frames:   parts,
	}
	return in, holders, walks, report, nil
}

// splitWalk turns a walk into the frames it holds: its own, then each
// frame it took in line (its items, under the frame id whose <iframe> is
// the item's, found in frames; done records those). They share the walk's
// map of backend node ids.
func splitWalk(w *walked, frames []*obsFrame, done map[cdp.FrameID]bool) []observe.DOMFrame {
	f := w.f
	own := observe.DOMFrame{FrameID: f.id, Session: f.session, URL: f.url, Name: f.name, Parent: f.parent, Owner: f.owner, Backend: w.backend}
	if len(w.inline) == 0 {
		own.Walk = w.walk
		return []observe.DOMFrame{own}
	}
	parts := []observe.DOMFrame{own}
	index := map[int]int{0: 0} // inline frame number → parts index
	for _, fr := range w.inline {
		parts = append(parts, observe.DOMFrame{Session: f.session, URL: fr.U, Backend: w.backend,
			Walk: &observe.Walk{URL: fr.U, VW: fr.VW, VH: fr.VH, SW: fr.SW, SH: fr.SH}})
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
		if it.Kind != observe.KindFrame || it.Inline == 0 {
			continue
		}
		ci, ok := index[it.Inline]
		if !ok {
			continue
		}
		c := &parts[ci]
		c.Parent, c.Owner = p.FrameID, w.backend[it.Node]
		// The frame the iframe shows, by its owner; else one made up.
		c.FrameID = cdp.FrameID(fmt.Sprintf("%s/%d", f.id, it.Inline))
		for _, fr := range frames {
			if fr.parent == p.FrameID && fr.owner != 0 && fr.owner == c.Owner {
				c.FrameID, c.Name = fr.id, fr.name
				if fr.url != "" {
					c.URL = fr.url
				}
				done[fr.id] = true
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
	key  worldKey
	w    obsWorld
	done chan struct{}
	args []*runtime.CallArgument
	err  error
}

// earlyTopArgs starts walkArgs in the last top-level world, if any.
func (t *Tab) earlyTopArgs(ctx context.Context, wo walkOpts, anchor observe.Ref) *earlyArgs {
	t.ob.mu.Lock()
	k := t.ob.topWorld
	w, ok := t.ob.worlds[k]
	t.ob.mu.Unlock()
	if !ok || k.session != t.target.SessionID {
		return nil
	}
	e := &earlyArgs{key: k, w: w, done: make(chan struct{})}
	f := &obsFrame{id: k.frame, loader: k.loader, sess: t.target, top: true}
	go func() {
		defer close(e.done)
		e.args, e.err = t.walkArgs(ctx, f, w, wo, anchor)
	}()
	return e
}

// walkFrame runs the walker in frame f, then in the closed shadow roots it
// found (spliced in place of their hosts), and asks the accessibility tree
// for the controls of its media elements.
func (t *Tab) walkFrame(ctx context.Context, f *obsFrame, wo walkOpts, anchor observe.Ref, early *earlyArgs) (*walked, error) {
	w, err := t.world(ctx, f, false)
	if err != nil {
		return nil, cdpErr("create isolated world", err)
	}
	var args []*runtime.CallArgument
	if early != nil && early.key == (worldKey{session: f.sess.SessionID, frame: f.id, loader: f.loader}) && early.w == w {
		<-early.done
		args, err = early.args, early.err
	} else {
		args, err = t.walkArgs(ctx, f, w, wo, anchor)
	}
	if err == nil {
		var res *walked
		res, err = t.walkIn(ctx, f, w.ctxID, args, wo)
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
	t.ob.mu.Lock()
	delete(t.ob.clickables, worldKey{session: f.sess.SessionID, frame: f.id, loader: f.loader})
	t.ob.mu.Unlock()
	if w, err = t.world(ctx, f, true); err != nil {
		return nil, cdpErr("create isolated world", err)
	}
	if args, err = t.walkArgs(ctx, f, w, wo, anchor); err != nil {
		return nil, err
	}
	return t.walkIn(ctx, f, w.ctxID, args, wo)
}

func (t *Tab) walkIn(ctx context.Context, f *obsFrame, ctxID runtime.ExecutionContextID, args []*runtime.CallArgument, wo walkOpts) (*walked, error) {
	w, nodes, err := t.callWalker(ctx, f.sess, runtime.CallFunctionOnParams{ExecutionContextID: ctxID, Arguments: args}, wo.Scroll != nil)
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
func (t *Tab) walkArgs(ctx context.Context, f *obsFrame, w obsWorld, wo walkOpts, anchor observe.Ref) ([]*runtime.CallArgument, error) {
	ob, _ := json.Marshal(wo)
	args := []*runtime.CallArgument{{Value: ob}, {Value: jsonv2.Value("null")}}
	var wg sync.WaitGroup
	if anchor.BackendNodeID != 0 && anchor.FrameID == f.id && anchor.Session == f.session {
		wg.Go(func() {
			r, err := cdp.Call(ctx, f.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: anchor.BackendNodeID, ExecutionContextID: w.ctxID, ObjectGroup: obsGroup})
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

// listenersGroup prefixes the object group of an observation's
// DOMDebugger.getEventListeners call in a frame (one group per frame, so
// that concurrent walks of a session's frames do not release each other's).
const listenersGroup = "tabpilot-listeners-"

// docSerialization asks for a node alone, with its backend node id.
var docSerialization = &runtime.SerializationOptions{
	Serialization:        runtime.SerializationOptionsSerializationDeep,
	MaxDepth:             new(int64(0)),
	AdditionalParameters: jsonv2.Value(`{"maxNodeDepth":0,"includeShadowTree":"none"}`),
}

// listenerNodes returns the backend node ids of the nodes of frame f with
// click-like listeners (click, mouse and pointer down/up, touch start/end,
// dblclick), at most maxClickables: DOMDebugger.getEventListeners on the
// frame's document (the whole subtree, piercing shadow roots), asked in
// the document's main world (DOM.resolveNode of w.doc with no execution
// context) in an object group of its own, released right after.
//
// Never ask it with an object of the walker's isolated world: Blink then
// wraps every listener's handler, a function of the page's main world
// (an inline onclick="" one compiled on the spot), as a remote object of
// the isolated world. Chromium 156 does not survive that for long: after
// a few observations of pages with inline handlers, a later
// getEventListeners, walk or navigation crashes the renderer (SIGSEGV,
// Inspector.targetCrashed), with or without the stealth patches (the
// chaos test, TestChaos, found it). Released at once, the wrappers of the
// main world leave nothing behind.
func (t *Tab) listenerNodes(ctx context.Context, f *obsFrame, w obsWorld) ([]cdp.BackendNodeID, error) {
	group := listenersGroup + string(f.id)
	doc, err := cdp.Call(ctx, f.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: w.doc, ObjectGroup: group})
	if err != nil {
		return nil, err
	}
	if doc.Object == nil || doc.Object.ObjectID == "" {
		return nil, errors.New("observe: the document did not resolve in its main world")
	}
	defer func() {
		// In the background, bounded by the tab's life and 5 s: the
		// result is read already.
		go func() {
			rctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
			defer cancel()
			_, _ = cdp.Call(rctx, f.sess, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
		}()
	}()
	ls, err := cdp.Call(ctx, f.sess, domdebugger.GetEventListeners, domdebugger.GetEventListenersParams{ObjectID: doc.Object.ObjectID, Depth: new(int64(-1)), Pierce: new(true)})
	if err != nil {
		return nil, err
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
	return ids, nil
}

// clickableSet is a world's nodes with click-like listeners, by backend
// node id, as remote objects in the group clickGroup of that world.
type clickableSet struct {
	ctxID runtime.ExecutionContextID
	objs  map[cdp.BackendNodeID]runtime.RemoteObjectID
}

// clickGroup is the object group of the kept clickable nodes.
const clickGroup = "tabpilot-clickables"

// clickableObjects returns the nodes ids as remote objects in world w
// (DOM.resolveNode, up to 16 at a time), reusing those the previous
// observation of the same world resolved, and releasing (in the
// background) the ones no longer listed. An id that does not resolve gives
// "".
func (t *Tab) clickableObjects(ctx context.Context, f *obsFrame, w obsWorld, ids []cdp.BackendNodeID) []runtime.RemoteObjectID {
	k := worldKey{session: f.sess.SessionID, frame: f.id, loader: f.loader}
	t.ob.mu.Lock()
	prev := t.ob.clickables[k]
	t.ob.mu.Unlock()
	if prev != nil && prev.ctxID != w.ctxID {
		prev = nil // a new world: its objects are gone with the old one
	}
	objs := make([]runtime.RemoteObjectID, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, id := range ids {
		if prev != nil {
			if o, ok := prev.objs[id]; ok {
				objs[i] = o
				continue
			}
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r, err := cdp.Call(ctx, f.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ExecutionContextID: w.ctxID, ObjectGroup: clickGroup})
			if err == nil && r.Object != nil && r.Object.Subtype == "node" {
				objs[i] = r.Object.ObjectID
			}
		})
	}
	wg.Wait()
	next := &clickableSet{ctxID: w.ctxID, objs: make(map[cdp.BackendNodeID]runtime.RemoteObjectID, len(ids))}
	for i, id := range ids {
		if objs[i] != "" {
			next.objs[id] = objs[i]
		}
	}
	var gone []runtime.RemoteObjectID
	if prev != nil {
		for id, o := range prev.objs {
			if _, ok := next.objs[id]; !ok {
				gone = append(gone, o)
			}
		}
	}
	t.ob.mu.Lock()
	if t.ob.clickables == nil {
		t.ob.clickables = map[worldKey]*clickableSet{}
	}
	t.ob.clickables[k] = next
	t.ob.mu.Unlock()
	if len(gone) > 0 {
		// Let the page collect the nodes it removed.
		go func() {
			rctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
			defer cancel()
			for _, o := range gone {
				_, _ = cdp.Call(rctx, f.sess, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: o})
			}
		}()
	}
	return objs
}

// walkResult is a walk as decoded from the walker.
type walkResult struct {
	observe.Walk
	scroll  *observe.ScrollReport
	refsAll bool
	ms      int
	bytes   int
	inline  []inlineFrame
}

type walkJSON struct {
	observe.Walk
	SC *observe.ScrollReport `json:"sc,omitempty"`
	RA int                   `json:"ra,omitempty"`
	MS int                   `json:"ms,omitempty"`
	FR []inlineFrame         `json:"fr,omitempty"`
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
func (t *Tab) callWalker(ctx context.Context, s *chromedp.Target, p runtime.CallFunctionOnParams, await bool) (*walkResult, []deepNode, error) {
	p.FunctionDeclaration = walkerStub
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
		msg := exceptionText(res.ExceptionDetails)
		if strings.Contains(msg, "no tabpilot walker") {
			return nil, nil, errNoWalker
		}
		return nil, nil, &Error{Code: errcode.Internal, Msg: "observe: page walker failed: " + msg}
	}
	if res.Result == nil || res.Result.DeepSerializedValue == nil {
		return nil, nil, &Error{Code: errcode.Internal, Msg: "observe: the page walker returned nothing"}
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

// closedRoots records the backend node ids the walk serialized, and walks
// the closed shadow roots of its hosts into it (in their place, up to 8 at
// a time), in turn for the roots they hold.
func (t *Tab) closedRoots(ctx context.Context, w *walked, nodes []deepNode, extra []*runtime.CallArgument, wo walkOpts, depth int) error {
	items := w.walk.Items
	type sub struct {
		at      int
		it      observe.Item
		root    cdp.BackendNodeID
		items   []observe.Item
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
		if it.Kind == observe.KindHost && n.ShadowRoot != nil && n.ShadowRoot.Value != nil && n.ShadowRoot.Value.Mode == "closed" && depth <= 8 {
			subs = append(subs, &sub{at: ii, it: *it, root: n.ShadowRoot.Value.BackendNodeID})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, s := range subs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			root, err := cdp.Call(ctx, w.f.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: s.root, ExecutionContextID: w.ctxID, ObjectGroup: obsGroup})
			if err != nil || root.Object == nil {
				return
			}
			so := wo
			so.Sub, so.Scroll = true, nil
			so.Inh = &walkInherit{G: s.it.Region, LM: s.it.Landmark, HD: s.it.Heading, II: s.it.Inside != 0}
			ob, _ := json.Marshal(so)
			args := append([]*runtime.CallArgument{{Value: ob}}, extra...)
			sw, snodes, err := t.callWalker(ctx, w.f.sess, runtime.CallFunctionOnParams{ObjectID: root.Object.ObjectID, Arguments: args}, false)
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
func (t *Tab) mediaControls(ctx context.Context, w *walked) {
	items := w.walk.Items
	next := -1 // synthetic node indexes, below the walker's
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		be := w.backend[it.Node]
		if it.Kind != observe.KindMedia || be == 0 {
			continue
		}
		var add []observe.Item
		roles := []string{"button", "slider"}
		var found [2][]*accessibility.Node
		var wg sync.WaitGroup
		for k, role := range roles {
			wg.Go(func() {
				if r, err := cdp.Call(ctx, w.f.sess, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{BackendNodeID: be, Role: role}); err == nil {
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
				add = append(add, observe.Item{Kind: observe.KindElement, Node: next, Role: role, Name: name,
					Region: it.Region, Landmark: it.Landmark, Heading: it.Heading})
				next--
			}
		}
		items = append(items[:i+1], append(add, items[i+1:]...)...)
	}
	w.walk.Items = items
}

// fetchRefs fetches the backend node ids of the elements the observation
// numbers, for the walks that did not serialize them all: up to refsAll of
// them, else those observe.PickDOM keeps within the budget (after the
// filters) (__tpObs.pick in the walk's world, deep-serialized). holders
// are the walks of in.Frames. The observation's remote objects are
// released afterwards, in the background.
func (t *Tab) fetchRefs(ctx context.Context, in *observe.DOMInput, holders, walks []*walked, bo observe.Options) error {
	defer t.releaseObjects(walks)
	want := map[*walked][]int{}
	total, missing := 0, 0
	for fi := range in.Frames {
		w := holders[fi]
		for _, it := range in.Frames[fi].Walk.Items {
			switch it.Kind {
			case observe.KindElement, observe.KindHeading, observe.KindDialog:
				if !bo.IncludeAll && it.Kind != observe.KindElement {
					continue
				}
				total++
				if w.refsAll {
					continue
				}
				if _, ok := w.backend[it.Node]; !ok {
					want[w] = append(want[w], it.Node)
					missing++
				}
			}
		}
	}
	if missing == 0 {
		return nil
	}
	if total > refsAll {
		clear(want)
		t.mu.Lock()
		picks := observe.PickDOM(in, t.num, bo)
		t.mu.Unlock()
		for _, p := range picks {
			w := holders[p.Frame]
			if _, ok := w.backend[p.Node]; !ok {
				want[w] = append(want[w], p.Node)
			}
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w, ix := range want {
		wg.Go(func() {
			arg, _ := json.Marshal(ix)
			res, err := cdp.Call(ctx, w.f.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
				FunctionDeclaration: `function(ix){ return globalThis.__tpObs ? globalThis.__tpObs.pick(ix) : []; }`,
				ExecutionContextID:  w.ctxID, Arguments: []*runtime.CallArgument{{Value: arg}},
				SerializationOptions: &runtime.SerializationOptions{Serialization: runtime.SerializationOptionsSerializationDeep,
					MaxDepth: new(int64(2)), AdditionalParameters: jsonv2.Value(`{"maxNodeDepth":0,"includeShadowTree":"none"}`)},
				ObjectGroup: obsGroup,
			})
			var nodes []deepNode
			if err == nil && res.Result != nil && res.Result.DeepSerializedValue != nil {
				nodes, err = decodeNodes(res.Result.DeepSerializedValue.Value)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if w == holders[0] && firstErr == nil {
					firstErr = err
				}
				return
			}
			for k, n := range nodes {
				if k < len(ix) && n.BackendNodeID != 0 {
					w.backend[ix[k]] = n.BackendNodeID
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return cdpErr("observe: fetch element ids", firstErr)
	}
	return nil
}

// releaseObjects releases the remote objects of an observation
// (Runtime.releaseObjectGroup on each session), in the background.
func (t *Tab) releaseObjects(walks []*walked) {
	sessions := map[*chromedp.Target]bool{}
	for _, w := range walks {
		if w != nil {
			sessions[w.f.sess] = true
		}
	}
	// Bounded by the tab's life and 5 s.
	go func() {
		ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
		defer cancel()
		for s := range sessions {
			_, _ = cdp.Call(ctx, s, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: obsGroup})
		}
	}()
}

// boxes returns the layout boxes of elements in top-level viewport CSS
// pixels: those the walker measured, else the bounds of the first content
// quad (DOM.getContentQuads on the element's session, offset by its
// out-of-process iframes); elements without a box are absent.
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
			var dx, dy float64
			if s != t.target {
				if dx, dy, err = t.frameOrigin(ctx, s); err != nil {
					return
				}
			}
			qd := slices.Clone(q.Quads[0])
			for i := 0; i < 8; i += 2 {
				qd[i] += dx
				qd[i+1] += dy
			}
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
