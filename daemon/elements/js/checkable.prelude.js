// What a target is as a checkable and where a person's click toggles it, shared by elements/checkables.py's
// programs.

const CHECKABLE = 'input[type=checkbox], input[type=radio], [role=checkbox], [role=radio], [role=switch], [role=menuitemcheckbox], [role=menuitemradio]';

// What the target is as a checkable: itself, the control of a label, or the one checkable inside it
// (a ref on the paragraph or row a theme draws around a hidden input).
const findCheckable = (start) => {
  const el = start.tagName === 'LABEL' && start.control ? start.control : start;
  if (el.matches(CHECKABLE)) return el;
  const inside = el.querySelectorAll(CHECKABLE);
  return inside.length === 1 ? inside[0] : null;
};

// Where a person's click toggles it: the input when a click at its centre lands on it, else a visible
// label of it, else the (visible) element the target named around it, else nothing.
const whereToClick = (start, el) => {
  const native = el.tagName === 'INPUT';
  // Opacity 0 is no reason: themes lay a transparent input over their drawing so that it takes the click.
  const shown = (node) => {
    const box = node.getBoundingClientRect();
    return box.width > 1 && box.height > 1 && getComputedStyle(node).visibility !== 'hidden';
  };
  const labels = [...(el.labels || [])];
  // Where a click at the input's centre lands: the input, one of its labels (drawn over it), or elsewhere.
  const landing = () => {
    if (!shown(el)) return null;
    el.scrollIntoView({ block: 'center', inline: 'center' });
    const box = el.getBoundingClientRect();
    const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    if (top && (top === el || el.contains(top))) return el;
    return labels.find((label) => label.contains(top)) || null;
  };
  return !native ? el
    : landing() || labels.find((label) => shown(label) || [...label.children].some(shown))
      || (start !== el && shown(start) ? start : null);
};
