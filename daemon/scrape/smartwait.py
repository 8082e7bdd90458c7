"""smartWait (D-21): wait for a page to be worth reading, never longer than a cap, never failing."""

from __future__ import annotations

from typing import Literal

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from browserd.daemon.sessions.settle import settle

LOAD_STATES: tuple[Literal["load", "networkidle"], ...] = ("load", "networkidle")


async def smart_wait(page: Page, max_ms: int, quiet_ms: int) -> None:
    """Load, then network idle, then a quiet DOM; whatever is reached within `max_ms` is good enough."""
    if max_ms <= 0:
        return
    with anyio.move_on_after(max_ms / 1000):
        for state in LOAD_STATES:
            try:
                await page.wait_for_load_state(state, timeout=max_ms)
            except PlaywrightError:
                break  # a page that never finishes loading is read as it is
        await settle(page, quiet_ms, max_ms)
