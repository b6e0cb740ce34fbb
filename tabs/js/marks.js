// marks.js: draws the set-of-marks overlay for tab.screenshot({marks:
// true}), evaluated with Runtime.evaluate as `(SOURCE)(marks)`. marks is
// [{id, x, y, w, h}] in top-level viewport CSS pixels; each element gets an
// outlined box and its number at the top-left corner, in a container
// positioned in document coordinates (so full-page captures line up) that
// ignores the pointer. Removed by `document.getElementById('__tabpilot_marks').remove()`.
(marks) => {
  const old = document.getElementById('__tabpilot_marks');
  if (old) old.remove();
  const root = document.createElement('div');
  root.id = '__tabpilot_marks';
  root.setAttribute('aria-hidden', 'true');
  root.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none;';
  const colors = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#800000'];
  for (const m of marks) {
    const c = colors[m.id % colors.length];
    const box = document.createElement('div');
    box.style.cssText = `position:absolute;left:${m.x + scrollX}px;top:${m.y + scrollY}px;width:${m.w}px;height:${m.h}px;` +
      `outline:2px solid ${c};box-sizing:border-box;pointer-events:none;`;
    const label = document.createElement('div');
    label.textContent = String(m.id);
    label.style.cssText = `position:absolute;left:-2px;top:-2px;transform:translateY(-100%);background:${c};color:#fff;` +
      'font:bold 12px/14px monospace;padding:0 3px;border-radius:2px;pointer-events:none;white-space:nowrap;';
    if (m.y < 16) label.style.transform = 'none';
    box.appendChild(label);
    root.appendChild(box);
  }
  document.documentElement.appendChild(root);
  return marks.length;
}
