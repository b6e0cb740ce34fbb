package record

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"

	"github.com/tabpilot/tabpilot/tabs/act"
)

// Matcher resolves a selector to every node it matches, as a replay's
// resolver would (act.Actor.Matches).
type Matcher interface {
	Matches(ctx context.Context, sel string) ([]cdp.BackendNodeID, error)
}

// Locator is what a recorded step names its element by.
type Locator struct {
	// Selector is the locator written in the script.
	Selector string
	// Verified is true when Selector resolved, at record time, to the one
	// node acted on and to nothing else.
	Verified bool
	// Why says why nothing verified (then Selector is the best candidate).
	Why string
	// Tried are the candidates that did not verify, in the order tried.
	Tried []string
	// Role and Name are what the node showed (its accessibility node).
	Role, Name string
}

// maxTries bounds the candidates Locate verifies for one node.
const maxTries = 12

// Locate computes the locator of the node an element number resolved to,
// most robust first, each verified with m against n's backend node id:
// aria/Name[role="role"] from the node's accessibility node
// (Accessibility.getPartialAXTree, with its ancestors); when that matches
// several nodes, the same scoped by each named ancestor, nearest first
// (`aria/Ancestor[role="row"] >> aria/Name[role="button"]`); text/ of its
// short visible text; a CSS selector of stable attributes (#id, [name],
// [data-testid], [aria-label]), computed in the page
// (Runtime.callFunctionOn). A node in an out-of-process iframe cannot be
// verified by the top document's resolver and is given its best
// candidate with Why set; so is a node none of whose candidates verify.
func Locate(ctx context.Context, m Matcher, n act.Node) Locator {
	var l Locator
	var cands []string
	self, ancestors := axChain(ctx, n)
	if self != nil {
		l.Role, l.Name = axString(self.Role), axString(self.Name)
	}
	aria := ""
	if usableRole(l.Role) && l.Name != "" && !strings.Contains(l.Name, act.ScopeSep) {
		aria = AriaSelector(l.Name, l.Role)
		cands = append(cands, aria)
	}
	info := pageInfo(ctx, n)
	if n.OOPIF {
		l.Selector, l.Why = first(append(cands, info.cands()...), "element "+strconv.Itoa(n.Number)), "it is in an out-of-process iframe, which a locator of the top document does not reach"
		return l
	}
	tries := 0
	check := func(sel string) (unique, includes bool) {
		if tries >= maxTries {
			return false, false
		}
		tries++
		ids, err := m.Matches(ctx, sel)
		if err != nil {
			return false, false
		}
		for _, id := range ids {
			if id == n.Backend {
				includes = true
			}
		}
		return includes && len(ids) == 1, includes
	}
	if aria != "" {
		unique, includes := check(aria)
		if unique {
			l.Selector, l.Verified = aria, true
			return l
		}
		l.Tried = append(l.Tried, aria)
		if includes {
			// Ambiguous: scope it by the nearest named ancestor that
			// tells the duplicates apart.
			for _, a := range ancestors {
				role, name := axString(a.Role), axString(a.Name)
				if !usableRole(role) || name == "" || strings.Contains(name, act.ScopeSep) {
					continue
				}
				sel := AriaSelector(name, role) + act.ScopeSep + aria
				if u, _ := check(sel); u {
					l.Selector, l.Verified = sel, true
					return l
				}
				l.Tried = append(l.Tried, sel)
			}
		}
	}
	if aria != "" && len(l.Tried) > 0 {
		// No named ancestor: scope by the text of the row, item or
		// section around it (tr:has-text("Bob") >> aria/Delete…).
		for _, sc := range info.Scopes {
			for _, text := range sc.Texts {
				sel := sc.CSS + ":has-text(" + cssString(text) + ")" + act.ScopeSep + aria
				if u, _ := check(sel); u {
					l.Selector, l.Verified = sel, true
					return l
				}
				l.Tried = append(l.Tried, sel)
			}
		}
	}
	for _, sel := range info.cands() {
		if u, _ := check(sel); u {
			l.Selector, l.Verified = sel, true
			return l
		}
		l.Tried = append(l.Tried, sel)
	}
	l.Selector = first(append(cands, info.cands()...), "element "+strconv.Itoa(n.Number))
	l.Why = "no unique locator"
	return l
}

func first(xs []string, def string) string {
	if len(xs) > 0 {
		return xs[0]
	}
	return def
}

// AriaSelector is the aria/ selector of an accessible name and role,
// Puppeteer's aria/Name[role="role"].
func AriaSelector(name, role string) string {
	return "aria/" + name + `[role="` + role + `"]`
}

var roleRE = regexp.MustCompile(`^[a-z]+$`)

// usableRole reports whether an accessibility role names what a person
// sees (button, textbox, row, …), not a structure of Chromium's own
// (generic, StaticText, RootWebArea, LabelText).
func usableRole(r string) bool {
	switch r {
	case "generic", "none", "presentation", "paragraph", "document":
		return false
	}
	return roleRE.MatchString(r)
}

// axString decodes an accessibility value that is a string.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v.Value, &s); err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// axChain returns the accessibility node of n and its ancestors, nearest
// first (Accessibility.getPartialAXTree with fetchRelatives).
func axChain(ctx context.Context, n act.Node) (*accessibility.Node, []*accessibility.Node) {
	res, err := cdp.Call(ctx, n.Session, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{BackendNodeID: n.Backend, FetchRelatives: new(true)})
	if err != nil {
		return nil, nil
	}
	byID := map[accessibility.NodeID]*accessibility.Node{}
	var self *accessibility.Node
	for _, x := range res.Nodes {
		byID[x.NodeID] = x
		if x.BackendDOMNodeID == n.Backend && self == nil {
			self = x
		}
	}
	if self == nil {
		return nil, nil
	}
	var anc []*accessibility.Node
	for p := byID[self.ParentID]; p != nil && len(anc) < 64; p = byID[p.ParentID] {
		anc = append(anc, p)
	}
	return self, anc
}

// info is what the page says of a node: its short visible text and the
// CSS selectors of its stable attributes that are unique in its document.
type info struct {
	Text string   `json:"text"`
	CSS  []string `json:"css"`
	// Scopes are the node's ancestors that hold an item or a section
	// (tr, li, article, section, fieldset, dialog, form, details, or
	// their ARIA roles), nearest first, with the texts that may tell them
	// apart: a heading's, then the first lines of their text.
	Scopes []struct {
		CSS   string   `json:"css"`
		Texts []string `json:"texts"`
	} `json:"scopes"`
}

func (i info) cands() []string {
	var out []string
	if i.Text != "" && !strings.Contains(i.Text, act.ScopeSep) {
		out = append(out, "text/"+i.Text)
	}
	return append(out, i.CSS...)
}

// infoJS computes info in the node's main world.
const infoJS = `function() {
  const e = this.nodeType === 1 ? this : this.parentElement;
  if (!e) return {text: '', css: []};
  let text = (e.innerText || e.value || '').replace(/\s+/g, ' ').trim();
  if (text.length > 60 || e.localName === 'select' || e.localName === 'textarea' ||
      (e.localName === 'input' && !['button', 'submit', 'reset'].includes(e.type))) text = '';
  const css = [];
  const q = (s) => { try { const l = e.getRootNode().querySelectorAll(s); return l.length === 1 && l[0] === e; } catch (_) { return false; } };
  const attr = (n) => e.getAttribute(n);
  const esc = (v) => '"' + v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\a ') + '"';
  const tag = e.localName;
  if (e.id && !/\d{3,}|^[0-9]|:/.test(e.id)) css.push('#' + CSS.escape(e.id));
  for (const a of ['data-testid', 'data-test', 'data-qa', 'name', 'aria-label', 'placeholder', 'title']) {
    const v = attr(a);
    if (v) css.push(tag + '[' + a + '=' + esc(v) + ']');
  }
  const scopes = [];
  const clean = (x) => (x || '').replace(/\s+/g, ' ').trim();
  const own = clean(e.innerText);
  for (let a = e.parentElement; a && a !== document.body && scopes.length < 4; a = a.parentElement) {
    const role = a.getAttribute('role');
    let sel = '';
    if (['tr', 'li', 'article', 'section', 'fieldset', 'dialog', 'form', 'details'].includes(a.localName)) sel = a.localName;
    else if (['row', 'listitem', 'article', 'dialog', 'group', 'region', 'tabpanel'].includes(role)) sel = '[role="' + role + '"]';
    if (!sel) continue;
    const texts = [];
    const h = a.querySelector('h1, h2, h3, h4, h5, h6, [role=heading], legend, caption, summary');
    if (h && clean(h.innerText) && clean(h.innerText).length <= 60) texts.push(clean(h.innerText));
    for (const x of (a.innerText || '').split(/[\n\t]+/).map(clean)) {
      if (texts.length >= 3) break;
      if (x && x !== own && x.length <= 60 && !texts.includes(x)) texts.push(x);
    }
    if (texts.length) scopes.push({css: sel, texts});
  }
  return {text, css: css.filter(q), scopes};
}`

// pageInfo runs infoJS on n (Runtime.callFunctionOn); nothing on failure.
func pageInfo(ctx context.Context, n act.Node) info {
	var out info
	res, err := cdp.Call(ctx, n.Session, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: infoJS, ObjectID: n.Object, ReturnByValue: new(true),
	})
	if err != nil || res.ExceptionDetails != nil || res.Result == nil {
		return out
	}
	_ = json.Unmarshal(res.Result.Value, &out)
	return out
}

// number parses a target that is an element number.
func number(target string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(target))
	return n, err == nil && n > 0
}

// cssString quotes s for CSS (and :has-text): double quotes, with a
// backslash before a double quote or a backslash.
func cssString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ").Replace(s) + `"`
}
