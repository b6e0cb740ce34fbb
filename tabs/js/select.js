// select.js: the option matching of tab.select (DESIGN.md section 3),
// called on the target element with Runtime.callFunctionOn (this = the
// element) as fn(mode, values).
//
// mode "native": when the element is (or labels, or wraps) a native
// <select>, it matches every value against the options, by visible label
// first, then by value (then by label, ignoring case), and only when all
// match does it select them (deselecting the others) and fire input and
// change, as a person's pick does. Returns {native: true, selected:
// [{label, value}]}, {missing, options} when a value matches nothing (and
// nothing changed), {error} for a disabled select or option or several
// values on a single select, or {native: false} for anything else.
//
// mode "widget": for a custom ARIA widget (combobox, listbox, or a button
// that opens one), it finds the listbox (aria-controls, aria-owns, the
// element itself, else the visible listboxes of the document), matches the
// values against its [role=option] elements by accessible name first, then
// by value (data-value, value attribute). Returns {found: false} while no
// option is visible, {missing, options}, or {picked: n, names}.
//
// mode "pick": as "widget" for one value, and returns its option element
// (by reference, for the caller to click), or the reply of "widget" when
// no option matches. Nothing is kept on the page between calls: a page
// script sees no property of tabpilot's on its elements.
//
// mode "state": the widget's shown value (an input's value, else its text)
// and its aria-expanded, to verify the pick.
function (mode, values) {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  let el = this;
  if (el.tagName === 'LABEL' && el.control) el = el.control;
  if (mode === 'native') {
    if (el.tagName !== 'SELECT' && el.querySelector) {
      const inner = el.querySelectorAll('select');
      if (inner.length === 1 && !el.matches('[role=combobox],[role=listbox]')) el = inner[0];
    }
    if (el.tagName !== 'SELECT') return { native: false };
    if (el.disabled || el.closest('fieldset:disabled')) return { error: 'the select is disabled' };
    const opts = Array.from(el.options);
    const picked = [];
    for (const v of values) {
      const o = opts.find((o) => norm(o.label) === norm(v)) || opts.find((o) => o.value === v) ||
        opts.find((o) => norm(o.label).toLowerCase() === norm(v).toLowerCase());
      if (!o) return { missing: v, options: opts.map((o) => norm(o.label) || o.value) };
      if (o.disabled || (o.parentElement && o.parentElement.tagName === 'OPTGROUP' && o.parentElement.disabled)) {
        return { error: 'option "' + norm(o.label) + '" is disabled' };
      }
      if (!picked.includes(o)) picked.push(o);
    }
    if (picked.length > 1 && !el.multiple) return { error: 'it takes one value, not ' + picked.length + ' (it is not a multiple select)' };
    for (const o of opts) o.selected = picked.includes(o);
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { native: true, selected: Array.from(el.selectedOptions).map((o) => ({ label: norm(o.label), value: o.value })) };
  }
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  const byIds = (attr) => (el.getAttribute(attr) || '').split(/\s+/).filter(Boolean)
    .map((id) => el.getRootNode().getElementById ? el.getRootNode().getElementById(id) : document.getElementById(id)).filter(Boolean);
  const nameOf = (o) => {
    const l = o.getAttribute('aria-label');
    if (l) return norm(l);
    const lb = o.getAttribute('aria-labelledby');
    if (lb) {
      const t = lb.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean).map((e) => e.textContent).join(' ');
      if (norm(t)) return norm(t);
    }
    return norm(o.innerText !== undefined ? o.innerText : o.textContent);
  };
  const valueOf = (o) => o.getAttribute('data-value') || o.getAttribute('value') || '';
  if (mode === 'state') {
    const shown = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' ? el.value : norm(el.innerText);
    return { shown, expanded: el.getAttribute('aria-expanded') };
  }
  // mode 'widget' or 'pick'
  let boxes = [...byIds('aria-controls'), ...byIds('aria-owns')];
  if (el.matches('[role=listbox]') || el.querySelector('[role=option]')) boxes.unshift(el);
  boxes = boxes.filter((b) => b.matches('[role=listbox]') || b.querySelector('[role=option]'));
  if (!boxes.some(visible)) {
    const all = Array.from(document.querySelectorAll('[role=listbox]')).filter(visible);
    boxes = all;
  }
  let options = [];
  for (const b of boxes) {
    options.push(...(b.matches('[role=option]') ? [b] : Array.from(b.querySelectorAll('[role=option]'))));
  }
  options = options.filter(visible);
  if (!options.length) return { found: false };
  const picked = [];
  for (const v of values) {
    const o = options.find((o) => nameOf(o) === norm(v)) || options.find((o) => valueOf(o) === v) ||
      options.find((o) => nameOf(o).toLowerCase() === norm(v).toLowerCase());
    if (!o) return { missing: v, options: options.map(nameOf).slice(0, 30) };
    if (o.getAttribute('aria-disabled') === 'true') return { error: 'option "' + nameOf(o) + '" is disabled' };
    if (!picked.includes(o)) picked.push(o);
  }
  if (mode === 'pick') return picked[0];
  return { picked: picked.length, names: picked.map(nameOf) };
}
