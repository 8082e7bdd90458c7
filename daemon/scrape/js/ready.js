// Answers true once the content is ready (scrape/smartwait.py's docstring), false after `maxMs`.
async ([quietMs, loadedQuietMs, patienceMs, maxMs, pollMs, substantialChars, timerPatienceMs]) => {
  const readiness = window.__browserdReadiness;
  const sleep = readiness ? readiness.sleep : (ms) => new Promise((r) => { setTimeout(r, ms); });
  const candidate = () => document.querySelector('main, article, [role=main]') || document.body;
  const size = () => {
    const node = candidate();
    return node ? node.textContent.length : 0;
  };
  // The candidate's text without its scripts' and styles' own: asked only while timers alone are pending.
  const substantial = () => {
    const node = candidate();
    if (!node) return false;
    let code = 0;
    for (const part of node.querySelectorAll('script, style, noscript, template')) code += part.textContent.length;
    return node.textContent.length - code >= substantialChars;
  };
  // When the load event's handlers finished (0: not yet), on performance.now()'s clock.
  const loadEnd = () => {
    const entry = document.readyState === 'complete' && performance.getEntriesByType('navigation')[0];
    return entry ? entry.loadEventEnd : 0;
  };
  const start = performance.now();
  let last = size();
  let since = (readiness && readiness.changedAt()) || start;
  for (;;) {
    const now = performance.now();
    const length = size();
    if (length !== last) {
      last = length;
      since = now;
    } else {
      const still = now - since;
      const pending = readiness ? readiness.pending() : 0;
      const timers = readiness ? readiness.timers() : 0;
      const loaded = readiness && !readiness.intervals() ? loadEnd() : 0;
      // Unchanged since the load's handlers ran and no interval running: the short window, from then;
      // changing after the load (content arriving, or a ticker): the whole window from the last change.
      const quiet = loaded && since <= loaded ? now - loaded >= Math.min(quietMs, loadedQuietMs) : still >= quietMs;
      const timersDone = timers === 0 || (still >= timerPatienceMs && substantial());
      if (quiet && ((pending === 0 && timersDone) || still >= patienceMs)) return true;
    }
    if (now - start >= maxMs) return false;
    await sleep(pollMs);
  }
}
