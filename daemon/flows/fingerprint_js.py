"""The JavaScript that runs in the page: describe an element when it is recorded, find it again on replay.

Both share one prelude (`describe`), so the fingerprint a replay compares is computed exactly as the
recorded one was. Each is one `evaluate`: one page round trip per recorded target and per replayed step.
"""

from __future__ import annotations

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
const describe = (el) => {
  const tid = testidOf(el);
  return { tag: el.localName, role: roleOf(el), name: nameOf(el), id: el.id || '',
    nameAttr: el.getAttribute('name') || '', testid: tid ? tid[1] : '', ariaLabel: el.getAttribute('aria-label') || '',
    container: containerName(el), label: labelOf(el), valueKind: valueKind(el) };
};
const visible = (el) => {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return false;
  const s = getComputedStyle(el);
  return s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) !== 0;
};
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
          return deep().filter((n) => roleOf(n) === role && nameOf(n) === name);
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
  const bigrams = (s) => { s = s.toLowerCase(); const out = new Map();
    for (let i = 0; i < s.length - 1; i++) { const b = s.slice(i, i + 2); out.set(b, (out.get(b) || 0) + 1); } return out; };
  const similar = (a, b) => {
    if (a === b) return 1; if (!a || !b) return 0;
    if (a.toLowerCase() === b.toLowerCase()) return 0.95;
    const x = bigrams(a), y = bigrams(b); let both = 0;
    for (const [k, v] of x) both += Math.min(v, y.get(k) || 0);
    const total = Math.max(1, a.length - 1 + b.length - 1);
    return (2 * both) / total;
  };
  const WEIGHTS = { tag: 1, role: 2, name: 3, id: 2, nameAttr: 2, testid: 3, ariaLabel: 2, container: 3, label: 2, valueKind: 1 };
  const FUZZY = new Set(['name', 'container', 'label', 'ariaLabel']);
  const score = (d) => {
    let total = 0, got = 0;
    for (const [k, w] of Object.entries(WEIGHTS)) {
      if (!fp[k]) continue;
      total += w;
      if (d[k] === fp[k]) got += w;
      else if (FUZZY.has(k)) { const s = similar(d[k], fp[k]); if (s >= 0.8) got += w * s; }
    }
    return total ? got / total : 0;
  };
  const pool = new Map();
  const report = cands.map((c, i) => {
    const found = find(c);
    for (const n of found) { if (!pool.has(n)) pool.set(n, []); pool.get(n).push(i); }
    return { index: i, type: c.type, value: c.value, count: found.length };
  });
  // A target imported without a fingerprint (Chrome Recorder) is verified by its selectors agreeing:
  // the share of the candidates that found anything which found this element, one of them uniquely.
  const known = Object.values(fp).some(Boolean);
  const finders = report.filter((r) => r.count > 0).length;
  const agreement = (hits) => hits.some((i) => report[i].count === 1) ? hits.length / finders : 0;
  const scored = [...pool.entries()].map(([n, hits]) => {
    const d = describe(n);
    const s = known ? score(d) : agreement(hits);
    return { n, hits, score: Math.round(s * 1000) / 1000, visible: visible(n), disabled: disabled(n),
      tag: d.tag, name: d.name, container: d.container };
  }).sort((a, b) => b.score - a.score || b.hits.length - a.hits.length);
  const shown = scored.slice(0, 5).map(({ n, ...rest }) => rest);
  const live = scored.filter((s) => s.visible);
  const best = live[0], second = live[1];
  let status = 'ok';
  if (!best) status = 'none';
  else if (best.score < threshold) status = 'weak';
  else if (second && best.score - second.score < margin) status = 'ambiguous';
  else if (best.disabled) status = 'disabled';
  for (const r of report) r.hitsWinner = !!best && best.hits.includes(r.index);
  const out = { status, candidates: report, elements: shown, score: best ? best.score : 0,
    hits: best ? best.hits : [] };
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
