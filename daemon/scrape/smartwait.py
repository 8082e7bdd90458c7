"""smartWait (D-21, issue 12): read a page once its content is ready, never later than a cap, never failing.

A scrape navigates to `domcontentloaded` and then waits only while the content is still coming:

- the text length of the main-content candidate (main, article, [role=main], else the body) changed
  less than `quiet_ms` ago (when nothing changed since the load event's handlers ran and the page
  keeps no setInterval going: LOADED_QUIET_MS since then), or
- the page's own scripts have work pending that usually brings content: script files still loading
  (async or injected ones; late-script.html), fetch/XHR requests not yet answered, and timers of at
  most PENDING_TIMER_MS not yet run (late.html adds its paragraph from an 800 ms timer); timers that
  timer callbacks set (polling loops, carousels) and setInterval do not count. A page that keeps
  such work going anyway is read once its text has stood still for PENDING_PATIENCE_MS. Timers hold
  that long only while the main content is thin (under SUBSTANTIAL_TEXT_CHARS of text, scripts' own
  text left out): next to an article's worth of text, a pending timer is mostly a deferred extra (a
  push SDK registering after 1 s, ad badges after 2 s on a real news page), so it is waited for only
  TIMER_PATIENCE_MS. A timer that adds to an already long text after that is not waited for.

It does not wait for `load` or network idle: images, fonts and third-party scripts hold those back and
add nothing to the text. The counters come from READINESS_JS, an init script of the scrape's context,
so they see the page's scripts from their first line on.
"""

from __future__ import annotations

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

PENDING_TIMER_MS = 2_000
PENDING_PATIENCE_MS = 1_500
SUBSTANTIAL_TEXT_CHARS = 2_000
TIMER_PATIENCE_MS = 250
# Once the load event's handlers ran, every lifecycle hook a script can wait on has fired: what is
# left untracked (an animation frame, a posted message, a zero timer's follow-up) lands within a few
# frames, so the quiet window shrinks to this.
LOADED_QUIET_MS = 50
POLL_MS = 25

# Wraps fetch, XMLHttpRequest and setTimeout to count the page's pending work; hidden, non-enumerable.
READINESS_JS = """(() => {
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
      sleep: (ms) => new Promise((r) => realSetTimeout(r, ms)),
    },
  });
})()""".replace("PENDING_TIMER_MS", str(PENDING_TIMER_MS))

_READY_JS = """async ([quietMs, loadedQuietMs, patienceMs, maxMs, pollMs, substantialChars, timerPatienceMs]) => {
  const readiness = window.__browserdReadiness;
  const sleep = readiness ? readiness.sleep : (ms) => new Promise((r) => setTimeout(r, ms));
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
}"""


async def smart_wait(page: Page, max_ms: int, quiet_ms: int) -> bool:
    """Until the content is ready (see the module docstring), within `max_ms`; False when it never was."""
    if max_ms <= 0:
        return True
    with anyio.move_on_after(max_ms / 1000 + 1):
        for _attempt in range(3):
            try:
                args = [
                    quiet_ms,
                    LOADED_QUIET_MS,
                    PENDING_PATIENCE_MS,
                    max_ms,
                    POLL_MS,
                    SUBSTANTIAL_TEXT_CHARS,
                    TIMER_PATIENCE_MS,
                ]
                return bool(await page.evaluate(_READY_JS, args))
            except PlaywrightError:
                # The page navigated (a client-side redirect) under the wait: wait on the next document.
                try:
                    await page.wait_for_load_state("domcontentloaded", timeout=max_ms)
                except PlaywrightError:
                    return False
    return False
