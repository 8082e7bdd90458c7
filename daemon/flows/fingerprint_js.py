"""The JavaScript that runs in the page: describe an element when it is recorded, find it again on replay.

Both share one prelude (`describe`), so the fingerprint a replay compares is computed exactly as the
recorded one was. Each is one `evaluate`: one page round trip per recorded target and per replayed step.
"""

from __future__ import annotations

from browserd.daemon.flows.match_js import MATCH_JS

_PRELUDE = r"""
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
  return short(el.innerText || el.textContent || el.getAttribute('title') || '');
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
      if (t === el || el.contains(t)) continue;
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
  const walker = walkerIn(containerOf(el) || (row && row.n) || el.getRootNode());
  walker.currentNode = el;
  for (let n = forward ? walker.nextNode() : walker.previousNode(); n; n = forward ? walker.nextNode() : walker.previousNode()) {
    if (n === el || el.contains(n) || n.contains(el)) continue;
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
    container: containerName(el), label: labelOf(el), valueKind: valueKind(el) };
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
"""

CAPTURE_JS = (
    "(el) => {"
    + _PRELUDE
    + r"""
  const cssEscape = (s) => CSS.escape(s);
  const root = el.getRootNode();
  const scope = root instanceof ShadowRoot ? root : document;
  const unique = (sel) => { try { return scope.querySelectorAll(sel).length === 1 && scope.querySelector(sel) === el; }
    catch (e) { return false; } };
  const step = (n) => {
    let s = n.localName;
    const same = n.parentElement ? [...n.parentElement.children].filter((c) => c.localName === n.localName) : [];
    if (same.length > 1) s += `:nth-of-type(${same.indexOf(n) + 1})`;
    return s;
  };
  const stableSelf = (n) => {
    let s = n.localName;
    if (n.id && stableToken(n.id)) return '#' + cssEscape(n.id);
    for (const a of ['name', 'type', 'aria-label', 'placeholder']) {
      const v = n.getAttribute(a); if (v && v.length < 60) s += `[${a}="${v.replace(/"/g, '\\"')}"]`;
    }
    const classes = [...n.classList].filter(stableToken).slice(0, 2);
    return s + classes.map((c) => '.' + cssEscape(c)).join('');
  };
  const d = describe(el);
  const cands = [];
  const add = (type, value) => { if (value && !cands.some((c) => c.type === type && c.value === value)) cands.push({ type, value }); };
  const tid = testidOf(el);
  if (tid) add('testid', tid[1]);
  if (el.id && stableToken(el.id) && unique('#' + cssEscape(el.id))) add('css', '#' + cssEscape(el.id));
  if (d.role && d.name) add('role', d.role + '|' + d.name);
  if (d.label) add('label', d.label);
  const ph = el.getAttribute('placeholder'); if (ph) add('placeholder', norm(ph));
  const text = norm(el.innerText || el.textContent || '');
  if (!['input', 'select', 'textarea'].includes(el.localName) && text && text.length <= 80) add('text', text);
  const self = stableSelf(el);
  if (unique(self)) add('css', self);
  // Relative to the nearest ancestor that has a stable id or a test id.
  let path = [step(el)];
  for (let n = el.parentElement; n; n = n.parentElement) {
    const nt = testidOf(n);
    const anchor = n.id && stableToken(n.id) ? '#' + cssEscape(n.id) : nt ? `[${nt[0]}="${nt[1]}"]` : null;
    if (anchor) { const sel = anchor + ' > ' + path.join(' > '); if (unique(sel)) add('anchor', sel); break; }
    path.unshift(step(n));
    if (path.length > 8) break;
  }
  if (!(root instanceof ShadowRoot)) {
    const xp = [];
    for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
      const same = n.parentElement ? [...n.parentElement.children].filter((c) => c.localName === n.localName) : [n];
      xp.unshift(n.localName + (same.length > 1 ? `[${same.indexOf(n) + 1}]` : ''));
    }
    add('xpath', '/' + xp.join('/'));
  }
  const shadow = [];
  for (let r = root; r instanceof ShadowRoot; r = r.host.getRootNode()) {
    const host = r.host;
    shadow.unshift(host.id && stableToken(host.id) ? '#' + cssEscape(host.id) : host.localName);
  }
  const type = (el.getAttribute('type') || '').toLowerCase();
  const auto = (el.getAttribute('autocomplete') || '').toLowerCase();
  const sensitive = type === 'password' || auto === 'one-time-code' || auto.startsWith('cc-')
    || auto === 'current-password' || auto === 'new-password';
  return { fingerprint: d, candidates: cands, shadow, sensitive, inFrame: window !== window.top,
    keyHint: d.nameAttr || d.testid || d.id || d.label || d.name || d.role };
}"""
)

# The CSS of an iframe element inside its own document, for a recorded target's frame path.
FRAME_CSS_JS = r"""(el) => {
  if (el.id && !/\d{2,}/.test(el.id)) return '#' + CSS.escape(el.id);
  if (el.name) return `iframe[name="${el.name}"]`;
  return `${el.localName}:nth-of-type(${[...el.parentElement.children].filter((c) => c.localName === el.localName).indexOf(el) + 1})`;
}"""

RESOLVE_JS = (
    "([cands, fp, shadow, threshold, margin]) => {"
    + _PRELUDE
    + MATCH_JS
    + r"""
  let scope = document;
  for (const host of shadow) {
    const h = scope.querySelector(host);
    if (!h || !h.shadowRoot) return [null, { status: 'none', candidates: [], elements: [], reason: `shadow host ${host} is missing` }];
    scope = h.shadowRoot;
  }
  let everything = null;
  const deep = () => {
    if (everything) return everything;
    everything = [];
    const walk = (root) => { for (const n of root.querySelectorAll('*')) { everything.push(n); if (n.shadowRoot) walk(n.shadowRoot); } };
    walk(document);
    return everything;
  };
  const find = (c) => {
    try {
      switch (c.type) {
        case 'testid': return deep().filter((n) => { const t = testidOf(n); return t && t[1] === c.value; });
        case 'css': case 'anchor': return [...scope.querySelectorAll(c.value)];
        case 'xpath': {
          const r = document.evaluate(c.value, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
          const out = []; for (let i = 0; i < r.snapshotLength; i++) out.push(r.snapshotItem(i)); return out;
        }
        case 'role': {
          const cut = c.value.indexOf('|'); const role = c.value.slice(0, cut); const name = c.value.slice(cut + 1);
          return deep().filter((n) => roleOf(n) === role && nameIn(n) === name);
        }
        case 'aria': return deep().filter((n) => roleOf(n) && nameOf(n) === c.value);
        case 'label': return deep().filter((n) => ['input', 'select', 'textarea'].includes(n.localName) && labelOf(n) === c.value);
        case 'placeholder': return deep().filter((n) => norm(n.getAttribute('placeholder')) === c.value);
        case 'text': return deep().filter((n) => !['input', 'select', 'textarea', 'html', 'body'].includes(n.localName)
          && norm(n.innerText || n.textContent) === c.value
          && ![...n.children].some((k) => norm(k.innerText || k.textContent) === c.value));
      }
    } catch (e) { return []; }
    return [];
  };
  // Each recorded field weighs in; a field the recording left empty does not (an older flow's missing ones too).
  const WEIGHTS = { tag: 1, role: 2, name: 3, id: 2, nameAttr: 2, testid: 3, ariaLabel: 2, container: 3, label: 2,
    valueKind: 1, heading: 1, row: 3, before: 1, after: 1 };
  const IDS = new Set(['id', 'nameAttr', 'testid']);
  const NAMES = new Set(['ariaLabel', 'label']);
  const WHERE = new Set(['container', 'heading', 'row', 'before', 'after']);
  // A recorded id the element no longer has is weak evidence against it (a quarter of its weight). One it has
  // under another value is full evidence against it while another element keeps the recorded value; when none
  // does, the site renamed its ids: half the weight, half agreeing when a word of it stayed (archive-btn ->
  // archive-button).
  const ABSENT = 0.25, RENAMED = 0.5;
  const kept = new Map();
  const stillOnPage = (k, v) => {
    const key = k + '=' + v;
    if (!kept.has(key)) kept.set(key, deep().some((n) => (k === 'testid' ? (testidOf(n) || [])[1] : k === 'id' ? n.id
      : n.getAttribute('name')) === v));
    return kept.get(key);
  };
  const score = (d) => {
    let total = 0, got = 0, conflicts = 0;
    const tier = fp.name ? nameTier(fp.name, d.name) : 'same';
    for (const [k, w] of Object.entries(WEIGHTS)) {
      const was = fp[k], now = d[k];
      if (!was || (k === 'id' && !stableToken(was))) continue;  // a generated id says nothing
      if (now === undefined) { total += w; got += w; continue; }  // not looked at yet: the best it could be
      // A neighbour or row that is the element's own label says again what the name says: not a second witness.
      if ((k === 'before' || k === 'after' || k === 'row') && (was === fp.name || was === fp.label)) continue;
      let share = 1, credit = 0;
      if (now === was) credit = 1;
      else if (k === 'name') credit = NAME_CREDIT[tier];
      else if (IDS.has(k) || (k === 'ariaLabel' && !now)) {
        if (!now) share = ABSENT;
        else if (!stillOnPage(k, was)) { share = RENAMED; credit = idNear(was, now); }
      } else if (NAMES.has(k)) credit = NAME_CREDIT[nameTier(was, now)];
      else if (WHERE.has(k)) credit = near(was, now);
      if (k !== 'name' && share !== ABSENT && credit < (NAMES.has(k) ? 0.5 : 0.8)) conflicts++;
      total += w * share; got += w * share * credit;
    }
    return { score: total ? got / total : 0, tier, conflicts };
  };
  const names = new Map();
  const nameIn = (n) => { if (!names.has(n)) names.set(n, nameOf(n)); return names.get(n); };
  const SWEEP_MAX = 40;
  const pool = new Map();
  const report = cands.map((c, i) => {
    const found = find(c);
    for (const n of found) { if (!pool.has(n)) pool.set(n, []); pool.get(n).push(i); }
    return { index: i, type: c.type, value: c.value, count: found.length };
  });
  // A target imported without a fingerprint (Chrome Recorder) is verified by its selectors agreeing:
  // the share of the candidates that found anything which found this element, one of them uniquely.
  const known = Object.values(fp).some(Boolean);
  // Every element of the recorded role whose name is still close joins, found by a candidate or not: the
  // target whose name and ids all changed, and every look-alike it must be told from.
  // At most SWEEP_MAX of them, closest names first (a table of `Edit 1`..`Edit 5000` would otherwise all be
  // described); when some were left out, a weak name cannot win, since a rival may be among them.
  let crowded = false;
  if (known && fp.name) {
    const close = [];
    for (const n of deep()) {
      if (pool.has(n) || (fp.role ? roleOf(n) !== fp.role : n.localName !== fp.tag)) continue;
      const tier = nameTier(fp.name, nameIn(n));
      if (tier !== 'differs' && tier !== 'empty') close.push([n, NAME_CREDIT[tier]]);
    }
    close.sort((a, b) => b[1] - a[1]);
    crowded = close.length > SWEEP_MAX;
    for (const [n] of close.slice(0, SWEEP_MAX)) pool.set(n, []);
  }
  const finders = report.filter((r) => r.count > 0).length;
  const agreement = (hits) => hits.some((i) => report[i].count === 1) ? hits.length / finders : 0;
  const rate = (entry, d) => {
    const s = known ? score(d) : { score: agreement(entry.hits), tier: 'same', conflicts: 0 };
    return Object.assign(entry, { score: Math.round(s.score * 1000) / 1000, tag: d.tag, name: d.name,
      container: d.container, match: s.tier, conflicts: s.conflicts });
  };
  const order = (a, b) => b.score - a.score || b.hits.length - a.hits.length;
  // Every element is rated on who it is, as if where it is agreed too (the most it could score); only the
  // leaders are then looked at where they are, until the two best are rated in full. One left out keeps its
  // upper bound, which can only make it a stronger rival, never a winner unseen.
  const scored = [...pool.entries()].map(([n, hits]) => {
    const e = { n, hits, visible: visible(n), disabled: disabled(n), full: false, d: identity(n) };
    return rate(e, e.d);
  }).sort(order);
  const FULL_FIRST = 12;
  const full = (e) => { e.full = true; rate(e, { ...e.d, ...whereabouts(e.n) }); };
  for (const e of scored.slice(0, FULL_FIRST)) full(e);
  for (;;) {
    scored.sort(order);
    const top = scored.filter((e) => e.visible && e.match !== 'differs').slice(0, 2).filter((e) => !e.full);
    if (!top.length) break;
    top.forEach(full);
  }
  for (const e of scored) delete e.d;
  const shown = scored.slice(0, 5).map(({ n, ...rest }) => rest);
  // An element that now says something else is not the recorded one, however much else agrees (Archive is
  // not Unarchive), and is nobody's rival either.
  const live = scored.filter((s) => s.visible && s.match !== 'differs');
  const best = live[0], second = live[1];
  const STRONG = new Set(['same', 'normalized', 'count']);
  const weakName = !!best && !STRONG.has(best.match);
  // A weak name (words added, a number changed, a synonym) wins only when all else agrees and nothing competes.
  // A competitor is another element with a close name that shares the winner's container or row, or agrees
  // with all but the name too, or elsewhere scores near the threshold itself (the same control in a parallel
  // row or box, as when every row's Delete became Remove, is not: those rows are siblings of one kind); and for
  // a synonym, any element that still shows the recorded name.
  const groupOf = (n) => containerOf(n) || (rowOf(n) || {}).n || null;
  const home = best ? groupOf(best.n) : null;
  const parallel = (n) => {
    const group = groupOf(n);
    return !!home && !!group && group !== home && group.localName === home.localName
      && group.parentElement === home.parentElement;
  };
  const rival = weakName && (crowded || live.some((s) => s !== best && (s.conflicts === 0
    || (home && groupOf(s.n) === home) || (!parallel(s.n) && s.score >= threshold - 2 * margin)
    || (best.match === 'synonym' && STRONG.has(s.match)))));
  let status = 'ok';
  if (!best) status = scored.some((s) => s.visible) ? 'weak' : 'none';
  else if (best.score < threshold || (weakName && best.conflicts > 0)) status = 'weak';
  else if (rival || (second && best.score - second.score < margin)) status = 'ambiguous';
  else if (best.disabled) status = 'disabled';
  for (const r of report) r.hitsWinner = !!best && best.hits.includes(r.index);
  const out = { status, candidates: report, elements: shown, score: best ? best.score : 0,
    hits: best ? best.hits : [], match: best ? best.match : '' };
  return [status === 'ok' ? best.n : null, out];
}"""
)

# RESOLVE_JS in two round trips instead of five (a handle of [element, report], its properties, the report's
# JSON, two disposals): the element comes back as the handle, the report is kept on the window for
# RESOLVED_JS, which takes it away again (issue 14 item 4: resolution was most of a step's own work).
RESOLVE_ELEMENT_JS = (
    "(args) => { const [el, out] = ("
    + RESOLVE_JS
    + ")(args); Object.defineProperty(window, '__browserdResolved', { value: out, configurable: true }); return el; }"
)
RESOLVED_JS = "() => { const out = window.__browserdResolved; delete window.__browserdResolved; return out; }"

# Inputs whose values a failure screenshot must never show.
SENSITIVE_CSS = (
    "input[type=password], [autocomplete=one-time-code], [autocomplete^=cc-], "
    "[autocomplete=current-password], [autocomplete=new-password]"
)
