// A field's value as a person reads it: what an input holds, a rich-text editor's text, or the value an
// ARIA slider or spinbutton announces; null for an element that has no value.
(e) => {
  const el = e.tagName === 'LABEL' && e.control ? e.control : e;
  if ('value' in el && ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName)) return el.value;
  // Paragraph margins come out of innerText as blank lines: one line per paragraph, as it was written.
  if (el.isContentEditable) return el.innerText.replace(/\n\n+/g, '\n').replace(/\n$/, '');
  return el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow');
}
