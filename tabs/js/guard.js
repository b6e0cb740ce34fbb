// guard.js runs at the start of every document of the page's renderer
// (the top document and its same-process iframes), in the isolated world
// "tabpilot-settle" (Page.addScriptToEvaluateOnNewDocument with
// worldName), so the page sees neither it nor what it defines. It puts
// the click guard's listeners on the window, in the capture phase, before
// any script of the page can put one there: for the trusted press and
// release of a click, they are the first to run. Each hands the event to
// __tabpilotGuard.active, the guard of the click armed now (actionable.js,
// called in this world), when there is one. Listeners that are there from
// the start also leave the document's event handler classes alone when a
// click is armed (a change would make the click's mouse move wait for the
// next vsync).
(() => {
  const hub = { active: null };
  const on = (e) => {
    const g = hub.active;
    if (g) g(e);
  };
  for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']) addEventListener(type, on, true);
  Object.defineProperty(globalThis, '__tabpilotGuard', { value: hub });
})();
