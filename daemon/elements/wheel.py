"""A wheel turned over an element (browser_scroll, a replayed scroll step), and where the scroller comes to rest
after it, which the wheel returns before."""

from __future__ import annotations

from playwright.async_api import ElementHandle, Locator, Page

from browserd.daemon.runtime.page_js import load_js

_AT_REST_JS = load_js("browserd.daemon.elements", "wheel_at_rest.js")


async def position_at_rest(page: Page, over: ElementHandle | None) -> tuple[int, int]:
    """The scroll offset once it stops changing (at most a second): of the page, or, when `over` is given,
    of the nearest scrollable box around it (a feed, a virtual list)."""
    x, y = await page.evaluate(_AT_REST_JS, over)
    return x, y


async def wheel_over(page: Page, locator: Locator, dx: int, dy: int, timeout_ms: float | None) -> bool:
    """Turn the wheel by (dx, dy) over the element, scrolled into view first, so that the box it sits in scrolls
    (a feed, a virtual list); False, with no wheel turned, when it has no box on screen."""
    await locator.scroll_into_view_if_needed(timeout=timeout_ms)
    box = await locator.bounding_box(timeout=timeout_ms)
    if box is None:
        return False
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    await page.mouse.wheel(dx, dy)
    return True
