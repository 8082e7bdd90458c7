"""A pointer action on an element that is plainly ready for it, without Playwright's waits.

Playwright's click and hover wait until the element keeps its box over two animation frames (about 33 ms
on a page that is not moving at all) and set up a check of the element the input reaches. An element in the
top document, enabled, in view, on top at its centre and with nothing animating it or the page is ready
now: one script says so and where its centre is, and the mouse goes there (rest_point.js). Anything else
takes Playwright's way, with its waits and its errors.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Locator, Page

from browserd.daemon.runtime.page_js import load_js

_REST_POINT_JS = load_js("browserd.daemon.elements", "rest_point.js")
# A page that asked for an animation frame within this long may be moving things with its own script.
_QUIET_MS = 100


async def point_at_rest(page: Page, locator: Locator, timeout_ms: float, click: bool) -> bool:
    """Click the element where a person would (or only move the pointer there, a hover), if it is ready now;
    False, with nothing done, when it is not."""
    point: dict[str, Any] | None = await locator.evaluate(_REST_POINT_JS, _QUIET_MS, timeout=timeout_ms)
    if point is None:
        return False
    if click:
        await page.mouse.click(point["x"], point["y"])
    else:
        await page.mouse.move(point["x"], point["y"])
    return True
