"""smartWait (D-21): wait for a page to be worth reading, never longer than a cap, never failing."""

from __future__ import annotations

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from browserd.daemon.sessions.settle import settle


async def smart_wait(page: Page, max_ms: int, quiet_ms: int) -> bool:
    """Network idle (after load), then a quiet DOM, within `max_ms`; False when the page never got there.

    In that order on purpose: content that scripts add once their requests are done shows up as DOM
    changes after the network went quiet, and the quiet window then waits for them.
    """
    if max_ms <= 0:
        return True
    with anyio.move_on_after(max_ms / 1000) as deadline:
        try:
            await page.wait_for_load_state("networkidle", timeout=max_ms)
        except PlaywrightError:
            return False  # still loading at the cap: read what is there
        await settle(page, quiet_ms, max_ms)
    return not deadline.cancelled_caught
