// rowkey.js: what an element's list item, row or article shows, without
// the element's own text (DESIGN.md section 4, "numbers never silently hit
// something else"). The walker (observe.js) keys each number by it, and an
// action by number computes it again on the node (Runtime.callFunctionOn,
// this = the element): a different key means a virtualised list recycled
// the node for another item. It is "" for an element in no repeated item,
// and "=" and the element's own text when the element is the item itself.
// The key is the first 80 characters of the item's text, white space
// collapsed.
function rowKey(el) {
  const clean = (s) => s.replace(/\s+/g, ' ').trim();
  const own = (e) => clean(e.getAttribute('aria-label') || e.textContent || '').slice(0, 80);
  // The item: the nearest list item, row or article, else an ancestor (up
  // to four levels) repeated among its siblings (same tag and class), as
  // the rows of a list made of divs are. The element itself is not one:
  // its siblings come and go (a button beside buttons).
  let c = el.closest('li,tr,article,[role=listitem],[role=row],[role=article],[role=option],[role=treeitem]');
  if (!c) {
    const same = (a, b) => b && a.localName === b.localName && a.className === b.className;
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
  const w = el.ownerDocument.createTreeWalker(c, NodeFilter.SHOW_TEXT);
  let s = '';
  for (let t = w.nextNode(); t && s.length < 160; t = w.nextNode()) {
    if (el.contains(t)) continue;
    const p = t.parentElement;
    if (p && (p.localName === 'script' || p.localName === 'style')) continue;
    s += ' ' + t.data;
  }
  return clean(s).slice(0, 80);
}
