// settle.js runs at the start of every top document, in the isolated world
// "tabpilot-settle" (Page.addScriptToEvaluateOnNewDocument with worldName),
// so the page sees neither it nor its binding. It reports, through the
// binding __tabpilotSettle (Runtime.addBinding, Runtime.bindingCalled):
//   - "N", the N-th batch of DOM mutations, from DOMContentLoaded until
//     __MAX__ ms after load (again for __MAX__ ms after each click, key
//     press or submit);
//   - "quiet N" once __QUIET__ ms of the page's own time passed after
//     batch N (0: after DOMContentLoaded) with no other batch, timed by a
//     timer of the page's event loop that fired on time. A timer that
//     fired late means the renderer did not run meanwhile, and timers of
//     the page due before it may not have run yet either: the quiet is
//     counted again. So a renderer starved by a loaded machine, or a
//     report delayed on its way, never reads as a quiet page;
//   - "frames" once the page has rendered two animation frames since load
//     (after the work of the second);
//   - "visible" or "hidden" (document.visibilityState) at DOMContentLoaded
//     and at each change: a hidden page (a background tab) renders no
//     frames, and its timers are throttled. Reported at DOMContentLoaded,
//     it comes before the load event's Page.lifecycleEvent, and tells the
//     wait that this script runs in the document.
// The "settled" wait uses them to tell a page still rendering.
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
  let batch = 0;
  let quietTimer = 0;
  const awaitQuiet = () => {
    clearTimeout(quietTimer);
    const n = batch;
    const wait = () => {
      const due = performance.now() + __QUIET__;
      quietTimer = setTimeout(() => {
        if (performance.now() - due > __QUIET__ / 2) wait();
        else report('quiet ' + n);
      }, __QUIET__);
    };
    wait();
  };
  const observe = () => {
    if (mo) return;
    mo = new MutationObserver(() => { report(String(++batch)); awaitQuiet(); });
    mo.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  };
  const arm = () => {
    if (document.readyState !== 'complete') return;
    observe();
    clearTimeout(off);
    off = setTimeout(() => { mo.disconnect(); mo = null; }, __MAX__);
  };
  const visibility = () => report(document.visibilityState === 'hidden' ? 'hidden' : 'visible');
  addEventListener('DOMContentLoaded', () => {
    visibility();
    addEventListener('visibilitychange', visibility, true);
    observe();
    awaitQuiet();
  }, {once: true});
  addEventListener('load', () => {
    arm();
    // The first frame after load runs what load's listeners queued for
    // it, the second what that frame queued; the report is a task after
    // the second, so the mutations of both frames come before it.
    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => report('frames'), 0)));
  }, {once: true});
  for (const type of ['click', 'keydown', 'submit']) addEventListener(type, arm, true);
})();
