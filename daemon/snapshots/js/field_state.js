// What tells a fill that changed one field's value and nothing else from any other change, read with the page
// facts (page_facts.js): a snapshot after such a fill is the last one with that field's line rewritten
// (snapshots/field_edit.py). [a hash of each form control's state in document order, the index of the focused
// control (-1: none), its value, whether nothing else can have changed what a snapshot shows].
//
// The DOM records its own changes (settle_tracker.js); the state of controls (value, checked, the chosen
// options) and what style rules make of focus or validity do not leave a record, so they are read here: a
// control another field's handler set shows in the hashes, and the page must not style by the state a fill
// changes (focus, validity, a placeholder shown) beyond colours and outlines, nor animate, nor hold shadow
// roots, nor name another element by the field's value (a label or aria-labelledby around it).
// `shadows`: whether the page holds a shadow root (page_facts.js has walked every element already).
(shadows) => {
  const controls = [...document.querySelectorAll('input, textarea, select')];
  const hash = (text) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return h >>> 0;
  };
  const stateOf = (e) => e.tagName === 'SELECT'
    ? [...e.options].map((o) => (o.selected ? '1' : '0')).join('')
    : `${e.value}\u0001${e.checked ? 1 : 0}${e.indeterminate ? 1 : 0}`;
  const focused = document.activeElement;
  const index = controls.indexOf(focused);
  const hashes = controls.map((e) => hash(stateOf(e)));
  // Only a focused field can have been filled: the rest is read for that case alone.
  if (index < 0 || focused.tagName === 'SELECT') return [hashes, index, null, false];

  const s = window.__browserdSettle;
  if (!s) return [hashes, index, null, false];  // a document opened before browserd: no record of its changes
  const cosmetic = s.cosmetic;
  // The states a fill changes: the focus it moves, the validity and the placeholder of the field it edits.
  const state = /:(focus|focus-within|focus-visible|placeholder-shown|valid|invalid|user-valid|user-invalid|in-range|out-of-range|blank|autofill|-webkit-autofill)\b/;
  const stylesOnState = (rules, inState) => {
    for (const rule of rules) {
      const onState = inState || (rule.selectorText !== undefined && state.test(rule.selectorText));
      if (onState && rule.style) {
        for (let i = 0; i < rule.style.length; i++) if (!cosmetic.test(rule.style[i])) return true;
      }
      // Grouping and nested rules hold theirs; an @import holds a sheet that document.styleSheets leaves out.
      const inner = rule.cssRules || (rule.styleSheet && rule.styleSheet.cssRules);
      if (inner && stylesOnState(inner, onState)) return true;
    }
    return false;
  };
  const sheets = [...document.styleSheets, ...(document.adoptedStyleSheets || [])];
  // Read again only after the DOM or the sheets changed: a form filled field by field reads them once.
  const key = `${sheets.length}/${sheets.reduce((n, sheet) => { try { return n + sheet.cssRules.length; } catch (e) { return n + 1e6; } }, 0)}/${s.lastActivity}`;
  let styled = s.styledByState && s.styledByState.key === key ? s.styledByState.value : undefined;
  if (styled === undefined) {
    try {
      styled = sheets.some((sheet) => stylesOnState(sheet.cssRules, false));
    } catch (e) {
      styled = true;  // a sheet of another origin cannot be read
    }
    s.styledByState = { key, value: styled };
  }
  // Running, or finished and holding its last frame: what it moves counts unless it is all colour.
  const kebab = (name) => name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
  const timing = new Set(['offset', 'computedOffset', 'easing', 'composite']);
  const moving = document.getAnimations().some((a) => !(a.transitionProperty ? cosmetic.test(a.transitionProperty)
    : a.effect && a.effect.getKeyframes().every((frame) => Object.keys(frame)
      .every((name) => timing.has(name) || cosmetic.test(kebab(name))))));
  const label = focused.closest('label');
  const names = (label && label.control !== focused)
    || [...document.querySelectorAll('[aria-labelledby]')].some((e) => e.getAttribute('aria-labelledby').split(/\s+/)
      .some((id) => { const named = id && document.getElementById(id); return named && named.contains(focused); }));
  return [hashes, index, focused.value, !styled && !moving && !shadows && !names];
}
