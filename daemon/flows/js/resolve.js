// Find a recorded target again on replay: every candidate selector and every look-alike rated against the
// recorded fingerprint, in one round trip that answers the report of how (issue 14 item 4: resolution was most
// of a step's own work). The sixth argument `{ pin, field, index, sensitiveCss }` says what else to do:
// `pin` ([attribute, token]) marks the element found, so that a locator finds it alone while the step acts on it
// through the element helpers (flows/replay/acting.py), and the report says its `role`; with `field` it also
// reads what a fill needs to know of it (`fieldOf`, elements/js/field.js), saving the fill that round trip.
// With `index` (a model's choice, [flows] llm_fallback) the element is instead the index-th of the report's
// elements, whatever its score, and the report gets it rated in full as `picked` (where it is too), with
// whether it is a sensitive field (`sensitiveCss`).
/* global fieldOf -- elements/js/field.js, put in scope by fingerprint_js.py (elements/fields.FIELD_PRELUDE) */
(args) => {
  const [el, resolved, pick] = (([cands, fp, shadow, threshold, margin]) => {
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
    // An icon's glyph says nothing a person reads, its tooltip does: a name moved between aria-label and title
    // stays the name (a flow recorded before `tip` was kept has none, and compares as before).
    const glyph = (s) => !/[\p{L}\p{N}]/u.test(s || '');
    const readable = (d) => (d.tip && glyph(d.name) ? d.tip : d.name);
    const tierOf = (d) => {
      const tier = nameTier(fp.name, d.name);
      return tier === 'differs' || tier === 'empty' ? nameTier(readable(fp), readable(d)) : tier;
    };
    // A link and a button look alike to a person, and sites turn one into the other.
    const CLICKABLE = new Set(['link', 'button']);
    const sameRole = (a, b) => a === b || (CLICKABLE.has(a) && CLICKABLE.has(b));
    const score = (d) => {
      let total = 0, got = 0, conflicts = 0, rowAgrees;
      const against = [];
      const tier = fp.name ? tierOf(d) : 'same';
      for (const [k, w] of Object.entries(WEIGHTS)) {
        const was = fp[k], now = d[k];
        if (!was || (k === 'id' && !stableToken(was))) continue;  // a generated id says nothing
        if (now === undefined) { total += w; got += w; continue; }  // not looked at yet: the best it could be
        // A neighbour or row that is the element's own label says again what the name says: not a second witness.
        if ((k === 'before' || k === 'after' || k === 'row') && (was === fp.name || was === fp.label)) continue;
        let share = 1, credit = 0;
        if (now === was || (k === 'role' && sameRole(was, now))) credit = 1;
        else if (k === 'name') credit = NAME_CREDIT[tier];
        else if (IDS.has(k) || (k === 'ariaLabel' && !now)) {
          if (!now) share = ABSENT;
          else if (!stillOnPage(k, was)) { share = RENAMED; credit = idNear(was, now); }
        } else if (NAMES.has(k)) credit = NAME_CREDIT[nameTier(was, now)];
        else if (WHERE.has(k)) credit = near(was, now);
        if (k !== 'name' && share !== ABSENT && credit < (NAMES.has(k) ? 0.5 : 0.8)) { conflicts++; against.push(k); }
        if (k === 'row') rowAgrees = credit;
        total += w * share; got += w * share * credit;
      }
      return { score: total ? got / total : 0, tier, conflicts, against, rowAgrees };
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
        if (pool.has(n) || (fp.role ? !sameRole(fp.role, roleOf(n)) : n.localName !== fp.tag)) continue;
        const tier = tierOf({ name: nameIn(n), tip: n.getAttribute('title') });
        if (tier !== 'differs' && tier !== 'empty') close.push([n, NAME_CREDIT[tier]]);
      }
      close.sort((a, b) => b[1] - a[1]);
      crowded = close.length > SWEEP_MAX;
      for (const [n] of close.slice(0, SWEEP_MAX)) pool.set(n, []);
    }
    const finders = report.filter((r) => r.count > 0).length;
    const agreement = (hits) => hits.some((i) => report[i].count === 1) ? hits.length / finders : 0;
    const rate = (entry, d) => {
      const s = known ? score(d) : { score: agreement(entry.hits), tier: 'same', conflicts: 0, against: [] };
      return Object.assign(entry, { score: Math.round(s.score * 1000) / 1000, tag: d.tag, role: d.role, name: d.name,
        container: d.container, row: d.row, match: s.tier, conflicts: s.conflicts, disagrees: s.against,
        rowAgrees: s.rowAgrees });
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
    const weakName = !!best && !STRONG_TIERS.has(best.match);
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
    // Nor is an element whose recorded row (a card's, a table row's words) disagrees where the winner's agrees.
    const toldApart = (s) => best.rowAgrees >= 0.8 && s.rowAgrees !== undefined && s.rowAgrees < 0.8;
    const rival = weakName && (crowded || live.some((s) => s !== best && ((best.match === 'synonym' && STRONG_TIERS.has(s.match))
      || (!toldApart(s) && (s.conflicts === 0 || (home && groupOf(s.n) === home)
        || (!parallel(s.n) && s.score >= threshold - 2 * margin))))));
    let status = 'ok';
    if (!best) status = scored.some((s) => s.visible) ? 'weak' : 'none';
    else if (best.score < threshold || (weakName && best.conflicts > 0)) status = 'weak';
    else if (rival || (second && best.score - second.score < margin)) status = 'ambiguous';
    else if (best.disabled) status = 'disabled';
    for (const r of report) r.hitsWinner = !!best && best.hits.includes(r.index);
    const out = { status, candidates: report, elements: shown, score: best ? best.score : 0,
      hits: best ? best.hits : [], match: best ? best.match : '' };
    // The i-th element of the report rated again in full, where it is too: what a model's choice is checked on.
    const rated = (i) => { const e = scored[i]; if (!e) return null; rate(e, describe(e.n)); const { n, ...rest } = e; return [n, rest]; };
    return [status === 'ok' ? best.n : null, out, rated];
  })(args);
  const options = args[5] || {};
  let chosen = el;
  if (options.index !== undefined) {
    const rated = pick ? pick(options.index) : null;
    chosen = rated ? rated[0] : null;
    resolved.picked = rated && { ...rated[1], sensitive: chosen.matches(options.sensitiveCss) };
  }
  // How long the page has been still (loaded; no DOM or style change, no frame asked for, no input; nothing
  // in flight or due, no WebSocket or event stream open, snapshots/js/settle_tracker.js): on a still page, a
  // step whose element does not win will not win by waiting (flows/replay/step_runner.py). 0 while it is
  // busy or has no tracker.
  const s = window.__browserdSettle;
  const busy = !s || !s.streams || document.readyState !== 'complete' || s.inflight || s.due.size
    || s.streams.size || s.pending || s.navigating;
  resolved.stillMs = busy ? 0
    : Math.round(performance.now() - Math.max(s.lastChange, s.lastRestyle, s.lastFrameRequest, s.lastInput));
  if (chosen && options.pin) {
    chosen.setAttribute(options.pin[0], options.pin[1]);
    resolved.role = roleOf(chosen);
    if (options.field) resolved.field = fieldOf(chosen);
  }
  return resolved;
}
