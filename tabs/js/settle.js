// settle.js runs at the start of every top document, in the isolated world
// "tabpilot-settle" (Page.addScriptToEvaluateOnNewDocument with worldName),
// so the page sees neither it nor its binding. From the load event on, and
// for at most __MAX__ ms, it reports each batch of DOM mutations through
// the binding __tabpilotSettle (Runtime.addBinding, Runtime.bindingCalled),
// which the "settled" wait uses to tell a page still rendering.
(() => {
  if (window !== window.top) return;
  const report = globalThis.__tabpilotSettle;
  if (typeof report !== 'function') return;
  addEventListener('load', () => {
    const mo = new MutationObserver(() => report(''));
    mo.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
    setTimeout(() => mo.disconnect(), __MAX__);
  }, {once: true});
})();
