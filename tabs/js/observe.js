// observe.js: the page side of tab.observe (DESIGN.md section 4).
//
// Package tabs installs it once in an isolated world of every frame
// (Page.createIsolatedWorld; as globalThis.__tpWalk there), so page scripts
// can neither see nor tamper with it, and calls it with
// Runtime.callFunctionOn as function(opts, anchor, ...clickables): `this` is
// the frame's document, or a closed shadow root that package tabs resolved
// over CDP (a page script cannot enter a closed root, CDP can); anchor is
// the element last acted on (or null); clickables are the nodes
// DOMDebugger.getEventListeners found with click-like listeners.
//
// It walks the frame's flat tree once (open shadow roots and slotted nodes
// in place, same-origin iframes in line), and returns [json, nodes] for
// deep serialization:
//   json  the frame's items as JSON text: {u, t, vw, vh, sx, sy, sw, sh,
//         items: [{k, n, r, a, v, s, lv, u, c, g, lm, hd, ct, b, fo, an, o,
//         cg, fr, fi}], ni, ra, ms, fr, sc}
//         k kind: e element a person acts on, h heading, d dialog, t text,
//           l landmark or alert, L list, f iframe, s possible closed shadow
//           host (package tabs walks its closed root in its place), m media
//           element with controls (package tabs asks the accessibility tree
//           for them);
//         n index of the item's node in globalThis.__tpObs.els;
//         r role, a name, v value, s states, lv heading level, u link URL,
//         c count (list items), g region (main, navigation, banner,
//         contentinfo, complementary, dialog), lm landmark, hd heading before
//         it, ct text of its list item, row or article (contexts that tell
//         apart elements of the same name), b box [x, y, w, h] in its
//         frame's viewport CSS pixels, fo an iframe's content-box origin,
//         an 1 for the anchor, o the options of a <select> shown as a
//         combobox, cg the list item or table row it is in (an id unique
//         in the world), fr the number of the same-origin frame it is in
//         (0: this document), fi on an iframe walked in line, its number;
//         ni the indexes of the items whose nodes are in `nodes`;
//         ra 1 when those are all the numbered items (see opts.refs);
//         ms the time the walk took in the page, in milliseconds;
//         fr the frames walked in line: {k, p, u, vw, vh, sw, sh}, k the
//         frame's number, p its parent's (0: this document), u its URL,
//         its viewport and scroll size;
//         sc the scroll report of opts.scroll.
//   nodes the DOM nodes of the f, s and m items, which package tabs needs
//         at once, and of every numbered item when there are at most
//         opts.refs, serialized with their backend node ids (and a closed
//         shadow root's).
// Every item's node stays in globalThis.__tpObs.els (of the isolated world)
// until the next walk of the frame: __tpObs.pick(indexes) returns them, so
// package tabs fetches the backend node ids of only the items it keeps.
//
// opts: all adds structure (headings, landmarks, dialogs, lists, text); vp
// adds the boxes of the items (else only iframes have one); refs, see
// nodes; sub with inh {g, lm, hd, ii} walks a closed shadow root into the
// current walk, with the inherited region, landmark, heading and whether
// it is inside an element a person acts on; scroll {ms, steps} scrolls
// every scroll container (the page included) through its content, walking
// again after each step (a container: its subtree) to collect what
// virtualised and infinite lists render only while visible, then restores
// the scroll positions (the result is then a Promise); every item a node
// showed is kept (a virtualised list reuses its nodes for other items), and
// those whose node is gone at the end, or shows another item, get the
// state "offscreen".
function (opts, anchor, ...clickables) {
  opts = opts || {};
  const started = performance.now();
  const root = this && this.nodeType ? this : document;
  const doc = root.nodeType === 9 ? root : root.ownerDocument;
  const win = doc.defaultView;
  let G = globalThis.__tpObs;
  if (!G || !opts.sub) {
    G = globalThis.__tpObs = { els: [], idx: new Map() };
    // pick returns the nodes of the items, and lets the rest go.
    G.pick = (ix) => {
      const out = ix.map((i) => G.els[i]);
      G.els.length = 0;
      G.idx.clear();
      return out;
    };
  }
  const els = G.els;
  const all = !!opts.all;
  const clickSet = new Set(clickables);
  const MAXTXT = 400;
  const OFF = 1, ON = 2;

  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link', 'base', 'param', 'source', 'track']);
  const INTERACTIVE = new Set(['link', 'button', 'textbox', 'searchbox', 'combobox', 'listbox', 'option', 'checkbox',
    'radio', 'switch', 'slider', 'spinbutton', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'treeitem']);
  const NO_FOCUS_FALLBACK = new Set(['heading', 'main', 'navigation', 'banner', 'contentinfo', 'complementary', 'region',
    'form', 'search', 'dialog', 'alertdialog', 'alert', 'article', 'document', 'list', 'table', 'group', 'Iframe',
    'tabpanel', 'tree', 'grid', 'menu', 'menubar', 'tablist', 'toolbar', 'application', 'feed', 'log', 'status']);
  const VALUE_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider']);
  const NO_CONTENT_NAME = new Set(['textbox', 'searchbox', 'combobox', 'listbox', 'slider', 'spinbutton', 'img', 'dialog',
    'alertdialog', 'main', 'navigation', 'banner', 'contentinfo', 'complementary', 'region', 'form', 'search', 'list',
    'table', 'group', 'article', 'alert', 'tree', 'menu', 'menubar', 'tablist', 'grid', 'toolbar']);
  const CHECKABLE = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'option']);
  const CONTAINERS = new Set(['listitem', 'row', 'article']);
  const NAME_BREAK = new Set(['group', 'tree', 'menu', 'listbox', 'list', 'table', 'grid']);
  const LANDMARK = {
    main: 'main', navigation: 'nav', banner: 'header', contentinfo: 'footer', complementary: 'aside',
    region: 'region', form: 'form', search: 'search',
  };
  const REGION = { main: 1, navigation: 1, banner: 1, contentinfo: 1, complementary: 1 };
  const KNOWN = new Set([...INTERACTIVE, ...NO_FOCUS_FALLBACK, 'none', 'presentation', 'generic', 'listitem', 'row',
    'cell', 'gridcell', 'columnheader', 'rowheader', 'rowgroup', 'img', 'image', 'figure', 'paragraph', 'separator',
    'tooltip', 'progressbar', 'scrollbar', 'math', 'note', 'definition', 'term', 'directory', 'marquee', 'timer',
    'treegrid', 'caption', 'blockquote', 'code', 'strong', 'emphasis', 'insertion', 'deletion', 'time', 'meter']);
  const HOST_TAGS = /^(article|aside|blockquote|body|div|footer|h[1-6]|header|main|nav|p|section|span)$/;

  const clean = (s) => s.replace(/\s+/g, ' ').trim();
  const cap = (s, n) => (s.length > n ? s.slice(0, n) : s);
  // MAXVAL is the longest field value sent whole; a longer one is cut,
  // and vl gives its length.
  const MAXVAL = 2000;
  // Input types that set the format of what a person enters.
  const TYPED = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'number', 'range', 'color', 'email',
    'password', 'tel', 'url']);
  // Roles an icon can name when they have no name of their own.
  const ICON_NAMED = new Set(['button', 'link', 'clickable', 'menuitem', 'tab', 'switch', 'checkbox', 'option', 'focusable']);
  // Words of class names, ids and file names that say nothing of what an
  // icon does.
  const GENERIC = new Set(['icon', 'icons', 'ico', 'fa', 'fas', 'far', 'fab', 'fal', 'fad', 'bi', 'mdi', 'material',
    'symbols', 'outlined', 'glyph', 'glyphicon', 'glyphicons', 'svg', 'img', 'image', 'btn', 'button', 'js', 'ui', 'lg',
    'sm', 'md', 'xs', 'xl', 'fw', 'inline', 'block', 'flex', 'item', 'wrapper', 'wrap', 'container', 'inner', 'outer',
    'active', 'hover', 'small', 'large', 'default', 'primary', 'secondary', 'link', 'action', 'actions', 'control',
    'clickable', 'pointer', 'cursor', 'the', 'and', 'solid', 'regular', 'light', 'round', 'rounded', 'filled',
    'outline', 'sharp', 'fill', 'color', 'theme', 'dark', 'base', 'main', 'show', 'is', 'has', 'no', 'bg', 'background',
    'sprite', 'png', 'jpg', 'gif', 'webp', 'data', 'static', 'assets', 'asset', 'images', 'toolbar', 'tool', 'tools']);
  // Tags that can be the controls of a delegating listener.
  const LEAF_TAGS = new Set(['a', 'span', 'div', 'li', 'td', 'i', 'img', 'svg', 'dd', 'dt']);
  const ICONISH = new Set(['svg', 'img', 'i', 'picture']);

  /*ROWKEY*/

  /*AREABOX*/

  const words = (s, out) => {
    for (const w of s.replace(/([a-z])([A-Z])/g, '$1 $2').split(/[^A-Za-z]+/)) {
      const l = w.toLowerCase();
      if (l.length > 2 && !GENERIC.has(l) && !out.includes(l)) out.push(l);
    }
    return out;
  };
  const fileWords = (u, out) => {
    const m = /([^/?#]+?)(?:\.[a-z0-9]{2,5})?(?:[?#].*)?$/i.exec(u.replace(/^url\(["']?|["']?\)$/g, ''));
    if (m && !/^data:/.test(u)) words(m[1].replace(/@\dx$/, ''), out);
    return out;
  };

  // ownText reports whether el has text of its own (not an SVG's title).
  function ownText(el) {
    const w = doc.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let t = w.nextNode(); t; t = w.nextNode()) {
      const p = t.parentNode;
      if (p && p.namespaceURI === 'http://www.w3.org/2000/svg') continue;
      if (/\S/.test(t.data)) return true;
    }
    return false;
  }

  // iconName names a control whose only content is a picture: an image,
  // an inline SVG, a CSS background or content image, an icon font glyph.
  // It takes what there is: a text alternative on a descendant, an SVG
  // <title> or <use> reference, the image file's name, then the words of
  // meaningful class names and ids (trash, star, reply). "" when nothing
  // says anything.
  function iconName(el) {
    const nodes = [el];
    for (const n of el.querySelectorAll('*')) {
      if (nodes.length >= 16) break;
      nodes.push(n);
    }
    for (const n of nodes) {
      for (const a of ['aria-label', 'title', 'alt', 'data-icon', 'data-tooltip', 'data-title', 'data-original-title']) {
        const v = n.getAttribute(a);
        if (v && v.trim() && /[\p{L}\p{N}]/u.test(v)) return cap(clean(v), 60);
      }
      // An SVG <title> names its parent, an <svg> or a shape in one.
      if (n.localName === 'title' && n.namespaceURI === 'http://www.w3.org/2000/svg' && n.textContent.trim()) {
        return cap(clean(n.textContent), 60);
      }
    }
    const out = [];
    for (const n of nodes) {
      const t = n.localName;
      if (t === 'use') fileWords((n.getAttribute('href') || n.getAttribute('xlink:href') || '').replace(/^#/, '/'), out);
      else if (t === 'img') fileWords(n.getAttribute('src') || '', out);
      if (out.length) break;
      const cs = win.getComputedStyle(n);
      for (const bg of [cs.backgroundImage, cs.maskImage || cs.webkitMaskImage, win.getComputedStyle(n, '::before').content]) {
        if (bg && /^url\(/.test(bg)) fileWords(bg, out);
      }
      if (out.length) break;
    }
    if (!out.length) {
      for (const n of nodes) {
        if (n.id) words(n.id, out);
        const c = n.getAttribute('class');
        if (c) words(c, out);
        if (out.length >= 2) break;
      }
    }
    return out.slice(0, 3).join(' ');
  }

  // delegatedLeaves returns the controls of a delegating listener on d
  // (date pickers, menus, toolbars listen on a parent and act on
  // event.target): its small descendants that show a short text or an
  // icon and have no control inside, when at least two of them are alike
  // (one tag and class: the days of a calendar, the items of a menu).
  // Else [] (d is the one control).
  function delegatedLeaves(d) {
    if (d === doc.body || d === doc.documentElement) return [];
    const all = d.getElementsByTagName('*');
    if (all.length < 2 || all.length > 400) return [];
    const cands = new Set();
    for (const e of all) {
      const t = e.localName;
      if (!LEAF_TAGS.has(t) || e.ownerSVGElement) continue;
      if (INTERACTIVE.has(roleOf(e, t)) && !(t === 'a' && !e.hasAttribute('href'))) return [];
      let iconOnly = true;
      let leaf = true;
      for (const k of e.children) {
        if (ICONISH.has(k.localName) || !k.textContent.trim()) continue;
        leaf = false;
        break;
      }
      if (!leaf) continue;
      const txt = clean(e.textContent);
      if (txt) iconOnly = false;
      if (txt.length > 40) continue;
      if (iconOnly && !ICONISH.has(t) && !e.children.length && win.getComputedStyle(e).backgroundImage === 'none' &&
        win.getComputedStyle(e, '::before').content === 'none') continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      cands.add(e);
    }
    // The outermost leaves: an icon inside a leaf is part of it.
    const out = [];
    for (const e of cands) if (!cands.has(e.parentElement)) out.push(e);
    if (out.length > 100) return [];
    const kinds = new Set();
    for (const e of out) {
      const k = e.localName + '.' + (e.getAttribute('class') || '');
      if (kinds.has(k)) return out;
      kinds.add(k);
    }
    return [];
  }

  function implicitRole(el, tag) {
    switch (tag) {
      // An anchor without a target that handles clicks is a link too (as
      // in Chrome's accessibility tree); an SVG one may name its target
      // with xlink:href (SVG-AAM).
      case 'a': case 'area': return el.hasAttribute('href') || el.hasAttributeNS('http://www.w3.org/1999/xlink', 'href') ||
        el.hasAttribute('onclick') || clickSet.has(el) ? 'link' : '';
      case 'button': return 'button';
      case 'input': {
        const t = (el.getAttribute('type') || '').toLowerCase();
        switch (t) {
          case 'button': case 'submit': case 'reset': case 'image': case 'file': case 'color': return 'button';
          case 'checkbox': return el.hasAttribute('switch') ? 'switch' : 'checkbox';
          case 'radio': return 'radio';
          case 'range': return 'slider';
          case 'number': return 'spinbutton';
          case 'hidden': return 'hidden';
          case 'search': return el.hasAttribute('list') ? 'combobox' : 'searchbox';
          default: return el.hasAttribute('list') ? 'combobox' : 'textbox';
        }
      }
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'option': return 'option';
      case 'summary': {
        const p = el.parentElement;
        return p && p.localName === 'details' && p.querySelector(':scope > summary') === el ? 'button' : '';
      }
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'main': return 'main';
      case 'nav': return 'navigation';
      case 'aside': return 'complementary';
      case 'header': case 'footer': {
        const p = el.parentElement;
        if (p && p.closest('article,aside,main,nav,section')) return '';
        return tag === 'header' ? 'banner' : 'contentinfo';
      }
      case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title') ? 'region' : '';
      case 'form': return 'form';
      case 'search': return 'search';
      case 'dialog': return 'dialog';
      case 'ul': case 'ol': case 'menu': return 'list';
      case 'li': return 'listitem';
      case 'tr': return 'row';
      case 'article': return 'article';
      case 'table': return 'table';
      case 'img': return el.getAttribute('alt') === '' && !el.hasAttribute('title') ? 'none' : 'img';
      case 'iframe': case 'frame': return 'Iframe';
      case 'fieldset': case 'details': return 'group';
    }
    return '';
  }

  function roleOf(el, tag) {
    const ar = el.getAttribute('role');
    if (ar) {
      for (const w of ar.trim().toLowerCase().split(/\s+/)) {
        if (w === 'presentation' || w === 'none') {
          // A focusable element keeps its role (ARIA conflict resolution).
          if (el.hasAttribute('tabindex') || /^(a|button|input|select|textarea)$/.test(tag)) continue;
          return 'none';
        }
        if (KNOWN.has(w)) return w === 'image' ? 'img' : w;
      }
    }
    return implicitRole(el, tag);
  }

  // textOf returns the text of a node for a name by reference
  // (aria-labelledby, a label): hidden text counts, a text field gives its
  // value, skip is left out.
  function textOf(node, skip, depth) {
    if (!node || node === skip || depth > 20) return '';
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1 && node.nodeType !== 11) return '';
    if (node.nodeType === 1) {
      const tag = node.localName;
      if (SKIP.has(tag)) return '';
      const al = node.getAttribute('aria-label');
      if (al && al.trim() && depth > 0) return ' ' + al + ' ';
      if (tag === 'img') return ' ' + (node.getAttribute('alt') || '') + ' ';
      if (tag === 'input') return node.type === 'text' || node.type === '' ? node.value : '';
      if (tag === 'select' || tag === 'textarea') return '';
    }
    let s = '';
    const kids = node.nodeType === 1 && node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
    for (let i = 0; i < kids.length && s.length < MAXTXT; i++) s += textOf(kids[i], skip, depth + 1);
    return s;
  }

  // labelsOf returns the <label>s of a control. element.labels scans the
  // whole tree for each control, so the labels of a tree scope are mapped
  // to their controls once.
  const labelMaps = new Map();
  function labelsOf(el) {
    const scope = el.getRootNode();
    let m = labelMaps.get(scope);
    if (!m) {
      m = new Map();
      if (scope.querySelectorAll) {
        for (const l of scope.querySelectorAll('label')) {
          const c = l.control;
          if (!c) continue;
          const a = m.get(c);
          if (a) a.push(l);
          else m.set(c, [l]);
        }
      }
      labelMaps.set(scope, m);
    }
    return m.get(el);
  }

  function labelledBy(el) {
    const ids = el.getAttribute('aria-labelledby');
    if (!ids) return '';
    const r = el.getRootNode();
    const parts = [];
    for (const id of ids.trim().split(/\s+/)) {
      const t = r.getElementById ? r.getElementById(id) : doc.getElementById(id);
      if (t) parts.push(t === el ? el.getAttribute('aria-label') || textOf(t, null, 1) : textOf(t, null, 0));
    }
    return clean(parts.join(' '));
  }

  // nameOf computes an accessible name (a practical subset of the W3C
  // accname algorithm): aria-labelledby, aria-label, the native label,
  // then the content (for roles named by it), then title and placeholder.
  function nameOf(el, tag, role, content) {
    let n = labelledBy(el);
    if (n) return n;
    n = el.getAttribute('aria-label');
    if (n && n.trim()) return clean(n);
    if (tag === 'input') {
      const t = el.type;
      if (t === 'button' || t === 'submit' || t === 'reset') return el.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
      if (t === 'image') return el.getAttribute('alt') || el.value || 'Submit';
    }
    if (/^(input|select|textarea|button|meter|progress)$/.test(tag)) {
      const ls = labelsOf(el);
      if (ls) {
        n = clean(ls.map((l) => textOf(l, el, 0)).join(' '));
        if (n) return n;
      }
    }
    if (tag === 'img' || tag === 'area') {
      n = el.getAttribute('alt');
      if (n && n.trim()) return clean(n);
    }
    if (tag === 'fieldset') {
      const lg = el.querySelector(':scope > legend');
      if (lg) return clean(textOf(lg, null, 0));
    }
    if (!NO_CONTENT_NAME.has(role) && content) return content;
    n = el.getAttribute('title');
    if (n && n.trim()) return clean(n);
    if (role === 'textbox' || role === 'searchbox' || role === 'combobox') {
      n = el.getAttribute('placeholder') || el.getAttribute('aria-placeholder');
      if (n && n.trim()) return clean(n);
      if (el.isContentEditable) {
        // Rich-text editors show their placeholder from data-placeholder,
        // on the editable (Quill) or on its empty first block (ProseMirror).
        const c = el.firstElementChild;
        n = el.getAttribute('data-placeholder') || (c && c.getAttribute('data-placeholder'));
        if (n && n.trim()) return clean(n);
      }
    }
    return '';
  }

  function states(el, tag, role, active) {
    const s = [];
    const A = (n) => el.getAttribute(n);
    const form = /^(button|input|select|textarea|option|optgroup|fieldset)$/.test(tag);
    if ((form && el.matches(':disabled')) || A('aria-disabled') === 'true') s.push('disabled');
    let ch = null;
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) ch = el.indeterminate ? 'mixed' : el.checked ? 'true' : 'false';
    else if (CHECKABLE.has(role)) ch = A('aria-checked');
    if (ch === 'true') s.push('checked');
    else if (ch === 'mixed') s.push('mixed');
    if (tag === 'option' ? el.selected : A('aria-selected') === 'true') s.push('selected');
    const ex = tag === 'summary' ? String(!!el.parentElement.open) : A('aria-expanded');
    if (ex === 'true') s.push('expanded');
    else if (ex === 'false') s.push('collapsed');
    const pr = A('aria-pressed');
    if (pr === 'true') s.push('pressed');
    else if (pr === 'mixed') s.push('mixed');
    if ((form && el.required) || A('aria-required') === 'true') s.push('required');
    if (((tag === 'input' || tag === 'textarea') && el.readOnly && !/^(checkbox|radio|button|submit|reset|range|file|color|image)$/.test(el.type)) || A('aria-readonly') === 'true') s.push('readonly');
    const inv = A('aria-invalid');
    if (inv && inv !== 'false') s.push('invalid');
    if (el === active) s.push('focused');
    if ((tag === 'select' && el.multiple) || A('aria-multiselectable') === 'true') s.push('multiselectable');
    const hp = A('aria-haspopup');
    if (hp && hp !== 'false' && role !== 'combobox') s.push('haspopup');
    if (tag === 'textarea' || A('aria-multiline') === 'true') s.push('multiline');
    if (tag === 'input' && el.type === 'file') s.push('upload');
    if ((role === 'dialog' || role === 'alertdialog') && (A('aria-modal') === 'true' || (tag === 'dialog' && el.matches(':modal')))) s.push('modal');
    return s;
  }

  function valueOf(el, tag, role) {
    if (tag === 'input') {
      if (el.type === 'password') return el.value ? '•'.repeat(Math.min(el.value.length, 12)) : '';
      if (role === 'slider') return el.getAttribute('aria-valuetext') || el.value;
      return el.value;
    }
    if (tag === 'textarea') return el.value;
    if (tag === 'select') {
      if (role !== 'combobox') return '';
      const o = el.selectedOptions;
      return o && o.length ? o[0].label || o[0].textContent : '';
    }
    const vt = el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow');
    if (vt) return vt;
    if (el.isContentEditable || role === 'textbox' || role === 'searchbox') return el.innerText || el.textContent;
    // A custom combobox shows its choice as its text.
    if (role === 'combobox') return el.textContent;
    return '';
  }

  function rectOf(r) {
    return [Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)];
  }

  function deepActive(start) {
    let a = start.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    const d = start.nodeType === 9 ? start : start.ownerDocument;
    if (a === d.body || a === d.documentElement || (a && (a.localName === 'iframe' || a.localName === 'frame'))) a = null;
    return a;
  }

  // docClip is the part of a document's viewport coordinates a person can
  // bring into view by scrolling it: [x0, y0, x1, y1].
  function docClip(d) {
    const w = d.defaultView;
    const se = d.scrollingElement || d.documentElement;
    if (!w || !se) return null;
    return [-w.scrollX, -w.scrollY, Math.max(se.scrollWidth, w.innerWidth) - w.scrollX,
      Math.max(se.scrollHeight, w.innerHeight) - w.scrollY];
  }

  // clipOf returns clip narrowed by el's overflow, per axis: hidden and
  // clip show its padding box (within clip); auto and scroll show what
  // scrolling el brings into view, its whole scroll range, above and
  // below where it stands, whether or not that range lies within clip
  // (scrolling el moves it there), as long as el's padding box meets
  // clip (a container scrolled away itself shows nothing).
  function clipOf(el, cs, clip) {
    const ox = cs.overflowX, oy = cs.overflowY;
    if ((ox === 'visible' && oy === 'visible') || cs.display === 'contents' || el === doc.documentElement || el === doc.body) return clip;
    const r = el.getBoundingClientRect();
    const x0 = r.left + el.clientLeft, y0 = r.top + el.clientTop;
    const pad = [x0, y0, x0 + el.clientWidth, y0 + el.clientHeight];
    const c = pad.slice();
    const scrolls = (o) => o !== 'visible' && o !== 'hidden' && o !== 'clip';
    if (scrolls(ox)) {
      c[0] = x0 - el.scrollLeft;
      c[2] = c[0] + el.scrollWidth;
    } else if (ox === 'visible') {
      c[0] = -Infinity;
      c[2] = Infinity;
    }
    if (scrolls(oy)) {
      c[1] = y0 - el.scrollTop;
      c[3] = c[1] + el.scrollHeight;
    } else if (oy === 'visible') {
      c[1] = -Infinity;
      c[3] = Infinity;
    }
    if (!clip) return c;
    if (pad[2] <= clip[0] || pad[0] >= clip[2] || pad[3] <= clip[1] || pad[1] >= clip[3]) return [Infinity, Infinity, -Infinity, -Infinity];
    return [scrolls(ox) ? c[0] : Math.max(c[0], clip[0]), scrolls(oy) ? c[1] : Math.max(c[1], clip[1]),
      scrolls(ox) ? c[2] : Math.min(c[2], clip[2]), scrolls(oy) ? c[3] : Math.min(c[3], clip[3])];
  }

  // shown reports whether a person can see el, or scroll it into view:
  // a box of at least 2 by 2 CSS pixels (or content that overflows a
  // smaller box it does not clip) that meets clip.
  function shown(el, cs, clip) {
    if (cs.display === 'contents') return true;
    const r = el.getBoundingClientRect();
    // An empty editable is still a field (its caret is the box).
    if (el.isContentEditable && (r.width >= 2 || r.height >= 2 || !el.firstElementChild)) return !clip || !(r.right < clip[0] || r.left > clip[2] || r.bottom < clip[1] || r.top > clip[3]);
    if (r.width < 2 || r.height < 2) {
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible' || !el.firstElementChild) return false;
      let any = false;
      for (const k of el.children) {
        const b = k.getBoundingClientRect();
        if (b.width >= 2 && b.height >= 2) {
          any = true;
          break;
        }
      }
      if (!any) return false;
    }
    if (clip && (r.right <= clip[0] || r.left >= clip[2] || r.bottom <= clip[1] || r.top >= clip[3])) return false;
    return true;
  }

  // ariaModal returns the last ARIA modal dialog of the document (role
  // dialog or alertdialog, aria-modal="true") that shows and blocks the
  // page, or null. aria-modal only says the page behind is inert; a page
  // may set it on a panel that leaves the page usable, so the dialog
  // counts only when the pointer reaches nothing of the page outside it:
  // at points around it, the hit is the dialog, or a fixed element that
  // covers the viewport (its backdrop).
  function ariaModal() {
    const all = doc.querySelectorAll('[aria-modal="true"]');
    for (let i = all.length - 1; i >= 0; i--) {
      const d = all[i];
      const role = (d.getAttribute('role') || '').trim();
      if (role !== 'dialog' && role !== 'alertdialog') continue;
      if (!d.getClientRects().length || win.getComputedStyle(d).visibility !== 'visible') continue;
      if (d.closest('[aria-hidden="true"], [inert]')) continue;
      if (blocksPage(d)) return d;
    }
    return null;
  }
  function blocksPage(d) {
    const W = win.innerWidth, H = win.innerHeight;
    const r = d.getBoundingClientRect();
    const pts = [[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9], [0.5, 0.03], [0.03, 0.5]].map(([x, y]) => [x * W, y * H])
      .filter(([x, y]) => !(x >= r.left && x <= r.right && y >= r.top && y <= r.bottom));
    for (const [x, y] of pts) {
      const h = doc.elementFromPoint(x, y);
      if (!h) return false;
      if (d.contains(h)) continue;
      let backdrop = false;
      for (let n = h; n && n !== doc.body && n !== doc.documentElement; n = n.parentElement) {
        if (win.getComputedStyle(n).position === 'fixed') {
          const b = n.getBoundingClientRect();
          backdrop = b.width >= 0.9 * W && b.height >= 0.9 * H;
          break;
        }
      }
      if (!backdrop) return false;
    }
    return true;
  }

  // scrollPos returns where a scroll container stands ("0%/2931px below",
  // "40%/300px right"), or "" when el is none (or too small to matter).
  function scrollPos(el, cs) {
    const oy = cs.overflowY, ox = cs.overflowX;
    const v = /auto|scroll|overlay/.test(oy) && el.scrollHeight > el.clientHeight + 20;
    const h = !v && /auto|scroll|overlay/.test(ox) && el.scrollWidth > el.clientWidth + 20;
    if (!v && !h) return '';
    // Too small to matter: a box under 40 px along the way it scrolls (a
    // row of chips or a carousel scrolls sideways at 20 to 40 px high).
    if (v ? el.clientWidth < 40 || el.clientHeight < 40 : el.clientWidth < 40 || el.clientHeight < 12) return '';
    return v ? where(el.scrollTop, el.scrollHeight - el.clientHeight, 'below') : where(el.scrollLeft, el.scrollWidth - el.clientWidth, 'right');
  }
  function where(at, range, dir) {
    const pct = range > 0 ? Math.round((100 * Math.max(0, at)) / range) : 0;
    return pct + '%/' + Math.max(0, Math.round(range - at)) + 'px ' + dir;
  }

  // bigCanvas reports whether a canvas covers a quarter of the viewport
  // or more (the surface of an app, not a decoration).
  function bigCanvas(el) {
    const r = el.getBoundingClientRect();
    return r.width * r.height >= 0.25 * win.innerWidth * win.innerHeight;
  }

  // hiddenControl reports whether a form control is out of a person's
  // sight (not rendered, invisible, or a pixel or less), so that its
  // label stands for it.
  function hiddenControl(c) {
    const cs = win.getComputedStyle(c);
    if (cs.display === 'none' || cs.visibility !== 'visible') return true;
    const r = c.getBoundingClientRect();
    return r.width < 2 || r.height < 2;
  }

  // walkOnce walks start (a document or a shadow root) and returns its
  // items, and the scroll containers it met when opts.scroll.
  function walkOnce(start, st0) {
    labelMaps.clear();
    const items = [];
    // buf holds the text of the walk in order: strings, and the markers
    // OFF/ON around text that names no ancestor (a treeitem's subtree).
    const buf = [];
    const containers = [];
    const scrollers = [];
    let run = [];
    let runNode = null;
    let runSt = null;
    let hosts = 0;
    let active = start.nodeType === 11 ? deepActive(start) : deepActive(doc);
    // curFrame is the inline frame being walked (0: this document), and
    // frames describes the inline frames.
    let curFrame = 0;
    const frames = [];
    // stands maps a label to the hidden control it stands for; dleaf holds
    // the controls of delegating listeners.
    const stands = new Map();
    const dleaf = new Set();
    // rowTexts caches the texts of the rows rowKey reads.
    const rowTexts = new Map();
    // modalDlg is the open modal dialog of the document: a <dialog>
    // opened with showModal, else an ARIA one (role dialog or alertdialog,
    // aria-modal="true") that shows and blocks the page, so that a person
    // can act on nothing outside it.
    let modalDlg = null;
    if (!opts.sub) {
      try {
        modalDlg = doc.querySelector('dialog:modal') || ariaModal();
      } catch (e) {
        modalDlg = null;
      }
    }

    // linkURL is the absolute URL a link goes to. An SVG <a>'s href is an
    // SVGAnimatedString (its baseVal the attribute's text), not a string;
    // it is resolved against the element's base URL, as an HTML link's is.
    function linkURL(el) {
      const h = el.href;
      if (typeof h === 'string') return h || el.getAttribute('href') || '';
      const raw = h && typeof h.baseVal === 'string' ? h.baseVal
        : (el.getAttribute('href') || el.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '');
      try { return raw ? new URL(raw, el.baseURI).href : ''; } catch (_) { return raw; }
    }

    // areas adds the links of an image map, with their boxes.
    function areas(img, st) {
      const name = img.useMap.replace(/^#/, '');
      const r0 = img.getRootNode();
      const map = (r0.querySelector ? r0 : doc).querySelector('map[name="' + CSS.escape(name) + '"]');
      if (!map) return;
      for (const a of map.querySelectorAll('area[href]')) {
        flush();
        const it = { k: 'e', n: addNode(a), r: 'link', a: clean(a.getAttribute('alt') || a.getAttribute('title') || ''),
          u: a.href, b: areaBox(a, img).map(Math.round), sb: 1 };
        ctxOf(it, st);
        items.push(it);
      }
    }

    // addNode gives a node its index in els; items of the same node (an
    // empty editable that may also be a shadow host) share it, since a
    // node the result holds twice is serialized once, with its backend
    // node id, and then as a reference without one.
    function addNode(node) {
      let i = G.idx.get(node);
      if (i === undefined) {
        i = els.push(node) - 1;
        G.idx.set(node, i);
      }
      return i;
    }

    // joinText joins buf[from:] skipping OFF..ON ranges.
    function joinText(from) {
      let s = '';
      let off = 0;
      for (let i = from; i < buf.length && s.length < MAXTXT * 2; i++) {
        const b = buf[i];
        if (b === OFF) off++;
        else if (b === ON) off--;
        else if (off <= 0) s += b;
      }
      return cap(clean(s), MAXTXT);
    }

    function firstText(from, to) {
      for (let i = from; i < to; i++) {
        const b = buf[i];
        if (typeof b === 'string') {
          const t = clean(b);
          if (t) return cap(t, 64);
        }
      }
      return '';
    }

    function ctxOf(it, st) {
      if (curFrame) it.fr = curFrame;
      if (st.g) it.g = st.g;
      if (st.lm) it.lm = st.lm;
      if (st.sc.hd) it.hd = st.sc.hd;
    }

    function flush() {
      if (!run.length) return;
      const t = cap(clean(run.join('')), MAXTXT);
      if (t && /[\p{L}\p{N}]/u.test(t)) {
        const it = { k: 't', a: t, n: addNode(runNode) };
        ctxOf(it, runSt);
        if (runSt.ci !== undefined && containers[runSt.ci][3]) it.cg = containers[runSt.ci][3];
        if (opts.vp) {
          const r = runNode.ownerDocument.createRange();
          r.selectNodeContents(runNode);
          it.b = rectOf(r.getBoundingClientRect());
        }
        items.push(it);
      }
      run = [];
      runNode = null;
      runSt = null;
    }

    function text(node, st) {
      const s = node.data;
      if (st.vh || !s) return;
      if (!/\S/.test(s)) {
        buf.push(' ');
        if (all && run.length) run.push(' ');
        return;
      }
      buf.push(s);
      if (all && !st.cov) {
        if (!run.length) {
          runNode = node;
          runSt = st;
        }
        run.push(s);
      }
    }

    function kidsOf(el) {
      if (el.shadowRoot) return el.shadowRoot.childNodes;
      if (el.localName === 'slot' && !opts.sub) {
        const a = el.assignedNodes({ flatten: true });
        if (a.length) return a;
      }
      return el.childNodes;
    }

    function walkKids(el, st) {
      const kids = el.nodeType === 1 ? kidsOf(el) : el.childNodes;
      for (let i = 0; i < kids.length; i++) {
        const k = kids[i];
        if (k.nodeType === 1) visit(k, st);
        else if (k.nodeType === 3) text(k, st);
      }
    }

    function child(st, patch) {
      return Object.assign({}, st, patch);
    }

    function visit(el, st) {
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return;
      if (modalDlg && !st.im) {
        // Outside an open modal <dialog>, everything is inert.
        if (el === modalDlg) st = child(st, { im: true });
        else if (!el.contains(modalDlg)) return;
      }
      const cs = win.getComputedStyle(el);
      const disp = cs.display;
      if (disp === 'none') return;
      const inline = disp.startsWith('inline') || disp === 'contents';
      const vh = cs.visibility !== 'visible';
      if (vh !== st.vh) st = child(st, { vh });
      if (!inline) {
        flush();
        buf.push(' ');
      }
      if (tag === 'br') {
        buf.push(' ');
        if (run.length) run.push(' ');
        return;
      }
      // What the ancestors' overflow lets show of it (a fixed element
      // escapes it, an absolute one escapes that of the ancestors inside
      // its containing block), and of its descendants.
      const ox = cs.overflowX, oy = cs.overflowY;
      const over = ox !== 'visible' || oy !== 'visible';
      const pos = cs.position;
      // A fixed element stays where it is in its viewport whatever
      // scrolls: what of it lies outside the viewport (a drawer parked
      // off screen) no scroll brings into view.
      const fw = pos === 'fixed' ? el.ownerDocument.defaultView || win : null;
      const clip = fw ? [0, 0, fw.innerWidth, fw.innerHeight] : pos === 'absolute' ? st.pclip : st.clip;
      if (over || pos !== 'static') {
        const cc = over ? clipOf(el, cs, clip) : clip;
        const pc = pos !== 'static' ? cc : st.pclip;
        if (cc !== st.clip || pc !== st.pclip) st = child(st, { clip: cc, pclip: pc });
      }
      if (opts.scroll && (el.scrollHeight > el.clientHeight + 20 || el.scrollWidth > el.clientWidth + 20) &&
        el !== doc.documentElement && el !== doc.body) {
        const oy = cs.overflowY, ox = cs.overflowX;
        if ((el.scrollHeight > el.clientHeight + 20 && /auto|scroll|overlay/.test(oy)) ||
          (el.scrollWidth > el.clientWidth + 20 && /auto|scroll|overlay/.test(ox))) scrollers.push(el);
      }
      if (tag === 'iframe' || tag === 'frame') {
        flush();
        const r = el.getBoundingClientRect();
        const it = {
          k: 'f', n: addNode(el), b: rectOf(r), a: clean(el.getAttribute('title') || el.getAttribute('aria-label') || ''),
          fo: [r.left + el.clientLeft + (parseFloat(cs.paddingLeft) || 0), r.top + el.clientTop + (parseFloat(cs.paddingTop) || 0)],
        };
        if (vh || r.width === 0 || r.height === 0) it.hid = 1;
        ctxOf(it, st);
        items.push(it);
        // A same-origin frame (about:blank, srcdoc, same site) is walked
        // here, in line; package tabs walks the others on their own.
        let cd = null;
        if (!it.hid && !opts.sub) {
          try {
            cd = el.contentDocument;
          } catch (e) {
            cd = null;
          }
        }
        if (cd && cd.documentElement && cd.defaultView) {
          const k = frames.length + 1;
          it.fi = k;
          const cw = cd.defaultView;
          const se = cd.scrollingElement || cd.documentElement;
          frames.push({ k, p: curFrame, u: cd.location ? cd.location.href : '', vw: cw.innerWidth, vh: cw.innerHeight, sw: se.scrollWidth, sh: se.scrollHeight });
          const saved = [curFrame, active];
          curFrame = k;
          active = deepActive(cd);
          const dc = docClip(cd);
          const cs0 = { g: st.g, lm: '', sc: { hd: '' }, vh: false, clip: dc, pclip: dc, im: st.im };
          visit(cd.documentElement, cs0);
          flush();
          [curFrame, active] = saved;
        }
        return;
      }
      if (tag === 'img' || tag === 'svg') {
        let alt = tag === 'img' ? el.getAttribute('alt') : (el.querySelector(':scope > title') || {}).textContent;
        if (alt === null && tag === 'img') alt = el.getAttribute('title');
        if (alt && !st.vh) buf.push(' ' + alt + ' ');
      }
      if ((tag === 'video' || tag === 'audio') && el.hasAttribute('controls') && !vh) {
        // Its controls are in a user-agent shadow root: package tabs
        // asks the accessibility tree for them.
        flush();
        const it = { k: 'm', n: addNode(el) };
        ctxOf(it, st);
        items.push(it);
      }
      let role = roleOf(el, tag);
      if (role === 'hidden') return;
      const editHost = el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
      const pointer = cs.cursor === 'pointer';
      let kind = '';
      // A label stands for the hidden control it labels (a styled file,
      // checkbox or radio input).
      let ctl = null;
      if (tag === 'label' && !st.ii) {
        const c = el.control;
        if (c && hiddenControl(c)) {
          const cr = roleOf(c, c.localName);
          if (INTERACTIVE.has(cr)) {
            ctl = c;
            stands.set(el, c);
            role = cr;
          }
        }
      }
      // A delegating listener (on a list, a table, a toolbar): its small
      // controls are the elements, not it.
      let deleg = false;
      if (!ctl && !st.ii && !INTERACTIVE.has(role) && tag !== 'label' && (clickSet.has(el) || el.hasAttribute('onclick'))) {
        const leaves = delegatedLeaves(el);
        for (const l of leaves) dleaf.add(l);
        deleg = leaves.length > 0;
      }
      if (ctl) {
        kind = 'e';
      } else if (dleaf.has(el) && !st.ii) {
        role = 'clickable';
        kind = 'c';
      } else if (INTERACTIVE.has(role)) {
        if (!(role === 'option' && st.ni)) kind = 'e';
      } else if (editHost && (role === '' || role === 'generic' || role === 'none')) {
        role = 'textbox';
        kind = 'e';
      } else if (tag === 'canvas' && !st.ii && (clickSet.has(el) || el.hasAttribute('onclick') || el.hasAttribute('onmousedown') ||
        pointer || el.hasAttribute('tabindex') || bigCanvas(el))) {
        // A canvas a person draws on, plays or clicks in.
        role = 'canvas';
        kind = 'e';
      } else if (el.hasAttribute('tabindex') && !NO_FOCUS_FALLBACK.has(role)) {
        if (role === '' || role === 'generic' || role === 'none') {
          role = el.hasAttribute('onclick') || clickSet.has(el) || pointer ? 'clickable' : 'focusable';
        }
        kind = 'e';
      } else if (!deleg && !st.ii && tag !== 'label' && tag !== 'body' && tag !== 'html' && !NO_FOCUS_FALLBACK.has(role) &&
        (clickSet.has(el) || el.hasAttribute('onclick') || (pointer && !st.ptr) || el.getAttribute('draggable') === 'true')) {
        role = 'clickable';
        kind = 'c';
      }
      if (kind && (vh || !shown(el, cs, clip))) kind = '';
      // A control that lets the pointer through is not one a person
      // clicks (its fields can still be typed in).
      if (kind && cs.pointerEvents === 'none' && !VALUE_ROLES.has(role) && role !== 'textbox') kind = '';
      if (!kind && tag === 'img' && role === 'img' && all && !st.ii && !vh) {
        // An informative image, for reading.
        const alt = clean(el.getAttribute('alt') || el.getAttribute('title') || '');
        if (alt && shown(el, cs, clip)) {
          flush();
          const it = { k: 'i', n: addNode(el), r: 'img', a: cap(alt, MAXTXT) };
          ctxOf(it, st);
          if (opts.vp || opts.bx) it.b = rectOf(el.getBoundingClientRect());
          items.push(it);
        }
      }
      if (tag === 'img' && el.useMap && !vh && !st.ii) areas(el, st);
      if (cs.contentVisibility === 'hidden') {
        // Its content is skipped (not rendered).
        if (kind) emit(el, tag, role, kind, st, pointer, true);
        return;
      }
      if (tag === 'details' && !el.open) {
        // Only the summary of a closed details element is rendered.
        const sum = el.querySelector(':scope > summary');
        if (sum) visit(sum, st);
        return;
      }
      if (!el.shadowRoot && hosts < 300 && (tag.includes('-') || (HOST_TAGS.test(tag) && !el.firstElementChild && !el.textContent.trim()))) {
        // A possible closed shadow root: package tabs looks.
        const r = tag.includes('-') ? null : el.getBoundingClientRect();
        if (!r || (r.width > 0 && r.height > 0)) {
          hosts++;
          flush();
          const it = { k: 's', n: addNode(el) };
          ctxOf(it, st);
          if (st.ii) it.ii = 1;
          items.push(it);
        }
      }
      if (kind) {
        emit(el, tag, role, kind, st, pointer);
        return;
      }
      if (over && !st.ii && !vh && el !== doc.documentElement && el !== doc.body) {
        const sp = scrollPos(el, cs);
        if (sp) {
          // A scroll container, with where it stands.
          flush();
          const it = { k: 'e', n: addNode(el), r: 'scrollable', a: nameOf(el, tag, 'scrollable', '') || cap(words(el.id || el.getAttribute('class') || '', []).slice(0, 3).join(' '), 40), sp };
          ctxOf(it, st);
          if (opts.vp || opts.bx) it.b = rectOf(el.getBoundingClientRect());
          if (opts.bx) it.sb = 1;
          items.push(it);
        }
      }
      let ns = st;
      if (pointer !== !!st.ptr) ns = child(ns, { ptr: pointer });
      if (CONTAINERS.has(role)) {
        const ci = containers.length;
        // List items and rows share a line (cg); an article is too large.
        let gid = 0;
        if (role !== 'article') {
          G.cg = (G.cg || 0) + 1;
          gid = G.cg;
        }
        containers.push([buf.length, -1, el.getAttribute('aria-label') || '', gid]);
        walkKids(el, child(ns, { ci }));
        containers[ci][1] = buf.length;
        if (!inline) flush();
        return;
      }
      if (tag === 'label') ns = child(ns, { cov: true });
      if (st.ii && tag === 'figure') {
        // In a name, a figure says its caption, its own name, or nothing
        // (as Chrome's accessible names do).
        for (const k of kidsOf(el)) {
          const cap = k.nodeType === 1 && k.localName === 'figcaption';
          if (!cap) buf.push(OFF);
          if (k.nodeType === 1) visit(k, ns);
          else if (k.nodeType === 3) text(k, ns);
          if (!cap) buf.push(ON);
        }
        return;
      }
      if (st.ii && NAME_BREAK.has(role)) {
        buf.push(OFF);
        walkKids(el, ns);
        buf.push(ON);
        return;
      }
      if (role === 'heading') {
        flush();
        const from = buf.length;
        const it = { k: 'h', n: addNode(el), r: role };
        if (all) items.push(it);
        ctxOf(it, st);
        walkKids(el, child(ns, { cov: true }));
        const name = nameOf(el, tag, role, joinText(from));
        it.a = name;
        const lv = parseInt(el.getAttribute('aria-level') || (/^h[1-6]$/.test(tag) ? tag[1] : '2'), 10);
        it.lv = lv > 0 ? lv : 2;
        if (opts.vp) it.b = rectOf(el.getBoundingClientRect());
        // As a context, the heading's first text: "History", not
        // "History[edit]" with the text of the links in it.
        st.sc.hd = cap(firstText(from, buf.length) || name, 64);
        buf.push(' ');
        return;
      }
      if (role === 'dialog' || role === 'alertdialog') {
        flush();
        const it = { k: 'd', n: addNode(el), r: role };
        const s = states(el, tag, role, active);
        if (s.length) it.s = s;
        // A dialog out of a person's sight (parked off screen, hidden)
        // is none they can act in.
        if ((all || s.includes('modal')) && !vh && shown(el, cs, clip)) items.push(it);
        ctxOf(it, st);
        if (opts.vp || opts.bx) it.b = rectOf(el.getBoundingClientRect());
        let name = nameOf(el, tag, role, '');
        if (!name) {
          // Unlabelled: its first heading says what it is.
          const h = el.querySelector('h1,h2,h3,h4,h5,h6,[role=heading]');
          if (h) name = cap(clean(h.textContent), 80);
        }
        it.a = name;
        walkKids(el, child(ns, { g: 'dialog', lm: name || 'dialog', sc: { hd: '' } }));
        flush();
        return;
      }
      if (role === 'alert') {
        flush();
        const it = { k: 'l', r: role, a: nameOf(el, tag, role, '') };
        if (all) items.push(it);
        ctxOf(it, st);
        walkKids(el, ns);
        flush();
        return;
      }
      const lw = LANDMARK[role];
      if (lw) {
        const name = nameOf(el, tag, role, '');
        if (role !== 'region' || name) {
          flush();
          const g = REGION[role] && st.g !== 'dialog' ? role : st.g;
          const it = { k: 'l', r: role, a: name };
          if (all) items.push(it);
          ctxOf(it, st);
          walkKids(el, child(ns, { g, lm: name || lw, sc: { hd: '' } }));
          flush();
          return;
        }
      }
      if (role === 'list' && all) {
        flush();
        let c = 0;
        for (const k of el.children) if (k.localName === 'li' || k.getAttribute('role') === 'listitem') c++;
        const it = { k: 'L', r: 'list', c };
        ctxOf(it, st);
        items.push(it);
      }
      if (role === 'combobox' && el.getAttribute('aria-expanded') !== 'true') ns = child(ns, { ni: true });
      walkKids(el, ns);
      if (!inline) {
        flush();
        buf.push(' ');
      }
    }

    // emit adds an element a person acts on, then walks its subtree (for
    // its name, and for the elements nested in it).
    function emit(el, tag, role, kind, st, pointer, skipKids) {
      flush();
      const it = { k: 'e', n: addNode(el), r: role };
      items.push(it);
      ctxOf(it, st);
      if (st.ci !== undefined) it.ci = st.ci;
      if (el === anchor) it.an = 1;
      const from = buf.length;
      const mark = items.length;
      const ns = child(st, {
        ii: true, cov: true, ptr: pointer,
        ni: st.ni || (role === 'combobox' && el.getAttribute('aria-expanded') !== 'true'),
      });
      if (skipKids) {
        // nothing rendered inside
      } else if (tag === 'select' && role === 'listbox') {
        for (const o of el.options) visit(o, ns);
      } else if (tag !== 'select' && tag !== 'textarea') {
        walkKids(el, ns);
      }
      const content = role === 'textbox' || role === 'searchbox' ? '' : joinText(from);
      it.a = cap(nameOf(el, tag, role, content), MAXTXT);
      if (!it.a && role === 'canvas' && el.id) it.a = words(el.id, []).join(' ');
      let icon = false;
      if (!it.a && ICON_NAMED.has(role)) {
        it.a = iconName(el);
        icon = !!it.a;
      } else if (it.a && ICON_NAMED.has(role) && !el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby') &&
        !el.hasAttribute('title') && el.querySelector('img,svg,picture') && !ownText(el)) {
        // Named by the text alternative of the only picture it shows.
        icon = true;
      }
      const ctl = stands.get(el);
      const s = ctl ? states(ctl, ctl.localName, role, active) : states(el, tag, role, active);
      if (icon) s.push('icon');
      if (el.getAttribute('draggable') === 'true' && tag !== 'a' && tag !== 'img') s.push('draggable');
      if (!ctl && kind === 'c' && !s.includes('upload') && el.querySelector('input[type=file]')) s.push('upload');
      if (s.length) it.s = s;
      if (tag === 'input' && TYPED.has(el.type)) it.ty = el.type;
      if (tag === 'input' && el.type === 'color') it.v = el.value;
      if (VALUE_ROLES.has(role)) {
        let v = valueOf(el, tag, role);
        if (v && tag !== 'input' && tag !== 'textarea') v = role === 'textbox' || role === 'searchbox' ? v.replace(/\n+$/, '') : clean(v);
        if (v) {
          if (v.length > MAXVAL) {
            it.vl = v.length;
            v = v.slice(0, MAXVAL);
          }
          it.v = v;
        }
      }
      const rk = rowKey(el, rowTexts);
      if (rk) it.rk = rk;
      const lk = labelKey(el);
      if (lk) it.lk = lk;
      if (tag === 'select' && role === 'combobox') it.o = Array.from(el.options, (o) => cap(clean(o.label || o.textContent), 80));
      if (role === 'link') it.u = linkURL(el);
      // A canvas, an image, or a control with nothing inside to aim at
      // shows its box, for a click at a point.
      const aim = role === 'canvas' || tag === 'img' || (kind === 'c' && !el.firstElementChild && !clean(el.textContent));
      if (opts.vp || opts.bx || aim) it.b = rectOf(el.getBoundingClientRect());
      if (opts.bx || aim) it.sb = 1;
      if (kind === 'c') {
        // A wrapper with no name, or whose content is one element that
        // says the same: that element is the one to act on.
        const inner = items.slice(mark).filter((x) => x.k === 'e');
        if (!it.a || (inner.length === 1 && inner[0].a === it.a)) {
          items.splice(mark - 1, 1);
          return;
        }
      }
      buf.push(' ');
    }

    if (start.nodeType === 9) {
      if (start.documentElement) visit(start.documentElement, st0);
    } else if (start.nodeType === 1) {
      visit(start, st0);
    } else {
      walkKids(start, st0);
    }
    flush();
    for (const it of items) {
      if (it.ci === undefined) continue;
      const c = containers[it.ci];
      let t = clean(c[2] || '');
      if (!t || t === it.a) {
        t = '';
        for (let i = c[0]; i < c[1]; i++) {
          const b = buf[i];
          if (typeof b !== 'string') continue;
          const x = cap(clean(b), 64);
          if (x && x !== it.a) {
            t = x;
            break;
          }
        }
      }
      if (t) it.ct = t;
      if (c[3]) it.cg = c[3];
      delete it.ci;
    }
    return { items, scrollers, frames };
  }

  function initial() {
    const st = { g: '', lm: '', sc: { hd: '' }, vh: false };
    if (root.nodeType === 9) st.clip = st.pclip = docClip(doc);
    const inh = opts.inh;
    if (inh) {
      st.g = inh.g || '';
      st.lm = inh.lm || '';
      st.sc.hd = inh.hd || '';
      if (inh.ii) st.ii = true;
    }
    return st;
  }

  function finish(items, report, frames) {
    const nodes = [];
    const ni = [];
    // Up to opts.refs numbered items, their nodes come now too (saving
    // the pick).
    let numbered = 0;
    const modal = (it) => it.k === 'd' && it.s && it.s.includes('modal');
    for (const it of items) if (it.k === 'e' || ((it.k === 'h' || it.k === 'd') && all) || modal(it)) numbered++;
    const refs = opts.refs && numbered <= opts.refs;
    const sent = new Set();
    items.forEach((it, i) => {
      if (sent.has(it.n)) return;
      if (it.k === 'f' || it.k === 's' || it.k === 'm' || (refs && (it.k === 'e' || ((it.k === 'h' || it.k === 'd') && all) || modal(it)))) {
        ni.push(i);
        nodes.push(els[it.n]);
        sent.add(it.n);
      }
    });
    const se = doc.scrollingElement || doc.documentElement;
    const out = {
      u: doc.location ? doc.location.href : '', t: doc.title || '',
      vw: win.innerWidth, vh: win.innerHeight, sx: win.scrollX, sy: win.scrollY,
      sw: se ? se.scrollWidth : 0, sh: se ? se.scrollHeight : 0,
      items, ni,
    };
    if (report) out.sc = report;
    if (frames && frames.length) out.fr = frames;
    if (refs) out.ra = 1;
    out.ms = Math.round(performance.now() - started);
    return [JSON.stringify(out), nodes];
  }

  if (!opts.scroll) {
    const w = walkOnce(root, initial());
    return finish(w.items, null, w.frames);
  }
  return scrollAll();

  // scrollAll scrolls every scroll container through its content, walking
  // after each step, and merges the walks: an item new in a walk goes after
  // the item before it in that walk. Items whose node is gone at the end
  // (a virtualised list dropped it) get the state "offscreen".
  async function scrollAll() {
    const o = opts.scroll === true ? {} : opts.scroll;
    const deadline = Date.now() + (o.ms || 10000);
    const maxSteps = o.steps || 200;
    const first = walkOnce(root, initial());
    const key = (it) => (it.n === undefined ? null : els[it.n]);
    // What a node shows: a virtualised list reuses its nodes for other
    // items, and each item it showed is an entry of its own.
    const shows = (it) => it.k + '\u0001' + (it.rk !== undefined ? it.rk : it.k === 't' ? it.a : '');
    // A linked list of the merged items, and the entries of each node, by
    // what it showed.
    const head = { next: null };
    const entry = new Map();
    const entryOf = (k, it) => {
      const m = entry.get(k);
      return m && m.get(shows(it));
    };
    const setEntry = (k, it, e) => {
      let m = entry.get(k);
      if (!m) entry.set(k, (m = new Map()));
      m.set(shows(it), e);
    };
    let tail = head;
    for (const it of first.items) {
      const e = { it, next: null };
      tail.next = e;
      tail = e;
      const k = key(it);
      if (k) setEntry(k, it, e);
    }
    const report = { containers: 0, complete: 0, steps: 0, found: 0, timedOut: false };
    const merge = (items) => {
      let cur = head;
      for (const it of items) {
        const k = key(it);
        if (!k) continue;
        const e = entryOf(k, it);
        if (e) {
          e.it = it;
          cur = e;
          continue;
        }
        const ne = { it, next: cur.next };
        cur.next = ne;
        cur = ne;
        setEntry(k, it, ne);
        if (it.k === 'e') report.found++;
      }
    };
    // stateOf is the walk state at a scroll container: its region.
    const stateOf = (el) => {
      const st = initial();
      const lm = el.closest('main,[role=main],nav,[role=navigation],aside,[role=complementary],dialog,[role=dialog]');
      if (lm) {
        const r = lm.getAttribute('role') || { main: 'main', nav: 'navigation', aside: 'complementary', dialog: 'dialog' }[lm.localName];
        st.g = r;
      }
      return st;
    };
    const settle = () => new Promise((res) => {
      let done = false;
      const fin = () => { if (!done) { done = true; res(); } };
      requestAnimationFrame(() => requestAnimationFrame(fin));
      setTimeout(fin, 120);
    });
    const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
    // byTop orders the items of a walk by where they show, top to bottom
    // (stable: an item without a node stays after the one before it).
    const byTop = (items) => {
      let top = -Infinity;
      const d = items.map((it, i) => {
        const k = key(it);
        if (k) {
          let r = null;
          if (k.nodeType === 3) {
            const rg = k.ownerDocument.createRange();
            rg.selectNodeContents(k);
            r = rg.getBoundingClientRect();
          } else if (k.getBoundingClientRect) r = k.getBoundingClientRect();
          if (r && (r.width || r.height)) top = Math.round(r.top);
        }
        return [top, i, it];
      });
      d.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      return d.map((x) => x[2]);
    };
    // scrollEvent listens, from now, for the next scroll event at target;
    // calling what it returns waits for it, at most ms.
    const scrollEvent = (target) => {
      let seen = false;
      let wake = null;
      const on = () => { seen = true; if (wake) wake(); };
      target.addEventListener('scroll', on, { once: true, passive: true });
      return (ms) => new Promise((res) => {
        const fin = () => { target.removeEventListener('scroll', on); res(); };
        if (seen) return fin();
        wake = fin;
        setTimeout(fin, ms);
      });
    };
    const page = doc.scrollingElement || doc.documentElement;
    const list = [page, ...first.scrollers];
    const saved = list.map((el) => [el, el.scrollLeft, el.scrollTop]);
    for (const sc of list) {
      const vertical = sc.scrollHeight > sc.clientHeight + 20;
      const horizontal = !vertical && sc.scrollWidth > sc.clientWidth + 20;
      if (!vertical && !horizontal) continue;
      report.containers++;
      let steps = 0;
      let complete = false;
      const walkSc = () => merge(sc === page ? walkOnce(root, initial()).items : byTop(walkOnce(sc, stateOf(sc)).items));
      if ((vertical ? sc.scrollTop : sc.scrollLeft) > 0) {
        // Through all of it: from its start.
        const scrolled = scrollEvent(sc === page ? doc : sc);
        if (vertical) sc.scrollTop = 0;
        else sc.scrollLeft = 0;
        await scrolled(1500);
        await settle();
        walkSc();
      }
      while (steps < maxSteps) {
        if (Date.now() > deadline) {
          report.timedOut = true;
          break;
        }
        const before = vertical ? sc.scrollTop : sc.scrollLeft;
        const size = vertical ? sc.scrollHeight : sc.scrollWidth;
        const by = Math.max(40, Math.floor((vertical ? sc.clientHeight : sc.clientWidth) * 0.85));
        const scrolled = scrollEvent(sc === page ? doc : sc);
        if (vertical) sc.scrollTop = before + by;
        else sc.scrollLeft = before + by;
        const after = vertical ? sc.scrollTop : sc.scrollLeft;
        // The page renders what came into view in its scroll listeners:
        // wait for the scroll event (dispatched with the next frame, late
        // on a busy machine), then a frame for what they scheduled.
        await scrolled(after > before ? 1500 : 0);
        await settle();
        if (after <= before) {
          // At the end: an infinite list may load more.
          await sleep(400);
          if ((vertical ? sc.scrollHeight : sc.scrollWidth) > size) continue;
          complete = true;
          break;
        }
        steps++;
        report.steps++;
        // The page: walk it all; a container: its subtree only, in the
        // order its items show (a list that reuses its nodes moves them
        // about).
        walkSc();
      }
      if (complete) report.complete++;
    }
    // Back where they were, and rendered there: the list re-renders in
    // its scroll listener.
    const back = [];
    for (let i = saved.length - 1; i >= 0; i--) {
      const [el, x, y] = saved[i];
      if (el.scrollLeft === x && el.scrollTop === y) continue;
      const scrolled = scrollEvent(el === page ? doc : el);
      el.scrollLeft = x;
      el.scrollTop = y;
      back.push(scrolled(1500));
    }
    await Promise.all(back);
    await settle();
    const last = walkOnce(root, initial());
    merge(last.items);
    // An entry is past when its node is gone, or shows another item now.
    const lastItems = new Set(last.items);
    const lastNodes = new Set();
    for (const it of last.items) {
      const k = key(it);
      if (k) lastNodes.add(k);
    }
    const past = (e, k) => !k.isConnected || (!lastItems.has(e.it) && lastNodes.has(k));
    // A list that makes its rows again when they come back into view has
    // the same element twice: the rendered one stays.
    const sig = (it) => [it.k, it.r, it.a, it.v || '', it.ct || '', it.rk || ''].join('\u0001');
    const live = new Map();
    for (let e = head.next; e; e = e.next) {
      const k = key(e.it);
      if (k && !past(e, k)) live.set(sig(e.it), (live.get(sig(e.it)) || 0) + 1);
    }
    const items = [];
    for (let e = head.next; e; e = e.next) {
      const it = e.it;
      const k = key(it);
      if (k && past(e, k)) {
        const n = live.get(sig(it));
        if (n) {
          live.set(sig(it), n - 1);
          continue;
        }
        if (it.k !== 'e' && it.k !== 't' && it.k !== 'h') continue;
        if (it.k === 'e') it.s = (it.s || []).concat('offscreen');
        delete it.b;
      }
      items.push(it);
    }
    return finish(items, report, last.frames);
  }
}
