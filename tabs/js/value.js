// value.js: reads the current text of a field (Runtime.callFunctionOn,
// this = the element): value of input and textarea, innerText of a
// contenteditable, or of the first editable inside a wrapper.
function () {
  let el = this;
  if (el.tagName === 'LABEL' && el.control) el = el.control;
  if (!(el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.isContentEditable)) {
    el = el.querySelector('input:not([type=hidden]),textarea,[contenteditable=""],[contenteditable=true]') || el;
  }
  return el.isContentEditable ? el.innerText : (el.value !== undefined ? String(el.value) : el.textContent);
}
