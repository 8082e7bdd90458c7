// What the target is as a checkable, in one read that hands back no object: `click` says where the click
// goes ("target": the target itself, so its locator clicks it; "other": a label or wrapper, fetched
// only then; null: nothing a person sees).
(start) => {
  const el = findCheckable(start);
  if (!el) return { kind: 'none', tag: start.tagName.toLowerCase() };
  const native = el.tagName === 'INPUT';
  const clickAt = whereToClick(start, el);
  return { kind: native ? el.type : el.getAttribute('role'),
    checked: native ? el.checked : el.getAttribute('aria-checked') === 'true',
    disabled: el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true',
    click: !clickAt ? null : clickAt === start ? 'target' : 'other',
    viaLabel: !!clickAt && clickAt !== el && clickAt !== start };
}
