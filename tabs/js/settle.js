// settle.js runs at the start of every top document, in the isolated world
// "tabpilot-settle" (Page.addScriptToEvaluateOnNewDocument with worldName),
// so the page sees neither it nor its binding. From the load event on, and
// for at most __MAX__ ms (again after each click, key press or submit), it
// reports each batch of DOM mutations through
// the binding __tabpilotSettle (Runtime.addBinding, Runtime.bindingCalled),
// which the "settled" wait uses to tell a page still rendering.
(() => {
  if (window !== window.top) return;
  const report = globalThis.__tabpilotSettle;
  if (typeof report !== 'function') return;
  // The observer runs for __MAX__ ms after load, and again after each
  // click, key press or form submission (listeners of this world, unseen
  // by the page), when a single-page app may change its route.
  let mo = null;
  let off = 0;
  const arm = () => {
    if (document.readyState !== 'complete') return;
    if (!mo) {
      mo = new MutationObserver(() => report(''));
      mo.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
    }
    clearTimeout(off);
    off = setTimeout(() => { mo.disconnect(); mo = null; }, __MAX__);
  };
  addEventListener('load', arm, {once: true});
  for (const type of ['click', 'keydown', 'submit']) addEventListener(type, arm, true);
})();
