// The fingerprint's prelude: how an element is described, shared by capture.js (recording) and resolve.js
// (replay) so that a replay compares a description computed exactly as the recorded one was.
// Plain declarations, put in scope by page_js.with_prelude.
const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
const short = (s, n = 80) => { s = norm(s); return s.length > n ? s.slice(0, n) : s; };
// Generated ids and hashed classes change between builds: never build a selector on them.
const stableToken = (t) => !!t && t.length < 40 && !/\d{2,}|[:]|^(css|sc|jsx|emotion|svelte)-/i.test(t)
  && !/[a-z][A-Z0-9].*[0-9]|[0-9][a-zA-Z]+[0-9]/.test(t);
const TESTID_ATTRS = ['data-testid', 'data-test-id', 'data-test', 'data-qa', 'data-cy'];
const testidOf = (el) => { for (const a of TESTID_ATTRS) { const v = el.getAttribute(a); if (v) return [a, v]; } return null; };
const INPUT_ROLES = { checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button',
  image: 'button', range: 'slider', number: 'spinbutton', search: 'searchbox' };
const roleOf = (el) => {
  const explicit = el.getAttribute('role');
  if (explicit) return explicit.split(/\s+/)[0];
  const tag = el.localName;
  if (tag === 'button' || tag === 'summary') return 'button';
  if (tag === 'a' || tag === 'area') return el.hasAttribute('href') ? 'link' : '';
  if (tag === 'textarea') return 'textbox';
  if (tag === 'select') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
  if (tag === 'option') return 'option';
  if (/^h[1-6]$/.test(tag)) return 'heading';
  if (tag === 'img') return 'img';
  if (tag === 'input') {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (type === 'hidden') return '';
    return INPUT_ROLES[type] || 'textbox';
  }
  if (el.isContentEditable) return 'textbox';
  return '';
};
const byId = (el, id) => { const r = el.getRootNode(); return (r.getElementById ? r.getElementById(id) : null) || document.getElementById(id); };
const labelOf = (el) => {
  if (el.labels && el.labels.length) return short([...el.labels].map((l) => l.textContent).join(' '));
  const by = el.getAttribute('aria-labelledby');
  if (by) return short(by.split(/\s+/).map((id) => { const n = byId(el, id); return n ? n.textContent : ''; }).join(' '));
  return '';
};
const nameOf = (el) => {
  const aria = el.getAttribute('aria-label');
  if (aria) return short(aria);
  const label = labelOf(el);
  if (label) return label;
  const tag = el.localName;
  if (tag === 'input') {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (['submit', 'button', 'reset'].includes(type)) return short(el.value || type);
    if (type === 'image') return short(el.alt || '');
    return short(el.getAttribute('title') || el.getAttribute('placeholder') || '');
  }
  if (tag === 'img') return short(el.alt || '');
  if (['textarea', 'select'].includes(tag)) return short(el.getAttribute('title') || el.getAttribute('placeholder') || '');
  return short(textOf(el) || el.getAttribute('title') || '');
};
// What a person reads on an element: its rendered text, less what assistive technology is told to skip (an
// aria-hidden badge or icon: `Cart` whose bubble says 2), plus what its shadow root's slots show (a design
// system's button whose text is its host's).
const textOf = (el) => {
  if (!el.querySelector('[aria-hidden="true"], slot')) return el.innerText || el.textContent || '';
  const parts = [];
  const walk = (n) => {
    for (const k of n.localName === 'slot' ? n.assignedNodes({ flatten: true }) : n.childNodes) {
      if (k.nodeType === Node.TEXT_NODE) parts.push(k.textContent);
      else if (k.nodeType === Node.ELEMENT_NODE && k.getAttribute('aria-hidden') !== 'true' && !NO_TEXT.has(k.localName)
        && getComputedStyle(k).display !== 'none') walk(k);
    }
  };
  walk(el);
  return parts.join(' ');
};
// A node the element shows through one of its slots is the element's own text, not a neighbour's.
const ownOf = (el, n) => n === el || el.contains(n) || (!!n.assignedSlot && el.contains(n.assignedSlot));
// The element as its page's light tree places it: a shadow-DOM button stands where its host stands.
const placeOf = (el, root) => {
  let at = el;
  while (!root.contains(at) && at.getRootNode() instanceof ShadowRoot) at = at.getRootNode().host;
  return at;
};
const CONTAINERS = new Set(['form', 'fieldset', 'section', 'article', 'li', 'tr', 'dialog', 'table', 'aside', 'nav',
  'header', 'footer']);
const CONTAINER_ROLES = new Set(['region', 'group', 'row', 'listitem', 'dialog', 'form', 'tabpanel', 'article']);
const parentOf = (n) => n.parentElement || (n.getRootNode() instanceof ShadowRoot ? n.getRootNode().host : null);
const containerOf = (el) => {
  for (let n = parentOf(el); n && n !== document.body && n !== document.documentElement; n = parentOf(n)) {
    if (CONTAINERS.has(n.localName) || CONTAINER_ROLES.has(n.getAttribute('role') || '')) return n;
  }
  return null;
};
const containerName = (el) => {
  const c = containerOf(el);
  if (!c) return '';
  const aria = c.getAttribute('aria-label');
  if (aria) return short(aria, 60);
  const legend = c.querySelector(':scope > legend, :scope > caption');
  if (legend) return short(legend.textContent, 60);
  const heading = c.querySelector('h1, h2, h3, h4, h5, h6');
  if (heading) return short(heading.textContent, 60);
  if (c.localName === 'tr') { const cell = c.querySelector('th, td'); if (cell && !cell.contains(el)) return short(cell.textContent, 60); }
  // What the container says besides the element itself (a list item's or card's own words).
  const own = norm(el.innerText || el.textContent || '');
  return short(norm(c.innerText || c.textContent || '').replace(own, ''), 60);
};
const valueKind = (el) => {
  const tag = el.localName;
  if (tag === 'input') return (el.getAttribute('type') || 'text').toLowerCase();
  if (tag === 'select' || tag === 'textarea') return tag;
  return el.isContentEditable ? 'editable' : '';
};
// The heading a person reads the element under: the last one before it in the document.
const HEADINGS = new Map();
const headingOf = (el) => {
  const root = el.getRootNode();
  if (!HEADINGS.has(root)) HEADINGS.set(root, [...root.querySelectorAll('h1, h2, h3, h4, h5, h6, [role=heading]')]);
  let last = null;
  for (const h of HEADINGS.get(root)) {
    if (h.contains(el)) continue;
    if (!(h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)) break;
    last = h;
  }
  return last ? short(last.textContent, 60) : '';
};
// What a person reads of a node beside the element: a text, or a field's or image's own words (a coupon box's
// placeholder is what tells its Apply from a gift card's).
const NO_TEXT = new Set(['script', 'style', 'noscript', 'template']);
const wordsOf = (n) => {
  if (n.nodeType === Node.TEXT_NODE) {
    const parent = n.parentElement;
    return parent && !NO_TEXT.has(parent.localName) && parent.getClientRects().length ? norm(n.textContent) : '';
  }
  if (n.localName === 'img') return norm(n.getAttribute('alt'));
  if (['input', 'textarea', 'select'].includes(n.localName) && n.getClientRects().length) {
    return norm(n.getAttribute('aria-label') || n.getAttribute('placeholder') || n.getAttribute('title'));
  }
  return '';
};
const walkerIn = (root) => document.createTreeWalker(root, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
// The smallest element that holds words besides the element's own: a row, a box, a toolbar, a wrapping label.
// None when that is a whole region of the page (more than ROW_CHARS of text).
const ROW_CHARS = 120;
const rowOf = (el) => {
  for (let n = parentOf(el); n && n !== document.body && n !== document.documentElement; n = parentOf(n)) {
    const parts = [], walker = walkerIn(n);
    let size = 0;
    for (let t = walker.nextNode(); t && size <= ROW_CHARS; t = walker.nextNode()) {
      if (ownOf(el, t)) continue;
      const text = wordsOf(t);
      if (text) { parts.push(text); size += text.length + 1; }
    }
    if (size > ROW_CHARS) return null;
    if (parts.length) return { n, words: parts.join(' ') };
  }
  return null;
};
// The nearest words before (or after) the element inside its container, else its row: a row's key, a field's
// label, the toolbar button beside it. What tells a target from a look-alike that has no container of its own;
// kept inside the row so that a box inserted before the target's box changes nothing.
const textNear = (el, forward, row) => {
  const root = containerOf(el) || (row && row.n) || el.getRootNode();
  const at = placeOf(el, root);
  const walker = walkerIn(root);
  walker.currentNode = at;
  for (let n = forward ? walker.nextNode() : walker.previousNode(); n; n = forward ? walker.nextNode() : walker.previousNode()) {
    if (ownOf(at, n) || ownOf(el, n) || n.contains(at)) continue;
    const text = wordsOf(n);
    if (text) return short(text, 40);
  }
  return '';
};
// Who the element is, from itself and its container; then where it is, which costs a few tree walks.
const identity = (el) => {
  const tid = testidOf(el);
  return { tag: el.localName, role: roleOf(el), name: nameOf(el), id: el.id || '',
    nameAttr: el.getAttribute('name') || '', testid: tid ? tid[1] : '', ariaLabel: el.getAttribute('aria-label') || '',
    container: containerName(el), label: labelOf(el), valueKind: valueKind(el), tip: el.getAttribute('title') || '' };
};
const whereabouts = (el) => {
  const row = rowOf(el);
  return { heading: headingOf(el), row: row ? row.words : '', before: textNear(el, false, row),
    after: textNear(el, true, row) };
};
const describe = (el) => ({ ...identity(el), ...whereabouts(el) });
const drawn = (el) => {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return false;
  const s = getComputedStyle(el);
  return s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) !== 0;
};
// A checkbox or radio that a theme hides (opacity 0 under its label, display:none) is drawn by its label: a
// person sees and clicks that, and replay checks it through the label (elements/checkables.py).
const visible = (el) => drawn(el)
  || (el.matches('input[type=checkbox], input[type=radio]') && [...(el.labels || [])].some(drawn));
const disabled = (el) => !!el.disabled || el.getAttribute('aria-disabled') === 'true' || !!el.closest('fieldset:disabled');
