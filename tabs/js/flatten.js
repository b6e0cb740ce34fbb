// flatten.js: serialises the rendered DOM of the top frame for extraction,
// evaluated with Runtime.evaluate. Open shadow roots are flattened into
// their hosts (slots replaced by the nodes assigned to them), form fields
// carry their current values, and scripts are dropped but for JSON-LD
// metadata, so content that scripts built counts.
// Returns the HTML text of the document.
(() => {
  const clone = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.data);
    if (node.nodeType !== Node.ELEMENT_NODE) return null;
    const tag = node.tagName;
    // Scripts go, but for JSON-LD, which carries the title, byline and
    // excerpt metadata that Readability reads.
    if (tag === 'TEMPLATE') return null;
    if (tag === 'SCRIPT') {
      if (!/ld\+json/i.test(node.type || '')) return null;
      const k = node.cloneNode(false);
      k.textContent = node.textContent;
      return k;
    }
    if (tag === 'NOSCRIPT') {
      // Keep its markup (lazy images' fallbacks) as Readability expects.
      const k = node.cloneNode(false);
      k.innerHTML = node.innerHTML;
      return k;
    }
    if (tag === 'SLOT') {
      const frag = document.createDocumentFragment();
      const assigned = node.assignedNodes({ flatten: true });
      for (const c of (assigned.length ? assigned : node.childNodes)) { const k = clone(c); if (k) frag.appendChild(k); }
      return frag;
    }
    const out = node.cloneNode(false);
    if (tag === 'INPUT' || tag === 'TEXTAREA') out.setAttribute('value', node.value);
    const kids = node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
    for (const c of kids) { const k = clone(c); if (k) out.appendChild(k); }
    return out;
  };
  const html = clone(document.documentElement);
  return '<!DOCTYPE html>' + html.outerHTML;
})()
