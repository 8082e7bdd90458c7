"""smartWait (D-21): wait for a page to be worth reading, never longer than a cap, never failing."""

from __future__ import annotations

import contextlib

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from browserd.daemon.sessions.settle import settle


async def smart_wait(page: Page, max_ms: int, quiet_ms: int) -> None:
    """Network idle (after load) and a quiet DOM, side by side; what is reached within `max_ms` will do."""
    if max_ms <= 0:
        return

    async def network_idle() -> None:
        # A page that never finishes loading is read as it is.
        with contextlib.suppress(PlaywrightError):
            await page.wait_for_load_state("networkidle", timeout=max_ms)

    with anyio.move_on_after(max_ms / 1000):
        async with anyio.create_task_group() as waits:
            waits.start_soon(network_idle)
            waits.start_soon(settle, page, quiet_ms, max_ms)
