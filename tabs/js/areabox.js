// areabox.js: the box of an image map's <area> (which has no layout box
// of its own): its shape's bounds (rect, circle, poly, default) on the
// image that uses the map, within that image, as [x, y, width, height] in
// the image's viewport CSS pixels. The walker (observe.js) gives it to
// the area's element, and the actionability check (actionable.js) aims
// at it.
function areaBox(area, img) {
  const r = img.getBoundingClientRect();
  const c = (area.getAttribute('coords') || '').split(/[\s,]+/).map(Number).filter((v) => !isNaN(v));
  const sh = (area.getAttribute('shape') || 'rect').toLowerCase();
  let b = [0, 0, r.width, r.height];
  if (/^circ/.test(sh) && c.length >= 3) b = [c[0] - c[2], c[1] - c[2], 2 * c[2], 2 * c[2]];
  else if (/^poly/.test(sh) && c.length >= 6) {
    const xs = c.filter((_, i) => i % 2 === 0), ys = c.filter((_, i) => i % 2 === 1);
    b = [Math.min(...xs), Math.min(...ys), Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)];
  } else if (/^rect/.test(sh) && c.length >= 4) b = [c[0], c[1], c[2] - c[0], c[3] - c[1]];
  const x0 = Math.max(0, b[0]), y0 = Math.max(0, b[1]);
  return [r.left + x0, r.top + y0, Math.max(0, Math.min(r.width, b[0] + b[2]) - x0), Math.max(0, Math.min(r.height, b[1] + b[3]) - y0)];
}
