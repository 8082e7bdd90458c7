"""Where a scroller comes to rest after a wheel turn, which returns before the page has scrolled."""

from __future__ import annotations

from playwright.async_api import ElementHandle, Page

from browserd.daemon.runtime.page_js import load_js

_AT_REST_JS = load_js("browserd.daemon.elements", "wheel_at_rest.js")


async def position_at_rest(page: Page, over: ElementHandle | None) -> tuple[int, int]:
    """The scroll offset once it stops changing (at most a second): of the page, or, when `over` is given,
    of the nearest scrollable box around it (a feed, a virtual list)."""
    x, y = await page.evaluate(_AT_REST_JS, over)
    return x, y
