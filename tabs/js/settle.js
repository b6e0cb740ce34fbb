// settle.js runs at the start of every top document, in the isolated world
// "tabpilot-settle" (Page.addScriptToEvaluateOnNewDocument with worldName),
// so the page sees neither it nor its binding. It reports, through the
// binding __tabpilotSettle (Runtime.addBinding, Runtime.bindingCalled),
// each batch of DOM mutations (payload "") from DOMContentLoaded until
// __MAX__ ms after load (again for __MAX__ ms after each click, key press
// or submit), and "frames" once the page has rendered two animation
// frames since load (after the work of the second). The "settled" wait uses them to tell a page still
// rendering.
(() => {
  if (window !== window.top) return;
  const report = globalThis.__tabpilotSettle;
  if (typeof report !== 'function') return;
  // The observer runs from DOMContentLoaded until __MAX__ ms after load,
  // and again after each click, key press or form submission (listeners
  // of this world, unseen by the page), when a single-page app may change
  // its route.
  let mo = null;
  let off = 0;
  const observe = () => {
    if (mo) return;
    mo = new MutationObserver(() => report(''));
    mo.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  };
  const arm = () => {
    if (document.readyState !== 'complete') return;
    observe();
    clearTimeout(off);
    off = setTimeout(() => { mo.disconnect(); mo = null; }, __MAX__);
  };
  addEventListener('DOMContentLoaded', observe, {once: true});
  addEventListener('load', () => {
    arm();
    // The first frame after load runs what load's listeners queued for
    // it, the second what that frame queued; the report is a task after
    // the second, so the mutations of both frames come before it.
    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => report('frames'), 0)));
  }, {once: true});
  for (const type of ['click', 'keydown', 'submit']) addEventListener(type, arm, true);
})();
