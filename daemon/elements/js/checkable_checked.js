// The state after the click; null when the page rendered the element anew (React and the like replace
// the whole list on a change): the old element no longer says anything.
(start) => {
  const el = start === document.documentElement ? null : findCheckable(start);
  return !el ? null : el.tagName === 'INPUT' ? el.checked : el.getAttribute('aria-checked') === 'true';
}
