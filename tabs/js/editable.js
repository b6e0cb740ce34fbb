// editable.js: prepares an element for fill or type (Runtime.callFunctionOn,
// this = the element; a label acts on its control, a wrapper on the first
// editable inside). It focuses it and selects its whole content, so the next
// Input.insertText replaces it. For input types that take no typed text
// (date, time, color, range, …) it sets the value through the native setter
// and fires input and change, as a person's picker would; it then returns
// {set: true}. A <select> (or its label) returns {select: true} for fill.
// Returns {error} when the element cannot take text.
function (value, mode) {
  const el = this;
  const deepActive = () => { let a = document.activeElement; while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; return a; };
  let editable = el;
  if (el.tagName === 'LABEL' && el.control) {
    editable = el.control;
  }
  if (editable.tagName === 'SELECT') {
    // fill picks an option (the Go side hands it to Select); type cannot.
    return mode === 'fill' ? { select: true } : { error: 'a <select> takes no typed text; use select (or fill) with an option\'s label or value' };
  }
  if (editable !== el) {
    // a label of a control
  } else if (!(el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.isContentEditable)) {
    // A wrapper: act on the first editable inside, else fail.
    editable = el.querySelector('input:not([type=hidden]),textarea,[contenteditable=""],[contenteditable=true]');
    if (!editable) return { error: 'element is not an input, textarea or contenteditable' };
  }
  // Inputs that take no text at all (Playwright: "Input of type … cannot
  // be filled").
  const kind = editable.tagName === 'INPUT' ? (editable.type || '').toLowerCase() : '';
  if (kind === 'checkbox' || kind === 'radio') return { error: 'an input of type ' + kind + ' takes no text; click it to check or uncheck it' };
  if (kind === 'file') return { error: 'an input of type file takes no text; use upload with the files\' paths' };
  if (['button', 'submit', 'reset', 'image'].includes(kind)) return { error: 'an input of type ' + kind + ' is a button and takes no text; click it' };
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  // held is what the input would hold given value (a number dropped,
  // a date in another format sanitised to ""), found on a detached input
  // of the same type and bounds, which the page never sees: a value it
  // would not keep is refused before the field is touched.
  const held = () => {
    const probe = document.createElement('input');
    probe.type = kind;
    for (const a of ['min', 'max', 'step']) if (editable.hasAttribute(a)) probe.setAttribute(a, editable.getAttribute(a));
    setter.call(probe, value);
    return probe.value;
  };
  // A number input drops text that is no number when it is typed, and a
  // failed fill would leave it emptied.
  if (kind === 'number' && mode === 'fill' && value !== '' && held() !== value) {
    return { error: 'an input of type number would not keep ' + JSON.stringify(value) + ': give a number (42, -1.5, 2e3); the field was left as it was', malformed: true };
  }
  const direct = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
  if (direct.includes(kind)) {
    if (mode !== 'fill') return { error: 'an input of type ' + editable.type + ' takes no typed text; use fill' };
    if (editable.disabled) return { error: 'element is disabled' };
    if (editable.readOnly) return { error: 'element is read-only' };
    // A date in another format, a number out of a range's bounds or
    // steps; a color is kept in lower case.
    const h = held();
    if (h !== (kind === 'color' ? value.toLowerCase() : value)) {
      const formats = { date: 'yyyy-mm-dd (2024-03-05)', time: 'HH:MM or HH:MM:SS, 24-hour (14:30)', 'datetime-local': 'yyyy-mm-ddTHH:MM (2024-03-05T14:30)',
        month: 'yyyy-mm (2024-03)', week: 'yyyy-Www (2024-W10)', color: '#rrggbb (#ff8800)' };
      let want = formats[kind];
      if (kind === 'range') {
        want = 'a number from ' + (editable.min || '0') + ' to ' + (editable.max || '100') + (editable.step && editable.step !== 'any' ? ' in steps of ' + editable.step : '');
      }
      return { error: 'an input of type ' + kind + ' would not keep ' + JSON.stringify(value) + ' (it would hold ' + JSON.stringify(h) + '): give ' + want + '; the field was left as it was', malformed: true };
    }
    setter.call(editable, value);
    editable.dispatchEvent(new Event('input', { bubbles: true }));
    editable.dispatchEvent(new Event('change', { bubbles: true }));
    return { set: true, value: editable.value };
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
