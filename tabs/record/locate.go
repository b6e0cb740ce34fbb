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

// Matcher resolves a selector to every node it matches, with the session
// of each (act.Actor.MatchNodes), as a replay's resolver would, and finds
// the iframes that hold a node's document (act.Actor.FrameOwners).
type Matcher interface {
	MatchNodes(ctx context.Context, sel string) ([]act.Found, error)
	FrameOwners(ctx context.Context, n act.Node) ([]act.Node, error)
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
// most robust first, each verified with m against n's backend node id in
// n's session (backend node ids are per renderer process):
// aria/Name[role="role"] from the node's accessibility node
// (Accessibility.getPartialAXTree, with its ancestors); when that matches
// several nodes, the same scoped by each named ancestor, nearest first
// (`aria/Ancestor[role="row"] >> aria/Name[role="button"]`); text/ of its
// short visible text; a CSS selector of stable attributes (#id, [name],
// [data-testid], [aria-label]), computed in the page
// (Runtime.callFunctionOn). A node inside iframes, same-process or out of
// process, gets each candidate behind the iframes that hold it, outermost
// first, each named by its title, name or id and verified unique
// (`iframe[title="Payments"] >> aria/Pay now[role="button"]`). A node
// none of whose candidates verify is given its best candidate with Why
// set.
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
	same := func(f act.Found, want act.Node) bool {
		return f.Backend == want.Backend && f.Session != nil && want.Session != nil && f.Session.SessionID == want.Session.SessionID
	}
	frame, why := framePrefix(ctx, m, n, same)
	if why != "" {
		l.Selector, l.Why = first(append(cands, info.cands()...), "element "+strconv.Itoa(n.Number)), why
		return l
	}
	tries := 0
	check := func(sel string) (unique, includes bool) {
		if tries >= maxTries {
			return false, false
		}
		tries++
		fs, err := m.MatchNodes(ctx, frame+sel)
		if err != nil {
			return false, false
		}
		for _, f := range fs {
			if same(f, n) {
				includes = true
			}
		}
		return includes && len(fs) == 1, includes
	}
	found := func(sel string) Locator {
		l.Selector, l.Verified = frame+sel, true
		return l
	}
	if aria != "" {
		unique, includes := check(aria)
		if unique {
			return found(aria)
		}
		l.Tried = append(l.Tried, frame+aria)
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
					return found(sel)
				}
				l.Tried = append(l.Tried, frame+sel)
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
					return found(sel)
				}
				l.Tried = append(l.Tried, frame+sel)
			}
		}
	}
	for _, sel := range info.cands() {
		if u, _ := check(sel); u {
			return found(sel)
		}
		l.Tried = append(l.Tried, frame+sel)
	}
	l.Selector = frame + first(append(cands, info.cands()...), "element "+strconv.Itoa(n.Number))
	l.Why = "no unique locator"
	return l
}

// framePrefix returns the scope that enters the iframes holding n's
// document, outermost first, ending in act.ScopeSep ("" for a node of
// the top document): each iframe by the first of its candidates
// (frameCands) that, behind the scope so far, matches that iframe alone
// (same). why is set when an iframe has none, or its chain is unknown.
func framePrefix(ctx context.Context, m Matcher, n act.Node, same func(act.Found, act.Node) bool) (prefix, why string) {
	owners, err := m.FrameOwners(ctx, n)
	if err != nil {
		return "", "its frame could not be found: " + err.Error()
	}
	for _, o := range owners {
		ok := false
		var tried []string
		for _, c := range frameCands(ctx, o) {
			fs, err := m.MatchNodes(ctx, prefix+c)
			if err == nil && len(fs) == 1 && same(fs[0], o) {
				prefix += c + act.ScopeSep
				ok = true
				break
			}
			tried = append(tried, prefix+c)
		}
		if !ok {
			return "", "no unique locator for its iframe (tried " + strings.Join(tried, ", ") + ")"
		}
	}
	return prefix, ""
}

// frameCandsJS lists the CSS selectors of an <iframe> (or <frame>) by
// what names it, most telling first: its title, its name, its id, its
// src as written; those unique in its document or shadow root.
const frameCandsJS = `function() {
  const e = this, tag = e.localName, out = [];
  const esc = (v) => '"' + v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\a ') + '"';
  for (const a of ['title', 'name']) {
    const v = e.getAttribute(a);
    if (v && v.trim()) out.push(tag + '[' + a + '=' + esc(v) + ']');
  }
  if (e.id && !/\d{3,}|^[0-9]|:/.test(e.id)) out.push(tag + '#' + CSS.escape(e.id));
  const src = e.getAttribute('src');
  if (src && src.length <= 200) out.push(tag + '[src=' + esc(src) + ']');
  return out.filter((s) => { try { const l = e.getRootNode().querySelectorAll(s); return l.length === 1 && l[0] === e; } catch (_) { return false; } });
}`

// frameCands runs frameCandsJS on an iframe (Runtime.callFunctionOn in its
// session); nothing on failure.
func frameCands(ctx context.Context, o act.Node) []string {
	res, err := cdp.Call(ctx, o.Session, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: frameCandsJS, ObjectID: o.Object, ReturnByValue: new(true),
	})
	if err != nil || res.ExceptionDetails != nil || res.Result == nil {
		return nil
	}
	var out []string
	_ = json.Unmarshal(res.Result.Value, &out)
	return out
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
