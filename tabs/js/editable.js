// editable.js: prepares an element for fill (Runtime.callFunctionOn, this =
// the element). It focuses it and selects its whole content, so the next
// Input.insertText replaces it. For input types that take no typed text
// (date, time, color, range, …) it sets the value through the native setter
// and fires input and change, as a person's picker would; it then returns
// {set: true}. Returns {error} when the element cannot take text.
function (value, mode) {
  const el = this;
  const deepActive = () => { let a = document.activeElement; while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; return a; };
  const tag = el.tagName;
  const direct = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
  if (tag === 'INPUT' && direct.includes((el.type || '').toLowerCase())) {
    if (mode !== 'fill') return { error: 'an input of type ' + el.type + ' takes no typed text; use fill' };
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    setter.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { set: true, value: el.value };
  }
  let editable = el;
  if (!(tag === 'INPUT' || tag === 'TEXTAREA' || el.isContentEditable)) {
    // A wrapper: act on the first editable inside, else fail.
    editable = el.querySelector('input:not([type=hidden]),textarea,[contenteditable=""],[contenteditable=true]');
    if (!editable) return { error: 'element is not an input, textarea or contenteditable' };
  }
  if (editable.disabled) return { error: 'element is disabled' };
  if (editable.readOnly) return { error: 'element is read-only' };
  editable.focus();
  const a = deepActive();
  if (a !== editable && !editable.contains(a)) return { error: 'element did not take focus' };
  if (mode === 'fill') {
    if (editable.isContentEditable) {
      const r = document.createRange();
      r.selectNodeContents(editable);
      const s = window.getSelection();
      s.removeAllRanges();
      s.addRange(r);
    } else {
      editable.select();
    }
  } else if (!editable.isContentEditable && typeof editable.selectionStart === 'number') {
    try { editable.setSelectionRange(editable.value.length, editable.value.length); } catch (e) { /* email, number */ }
  } else if (editable.isContentEditable) {
    const r = document.createRange();
    r.selectNodeContents(editable);
    r.collapse(false);
    const s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }
  return { value: editable.isContentEditable ? editable.innerText : editable.value };
}
