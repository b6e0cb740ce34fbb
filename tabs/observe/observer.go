package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// Observer observes one page: it walks the page's frames in its isolated
// worlds, builds the observation (BuildDOM, Diff, TrimWith) and keeps the
// numbering that actions resolve numbers with. Its methods are safe for
// concurrent use.
type Observer struct {
	*pagecore.Page
	log *slog.Logger

	// mu guards num and last.
	mu   sync.Mutex
	num  *Numbering
	last *Observation

	obs obsTabState
}

// NewObserver returns the observer of page p, logging to log.
func NewObserver(p *pagecore.Page, log *slog.Logger) *Observer {
	return &Observer{Page: p, log: log, num: NewNumbering()}
}

// Lookup returns the element behind number id of the page's observations,
// and whether there is one (Numbering.Lookup).
func (t *Observer) Lookup(id int) (Ref, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.num.Lookup(id)
}

// Shown returns the name and label key number id showed when it was
// numbered (Numbering.Shown).
func (t *Observer) Shown(id int) (name, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.num.Shown(id)
}

// Acted records the element the latest action by number resolved: the
// next observation keeps it and its neighbours within the budget.
func (t *Observer) Acted(ref Ref) {
	t.obs.mu.Lock()
	t.obs.lastActed = ref
	t.obs.mu.Unlock()
}

// Reset forgets the numbers and the last observation: the top document
// changed. restored says it came back from the back/forward cache, whose
// remote objects did not come back with it.
func (t *Observer) Reset(restored bool) {
	if restored {
		t.obs.mu.Lock()
		clear(t.obs.clickables)
		t.obs.mu.Unlock()
	}
	t.mu.Lock()
	t.num.Reset()
	t.last = nil
	t.mu.Unlock()
}

// WalkerJS is the walker, with the row key and area box functions in
// place: the script pagecore compiles in each isolated world it makes
// (Env.WorldScript).
var WalkerJS = strings.NewReplacer("/*ROWKEY*/", js.RowKey, "/*AREABOX*/", js.AreaBox).Replace(js.Observe)

// PageOptions are the options of tab.observe.
type PageOptions struct {
	// IncludeAll adds the structure a reader needs: headings with their
	// level, landmarks, dialogs, alerts, lists and text (trimmed).
	IncludeAll bool
	// ViewportOnly keeps what intersects the viewport.
	ViewportOnly bool
	// MaxTokens is the budget of the text rendering (bytes/4); 0 means
	// 6000 (DefaultMaxTokens).
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
func (t *Observer) waitLoaded(ctx context.Context, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		loading, doc := t.NavState()
		if !loading {
			return false
		}
		t.obs.mu.Lock()
		gaveUp := t.obs.loadGaveUp == doc && t.obs.loadGaveUpSet
		t.obs.mu.Unlock()
		if gaveUp {
			return true
		}
		if time.Now().After(deadline) {
			t.obs.mu.Lock()
			t.obs.loadGaveUp, t.obs.loadGaveUpSet = doc, true
			t.obs.mu.Unlock()
			return true
		}
		if !pagecore.SleepCtx(ctx, 20*time.Millisecond) {
			return true
		}
	}
}

// refsAll is the number of numbered items up to which an observation
// fetches the backend node ids of all of them (so the full observation is
// numbered throughout); above it, only of those the budget shows.
const refsAll = 2500

// maxClickables caps the nodes with click listeners passed to the walker.
const maxClickables = 400

// obsGroup is the object group of the observation's remote objects,
// released when it is done.
const obsGroup = "tabpilot-observe"

// Observe returns the tab's numbered observation.
//
// It runs the page walker (js/js) in an isolated world
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
func (t *Observer) Observe(ctx context.Context, o PageOptions) (*Observation, error) {
	if o.Since != "" && o.Since != "last" {
		return nil, pagecore.Errorf(errcode.BadRequest, "invalid since %q: use \"last\"", o.Since)
	}
	if d := t.PendingDialog(); d != nil {
		return nil, pagecore.DialogBlocked(d, "be observed")
	}
	start := time.Now()
	stillLoading := t.waitLoaded(ctx, observeLoadWait)
	t.WatchNavigations()
	loaded := time.Now()
	in, holders, walks, report, err := t.gather(ctx, o)
	if err != nil {
		return nil, err
	}
	gathered := time.Now()
	bo := Options{IncludeAll: o.IncludeAll, ViewportOnly: o.ViewportOnly, Query: o.Query, MaxTokens: o.MaxTokens, Boxes: o.Boxes}
	if o.Since != "" {
		// A diff compares whole observations.
		bo.ViewportOnly, bo.Query = false, ""
	}
	if err := t.fetchRefs(ctx, in, holders, walks, bo); err != nil {
		return nil, err
	}
	fetched := time.Now()
	if observeRecorder != nil {
		observeRecorder(t.Name(), in)
	}
	t.obs.mu.Lock()
	anchor := t.obs.lastActed
	t.obs.mu.Unlock()
	t.mu.Lock()
	full := BuildDOM(in, t.num, bo)
	full.Scrolled = report
	// The base of the next diff is the whole observation, unfiltered.
	base := full
	if bo.Query != "" || bo.ViewportOnly {
		base = BuildDOM(in, t.num, Options{IncludeAll: bo.IncludeAll})
	}
	prev := t.last
	t.last = base
	t.mu.Unlock()
	shown := full
	if o.Since != "" {
		if prev == nil {
			cp := *full
			cp.Notes = append(slices.Clone(cp.Notes), "no previous observation of this page to compare with: this is the whole observation")
			shown = &cp
		} else {
			shown = Diff(prev, full)
		}
	}
	if sec := t.Secrets(); sec.Len() > 0 {
		// A field that holds a secret (typed with {{secret:NAME}}) shows
		// its value masked, here and in the full observation's file.
		shown = shown.Redacted(sec.Redact)
	}
	obs, omitted := TrimWith(shown, TrimOptions{MaxTokens: o.MaxTokens, Anchor: anchor})
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
	if t.log.Enabled(ctx, slog.LevelDebug) {
		var inPage time.Duration
		for _, w := range walks {
			inPage += time.Duration(w.ms) * time.Millisecond
		}
		t.log.Debug("observed", "tab", t.Name(), "elements", len(obs.Elements), "frames", len(walks), "wait_load", loaded.Sub(start),
			"walk", gathered.Sub(loaded), "walker_in_page", inPage, "refs", fetched.Sub(gathered), "build", time.Since(fetched))
	}
	return obs, nil
}

// observeRecorder, when set (by tests), receives each observation's input.
var observeRecorder func(tab string, in *DOMInput)

// SetRecorder makes every observation hand its input to f (nil: stop):
// the tests of package tabs record the inputs of this package's golden
// tests with it. It is not safe to call while observations run.
func SetRecorder(f func(tab string, in *DOMInput)) { observeRecorder = f }

// fetchRefs fetches the backend node ids of the elements the observation
// numbers, for the walks that did not serialize them all: up to refsAll of
// them, else those PickDOM keeps within the budget (after the
// filters) (__tpObs.pick in the walk's world, deep-serialized). holders
// are the walks of in.Frames. The observation's remote objects are
// released afterwards, in the background.
func (t *Observer) fetchRefs(ctx context.Context, in *DOMInput, holders, walks []*walked, bo Options) error {
	defer t.releaseObjects(walks)
	want := map[*walked][]int{}
	total, missing := 0, 0
	for fi := range in.Frames {
		w := holders[fi]
		for _, it := range in.Frames[fi].Walk.Items {
			switch it.Kind {
			case KindElement, KindHeading, KindDialog:
				if !bo.IncludeAll && it.Kind != KindElement {
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
		picks := PickDOM(in, t.num, bo)
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
			res, err := cdp.Call(ctx, w.f.Sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
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
		return pagecore.CDPErr("observe: fetch element ids", firstErr)
	}
	return nil
}

// releaseObjects releases the remote objects of an observation
// (Runtime.releaseObjectGroup on each session), in the background.
func (t *Observer) releaseObjects(walks []*walked) {
	sessions := map[*chromedp.Target]bool{}
	for _, w := range walks {
		if w != nil {
			sessions[w.f.Sess] = true
		}
	}
	// Bounded by the tab's life and 5 s.
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		for s := range sessions {
			_, _ = cdp.Call(ctx, s, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: obsGroup})
		}
	}()
}

// Boxes returns the layout boxes of elements in top-level viewport CSS
// pixels: those the walker measured, else the bounds of the first content
// quad (DOM.getContentQuads on the element's session, offset by its
// out-of-process iframes); elements without a box are absent.
func (t *Observer) Boxes(ctx context.Context, els []Element) map[Ref]Rect {
	out := make(map[Ref]Rect, len(els))
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
			s := t.SessionFor(e.Ref.Session)
			if s == nil {
				return
			}
			q, err := cdp.Call(ctx, s, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: e.Ref.BackendNodeID})
			if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
				return
			}
			var dx, dy float64
			if s != t.Target() {
				if dx, dy, err = t.FrameOrigin(ctx, s); err != nil {
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
			out[e.Ref] = Rect{X: minX, Y: minY, Width: maxX - minX, Height: maxY - minY}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// writeFull writes an observation as JSON to a new private (0600) temp
// file and returns its path.
func writeFull(o *Observation) (string, error) {
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

// obsTabState is the observation state of a tab beside its numbering.
type obsTabState struct {
	mu sync.Mutex
	// loadGaveUp is the top-level document (Page.navSeq) whose load an
	// observation waited for in vain, when loadGaveUpSet.
	loadGaveUp    int
	loadGaveUpSet bool
	// clickables are, by world, the nodes with click-like listeners as
	// remote objects in that world, kept from one observation to the next
	// (walkArgs).
	clickables map[pagecore.WorldKey]*clickableSet
	// lastActed is the element the latest action by number resolved.
	lastActed Ref
}
