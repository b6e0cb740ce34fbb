// screen.js — screen size, window size and device pixel ratio. Runs in the page and iframes.
// Install sets the screen and the device pixel ratio with Emulation.setDeviceMetricsOverride, and the
// launch flags set the window size. This patch keeps the geometry a person's browser always has
// when a viewport emulation makes the page larger than the window or the screen:
// innerWidth <= outerWidth <= screen.availWidth <= screen.width, the same for heights,
// and colorDepth = pixelDepth = 24. In an iframe the screen is at least the configured one: the
// override reaches same-process frames, but Chromium takes it only on top-level targets, so an
// out-of-process iframe would show the window's own screen.
if (G.Screen && G.document) {
  const S = G.Screen.prototype;
  const ow = defProp.getOwn(G, 'outerWidth'), oh = defProp.getOwn(G, 'outerHeight');
  const iw = defProp.getOwn(G, 'innerWidth'), ih = defProp.getOwn(G, 'innerHeight');
  const sw = defProp.getOwn(S, 'width'), sh = defProp.getOwn(S, 'height');
  const inner = (d) => (d && d.get ? apply(d.get, G, []) : 0);
  const framed = G.top !== G;
  const fw = framed ? O.screenWidth || 0 : 0, fh = framed ? O.screenHeight || 0 : 0;
  const outerW = () => Math.max(inner(ow), inner(iw));
  // A window's outer height below its inner height is one not sized yet
  // (a tab read just as it opens): the launch flag's height, which it is
  // about to have, or the inner height and the browser's own bars.
  const below = (i) => Math.max(i + (O.chromeHeight || 0), O.windowHeight || 0);
  const outerH = () => { const o = inner(oh), i = inner(ih); return o >= i ? o : below(i); };
  hookGetter(G, 'outerWidth', (self, v) => Math.max(v, inner(iw)));
  hookGetter(G, 'outerHeight', (self, v) => (v >= inner(ih) ? v : below(inner(ih))));
  hookGetter(S, 'width', (self, v) => Math.max(v, fw, outerW()));
  hookGetter(S, 'height', (self, v) => Math.max(v, fh, outerH()));
  hookGetter(S, 'availWidth', (self, v) => Math.min(Math.max(v, fw, outerW()), Math.max(apply(sw.get, self, []), fw, outerW())));
  hookGetter(S, 'availHeight', (self, v) => Math.min(Math.max(v, fh, outerH()), Math.max(apply(sh.get, self, []), fh, outerH())));
  hookGetter(S, 'colorDepth', (self, v) => (v ? v : 24));
  hookGetter(S, 'pixelDepth', (self, v) => (v ? v : 24));
}
