"""A click on an element that is plainly ready for it, without Playwright's waits.

Playwright's click waits until the element keeps its box over two animation frames (about 33 ms on a page
that is not moving at all) and sets up a check of the element the input reaches. An element in the top
document, enabled, in view, on top at its centre and with nothing animating it or the page is ready now: one
script says so and where its centre is, and the mouse goes there (rest_point.js). Anything else takes
Playwright's way, with its waits and its errors.

The script runs in the page's main world, which holds Playwright's injected script only once something of
browserd's ran there in that document: the first costs that script's build (about 30 ms a document, more
than the waits it saves). So only a click that follows such a script takes this way: a checkbox's, after
its probe (checkables.py).
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Locator, Page

from browserd.daemon.runtime.page_js import load_js

_REST_POINT_JS = load_js("browserd.daemon.elements", "rest_point.js")
# A page that asked for an animation frame within this long may be moving things with its own script.
_QUIET_MS = 100


async def click_at_rest(page: Page, locator: Locator, timeout_ms: float) -> bool:
    """Click the element where a person would, if it is ready now; False, with nothing done, when it is not."""
    point: dict[str, Any] | None = await locator.evaluate(_REST_POINT_JS, _QUIET_MS, timeout=timeout_ms)
    if point is None:
        return False
    await page.mouse.click(point["x"], point["y"])
    return True
