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
// is searched inside what the first matches. Each part is an aria/
// selector or a CSS selector.
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
	n := Node{Number: el.number, Backend: el.backend, Object: el.obj, Session: t.Target()}
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
}

// scoped reports whether a selector is a scope chain or an aria/ or CSS
// selector that matchAll can count.
func scoped(sel string) bool { return strings.Contains(sel, ScopeSep) }

// matchAll returns every node a selector matches in the top document, in
// document order: for a chain, the last part's matches inside any match
// of the part before. Parts are aria/ or CSS selectors. Errors:
// bad_request for another engine in a chain.
func (t *Actor) matchAll(ctx context.Context, sel string) ([]match, error) {
	doc, err := cdp.Call(ctx, t.Target(), runtime.Evaluate, runtime.EvaluateParams{Expression: "document"})
	if err != nil || doc.Result == nil {
		return nil, pagecore.EvalErr(err)
	}
	roots := []match{{obj: doc.Result.ObjectID}}
	for _, part := range strings.Split(sel, ScopeSep) {
		part = strings.TrimSpace(part)
		engine, rest, err := splitEngine(part)
		if err != nil {
			return nil, err
		}
		var next []match
		seen := map[cdp.BackendNodeID]bool{}
		for _, r := range roots {
			var got []match
			switch engine {
			case "aria":
				got, err = t.ariaIn(ctx, r.obj, rest)
			case "css":
				got, err = t.cssIn(ctx, r.obj, rest)
			default:
				return nil, pagecore.Errorf(errcode.BadRequest, "in a selector with %q, each part is an aria/ or a CSS selector, not %s/", strings.TrimSpace(ScopeSep), engine)
			}
			if err != nil {
				return nil, err
			}
			for _, m := range got {
				if !seen[m.backend] {
					seen[m.backend] = true
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

// ariaIn returns the nodes under root (itself included) with the
// accessible name and role of an aria/ selector's rest
// (Accessibility.queryAXTree), resolved in the page's main world.
func (t *Actor) ariaIn(ctx context.Context, root runtime.RemoteObjectID, rest string) ([]match, error) {
	m := ariaRE.FindStringSubmatch(strings.TrimSpace(rest))
	name, role := strings.TrimSpace(m[1]), m[2]
	res, err := cdp.Call(ctx, t.Target(), accessibility.QueryAXTree, accessibility.QueryAXTreeParams{ObjectID: root, AccessibleName: name, Role: role})
	if err != nil {
		return nil, pagecore.CDPErr("aria query", err)
	}
	var out []match
	for _, n := range res.Nodes {
		if n.Ignored || n.BackendDOMNodeID == 0 {
			continue
		}
		r, err := cdp.Call(ctx, t.Target(), dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: n.BackendDOMNodeID})
		if err != nil || r.Object == nil {
			continue
		}
		out = append(out, match{backend: n.BackendDOMNodeID, obj: r.Object.ObjectID})
	}
	return out, nil
}

// cssIn returns the elements under root matching a CSS selector
// (querySelectorAll through Runtime.callFunctionOn, then
// Runtime.getProperties and DOM.describeNode for their backend ids).
// Errors: bad_request for an invalid selector.
func (t *Actor) cssIn(ctx context.Context, root runtime.RemoteObjectID, sel string) ([]match, error) {
	text := ""
	if m := hasTextRE.FindStringSubmatch(sel); m != nil {
		sel, text = m[1], m[2]
		if text == "" {
			text = m[3]
		}
		text = strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\\`, `\`).Replace(text)
	}
	res, err := cdp.Call(ctx, t.Target(), runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: `function(s, text){
  const norm = (x) => (x || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const want = norm(text);
  return Array.from(this.querySelectorAll(s)).filter((e) => !want || norm(e.innerText || e.textContent).includes(want));
}`, ObjectID: root,
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
	props, err := cdp.Call(ctx, t.Target(), runtime.GetProperties, runtime.GetPropertiesParams{ObjectID: res.Result.ObjectID, OwnProperties: new(true)})
	if err != nil {
		return nil, pagecore.CDPErr("css query", err)
	}
	var out []match
	for _, p := range props.Result {
		if p.Value == nil || p.Value.ObjectID == "" || p.Value.Subtype != "node" {
			continue
		}
		d, err := cdp.Call(ctx, t.Target(), dom.DescribeNode, dom.DescribeNodeParams{ObjectID: p.Value.ObjectID})
		if err != nil || d.Node == nil {
			continue
		}
		out = append(out, match{backend: d.Node.BackendNodeID, obj: p.Value.ObjectID})
	}
	return out, nil
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
	return &element{obj: ms[0].obj, desc: fmt.Sprintf("%q", sel), backend: ms[0].backend}, nil
}

// Matches returns the backend node ids of every element a selector
// matches in the top document, in document order, through the resolver
// the actions use: all of them for an aria/ or CSS selector or a chain
// (A >> B), the one an action would take for text/, xpath/ and pierce/.
// A number is refused (bad_request): it is not a locator. Errors:
// bad_request for an invalid selector; CDP failures.
func (t *Actor) Matches(ctx context.Context, sel string) ([]cdp.BackendNodeID, error) {
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
		out := make([]cdp.BackendNodeID, len(ms))
		for i, m := range ms {
			out[i] = m.backend
		}
		return out, nil
	}
	el, err := t.resolve(ctx, Target{Selector: sel})
	if err != nil || el == nil {
		return nil, err
	}
	d, err := cdp.Call(ctx, t.Target(), dom.DescribeNode, dom.DescribeNodeParams{ObjectID: el.obj})
	if err != nil || d.Node == nil {
		return nil, pagecore.CDPErr("describe node", err)
	}
	return []cdp.BackendNodeID{d.Node.BackendNodeID}, nil
}
