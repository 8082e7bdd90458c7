"""What covers an element a pointer action was meant for, said so that a model can clear it.

Cookie banners, sticky bars and modal dialogs sit on top of the page; Playwright then retries a click
until its timeout and says only that some element "intercepts pointer events". Here a covered click
gives up after a short patience (a fading toast clears by then; a banner never does), and the error
names the overlay (`dialog "Terms of use"`, `region "Cookie banner"`) and the buttons that close it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page, Position
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.errors import ElementNotInteractable
from browserd.daemon.runtime.page_js import load_js
from browserd.daemon.runtime.page_probe import page_answers

# How long a pointer action waits for a cover to go before it reports it (a toast or an animation
# clears within this; a cookie banner or a modal waits for the agent).
COVER_PATIENCE_MS = 2_000
_INTERCEPTS = "intercepts pointer events"
# How long a page may still be busy with the input of an action whose time ran out before the action fails:
# a click handler's work (an export, a big re-render) often outlasts the first attempt's short share.
INPUT_ANSWER_S = 3.0
# Playwright's log lines from the moment the input goes out (`- performing click action`) to its end
# (`- click action done`); hover and dblclick alike.
_DISPATCHED = re.compile(r"- +(?:performing \w+ action|\w+ action done)")
# The line that starts each new attempt after the first: only the last attempt's lines say what happened.
_RETRYING = "- retrying "
# Playwright's log line: `<p>cover</p> from <div class="modal-backdrop">…</div> subtree intercepts pointer events`.
_INTERCEPTOR = re.compile(r"- (<.*?) intercepts pointer events")

_COVER_JS = load_js("browserd.daemon.elements", "cover.js")


async def patiently(
    act: Callable[[float], Awaitable[Any]], page: Page, timeout_ms: float, by_label: bool = False
) -> None:
    """Run a pointer action within `timeout_ms`. When a cover holds it, move the pointer away once (a menu
    opened by hovering closes when the pointer leaves it, as it does for a person) and try again; if it
    is still covered, fail (Playwright's own error) after COVER_PATIENCE_MS in all, not the whole timeout.
    `by_label`: a cover that is a <label> fails at once, for the caller to click through it (a checkbox
    its own label draws over never uncovers)."""
    first = first_attempt_ms(timeout_ms)
    try:
        await _once(act, page, first)
        return
    except PlaywrightTimeout as exc:
        if timeout_ms <= first:
            raise
        covered = _INTERCEPTS in str(exc)
        if covered and by_label and (interceptor(str(exc)) or "").startswith("<label"):
            raise
    if covered:
        await page.mouse.move(0, 0)
        await _once(act, page, min(timeout_ms - first, COVER_PATIENCE_MS / 2))
    else:
        # Not covered: the element was still on its way (appearing, enabling); nothing was clicked yet.
        await _once(act, page, timeout_ms - first)


def first_attempt_ms(timeout_ms: float) -> float:
    """How long a pointer action's first attempt may take: half the patience with covers, within its timeout."""
    return min(timeout_ms, COVER_PATIENCE_MS / 2)


async def _once(act: Callable[[float], Awaitable[Any]], page: Page, timeout_ms: float) -> None:
    """Run the action. A timeout after its input went out is the page still answering it (a handler that holds
    the page's thread, as a client-side export does) or the navigation it started, which the answer's settling
    covers: done once the page answers again, never tried again (a form sent twice, two exports). A page that
    does not answer keeps the timeout, for the tab to stop the script that holds it (Tab.answering)."""
    try:
        await act(timeout_ms)
    except PlaywrightTimeout as exc:
        if not _dispatched(str(exc)) or not await page_answers(page, INPUT_ANSWER_S):
            raise


def _dispatched(message: str) -> bool:
    """Whether Playwright's call log says the last attempt's input was dispatched."""
    return _DISPATCHED.search(message.rsplit(_RETRYING, 1)[-1]) is not None


@asynccontextmanager
async def covers_named(locator: Locator, described: str, action: str) -> AsyncIterator[None]:
    """A covered-element error that names the overlay and the buttons that close it."""
    try:
        yield
    except ElementNotInteractable as exc:
        if not exc.details.get("covered"):
            raise
        try:
            found = await locator.first.evaluate(_COVER_JS, timeout=COVER_PATIENCE_MS)
        except PlaywrightError:
            found = None
        if not found:
            raise
        cover, buttons, popup = found
        closers = " or ".join(repr(name) for name in buttons)
        if popup:
            # An open dropdown or popover: a person closes it by pressing Escape or clicking elsewhere.
            hint = "It is an open popup: pick from it, or close it (browser_press Escape, or click elsewhere)"
        elif buttons:
            hint = f"Close {cover} first: browser_click its {closers} (refs in browser_snapshot)"
        else:
            hint = f"Close or dismiss {cover} first (browser_snapshot shows it), or press Escape"
        raise ElementNotInteractable(
            f"{described} is covered by {cover}, which would receive the {action}",
            hint=hint + "; then retry.",
            **{**exc.details, "coveredBy": cover, "closers": buttons},
        ) from exc


_CONTENT_POINT_JS = load_js("browserd.daemon.elements", "content_point.js")


# Snapshot roles of blocks that hold prose, whose hover handlers sit on an inline child: a hover on one
# of these aims at its content. A control, a link or a CSS selector (which names the element itself) is
# hovered at its centre, in one round trip.
BLOCK_ROLES = frozenset(
    {"paragraph", "generic", "text", "listitem", "cell", "gridcell", "blockquote", "group", "article", "region"}
)


async def content_point(locator: Locator, timeout_ms: float) -> Position | None:
    """The point of `locator`'s content to aim a hover at, when its box centre would miss its content."""
    point = await locator.evaluate(_CONTENT_POINT_JS, timeout=timeout_ms)
    return Position(x=point["x"], y=point["y"]) if point else None


def interceptor(text: str) -> str | None:
    """The element Playwright's log says intercepts the pointer, as it wrote it."""
    found = _INTERCEPTOR.findall(text)
    return found[-1] if found else None
