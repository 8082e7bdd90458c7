"""A click or a hover on an element that is plainly ready for it, without Playwright's waits.

Playwright's click waits until the element keeps its box over two animation frames (about 33 ms on a page
that is not moving at all) and sets up a check of the element the input reaches. An element in the top
document, enabled, in view, on top at its centre and with nothing animating it or the page is ready now: one
script says so and where its centre is, and the mouse goes there (rest_point.js). Anything else takes
Playwright's way, with its waits and its errors. The check of the element the input reaches stays: the same
script sets it up, the page gets no button event of a press that lands elsewhere (the pointer's arrival
showed a bar that moved the rows), and the click then takes Playwright's way (rest_hit.js says which). A
hover is the same move without the press, checked on its move events.

The script runs in the page's main world. There Playwright built its whole injected script on a document's
first element handle, only to describe the element for debugging (about 30 ms, more than the waits it
saves); browserd's driver preload leaves that out (runtime/node/driver_preload.js), and then every click or
hover may take this way. A driver without it (a remote Playwright server's, `[browser] driver_preload =
false`) still builds it: there only an action that follows such a build takes this way: a checkbox's click,
after its probe (checkables.py), and a click or hover on a document an earlier one has warmed
(`warm_beside`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any, Protocol, TypeVar

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.elements.overlays import INPUT_ANSWER_S, first_attempt_ms
from browserd.daemon.runtime.page_js import load_js
from browserd.daemon.runtime.page_probe import page_answers

T = TypeVar("T")

_REST_POINT_JS = load_js("browserd.daemon.elements", "rest_point.js")
_REST_HIT_JS = load_js("browserd.daemon.elements", "rest_hit.js")
# A page that asked for an animation frame within this long may be moving things with its own script.
_QUIET_MS = 100
# The events whose first one says whether the action reached its element; the last one ends the check.
_BUTTON_EVENTS = ("pointerdown", "mousedown", "pointerup", "mouseup", "click")
_MOVE_EVENTS = ("pointermove", "mousemove")


async def click_at_rest(page: Page, locator: Locator, timeout_ms: float) -> bool:
    """Click the element where a person would, if it is ready now; False when it is not, or when something else
    took the pointer's place by the time the button went down (then the page got no button event of it)."""
    return await _at_rest(page, locator, timeout_ms, page.mouse.click, _BUTTON_EVENTS)


async def hover_at_rest(page: Page, locator: Locator, timeout_ms: float) -> bool:
    """Move the pointer over the element's centre, if it is ready now; False when it is not, or when something
    else was under the pointer when it arrived (the page then got no move event of it)."""
    return await _at_rest(page, locator, timeout_ms, page.mouse.move, _MOVE_EVENTS)


async def _at_rest(
    page: Page,
    locator: Locator,
    timeout_ms: float,
    act: Callable[[float, float], Awaitable[None]],
    events: tuple[str, ...],
) -> bool:
    point: dict[str, Any] | None = await locator.evaluate(_REST_POINT_JS, [_QUIET_MS, events], timeout=timeout_ms)
    if point is None:
        return False
    # Input is answered once the page's handlers have run: a handler that holds the page's thread holds it.
    first_ms = first_attempt_ms(timeout_ms)
    try:
        with anyio.move_on_after(first_ms / 1000) as bound:
            await act(point["x"], point["y"])
    except Exception:
        await _reached(page)  # a guard left behind would judge the next action by this element
        raise
    if bound.cancelled_caught and not await page_answers(page, INPUT_ANSWER_S):
        # As for Playwright's own action whose input went out (overlays._once): the tab stops the script.
        raise PlaywrightTimeout(f"Timeout {first_ms:.0f}ms exceeded: the page's handler of the input holds it")
    # No button event seen ("") is a page whose own listener stopped them first: the click did reach it, so
    # it is done, as Playwright's check takes it; clicking again could act twice.
    return await _reached(page) != "missed"


async def _reached(page: Page) -> str:
    """The guard's verdict, the guard taken away."""
    try:
        verdict: str = await page.evaluate(_REST_HIT_JS)
    except PlaywrightError:
        return "gone"  # the action navigated away: it reached something, and nothing was held back
    return verdict


class Documents(Protocol):
    """A tab's count of its main-frame loads, and after which of them its document had Playwright's script in
    its main world. The count moves when a load's request starts, before any answer of the call that started
    it: a mark it makes stale costs a slower click, never a wrong one. With the preload's driver the script is
    never needed there (`main_world_cheap`), and every document is ready."""

    navigations: int
    main_world_navigations: int

    @property
    def main_world_cheap(self) -> bool: ...


async def warm_beside(documents: Documents, page: Page, action: Awaitable[T]) -> T:
    """Run `action` (Playwright's own click or hover) while the main world of the tab's document gets Playwright's
    script (a handle on the document's root needs it), off the critical path: the page builds it during the
    action's frame waits. The next click or hover on this document may then go at rest."""
    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(_warm, documents, page)
        try:
            done = await action
        except Exception as exc:  # raised as it is once the warm-up is over, not wrapped in the group's
            failure = exc
    if failure is not None:
        raise failure
    return done


async def _warm(documents: Documents, page: Page) -> None:
    loads = documents.navigations
    with suppress(PlaywrightError):  # the click navigated meanwhile: that document is gone, and no mark
        root = await page.evaluate_handle("document.documentElement")
        await root.dispose()
        mark_warm(documents, loads)


def mark_warm(documents: Documents, loads: int) -> None:
    """Mark the tab's document as one whose main world has Playwright's script (something of browserd's ran
    there since its load count was `loads`), unless another load has come since."""
    if documents.navigations == loads:
        documents.main_world_navigations = loads


def warm(documents: Documents) -> bool:
    """Whether the tab's document is ready for an action at rest: its main world needs no Playwright script
    (the preload's driver), or has it, as far as the tab knows."""
    return documents.main_world_cheap or documents.main_world_navigations == documents.navigations
