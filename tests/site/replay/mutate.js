// The replay benchmark's mutations (tests/e2e/replay_cases.py): `?m=` holds a JSON list of operations that
// turn the recorded page into a later release of it, applied before the page is used. Every element a case
// acts on carries data-who; clicks and inputs append `click:<who>` / `input:<who>` to #log, so a test reads
// WHO was acted on. Operations: ["text", css, words], ["attr", css, name, value or null],
// ["html", css, where (beforebegin|afterbegin|beforeend|afterend), html], ["remove", css],
// ["move", css, where, css of the element it goes next to] (rows sorted or shuffled, a section moved),
// ["wrap", css, html of an empty wrapper] (a div added around it), ["retag", css, tag] (the same attributes
// and children under another tag: a button that became `<a role="button">` or a design system's element).
// A css of `host >>> inner` looks inside host's open shadow root. An op whose css starts with `frame>>> `
// is for the same-origin iframe's page (which loads this script too and reads its parent's `?m=`); the
// frame logs into its parent's #log.
(() => {
  const top = window.parent !== window ? window.parent : window;
  const inFrame = top !== window;
  const log = (what) => { top.document.getElementById('log').textContent += what + '\n'; };
  const who = (e) => {
    for (const node of e.composedPath()) if (node.dataset && node.dataset.who) return node.dataset.who;
    return null;
  };
  document.addEventListener('click', (e) => { const w = who(e); if (w) log('click:' + w); }, true);
  document.addEventListener('input', (e) => {
    const field = e.composedPath()[0];
    if (field.dataset && field.dataset.who) log('input:' + field.dataset.who);
  });
  document.addEventListener('submit', (e) => e.preventDefault());
  const find = (css) => {
    let scope = document;
    const parts = css.split(' >>> ');
    for (const part of parts.slice(0, -1)) scope = scope.querySelector(part).shadowRoot;
    return scope.querySelector(parts[parts.length - 1]);
  };
  const FRAME = 'frame>>> ';
  const ops = JSON.parse(new URLSearchParams(top.location.search).get('m') || '[]');
  for (const [op, rawCss, ...args] of ops) {
    if (rawCss.startsWith(FRAME) !== inFrame) continue;
    const css = inFrame ? rawCss.slice(FRAME.length) : rawCss;
    const el = find(css);
    if (!el) throw new Error(`mutate.js: ${css} is not on the page`);
    if (op === 'text') {
      if (el.localName === 'input') el.value = args[0]; else el.textContent = args[0];
    } else if (op === 'attr') {
      if (args[1] === null) el.removeAttribute(args[0]); else el.setAttribute(args[0], args[1]);
    } else if (op === 'html') {
      el.insertAdjacentHTML(args[0], args[1]);
    } else if (op === 'remove') {
      el.remove();
    } else if (op === 'move') {
      find(args[1]).insertAdjacentElement(args[0], el);
    } else if (op === 'wrap') {
      const holder = document.createElement('div');
      holder.innerHTML = args[0];
      const wrapper = holder.firstElementChild;
      el.replaceWith(wrapper);
      wrapper.appendChild(el);
    } else if (op === 'retag') {
      const other = document.createElement(args[0]);
      for (const a of el.attributes) other.setAttribute(a.name, a.value);
      other.append(...el.childNodes);
      el.replaceWith(other);
    }
  }
})();
