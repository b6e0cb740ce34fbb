// visibility.js — page visibility and focus. Runs in the page and iframes.
// A headless tab that is not in front, or whose window has no focus, reads as hidden and unfocused,
// which a person's active tab never does. document.hidden reads false, document.visibilityState
// "visible" (and their webkit- aliases), and document.hasFocus() true in the top document. Install
// also turns on Emulation.setFocusEmulationEnabled, so focus and blur events behave as focused.
if (G.Document) {
  const D = G.Document.prototype;
  hookGetter(D, 'hidden', () => false);
  hookGetter(D, 'webkitHidden', () => false);
  hookGetter(D, 'visibilityState', () => 'visible');
  hookGetter(D, 'webkitVisibilityState', () => 'visible');
  hookMethod(D, 'hasFocus', (t, self, args) => apply(t, self, args) || (self === G.document && G.top === G));
}
