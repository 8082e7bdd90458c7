"""A click as browser_click and a flow's replay make it: where a person's click would land, patient with covers.

A checkbox or radio a theme hides under its label is clicked through the label (checkables.toggle); any other
click waits out a cover for a short while only (overlays.patiently), moving the pointer away once so that a
menu opened by hovering closes. A selector names no role, so a checkbox its own label covers is found out
only when the first attempt reports the label in the way.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Locator, Page, Position
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.elements.at_rest import Documents, click_at_rest, hover_at_rest, warm, warm_beside
from browserd.daemon.elements.checkables import CHECKABLE_ROLES, is_checkable, toggle
from browserd.daemon.elements.overlays import BLOCK_ROLES, content_point, patiently


async def click(
    page: Page,
    locator: Locator,
    described: str,
    timeout_ms: float,
    role: str | None,
    double: bool = False,
    options: dict[str, Any] | None = None,
    documents: Documents | None = None,
) -> str:
    """Click (or double-click) the element; `role` is what the snapshot or the replay's resolution says it is,
    `options` Playwright's (button, modifiers, position); `documents` the tab, whose document may let a plain
    click go at rest (at_rest.py). Answers a note for the answer: "" for a plain click."""
    options = options or {}
    plain = not double and not options
    if plain and role in CHECKABLE_ROLES:
        # Themes hide the input under a drawn box: the click goes where a person's would, its label.
        return await toggle(locator, described, timeout_ms)
    if plain and documents is not None:
        if warm(documents):
            if await click_at_rest(page, locator, timeout_ms):
                return ""
        else:
            return await warm_beside(documents, page, _click(page, locator, described, timeout_ms, options))
    return await _click(page, locator, described, timeout_ms, options, double)


async def _click(
    page: Page, locator: Locator, described: str, timeout_ms: float, options: dict[str, Any], double: bool = False
) -> str:
    plain = not double and not options
    act = locator.dblclick if double else locator.click
    try:
        await patiently(lambda ms: act(**options, timeout=ms), page, timeout_ms, by_label=plain)
    except PlaywrightTimeout as exc:
        # After the first attempt, not the whole patience; looking first would cost every click.
        if not (plain and "intercepts pointer events" in str(exc) and await is_checkable(locator)):
            raise
        return await toggle(locator, described, timeout_ms)
    return ""


async def hover(
    page: Page, locator: Locator, timeout_ms: float, role: str | None, documents: Documents | None = None
) -> None:
    """Move the pointer over the element, patient with covers as a click is; at rest as a click may go."""
    # Hover handlers sit on the content (an inline trigger in a paragraph), not on the empty box centre.
    point = await content_point(locator, timeout_ms) if role in BLOCK_ROLES else None
    if point is None and documents is not None:
        if warm(documents):
            if await hover_at_rest(page, locator, timeout_ms):
                return
        else:
            return await warm_beside(documents, page, _hover(page, locator, timeout_ms, point))
    await _hover(page, locator, timeout_ms, point)


async def _hover(page: Page, locator: Locator, timeout_ms: float, point: Position | None) -> None:
    await patiently(lambda ms: locator.hover(position=point, timeout=ms), page, timeout_ms)
