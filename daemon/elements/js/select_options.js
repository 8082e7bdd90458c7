// The labels of a <select>'s options (or of the <select> a label names).
(start) => {
  const select = start.tagName === 'SELECT' ? start : start.control;
  return [...select.options].map((o) => o.label || o.text).slice(0, 30);
}
