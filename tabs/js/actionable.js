// actionable.js: the actionability check of DESIGN.md section 3, called on
// an element with Runtime.callFunctionOn (this = the element). It scrolls
// the element into view (nested scroll containers included), then reports
// one state: "detached", "hidden", "disabled",
// "unstable", "vanished" (the verify after the mouse move found it hidden:
// the move hid it), "flicker" (the guard found the press going elsewhere
// while the element is back under the pointer: the move hid it or moved
// it away for a moment, as a :hover style does), "covered" (with a description of the element that receives
// the pointer at the centre, or of what makes the target inert: why is
// "modal" for an open modal dialog it is outside of, "inert" for an inert
// ancestor, "nopointer" when it has pointer-events: none; same when the
// last check saw the same cover over the same box, busy while the
// document loads or animates), or "ok" with the
// centre point in the frame's viewport coordinates (of the element's first
// box, as DOM.getContentQuads gives it) and top=true when that frame is the
// top-level one at scale 1, so the point needs no mapping, and bg=true when
// the page is hidden (document.visibilityState). With opts.arm
// it also arms the click (see arm below), so the caller can tell whether
// the click that follows reached the element. With opts.quick too, the
// guard checks the element again at the press, and the result says
// press=true; when it cannot (a closure sent as source, a background
// page), the result says press=false and the caller's verify call arms
// it. opts.done ends the element's armed click and returns what its
// guard saw ({got, by, touched, pressed, moved, reached, verdict}, null
// when none is armed). With opts.row and opts.key (an element by number)
// it first compares what the node shows (js/rowkey.js): when the node no longer
// shows the list item or row it was numbered in, or its old label is now
// on another node, it returns {state: "shown"} before touching anything;
// every other result then carries what the node shows as shown.
//
// The source is an expression: it evaluates to the check, a
// function(opts, self) whose state between calls (the armed click, the
// watch for the mouse move, the last cover and disabled state seen) is in
// this closure, not on the element or the window, where page scripts
// would see it. The page core compiles it once per execution context
// (pagecore.Page.Held) and calls it with the element as self; the state
// lives as long as that compiled function.
(() => {
/*SHOWN*/
// clicks: element → its armed click ({st, done}); covers: target → the
// last cover seen ({cover, box}); disabled: the targets the last check
// saw disabled; watches: target → the watch for the click's mouse move.
const clicks = new WeakMap();
const covers = new WeakMap();
const disabled = new WeakSet();
const watches = new WeakMap();
// disarm ends the click armed last in this world (a new arm ends it).
let disarm = null;
// guardTypes are the events of a press and release the guard watches.
const guardTypes = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click'];
// relabeled: a text/ selector's element (text, the selector's string)
// no longer shows it while another element of its kind does (a list
// that re-labelled its items in place): the selector names that one now.
// One whose own label changed (Following, then Unfollow on hover) with
// the text nowhere else is still the element the caller named.
const relabeled = (target, text) => {
  const norm = (t) => t.replace(/\s+/g, ' ').trim().toLowerCase();
  const want = norm(text);
  const has = (n) => norm(n.innerText || n.textContent || '').includes(want);
  if (has(target)) return false;
  for (const n of target.getRootNode().querySelectorAll(target.localName)) {
    if (n !== target && has(n)) return true;
  }
  return false;
};
return async function (opts, self) {
  // A held closure (self given: pagecore.HeldCall) keeps its state
  // between calls; one sent as source each time (this: the element)
  // does not.
  const held = self !== undefined;
  const el = self || this;
  if (opts.done) {
    const c = clicks.get(el);
    return c ? c.done() : null;
  }
  let shown;
  if ('row' in opts) {
    shown = shownNow(el, opts.key);
    if (!shown || shown.row !== opts.row || shown.elsewhere) return { state: 'shown', shown };
  }
  const r = await check(opts, el, held);
  if (r && opts.text && r.state === 'ok' && relabeled(el, opts.text)) {
    if (disarm) disarm();
    return { state: 'relabeled' };
  }
  if (r && shown && r.state === 'ok') {
    // Again after the check's frames: a list may have re-rendered its
    // rows in place meanwhile (a hover effect in an animation frame).
    shown = shownNow(el, opts.key);
    if (!shown || shown.row !== opts.row || shown.elsewhere) {
      if (disarm) disarm();
      return { state: 'shown', shown };
    }
  }
  if (r && shown) r.shown = shown;
  return r;
};

// check is the actionability check proper, of el; held: its closure is
// held (pagecore.HeldCall), and keeps the armed click between calls.
async function check(opts, el, held) {
  // labelOf: what an element shows, its text, else its aria-label.
  const labelOf = (e) => (e.innerText || e.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim();
  const describe = (e) => {
    if (!e) return 'nothing';
    let s = e.tagName.toLowerCase();
    if (e.id) s += '#' + e.id;
    const cls = typeof e.className === 'string' ? e.className.trim().split(/\s+/).filter(Boolean).slice(0, 2) : [];
    if (cls.length) s += '.' + cls.join('.');
    // The root and the body are named without their text, which is the
    // whole page's.
    const whole = e.tagName === 'HTML' || e.tagName === 'BODY';
    const t = whole ? '' : labelOf(e);
    if (t) s += ' "' + (t.length > 40 ? t.slice(0, 40) + '…' : t) + '"';
    return s;
  };
  // arm prepares the click: a listener on the element records that the
  // click reached it, and a guard on the window (and the top window, when
  // it is reachable) stops the trusted pointer and mouse events of the
  // click that would go to another element (something that covered it in
  // the meantime): the page never sees them, and the guard says who would
  // have got them. Clicking a label of the element is going to it. The
  // guard lets everything through once the click event has passed (a
  // dialog its handler opens leaves the caller no chance to end it), and a
  // new arm in this world ends the last one. The caller's check
  // (opts.done) ends it and reads what it saw; else it ends by
  // itself after 3 s.
  // With press (a quick check's {box, x, y}), the guard also checks, at
  // the press's first event, what a verify call would have checked
  // between the mouse move and the press: the element is still attached,
  // shown, enabled and where the check saw it, and the press is not going
  // elsewhere because the move hid it for a moment (a :hover style that
  // hides it: the press's hit test saw it hidden, and as the pointer left
  // it, it showed again). When it is not, the guard stops every event of
  // the press and release, and says why (verdict: the state a check
  // gives).
  const arm = (target, press) => {
    if (disarm) disarm();
    // moved: the target's box was not the armed one when the guard
    // stopped an event (a mouseover handler moved it off the pointer).
    // reached: the trusted click event, on its way to the element (its
    // path holds it), passed the window's capture phase: a page listener
    // that then stopped it short of the element (event delegation on the
    // document, say) had it.
    // pressed: the press (pointerdown, mousedown) reached the target,
    // whatever came of the release.
    // label: what the target showed at the press (labelOf).
    const st = { got: false, by: '', over: false, touched: false, pressed: false, moved: false, reached: false, verdict: null, label: '' };
    const box0 = rect();
    // The content slotted into the target is the target too; so is the
    // element of a text node the caller named.
    const ok = [el, target, ...(target.labels ? Array.from(target.labels) : []), ...slotted()];
    // Inside a closed shadow root, a window listener sees the host.
    for (let r = el.getRootNode(); r instanceof ShadowRoot; r = r.host.getRootNode()) {
      if (r.mode === 'closed') ok.push(r.host);
    }
    const mine = (e) => { const p = e.composedPath(); return ok.some((n) => p.includes(n)); };
    // pressCheck: what is wrong with the target at the press, null when
    // nothing is (see press). Without press (the caller waited for each
    // answer), only whether the check would find the target disabled
    // now (when it asked, opts.enabled, or a verify call): a handler of
    // the mouse move, or a frame after it, disabled it, and Chromium
    // gives a disabled control the pointer events of a press and none of
    // its mouse events or click.
    let checked = false;
    const pressCheck = (e) => {
      if (!press) return opts.enabled || opts.verify ? disabledNow() : null;
      if (!target.isConnected) return { state: 'detached' };
      const now = rect();
      const vs = getComputedStyle(mapImg || target);
      if (now[2] === 0 || now[3] === 0 || vs.visibility === 'hidden' || vs.display === 'none') return { state: 'vanished', tag: describe(target) };
      const dis = disabledNow();
      if (dis) return dis;
      // An element by number (opts.row) whose node shows another list
      // item or row now, or whose label went to another node (a list
      // that re-rendered its items in place as the pointer arrived).
      if ('row' in opts) {
        const s = shownNow(el, opts.key);
        if (!s || s.row !== opts.row || s.elsewhere) return { state: 'shown', shown: s };
      }
      if (opts.text && relabeled(target, opts.text)) return { state: 'relabeled', tag: describe(target) };
      // Moved since the check, and the press does not land on it (a
      // mouseover handler moved it off the pointer). One that moved and
      // is still under the pointer (a hover style that nudges it, script
      // that moves it a pixel a frame) gets the press, as a person's.
      if (moved(now, press.box) && !mine(e)) return { state: 'unstable', tag: describe(target) };
      // The page's handlers of the mouse move asked for an animation
      // frame that has not run (the press came with the move, in one go):
      // a hover effect the page makes there (a button rendered again, or
      // moved away) would come between the press and the release. The
      // press waits for that frame: the click starts over with the
      // waiting check.
      if (hub && hub.base && !hub.framed) {
        const id = requestAnimationFrame(() => {});
        cancelAnimationFrame(id);
        if (id - hub.base > 1) return { state: 'hover', tag: describe(target) };
      }
      // (Only for a press in the element's own document: one that went
      // to the parent page, over an iframe's element, is a cover there.)
      if (!mine(e) && e.target && e.target.ownerDocument === target.ownerDocument && hitAt(press.x, press.y).ok) return { state: 'flicker', tag: describe(target) };
      return null;
    };
    let unhook = null;
    const stop = (e) => {
      e.stopImmediatePropagation();
      e.preventDefault();
    };
    const guard = (e) => {
      if (st.over) return;
      if (e.type === 'click') {
        st.over = true;
        setTimeout(unhook, 0);
      }
      if (!e.isTrusted) return;
      if (!checked && (e.type === 'pointerdown' || e.type === 'mousedown')) {
        checked = true;
        st.verdict = pressCheck(e);
        st.label = labelOf(target);
      }
      if (st.verdict) return stop(e);
      if (mine(e)) {
        st.touched = true;
        if (e.type === 'pointerdown' || e.type === 'mousedown') st.pressed = true;
        if (e.type === 'click') st.reached = true;
        return;
      }
      stop(e);
      if (!st.by) {
        st.by = describe(e.target && e.target.nodeType === 1 ? e.target : null);
        st.moved = moved(rect(), box0);
      }
    };
    const onClick = () => { st.got = true; };
    // In guard.js's world (opts.iso), the guard rides on the listeners
    // guard.js put on this window at the start of the document, before
    // any of the page's (hub.active); otherwise, and on the top window,
    // it adds its own for this click.
    const hub = opts.iso && held ? globalThis.__tabpilotGuard : null;
    const wins = hub ? [] : [window];
    if (hub) {
      hub.active = guard;
      hub.base = 0;
      hub.framed = false;
    }
    try {
      if (window.top !== window && window.top.document) wins.push(window.top);
    } catch (e) { /* cross-origin */ }
    for (const w of wins) for (const t of guardTypes) w.addEventListener(t, guard, true);
    el.addEventListener('click', onClick, true);
    let timer = 0;
    unhook = () => {
      clearTimeout(timer);
      st.over = true;
      if (hub && hub.active === guard) hub.active = null;
      for (const w of wins) for (const t of guardTypes) w.removeEventListener(t, guard, true);
      el.removeEventListener('click', onClick, true);
      if (disarm === unhook) disarm = null;
    };
    timer = setTimeout(unhook, 3000);
    disarm = unhook;
    // done ends the guard and gives what it saw, once.
    const done = () => {
      unhook();
      if (clicks.get(el) === click) clicks.delete(el);
      return st;
    };
    const click = { st, done };
    clicks.set(el, click);
  };
  if (!el.isConnected) return { state: 'detached' };
  const target = el.nodeType === 1 ? el : el.parentElement;
  if (!target) return { state: 'hidden' };
  // An image map's area has no box of its own: its box is its shape's
  // bounds on the image that uses the map.
  let mapImg = null;
  if (target.localName === 'area') {
    const m = target.closest('map');
    const name = m && m.getAttribute('name');
    if (name) mapImg = target.getRootNode().querySelector('img[usemap="#' + CSS.escape(name) + '"]');
  }
  /*AREABOX*/
  // An element with display: contents has no box of its own: its boxes
  // are its contents' (a wrapper whose click handler gets the clicks on
  // its text), or, of a shadow host, its shadow tree's.
  const contents = getComputedStyle(target).display === 'contents';
  const contentsRoot = target.shadowRoot || target;
  const contentsRange = () => {
    const r = document.createRange();
    r.selectNodeContents(contentsRoot);
    return r;
  };
  const rect = () => {
    if (mapImg) return areaBox(target, mapImg);
    const r = contents ? contentsRange().getBoundingClientRect() : target.getBoundingClientRect();
    return [r.left, r.top, r.width, r.height];
  };
  const moved = (a, b) => a.some((v, i) => Math.abs(v - b[i]) > 0.5);
  // contains: whether n is in a's subtree in the composed tree (through
  // slots and shadow hosts).
  const contains = (a, n) => {
    for (; n; n = n.assignedSlot || n.parentNode || n.host) { if (n === a) return true; }
    return false;
  };
  // The nodes assigned to the target's slots (a shadow-DOM button whose
  // label is a <slot>): a hit on them is a hit on the target. A closed
  // root hides assignedSlot from them, so they are asked from this side.
  const slotted = () => {
    const slots = target.tagName === 'SLOT' ? [target] : [];
    if (target.querySelectorAll) slots.push(...target.querySelectorAll('slot'));
    return slots.flatMap((s) => s.assignedNodes({ flatten: true }));
  };
  // inside: the hit at (x, y) is the target: in its composed subtree,
  // slotted into it, or the element whose slotted text it is
  // (elementFromPoint gives a text node's parent, here the host).
  const inside = (h, x, y) => {
    if (contains(target, h) || (mapImg && h === mapImg)) return true;
    for (const a of slotted()) {
      if (a === h || a.contains(h)) return true;
      if (a.nodeType === 3 && a.parentNode === h) {
        const r = document.createRange();
        r.selectNodeContents(a);
        for (const b of r.getClientRects()) {
          if (x >= b.left && x <= b.right && y >= b.top && y <= b.bottom) return true;
        }
      }
    }
    return false;
  };
  // inert: what makes the target inert, so it gets no pointer events: an
  // open modal dialog (showModal) it is not in, or an inert ancestor.
  const inert = () => {
    for (const m of document.querySelectorAll(':modal')) {
      if (!contains(m, target)) return { el: m, why: 'modal' };
    }
    for (let n = target; n; n = n.assignedSlot || n.parentNode || n.host) {
      if (n.nodeType === 1 && n.inert) return { el: n, why: 'inert' };
    }
    return null;
  };
  // covered reports the element in the way, and whether it is the one the
  // last check saw with the target's box unchanged (same: the cover
  // stays; the caller fails fast on a cover that stays). A cover the page
  // put back, another node described alike with the same box (one it
  // puts up whenever the pointer comes over the element, and takes down
  // after a while), stays too.
  const covered = (cover, why) => {
    const prev = covers.get(target);
    const box = rect();
    const by = describe(cover);
    const cr = cover && cover.getBoundingClientRect();
    const cbox = cr ? [cr.left, cr.top, cr.width, cr.height] : null;
    const same = !!prev && !moved(prev.box, box) && (prev.cover === cover || (!!cbox && !!prev.cbox && prev.by === by && !moved(prev.cbox, cbox)));
    covers.set(target, { cover, box, by, cbox });
    const busy = document.readyState !== 'complete' || !document.getAnimations || document.getAnimations().length > 0;
    return { state: 'covered', by, why, same, busy, tag: describe(target) };
  };
  // hitAt returns what the pointer at (x, y) would hit, descending into
  // open shadow roots, and whether that is the target (or its label).
  const hitAt = (x, y) => {
    let root = target.getRootNode();
    let hit = (root.elementFromPoint ? root : document).elementFromPoint(x, y);
    while (hit && hit.shadowRoot && hit !== target) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    const label = target.labels && hit && Array.from(target.labels).some((l) => l === hit || l.contains(hit));
    return { hit, ok: !!hit && (inside(hit, x, y) || label) };
  };
  const hitTest = (x, y) => {
    const ine = inert();
    if (ine) return covered(ine.el, ine.why);
    const { hit, ok } = hitAt(x, y);
    if (!ok) {
      // pointer-events: none (its own, or inherited) lets the pointer
      // through to what is behind it: that is no cover to wait for.
      return covered(hit, getComputedStyle(target).pointerEvents === 'none' ? 'nopointer' : '');
    }
    covers.delete(target);
    return null;
  };
  // disabledNow returns the disabled state of the target (disabled, or
  // aria-disabled, itself or by an ancestor fieldset), null when enabled.
  // same: the last check saw it disabled too (the caller fails fast on a
  // control that stays disabled on a page at rest).
  const disabledNow = () => {
    const dis = target.closest('[aria-disabled="true"], button:disabled, input:disabled, select:disabled, textarea:disabled, fieldset:disabled') ||
      (('disabled' in target) && target.disabled);
    if (!dis) return null;
    const same = disabled.has(target);
    disabled.add(target);
    const busy = document.readyState !== 'complete' || !document.getAnimations || document.getAnimations().length > 0;
    return { state: 'disabled', same, busy, tag: describe(target) };
  };
  // nextFrame resolves after the page's next animation frame (its
  // requestAnimationFrame callbacks, the page's own first), or after
  // 250 ms when the page renders none (a background tab).
  const nextFrame = () => new Promise((res) => {
    requestAnimationFrame(() => res());
    setTimeout(res, 250);
  });
  // opts.verify: the box an earlier call returned, checked again just
  // before the mouse goes down (the element still there, and still the
  // one receiving the pointer at opts.x, opts.y), after the animation
  // frame that followed the quick check: that frame's callbacks have
  // moved anything the page moves by script, and its mouse move has run
  // the page's mouseover and mousemove handlers. A quick check left a
  // watch for the click's mouse move (see below); without a move seen, or
  // in a background page, the check waits for a frame of its own.
  if (opts.verify) {
    const w = watches.get(target);
    watches.delete(target);
    if (w) {
      w.end();
      if (!w.moved) await nextFrame();
    }
    // Hidden now, after the check saw it shown: the mouse move hid it (a
    // :hover style, a mouseenter handler that swaps it for another
    // element). A person could not click it either.
    const now = rect();
    const vs = getComputedStyle(mapImg || target);
    if (now[2] === 0 || now[3] === 0 || vs.visibility === 'hidden' || vs.display === 'none') return { state: 'vanished', tag: describe(target) };
    // Disabled since the check (a mouseenter handler that disables it):
    // the press would reach no click handler.
    const dis = disabledNow();
    if (dis) return dis;
    if (opts.verify.length === 4 && moved(now, opts.verify)) return { state: 'unstable', tag: describe(target) };
    const cover = hitTest(opts.x, opts.y);
    if (cover) return cover;
    if (opts.arm) arm(target);
    return { state: 'ok', x: opts.x, y: opts.y, bg: document.visibilityState === 'hidden' };
  }
  // inView: the element needs no scrolling for a person to click it: in
  // the top frame, its box is wholly inside the viewport and the pointer
  // at the centre of its first box reaches it (nothing clipped it away in
  // a scrolled container, no sticky header sits on it). Scrolling such
  // an element to the centre would fire the page's scroll handlers (a
  // header that hides on scroll, a list that loads more) for nothing, as
  // Playwright's scroll-if-needed does not. Elsewhere (an iframe, whose
  // place in the top viewport it cannot see) it is scrolled as before.
  const inView = (e) => {
    if (window !== window.top || (window.visualViewport && window.visualViewport.scale !== 1)) return false;
    const r = e.getBoundingClientRect();
    const vw = document.documentElement.clientWidth || innerWidth;
    const vh = document.documentElement.clientHeight || innerHeight;
    if (document.compatMode !== 'CSS1Compat' || r.width === 0 || r.height === 0 || r.left < 0 || r.top < 0 || r.right > vw || r.bottom > vh) return false;
    const b = Array.from(e.getClientRects()).find((c) => c.width > 0 && c.height > 0);
    return !!b && !inert() && hitAt(b.left + b.width / 2, b.top + b.height / 2).ok;
  };
  // scrolled: this check scrolled the element into view. The page's
  // scroll events, and the observers that watch what comes into view,
  // run with the next animation frame, and may render the element again
  // (a virtualised list): a click then lets that frame pass before the
  // press.
  let scrolled = false;
  if (opts.scroll !== false) {
    // Of display: contents, its first element with a box scrolls.
    const into = mapImg || (contents ? Array.from(contentsRoot.querySelectorAll('*')).find((e) => e.getClientRects().length) : target);
    if (into && !inView(into)) {
      into.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      scrolled = true;
    }
  }
  const style = getComputedStyle(mapImg || target);
  const r1 = rect();
  if (r1[2] === 0 || r1[3] === 0 || style.visibility === 'hidden' || style.display === 'none') {
    return { state: 'hidden', tag: describe(target) };
  }
  if (opts.enabled) {
    const dis = disabledNow();
    if (dis) return dis;
    disabled.delete(target);
  }
  // Stable: the same box one animation frame later, or two while the
  // document runs CSS animations, transitions or Web Animations (a frame
  // after the page's own requestAnimationFrame callbacks catches motion
  // driven by script); a timer when the page gets no frames (a background
  // tab), so the check never hangs. With opts.quick and nothing animating,
  // the check waits for no frame: the guard compares the box at the
  // press (atPress; the caller sends the press behind its mouse move
  // without waiting for the move's frame, so that is this frame or the
  // next, and an element that moved but is still under the pointer gets
  // the press), else the caller's opts.verify call does, after the frame
  // that delivers its Input.dispatchMouseEvent mouseMoved (Chromium
  // dispatches mouse moves at the start of an animation frame). The check
  // asks for no frame itself:
  // a page at rest gets a frame at once for the first thing that needs
  // one, and an animation frame requested here would take it, leaving
  // the mouse move to wait for the next vsync (8 ms on average at 60 Hz).
  // A verify call's watch records that a trusted mouse move reached this
  // document.
  const animating = !document.getAnimations || document.getAnimations().length > 0;
  // bg: the page is in the background (not the browser's active tab),
  // where it gets no animation frames.
  const bg = document.visibilityState === 'hidden';
  // atPress: the guard of a quick check's click checks the box at the
  // press (see arm), and the caller sends no verify call. Only where
  // guard.js hooked the window before the page could (opts.iso: the
  // caller resolved the element in its world, which no page script
  // reaches); a closure sent as source keeps no guard between calls, and
  // a background page delivers the mouse move with no frame to wait for.
  const atPress = !!opts.quick && !!opts.arm && !!opts.iso && held && !bg && !!globalThis.__tabpilotGuard;
  let r2 = r1;
  if (!opts.quick || animating) {
    await new Promise((res) => {
      requestAnimationFrame(() => (animating ? requestAnimationFrame(res) : res()));
      setTimeout(res, 250);
    });
    r2 = rect();
    if (moved(r1, r2)) return { state: 'unstable', tag: describe(target) };
    // The frame ran the page's own work queued for it: a hover effect
    // of the pointer already on the element (a click that starts over)
    // that hides or disables it there.
    const s2 = getComputedStyle(mapImg || target);
    if (s2.visibility === 'hidden' || s2.display === 'none') return { state: 'hidden', tag: describe(target) };
    if (opts.enabled) {
      const dis = disabledNow();
      if (dis) return dis;
    }
  } else if (!atPress) {
    if (watches.has(target)) watches.get(target).end();
    const w = { moved: false, end: null };
    const onMove = (e) => { if (e.isTrusted) { w.moved = true; w.end(); } };
    const timer = setTimeout(() => w.end(), 3000);
    w.end = () => { clearTimeout(timer); window.removeEventListener('mousemove', onMove, true); };
    window.addEventListener('mousemove', onMove, true);
    watches.set(target, w);
  }
  // The centre of the first box with an area that shows in the viewport,
  // else of the first with an area (a link that wraps has one per line,
  // and the centre of their union may be on neither; the contents of a
  // display: contents element may start off-screen).
  let box = null;
  for (const b of mapImg ? [] : contents ? contentsRange().getClientRects() : target.getClientRects()) {
    if (b.width > 0 && b.height > 0) {
      if (!box) box = b;
      if (b.right > 0 && b.bottom > 0 && b.left < innerWidth && b.top < innerHeight) { box = b; break; }
    }
  }
  const x = box ? box.left + box.width / 2 : r2[0] + r2[2] / 2;
  const y = box ? box.top + box.height / 2 : r2[1] + r2[3] / 2;
  if (opts.hitTest) {
    const covered = hitTest(x, y);
    if (covered) return covered;
  }
  // A quick check that is not atPress leaves the arming to the verify
  // call after the mouse move: the guard's pointerdown listener changes
  // the document's event handler classes, which Chromium sends to the
  // compositor with the next frame, and a mouse move sent after that
  // waits for the vsync. (guard.js's were there from the start.)
  if (opts.arm && (!opts.quick || atPress)) arm(target, atPress ? { box: r2, x, y } : null);
  const top = window === window.top && (!window.visualViewport || window.visualViewport.scale === 1);
  return { state: 'ok', x, y, box: r2, top, tag: describe(target), label: labelOf(target), bg, press: atPress, scrolled };
}
})()
