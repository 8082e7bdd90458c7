// An init script of a scrape's context (called with PENDING_TIMER_MS, scrape/smartwait.py): wraps fetch,
// XMLHttpRequest and setTimeout to count the page's pending work; hidden, non-enumerable.
(PENDING_TIMER_MS) => {
  if (Object.prototype.hasOwnProperty.call(window, '__browserdReadiness')) return;
  const timers = new Set();
  let requests = 0;
  const realSetTimeout = window.setTimeout.bind(window);
  const realClearTimeout = window.clearTimeout.bind(window);
  const done = () => { requests -= 1; };
  let inTimer = false;
  window.setTimeout = function (callback, ms, ...args) {
    const long = typeof callback !== 'function' || (Number(ms) || 0) > PENDING_TIMER_MS;
    if (long) return realSetTimeout(callback, ms, ...args);
    // A timer set from a timer's callback is a loop (polling, a carousel), not content still to come.
    const tracked = !inTimer;
    const id = realSetTimeout(function () {
      timers.delete(id);
      inTimer = true;
      try { return callback.apply(this, args); } finally { inTimer = false; }
    }, ms);
    if (tracked) timers.add(id);
    return id;
  };
  window.clearTimeout = function (id) { timers.delete(id); return realClearTimeout(id); };
  // Intervals the page keeps (a ticker, a poll): while one runs, a quiet spell after the load may be
  // just the gap before its next change, so the short window after the load does not apply.
  const intervals = new Set();
  const realSetInterval = window.setInterval.bind(window);
  const realClearInterval = window.clearInterval.bind(window);
  window.setInterval = function (...args) {
    const id = realSetInterval(...args);
    intervals.add(id);
    return id;
  };
  window.clearInterval = function (id) { intervals.delete(id); return realClearInterval(id); };
  if (window.fetch) {
    const realFetch = window.fetch;
    window.fetch = function (...args) {
      requests += 1;
      const answer = realFetch.apply(this, args);
      answer.then(done, done);
      return answer;
    };
  }
  // A script element still loading (an async or injected one, a module's) may yet write the content.
  const ranScripts = new WeakSet();
  const ran = (event) => { if (event.target instanceof HTMLScriptElement) ranScripts.add(event.target); };
  window.addEventListener('load', ran, true);
  window.addEventListener('error', ran, true);
  const runnable = ['', 'text/javascript', 'application/javascript', 'module'];
  const loadingScripts = () => {
    let count = 0;
    for (const script of document.scripts) {
      const type = script.type.trim().toLowerCase();
      if (script.src && !script.noModule && !ranScripts.has(script) && runnable.includes(type)) count += 1;
    }
    return count;
  };
  // When the document last changed since it was parsed: the quiet window counts from there, not from
  // when the scrape first looked, which comes a round trip or more after domcontentloaded.
  let changedAt = 0;
  const watch = () => {
    changedAt = performance.now();
    const changed = () => { changedAt = performance.now(); };
    new MutationObserver(changed).observe(document, { childList: true, subtree: true, characterData: true });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', watch, { once: true });
  else watch();
  const realSend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    requests += 1;
    this.addEventListener('loadend', done, { once: true });
    return realSend.apply(this, args);
  };
  Object.defineProperty(window, '__browserdReadiness', {
    value: {
      pending: () => requests + loadingScripts(),
      timers: () => timers.size,
      intervals: () => intervals.size,
      changedAt: () => changedAt,
      sleep: (ms) => new Promise((r) => { realSetTimeout(r, ms); }),
    },
  });
}
