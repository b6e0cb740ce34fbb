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
//
// The hub also notes, for the click armed now, the animation frame id
// Chromium gave at the first trusted event of its mouse move (hub.base),
// and whether a frame ran after it (hub.framed): Chromium numbers a
// document's animation frames in one sequence for all its worlds, so the
// press can tell whether the page's handlers of the move asked for a
// frame that has not run yet (a hover effect the page makes in its next
// frame), and let that frame pass first (actionable.js, pressCheck).
(() => {
  const hub = { active: null, base: 0, framed: false };
  const on = (e) => {
    const g = hub.active;
    if (g) g(e);
  };
  const moved = (e) => {
    if (!hub.active || hub.base || !e.isTrusted) return;
    hub.base = requestAnimationFrame(() => { hub.framed = true; });
  };
  for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']) addEventListener(type, on, true);
  for (const type of ['pointerout', 'pointerover', 'pointermove', 'mouseout', 'mouseover', 'mousemove']) addEventListener(type, moved, true);
  Object.defineProperty(globalThis, '__tabpilotGuard', { value: hub });
})();
