// scrolled.js: which scroll container a wheel moved, and where it stands
// (Runtime.callFunctionOn, this = the element under the pointer). Called
// with snap = null before the wheel, it returns the scroll positions of
// the element's scroll ancestors and the page (a remote object the caller
// keeps); called again with that snapshot after it, it returns {x, y,
// container, position}: the first of them that moved ("page" for the
// document, else tag#id.class), its new scroll offsets in CSS pixels, and
// "40%/1200px below" (or "… right"). container is "" when none moved.
function (snap) {
  const se = document.scrollingElement || document.documentElement;
  const where = (at, range, dir) => Math.round(range > 0 ? (100 * Math.max(0, at)) / range : 0) + '%/' + Math.max(0, Math.round(range - at)) + 'px ' + dir;
  const pos = (e) => {
    const v = e.scrollHeight - e.clientHeight, h = e.scrollWidth - e.clientWidth;
    return v > 1 || h <= 1 ? where(e.scrollTop, v, 'below') : where(e.scrollLeft, h, 'right');
  };
  const describe = (e) => {
    if (e === se) return 'page';
    let s = e.localName;
    if (e.id) s += '#' + e.id;
    const cls = typeof e.className === 'string' ? e.className.trim().split(/\s+/).filter(Boolean).slice(0, 2) : [];
    if (cls.length) s += '.' + cls.join('.');
    const l = e.getAttribute('aria-label');
    if (l) s += ' "' + l.slice(0, 40) + '"';
    return s;
  };
  if (!snap) {
    const list = [];
    let e = this && this.nodeType === 1 ? this : this && this.parentElement;
    for (; e; e = e.parentElement || (e.getRootNode().host || null)) {
      if (e !== document.documentElement && e !== document.body && e !== se) list.push([e, e.scrollLeft, e.scrollTop]);
    }
    list.push([se, se.scrollLeft, se.scrollTop]);
    return list;
  }
  for (const [e, x, y] of snap) {
    if (e.isConnected && (e.scrollLeft !== x || e.scrollTop !== y)) {
      return { x: e.scrollLeft, y: e.scrollTop, container: describe(e), position: pos(e) };
    }
  }
  return { x: se.scrollLeft, y: se.scrollTop, container: '', position: pos(se) };
}
