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

from browserd.daemon.runtime.page_js import called, load_js

PENDING_TIMER_MS = 2_000
PENDING_PATIENCE_MS = 1_500
SUBSTANTIAL_TEXT_CHARS = 2_000
TIMER_PATIENCE_MS = 250
# Once the load event's handlers ran, every lifecycle hook a script can wait on has fired: what is
# left untracked (an animation frame, a posted message, a zero timer's follow-up) lands within a few
# frames, so the quiet window shrinks to this.
LOADED_QUIET_MS = 50
POLL_MS = 25

# Counts the page's pending work: an init script, so PENDING_TIMER_MS goes in as a literal of the call.
READINESS_JS = called(load_js("browserd.daemon.scrape", "readiness.js"), str(PENDING_TIMER_MS))

_READY_JS = load_js("browserd.daemon.scrape", "ready.js")


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
