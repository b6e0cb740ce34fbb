// settle.js runs at the start of every top document, in the isolated world
// "tabpilot-settle" (Page.addScriptToEvaluateOnNewDocument with worldName),
// so the page sees neither it nor its binding. It reports, through the
// binding __tabpilotSettle (Runtime.addBinding, Runtime.bindingCalled):
//   - "N", the N-th batch of DOM mutations, from DOMContentLoaded until
//     __MAX__ ms after load (again for __MAX__ ms after each click, key
//     press or submit);
//   - "quiet N" once __QUIET__ ms of the page's own time passed after
//     batch N (0: after DOMContentLoaded) with no other batch, timed by a
//     timer of the page's event loop that fired on time, and the renderer
//     then went idle (an idle callback ran). A timer that fired late
//     means the renderer did not run meanwhile, and timers of the page
//     due before it may not have run yet either: the quiet is counted
//     again. So a renderer starved by a loaded machine, or a report
//     delayed on its way, never reads as a quiet page; nor does a main
//     thread kept busy in short slices (a scheduler yielding through
//     MessageChannel tasks, say), which leaves no idle time, or in slices
//     chained through short timers, which sets many;
//   - "frames" once the page has rendered two animation frames since load
//     (after the work of the second);
//   - "static" at load, when the document runs no script of its own: no
//     script element, no handler attribute of an event that fires without
//     a person (onload, onerror, onfocus, onmouseover, onanimationend…:
//     the handlers of clicks, keys and input run only on an action, and
//     the wait after an action is another), no frame, object or embed, no
//     meta refresh, in the document or its open shadow roots. No code of
//     its own runs in such a document after load. Not seen: a script that
//     removed itself before load (watching every parsed node for one cost
//     a large page 10 to 25% of its load time) and one in a closed
//     declarative shadow root.
//   - "untimed", from the first idle callback after the first animation
//     frame after load, when the page has never set a timer, asked for an
//     animation frame or an idle callback (Chromium numbers each of the
//     three in one sequence per document for all its worlds: an id taken
//     here, less the ones this world took, counts the page's), has no
//     frame, object or embed, no CSS or Web animation runs and no SVG
//     animation element (SMIL) is in the document or its open shadow
//     roots, no view transition is active, and the page is not
//     cross-origin isolated (Atomics.waitAsync's timeout):
//     nothing of the page's is scheduled. Not counted: work handed to
//     other threads (a decode, a digest, a worker, a service worker's
//     install, IndexedDB, a BroadcastChannel), scheduler.postTask and
//     AbortSignal.timeout delays, an animation of no element in the
//     document, a popup's timers.
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
  // This world's own timers, animation frames and idle callbacks, taken
  // through these three, are counted for "untimed".
  const own = {t: 0, r: 0, i: 0};
  const timer = (f, ms) => { own.t++; return setTimeout(f, ms); };
  const frame = (f) => { own.r++; return requestAnimationFrame(f); };
  const idle = (f) => { own.i++; return requestIdleCallback(f); };
  let mo = null;
  let off = 0;
  let batch = 0;
  let quietTimer = 0;
  // pageTimers is how many timers the page has set so far: Chromium
  // numbers timers in one sequence per document for all its worlds, and
  // own.t counts this world's.
  const pageTimers = () => {
    const id = timer(noop, 0);
    clearTimeout(id);
    return id - own.t;
  };
  // A page that set more than chainMax timers within the window works in
  // slices chained through short timers (setTimeout(0), which Chromium
  // clamps to 4 ms once nested, leaving idle time between the slices):
  // the window starts again.
  const chainMax = 2;
  // idleSoon runs f in the renderer's next idle period. A renderer that
  // expects a frame (after a key press into a field, say) starts no idle
  // period until a frame comes, which on a page that renders nothing can
  // be hundreds of ms: when f has not run within a frame's time, this
  // asks for a frame, after which an idle period starts, if the main
  // thread has nothing else to run.
  const idleSoon = (f) => {
    let ran = false;
    idle(() => { ran = true; f(); });
    timer(() => { if (!ran) frame(noop); }, 20);
  };
  const awaitQuiet = () => {
    clearTimeout(quietTimer);
    const n = batch;
    const wait = () => {
      const due = performance.now() + __QUIET__;
      const set = pageTimers();
      quietTimer = timer(() => {
        if (performance.now() - due > __QUIET__ / 2) wait();
        else {
          idleSoon(() => {
            if (n !== batch) return;
            if (pageTimers() - set > chainMax) wait();
            else report('quiet ' + n);
          });
        }
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
    off = timer(() => { mo.disconnect(); mo = null; }, __MAX__);
  };
  // The handler attributes that run only on an action of a person (or of
  // tabpilot's, which waits for what follows an action on its own). Those
  // of hover and scroll are not among them: Chromium fires them on a page
  // under a pointer that stays where the last page left it, or as it
  // restores a scroll position.
  const onAction = ' onclick ondblclick onauxclick oncontextmenu onmousedown onmouseup onpointerdown onpointerup ' +
    'onpointercancel ongotpointercapture onlostpointercapture ontouchstart ontouchend ontouchmove ontouchcancel ' +
    'onkeydown onkeyup onkeypress oninput onbeforeinput onchange onsubmit onreset onselect onwheel ondrag ' +
    'ondragstart ondragend ondragenter ondragleave ondragover ondrop oncopy oncut onpaste ';
  // A script element in any namespace (an SVG one too), a frame, a plugin,
  // a meta refresh, or a handler attribute of an event that fires on its
  // own (XPath counts them in one native pass, 2 to 4 ms on 11,000
  // elements): the document, or one of its open shadow roots (declarative
  // ones: a page without scripts has no other), has something of its own
  // to run. Looking for the shadow roots costs 2 to 6 ms more on 11,000
  // elements; it is done only when the rest found nothing.
  const ownCode = 'script, iframe, frame, object, embed, meta[http-equiv="refresh" i]';
  const automatic = (name) => name.startsWith('on') && !onAction.includes(' ' + name + ' ');
  const runsCode = (root) => {
    if (root.querySelector(ownCode)) return true;
    if (root === document) {
      return document.evaluate('count(//@*[starts-with(name(), "on") and not(contains("' + onAction + '", concat(" ", name(), " ")))])',
        document, null, XPathResult.NUMBER_TYPE, null).numberValue > 0;
    }
    // XPath takes no shadow root as its context node.
    for (const el of root.querySelectorAll('*')) {
      for (const a of el.attributes) if (automatic(a.name)) return true;
    }
    return false;
  };
  const scriptless = () => {
    try {
      if (runsCode(document)) return false;
      const roots = [document];
      while (roots.length) {
        for (const el of roots.pop().querySelectorAll('*')) {
          const sr = el.shadowRoot;
          if (!sr) continue;
          if (runsCode(sr)) return false;
          roots.push(sr);
        }
      }
      return true;
    } catch (_) {
      return false; // whatever went wrong, the usual settle
    }
  };
  const noop = () => {};
  // SVG animation elements (SMIL): they change what shows on their own,
  // and their begin, end and repeat events run the page's code, with no
  // timer and no entry in getAnimations().
  const smil = 'animate, set, animateMotion, animateTransform';
  const viewTransition = () => {
    try {
      return document.documentElement.matches(':active-view-transition');
    } catch (_) {
      return false; // a Chromium without the pseudo-class (before 125)
    }
  };
  const untimed = () => {
    try {
      const t = timer(noop, 0);
      clearTimeout(t);
      const r = frame(noop);
      cancelAnimationFrame(r);
      const i = idle(noop);
      cancelIdleCallback(i);
      if (t !== own.t || r !== own.r || i !== own.i || document.querySelector('iframe, frame, object, embed')) return false;
      // Atomics.waitAsync takes a timeout, a timer no count sees; only a
      // cross-origin isolated page has the SharedArrayBuffer it needs.
      // A view transition ends by running the page's code (its finished
      // promise), and while its update waits (on a read from IndexedDB,
      // say), none of its animations runs yet.
      if (globalThis.crossOriginIsolated || viewTransition()) return false;
      // No running animation and no SMIL element, in the document or its
      // open shadow roots.
      const roots = [document];
      while (roots.length) {
        const root = roots.pop();
        if (root.getAnimations().length || root.querySelector(smil)) return false;
        for (const el of root.querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot);
      }
      return true;
    } catch (_) {
      return false;
    }
  };
  const visibility = () => report(document.visibilityState === 'hidden' ? 'hidden' : 'visible');
  addEventListener('DOMContentLoaded', () => {
    visibility();
    addEventListener('visibilitychange', visibility, true);
    observe();
    awaitQuiet();
  }, {once: true});
  addEventListener('load', () => {
    // This listener was added before any of the page's: it runs first.
    if (scriptless()) report('static');
    arm();
    // The first frame after load runs what load's listeners queued for
    // it, the second what that frame queued; the report is a task after
    // the second, so the mutations of both frames come before it.
    // After the first, once the renderer is idle (the tasks that frame
    // queued, such as intersection observers' callbacks, have run): has
    // the page anything scheduled?
    frame(() => {
      idle(() => { if (untimed()) report('untimed'); });
      frame(() => timer(() => report('frames'), 0));
    });
  }, {once: true});
  // An action's, and a history entry's the page renders on its own (a
  // route on popstate or hashchange, a page the back/forward cache
  // restored, on pageshow).
  for (const type of ['click', 'keydown', 'submit', 'popstate', 'hashchange', 'pageshow']) addEventListener(type, arm, true);
})();
