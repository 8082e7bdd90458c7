// A recorded target: its fingerprint, the selectors that find it, its shadow path; one evaluate per target.
(el) => {
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
  const path = [step(el)];
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
}
