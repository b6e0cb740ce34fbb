// query.js: the selector engines of tab targets (DESIGN.md section 3),
// evaluated in the page's main world of the top frame (for a click, in
// guard.js's isolated world) with
// Runtime.evaluate as `(SOURCE)(engine, selector)`, or, for a part of a
// scope chain, called on its scope (a document or an element) as
// `(SOURCE)(engine, selector, scope)`, searching only below it. It returns the first
// matching Element, or null. Engines: css (document.querySelector, then,
// when the document has no match, its open shadow roots, as Playwright's
// css engine pierces them), text
// (the deepest element whose text contains the string, case-insensitively,
// preferring visible, enabled ones with exactly that text, then visible,
// enabled ones; searches open shadow roots), xpath
// (document.evaluate), pierce (CSS through open shadow roots). A bad CSS or
// XPath selector throws a SyntaxError, which Go reports as bad_request.
(engine, selector, scope) => {
  const top = scope || document;
  const roots = (root) => {
    // Yields root and every open shadow root below it, in document order.
    const out = [root];
    const walk = (n) => {
      const w = document.createTreeWalker(n, NodeFilter.SHOW_ELEMENT);
      for (let e = w.currentNode; e; e = w.nextNode()) {
        if (e.shadowRoot) { out.push(e.shadowRoot); walk(e.shadowRoot); }
      }
    };
    walk(root);
    return out;
  };
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return false;
    const s = getComputedStyle(e);
    return s.visibility !== 'hidden' && s.display !== 'none';
  };
  switch (engine) {
    case 'css': {
      const e = top.querySelector(selector);
      if (e) return e;
    }
    // fall through: no match outside shadow roots
    case 'pierce': {
      for (const r of roots(top)) {
        const e = r.querySelector(selector);
        if (e) return e;
      }
      return null;
    }
    case 'xpath': {
      const res = document.evaluate(selector, top, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
      for (let i = 0; i < res.snapshotLength; i++) {
        let n = res.snapshotItem(i);
        if (n.nodeType !== 1) n = n.parentElement;
        if (n) return n;
      }
      return null;
    }
    case 'text': {
      const want = selector.replace(/\s+/g, ' ').trim().toLowerCase();
      if (!want) return null;
      const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
      const matches = [];
      for (const r of roots(top)) {
        const w = document.createTreeWalker(r, NodeFilter.SHOW_ELEMENT);
        for (let e = w.currentNode; e; e = w.nextNode()) {
          if (e.nodeType !== 1 || /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|HEAD|TITLE)$/.test(e.tagName)) continue;
          let text = e.tagName === 'INPUT' ? (e.value || e.getAttribute('aria-label') || '') : (e.innerText !== undefined ? e.innerText : e.textContent);
          if (!norm(text).includes(want)) continue;
          // Keep the deepest: drop ancestors of this match.
          for (let i = matches.length - 1; i >= 0; i--) {
            if (matches[i].contains(e) || (matches[i].shadowRoot && matches[i].shadowRoot.contains(e))) matches.splice(i, 1);
          }
          matches.push(e);
        }
      }
      // The first visible, actionable match wins: visible and enabled
      // with an exact text first, then visible and enabled, then visible.
      const enabled = (e) => !e.closest('button:disabled, input:disabled, select:disabled, textarea:disabled, fieldset:disabled, [aria-disabled="true"]') &&
        getComputedStyle(e).pointerEvents !== 'none';
      const exact = (e) => norm(e.tagName === 'INPUT' ? e.value : e.innerText) === want;
      return matches.find((e) => visible(e) && enabled(e) && exact(e)) || matches.find((e) => visible(e) && enabled(e)) ||
        matches.find(visible) || matches[0] || null;
    }
  }
  throw new SyntaxError('unknown selector engine ' + engine);
}
