// The replay benchmark's mutations (tests/e2e/replay_cases.py): `?m=` holds a JSON list of operations that
// turn the recorded page into a later release of it, applied before the page is used. Every element a case
// acts on carries data-who; clicks and inputs append `click:<who>` / `input:<who>` to #log, so a test reads
// WHO was acted on. Operations: ["text", css, words], ["attr", css, name, value or null],
// ["html", css, where (beforebegin|afterbegin|beforeend|afterend), html], ["remove", css].
(() => {
  const log = (what) => { document.getElementById('log').textContent += what + '\n'; };
  document.addEventListener('click', (e) => {
    const who = e.target.closest && e.target.closest('[data-who]');
    if (who) log('click:' + who.dataset.who);
  }, true);
  document.addEventListener('input', (e) => { if (e.target.dataset && e.target.dataset.who) log('input:' + e.target.dataset.who); });
  document.addEventListener('submit', (e) => e.preventDefault());
  const ops = JSON.parse(new URLSearchParams(location.search).get('m') || '[]');
  for (const [op, css, ...args] of ops) {
    const el = document.querySelector(css);
    if (!el) throw new Error(`mutate.js: ${css} is not on the page`);
    if (op === 'text') {
      if (el.localName === 'input') el.value = args[0]; else el.textContent = args[0];
    } else if (op === 'attr') {
      if (args[1] === null) el.removeAttribute(args[0]); else el.setAttribute(args[0], args[1]);
    } else if (op === 'html') {
      el.insertAdjacentHTML(args[0], args[1]);
    } else if (op === 'remove') {
      el.remove();
    }
  }
})();
