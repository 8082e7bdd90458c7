// The native <select> behind a choice widget, shared by the programs of elements/choices.py.

// A <select> kept out of people's sight: the mirror of a widget drawn in its place.
const hidden = (el) => {
  const box = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  return box.width <= 1 || box.height <= 1 || style.visibility === 'hidden' || style.opacity === '0'
    || el.getAttribute('aria-hidden') === 'true';
};

// How far up from the widget a mirrored <select> is looked for: Select2 puts its combobox three levels
// inside the container that follows the <select>; farther up is the form, holding other fields' selects.
const MIRROR_DEPTH = 4;

// The native <select> behind the target: the target itself, a label's control, or a select hidden from
// view (so it is the widget's mirror, not a field of its own) inside or just before one of its ancestors.
// The climb stops where an ancestor holds a control of something else: that is the form, not the widget.
const nativeSelect = (start) => {
  if (start.tagName === 'SELECT') return start;
  if (start.tagName === 'LABEL' && start.control && start.control.tagName === 'SELECT') return start.control;
  const CONTROLS = 'input:not([type=hidden]), textarea, button, select, [role=combobox], [contenteditable=""], '
    + '[contenteditable=true]';
  const foreign = (node) => [...node.querySelectorAll(CONTROLS)].some(
    (el) => !start.contains(el) && !el.contains(start) && !hidden(el));
  let node = start;
  for (let depth = 0; node && node !== document.body && depth < MIRROR_DEPTH; depth++, node = node.parentElement) {
    if (foreign(node)) return null;
    const inside = node.querySelectorAll('select');
    if (inside.length > 1) return null;
    if (inside.length === 1) return hidden(inside[0]) ? inside[0] : null;
    const before = node.previousElementSibling;
    if (before && before.tagName === 'SELECT') return hidden(before) ? before : null;
  }
  return null;
};
