// labelKey is an element's own label as a key: its aria-label or its
// text, white space collapsed, 80 characters at most. An action by number
// that finds it changed says "was X, now Y".
function labelKey(el) {
  return (el.getAttribute('aria-label') || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 80);
}

// rowkey.js: what an element's list item, row or article shows, without
// the element's own text (DESIGN.md section 4, "numbers never silently hit
// something else"). The walker (observe.js) keys each number by it, and an
// action by number computes it again on the node (Runtime.callFunctionOn,
// this = the element): a different key means a virtualised list recycled
// the node for another item. It is "" for an element in no repeated item,
// and "=" and the element's own text when the element is the item itself.
// The key is the first 80 characters of the item's texts, white space
// collapsed, " | " between text nodes.
function rowKey(el, cache) {
  const clean = (s) => s.replace(/\s+/g, ' ').trim();
  const own = labelKey;
  // The item: the nearest list item, row or article (up to twelve levels
  // up), else a div ancestor (up to four levels) repeated among its
  // siblings (same class), as the rows of a list made of divs are. The element itself is not one:
  // its siblings come and go (a button beside buttons).
  let c = null;
  for (let n = el, i = 0; n && i < 12; n = n.parentElement, i++) {
    const t = n.localName;
    if (t === 'li' || t === 'tr' || t === 'article') {
      c = n;
      break;
    }
    const r = n.getAttribute('role');
    if (r === 'listitem' || r === 'row' || r === 'article' || r === 'option' || r === 'treeitem') {
      c = n;
      break;
    }
  }
  if (!c) {
    const same = (a, b) => b && a.localName === 'div' && b.localName === 'div' && a.className === b.className;
    let n = el.parentElement;
    for (let i = 0; i < 4 && n && n.parentElement && n !== n.ownerDocument.body; i++, n = n.parentElement) {
      if (same(n, n.previousElementSibling) || same(n, n.nextElementSibling)) {
        c = n;
        break;
      }
    }
  }
  if (!c) return '';
  if (c === el) return '=' + own(el);
  // A row whose only content is the element: the element is the item.
  // The item's texts (its first 400 characters; cache, a Map, keeps them
  // for the item's other elements), then those outside the element, " | "
  // between them: the first says which item it is.
  let texts = cache && cache.get(c);
  if (!texts) {
    texts = [];
    const w = el.ownerDocument.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    let n = 0;
    for (let t = w.nextNode(); t && n < 400; t = w.nextNode()) {
      const p = t.parentElement;
      if (p && (p.localName === 'script' || p.localName === 'style')) continue;
      const x = clean(t.data);
      if (!x) continue;
      texts.push([t, x]);
      n += x.length + 3;
    }
    if (cache) cache.set(c, texts);
  }
  const parts = [];
  let n = 0;
  for (const [t, x] of texts) {
    if (n >= 80) break;
    if (el.contains(t)) continue;
    parts.push(x);
    n += x.length + 3;
  }
  return parts.length ? parts.join(' | ').slice(0, 80) : '=' + own(el);
}
