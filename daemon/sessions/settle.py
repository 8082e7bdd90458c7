"""Waiting for a page to settle after an action, so its snapshot shows what the action caused."""

from __future__ import annotations

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

_QUIET_JS = """([quietMs, maxMs]) => new Promise((resolve) => {
  let timer;
  const done = () => { observer.disconnect(); clearTimeout(timer); clearTimeout(cap); resolve(); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quietMs); });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  timer = setTimeout(done, quietMs);
  const cap = setTimeout(done, maxMs);
})"""


async def settle(page: Page, quiet_ms: int, max_ms: int) -> None:
    """Until the DOM has been quiet for `quiet_ms` (at most `max_ms`); never raises."""
    if max_ms <= 0:
        return
    with anyio.move_on_after(max_ms / 1000 + 0.5):
        for _attempt in range(2):
            try:
                await page.evaluate(_QUIET_JS, [quiet_ms, max_ms])
                return
            except PlaywrightError:
                # The action navigated and destroyed the document we were watching: wait for the next.
                try:
                    await page.wait_for_load_state("domcontentloaded", timeout=max_ms)
                except PlaywrightError:
                    return
