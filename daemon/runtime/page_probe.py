"""Whether a page answers: a page stuck in a script never runs another, however trivial."""

from __future__ import annotations

from contextlib import suppress

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page


async def page_answers(page: Page, within_s: float) -> bool:
    """Whether the page runs a trivial script within `within_s` (a navigating page counts)."""
    with anyio.move_on_after(within_s):
        # A document being replaced, or a closed page, fails at once: either way no script holds it.
        with suppress(PlaywrightError):
            await page.evaluate("1")
        return True
    return False
