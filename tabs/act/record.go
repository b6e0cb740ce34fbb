package act

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs/js"
	"github.com/tabpilot/tabpilot/tabs/pagecore"
)

// This file holds what a recorder (package tabs/record) and a replay need
// from element location: a hook that sees the node an element number
// resolves to, before the action touches it; the scope chains of
// selectors (A >> B: B searched inside what A matches); a strict mode in
// which a selector that matches more than one element is an error; and
// Matches, every node a selector matches, for checking that a locator is
// unique.

// ScopeSep separates the parts of a scoped selector: in
// `aria/Alice[role="row"] >> aria/Delete[role="button"]` the second part
// is searched inside what the first matches. Each part is an aria/ or
// a CSS selector (every match), or a text/, xpath/ or pierce/ one (its
// first match below the scope). A part that matches an <iframe> or <frame>
// enters it: the next part is searched in the document it shows
// (`iframe[title="Payments"] >> aria/Pay now[role="button"]`), in the
// page's session for a same-process frame, in the iframe's own session
// for an out-of-process one.
const ScopeSep = " >> "

// Node is the DOM node an element number resolved to: what a recorder
// needs to describe it before the action acts (a click that navigates
// leaves nothing to describe after).
type Node struct {
	// Number is the element number the target gave.
	Number int
	// Backend is the node's backend node id in its frame's session.
	Backend cdp.BackendNodeID
	// Object is the node as a remote object in its frame's main world.
	Object runtime.RemoteObjectID
	// Session is the session of the node's frame: the page's, or an
	// out-of-process iframe's.
	Session *chromedp.Target
	// OOPIF is true when Session is an out-of-process iframe's.
	OOPIF bool
	// Frame is the id of the frame whose document holds the node, as the
	// observation gave it (empty when unknown).
	Frame cdp.FrameID
}

// NodeHook is called with each node an element number resolves to, on
// the action's goroutine and under its context, before the action acts.
// It must return promptly; it may make CDP calls.
type NodeHook func(ctx context.Context, n Node)

type nodeHookKey struct{}
type strictKey struct{}

// WithNodeHook returns ctx carrying h: the actions run under it call h
// with the node every element number resolves to.
func WithNodeHook(ctx context.Context, h NodeHook) context.Context {
	return context.WithValue(ctx, nodeHookKey{}, h)
}

// WithStrict returns ctx in which an aria/, CSS or scoped selector that
// matches more than one element fails with element_not_found ("matches N
// elements") instead of acting on the first: a replay's rule, so that a
// step never acts on the wrong one of two look-alikes.
func WithStrict(ctx context.Context) context.Context {
	return context.WithValue(ctx, strictKey{}, true)
}

func strict(ctx context.Context) bool { v, _ := ctx.Value(strictKey{}).(bool); return v }

// hookNode calls the context's NodeHook, if any, with el.
func (t *Actor) hookNode(ctx context.Context, el *element) {
	h, _ := ctx.Value(nodeHookKey{}).(NodeHook)
	if h == nil {
		return
	}
	n := Node{Number: el.number, Backend: el.backend, Object: el.obj, Session: t.Target(), Frame: el.frame}
	if el.sess != nil {
		n.Session, n.OOPIF = el.sess, true
	}
	h(ctx, n)
}

// AmbiguousError is the error of a strict selector that matched more than
// one element (code element_not_found).
type AmbiguousError struct {
	Selector string
	Count    int
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%q is ambiguous: it matches %d elements", e.Selector, e.Count)
}

// hasTextRE matches a CSS part of a chain that ends in :has-text("…")
// (Playwright's pseudo-class): the elements the CSS matches whose text
// contains the string, case and spacing ignored.
var hasTextRE = regexp.MustCompile(`(?s)^(.*?):has-text\((?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\)$`)

// match is one node a selector matched.
type match struct {
	backend cdp.BackendNodeID
	obj     runtime.RemoteObjectID
	// sess is the session of an out-of-process iframe the node is in;
	// nil: the page's.
	sess *chromedp.Target
	// frame is the same-process frame a chain entered to find the node
	// (an <iframe>'s, in sess); "": the document of sess.
	frame cdp.FrameID
}

// matchKey identifies a match across sessions: backend node ids are per
// renderer process. A document entered through its own session has no
// backend id here, and is known by its object.
type matchKey struct {
	sess    *chromedp.Target
	backend cdp.BackendNodeID
	obj     runtime.RemoteObjectID
}

func (m match) key() matchKey {
	if m.backend == 0 {
		return matchKey{sess: m.sess, obj: m.obj}
	}
	return matchKey{sess: m.sess, backend: m.backend}
}

// scoped reports whether a selector is a scope chain or an aria/ or CSS
// selector that matchAll can count.
func scoped(sel string) bool { return strings.Contains(sel, ScopeSep) }

// matchAll returns every node a selector matches in the top document, in
// document order: for a chain, the last part's matches inside any match
// of the part before. Parts are aria/, CSS, text/, xpath/ or pierce/
// selectors. Errors: bad_request for another engine in a chain.
func (t *Actor) matchAll(ctx context.Context, sel string) ([]match, error) {
	doc, err := cdp.Call(ctx, t.Target(), runtime.Evaluate, runtime.EvaluateParams{Expression: "document", ObjectGroup: t.group(ctx, nil)})
	if err != nil || doc.Result == nil {
		return nil, pagecore.EvalErr(err)
	}
	roots := []match{{obj: doc.Result.ObjectID}}
	for i, part := range strings.Split(sel, ScopeSep) {
		part = strings.TrimSpace(part)
		engine, rest, err := splitEngine(part)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			if roots, err = t.enterFrames(ctx, roots); err != nil {
				return nil, err
			}
		}
		var next []match
		seen := map[matchKey]bool{}
		for _, r := range roots {
			var got []match
			switch engine {
			case "aria":
				got, err = t.ariaIn(ctx, r, rest)
			case "css":
				got, err = t.cssIn(ctx, r, rest)
			case "text", "xpath", "pierce":
				got, err = t.queryIn(ctx, r, engine, rest)
			default:
				return nil, pagecore.Errorf(errcode.BadRequest, "in a selector with %q, each part is an aria/, CSS, text/, xpath/ or pierce/ selector, not %s/", strings.TrimSpace(ScopeSep), engine)
			}
			if err != nil {
				return nil, err
			}
			for _, m := range got {
				if !seen[m.key()] {
					seen[m.key()] = true
					next = append(next, m)
				}
			}
		}
		roots = next
		if len(roots) == 0 {
			return nil, nil
		}
	}
	return roots, nil
}

// enterFrames replaces each root that is an <iframe> or <frame> by the
// document it shows: a same-process frame's content document
// (DOM.describeNode, DOM.resolveNode in its main world), an out-of-process
// one's document in that iframe's session (pagecore's FrameSession, then
// Runtime.evaluate). A frame with no document yet is left out; other
// roots are kept as they are.
func (t *Actor) enterFrames(ctx context.Context, roots []match) ([]match, error) {
	out := roots[:0:0]
	for _, r := range roots {
		sess := t.SessionOf(r.sess)
		d, err := cdp.Call(ctx, sess, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: r.obj})
		if err != nil || d.Node == nil {
			continue
		}
		if name := strings.ToLower(d.Node.NodeName); name != "iframe" && name != "frame" {
			out = append(out, r)
			continue
		}
		if cd := d.Node.ContentDocument; cd != nil && cd.BackendNodeID != 0 {
			res, err := cdp.Call(ctx, sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: cd.BackendNodeID, ObjectGroup: t.group(ctx, sess)})
			if err != nil || res.Object == nil {
				continue
			}
			out = append(out, match{backend: cd.BackendNodeID, obj: res.Object.ObjectID, sess: r.sess, frame: d.Node.FrameID})
			continue
		}
		if d.Node.FrameID == "" {
			continue
		}
		fs, err := t.FrameSession(ctx, d.Node.FrameID)
		if err != nil {
			return nil, err
		}
		if fs == nil {
			continue
		}
		doc, err := cdp.Call(ctx, fs, runtime.Evaluate, runtime.EvaluateParams{Expression: "document", ObjectGroup: t.group(ctx, fs)})
		if err != nil || doc.Result == nil || doc.Result.ObjectID == "" {
			continue
		}
		out = append(out, match{obj: doc.Result.ObjectID, sess: fs})
	}
	return out, nil
}

// ariaIn returns the nodes under root (itself included) with the
// accessible name and role of an aria/ selector's rest
// (Accessibility.queryAXTree), resolved in the main world of root's
// frame, in root's session.
func (t *Actor) ariaIn(ctx context.Context, root match, rest string) ([]match, error) {
	m := ariaRE.FindStringSubmatch(strings.TrimSpace(rest))
	name, role := strings.TrimSpace(m[1]), m[2]
	sess := t.SessionOf(root.sess)
	res, err := cdp.Call(ctx, sess, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{ObjectID: root.obj, AccessibleName: name, Role: role})
	if err != nil {
		return nil, pagecore.CDPErr("aria query", err)
	}
	var out []match
	for _, n := range res.Nodes {
		if n.Ignored || n.BackendDOMNodeID == 0 {
			continue
		}
		r, err := cdp.Call(ctx, sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: n.BackendDOMNodeID, ObjectGroup: t.group(ctx, sess)})
		if err != nil || r.Object == nil {
			continue
		}
		out = append(out, match{backend: n.BackendDOMNodeID, obj: r.Object.ObjectID, sess: root.sess, frame: root.frame})
	}
	return out, nil
}

// cssIn returns the elements under root matching a CSS selector
// (querySelectorAll through Runtime.callFunctionOn, then
// Runtime.getProperties and DOM.describeNode for their backend ids).
// All in root's session. Errors: bad_request for an invalid selector.
func (t *Actor) cssIn(ctx context.Context, root match, sel string) ([]match, error) {
	sess := t.SessionOf(root.sess)
	text := ""
	if m := hasTextRE.FindStringSubmatch(sel); m != nil {
		sel, text = m[1], m[2]
		if text == "" {
			text = m[3]
		}
		text = strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\\`, `\`).Replace(text)
	}
	res, err := cdp.Call(ctx, sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: `function(s, text){
  const norm = (x) => (x || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const want = norm(text);
  return Array.from(this.querySelectorAll(s)).filter((e) => !want || norm(e.innerText || e.textContent).includes(want));
}`, ObjectID: root.obj,
		Arguments: []*runtime.CallArgument{{Value: []byte(jsString(sel))}, {Value: []byte(jsString(text))}},
	})
	if err != nil {
		return nil, pagecore.EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, pagecore.Errorf(errcode.BadRequest, "invalid selector %q: %s", sel, pagecore.ExceptionText(res.ExceptionDetails))
	}
	if res.Result == nil || res.Result.ObjectID == "" {
		return nil, nil
	}
	props, err := cdp.Call(ctx, sess, runtime.GetProperties, runtime.GetPropertiesParams{ObjectID: res.Result.ObjectID, OwnProperties: new(true)})
	if err != nil {
		return nil, pagecore.CDPErr("css query", err)
	}
	var out []match
	for _, p := range props.Result {
		if p.Value == nil || p.Value.ObjectID == "" || p.Value.Subtype != "node" {
			continue
		}
		d, err := cdp.Call(ctx, sess, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: p.Value.ObjectID})
		if err != nil || d.Node == nil {
			continue
		}
		out = append(out, match{backend: d.Node.BackendNodeID, obj: p.Value.ObjectID, sess: root.sess, frame: root.frame})
	}
	return out, nil
}

// queryIn returns the first node below root (a document or an element)
// that a text/, xpath/ or pierce/ selector's rest matches, as the
// engine finds it in the top document (js/query.js, called on root with
// Runtime.callFunctionOn in root's frame), or none. Errors: bad_request
// for an invalid XPath.
func (t *Actor) queryIn(ctx context.Context, root match, engine, rest string) ([]match, error) {
	sess := t.SessionOf(root.sess)
	res, err := cdp.Call(ctx, sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function(engine, sel) { return (" + js.Query + ")(engine, sel, this); }", ObjectID: root.obj,
		Arguments: []*runtime.CallArgument{{Value: []byte(jsString(engine))}, {Value: []byte(jsString(rest))}},
	})
	if err != nil {
		return nil, pagecore.EvalErr(err)
	}
	if res.ExceptionDetails != nil {
		return nil, pagecore.Errorf(errcode.BadRequest, "invalid selector %q: %s", engine+"/"+rest, pagecore.ExceptionText(res.ExceptionDetails))
	}
	if res.Result == nil || res.Result.ObjectID == "" {
		return nil, nil
	}
	d, err := cdp.Call(ctx, sess, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: res.Result.ObjectID})
	if err != nil || d.Node == nil {
		return nil, pagecore.CDPErr(engine+" query", err)
	}
	return []match{{backend: d.Node.BackendNodeID, obj: res.Result.ObjectID, sess: root.sess, frame: root.frame}}, nil
}

// resolveCounted resolves a chain, or an aria/ or CSS selector under
// strict, to its first match: nil when nothing matches, an
// AmbiguousError under strict when more than one does.
func (t *Actor) resolveCounted(ctx context.Context, sel string) (*element, error) {
	ms, err := t.matchAll(ctx, sel)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, nil
	}
	if len(ms) > 1 && strict(ctx) {
		return nil, &pagecore.Error{Code: errcode.ElementNotFound, Err: &AmbiguousError{Selector: sel, Count: len(ms)},
			Msg:  (&AmbiguousError{Selector: sel, Count: len(ms)}).Error(),
			Hint: "Scope it by what tells the elements apart: `aria/Row name[role=\"row\"] >> aria/Delete[role=\"button\"]`; observe shows the candidates."}
	}
	return &element{obj: ms[0].obj, desc: fmt.Sprintf("%q", sel), backend: ms[0].backend, sess: ms[0].sess, frame: ms[0].frame}, nil
}

// Found is one node a selector matched: its backend node id and the
// session of its frame (the page's target, or an out-of-process
// iframe's); backend node ids are only comparable within one session.
type Found struct {
	Backend cdp.BackendNodeID
	Session *chromedp.Target
}

// Matches returns the backend node ids of every element a selector
// matches, as MatchNodes, without their sessions.
func (t *Actor) Matches(ctx context.Context, sel string) ([]cdp.BackendNodeID, error) {
	fs, err := t.MatchNodes(ctx, sel)
	out := make([]cdp.BackendNodeID, len(fs))
	for i, f := range fs {
		out[i] = f.Backend
	}
	return out, err
}

// MatchNodes returns every element a selector matches, in document
// order, through the resolver the actions use: all of them for an aria/
// or CSS selector or a chain (A >> B, which enters the frames its parts
// match), the one an action would take for text/, xpath/ and pierce/
// (searched in the top document). A number is refused (bad_request): it
// is not a locator. Errors: bad_request for an invalid selector; CDP
// failures.
func (t *Actor) MatchNodes(ctx context.Context, sel string) ([]Found, error) {
	engine, _, err := splitEngine(sel)
	if err != nil {
		return nil, err
	}
	if _, nerr := strconv.Atoi(strings.TrimSpace(sel)); nerr == nil {
		return nil, pagecore.Errorf(errcode.BadRequest, "an element number is not a locator")
	}
	if scoped(sel) || engine == "aria" || engine == "css" {
		ms, err := t.matchAll(ctx, sel)
		if err != nil {
			return nil, err
		}
		out := make([]Found, len(ms))
		for i, m := range ms {
			out[i] = Found{Backend: m.backend, Session: t.SessionOf(m.sess)}
		}
		return out, nil
	}
	el, err := t.resolve(ctx, Target{Selector: sel})
	if err != nil || el == nil {
		return nil, err
	}
	d, err := cdp.Call(ctx, t.SessionOf(el.sess), dom.DescribeNode, dom.DescribeNodeParams{ObjectID: el.obj})
	if err != nil || d.Node == nil {
		return nil, pagecore.CDPErr("describe node", err)
	}
	return []Found{{Backend: d.Node.BackendNodeID, Session: t.SessionOf(el.sess)}}, nil
}

// FrameOwners returns the <iframe> (or <frame>) elements that hold the
// document of n, outermost first, each as a Node of its own frame's
// document (Backend, Object, Session, OOPIF, Frame; Number 0): none for a
// node of the top document. It reads the page's frame tree and the
// out-of-process iframes' (pagecore's Frames, DOM.getFrameOwner) and
// resolves each owner (DOM.resolveNode in its session). Errors:
// stale_element when n's frame or one of its owners is gone; CDP
// failures.
func (t *Actor) FrameOwners(ctx context.Context, n Node) ([]Node, error) {
	frames, owners, err := t.Frames(ctx, false)
	if err != nil {
		return nil, err
	}
	owners()
	byID := make(map[cdp.FrameID]*pagecore.Frame, len(frames))
	for _, f := range frames {
		byID[f.ID] = f
	}
	stale := func(what string) error {
		return &pagecore.Error{Code: errcode.StaleElement, Msg: what, Err: pagecore.ErrStale}
	}
	f := byID[n.Frame]
	if f == nil {
		if n.Frame == "" && !n.OOPIF {
			return nil, nil // the top document's, as far as anyone knows
		}
		return nil, stale(fmt.Sprintf("the frame %s of the element is gone", n.Frame))
	}
	var chain []Node
	for depth := 0; !f.Top && depth < 16; depth++ {
		p := byID[f.Parent]
		if p == nil || f.Owner == 0 {
			return nil, stale("the iframe of frame " + f.URL + " is gone")
		}
		r, err := cdp.Call(ctx, p.Sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: f.Owner, ObjectGroup: t.group(ctx, p.Sess)})
		if err != nil || r.Object == nil {
			return nil, stale("the iframe of frame " + f.URL + " is gone")
		}
		chain = append([]Node{{Backend: f.Owner, Object: r.Object.ObjectID, Session: p.Sess, OOPIF: p.Sess != t.Target(), Frame: p.ID}}, chain...)
		f = p
	}
	return chain, nil
}
