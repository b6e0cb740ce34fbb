// actionable.js: the actionability check of DESIGN.md section 3, called on
// an element with Runtime.callFunctionOn (this = the element). It scrolls
// the element into view (nested scroll containers included), then reports
// one state: "detached", "hidden", "disabled", "unstable", "covered" (with
// a description of the element that receives the pointer at the centre),
// or "ok" with the centre point in the frame's viewport coordinates.
async function (opts) {
  const el = this;
  const describe = (e) => {
    if (!e) return 'nothing';
    let s = e.tagName.toLowerCase();
    if (e.id) s += '#' + e.id;
    const cls = typeof e.className === 'string' ? e.className.trim().split(/\s+/).filter(Boolean).slice(0, 2) : [];
    if (cls.length) s += '.' + cls.join('.');
    const t = (e.innerText || e.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim();
    if (t) s += ' "' + (t.length > 40 ? t.slice(0, 40) + '…' : t) + '"';
    return s;
  };
  if (!el.isConnected) return { state: 'detached' };
  const target = el.nodeType === 1 ? el : el.parentElement;
  if (!target) return { state: 'hidden' };
  if (opts.scroll !== false) target.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const style = getComputedStyle(target);
  const rect = () => { const r = target.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const r1 = rect();
  if (r1[2] === 0 || r1[3] === 0 || style.visibility === 'hidden' || style.display === 'none') {
    return { state: 'hidden', tag: describe(target) };
  }
  if (opts.enabled) {
    const dis = target.closest('[aria-disabled="true"], button:disabled, input:disabled, select:disabled, textarea:disabled, fieldset:disabled') ||
      (('disabled' in target) && target.disabled);
    if (dis) return { state: 'disabled', tag: describe(target) };
  }
  // Two animation frames, or a timer when the page gets no frames (a
  // background tab), so the check never hangs.
  await new Promise((res) => { requestAnimationFrame(() => requestAnimationFrame(res)); setTimeout(res, 250); });
  const r2 = rect();
  if (r1.some((v, i) => Math.abs(v - r2[i]) > 0.5)) return { state: 'unstable' };
  const x = r2[0] + r2[2] / 2, y = r2[1] + r2[3] / 2;
  if (opts.hitTest) {
    let root = target.getRootNode();
    let hit = (root.elementFromPoint ? root : document).elementFromPoint(x, y);
    // Descend into open shadow roots at the point.
    while (hit && hit.shadowRoot && hit !== target) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    const inside = (h) => {
      for (let n = h; n; n = n.parentNode || n.host) { if (n === target) return true; }
      return false;
    };
    const label = target.labels && hit && Array.from(target.labels).some((l) => l === hit || l.contains(hit));
    if (!hit || (!inside(hit) && !label)) {
      return { state: 'covered', by: describe(hit), tag: describe(target) };
    }
  }
  return { state: 'ok', x, y, w: r2[2], h: r2[3], tag: describe(target) };
}
