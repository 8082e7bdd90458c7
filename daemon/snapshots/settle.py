"""Waiting for a page to settle, so its snapshot shows what an action or a load caused.

An action pays only for what it started (issue 10). A script that runs in every document before its
own (TRACKER_JS) marks the work a user input starts: timers set by an input event's handlers (a debounced
suggestion list), timers and animation frames those timers set in turn, fetches and XHRs. After the action
one evaluate waits until that work is done and the DOM has been quiet for `quiet_ms` since the last
change it caused; when the action started nothing, it answers once the page has drawn its next frame
(at most a short grace period), by when what the input queued (a message, a render) has run; and when the
page took input since the last answer without changing at all (a plain field filled), once the messages
the input posted and a task turn have passed, nothing changed and no frame was asked for, since there is
no render to wait for. After a
load the same grace catches a render its scripts queued at the load event; the parser's own insertions
are over by then and hold no quiet window, a document still being parsed is waited for; and a load whose
scripts have changed nothing since the parse and asked for no frame answers, like an input that did
nothing, once the messages and timers they queued have run. A navigation
the action started (Navigation API `navigate`) is waited for. Timer callbacks that no input started and
that change the same element again and again (clocks, counters) are "ticking": their changes never hold
the wait, and the texts of those elements come back so a delta can leave them out. An action on an element in a child
frame settles that frame (and those above it) before the page, and the page counts a message another window
posts it meanwhile as part of the action: a payment widget's "paid" reaches the answer.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import anyio
from playwright.async_api import CDPSession, Frame, Locator, Page
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.runtime.page_js import called, load_js

if TYPE_CHECKING:
    from browserd.daemon.sessions.tab import Tab

# Whatever an action caused may take this long to start (a microtask, a message, an animation frame):
# the grace ends with the page's next frame, or after this long when frames come slowly (a busy machine).
GRACE_MS = 25
_TICKING_TEXT_CHARS = 200
_INTERRUPT_POLL_S = 0.02
_OPENED_POLL_S = 0.01
_DIGITS = re.compile(r"\d+")
# How long a page counts the messages other windows send it as the action's continuation, once the action's
# target is known to be in a child frame: until the settle after the action ends, or this long when the
# action fails before one.
_RELAY_MS = 10_000
_RELAY_JS = load_js("browserd.daemon.snapshots", "settle_relay.js")
TRACKER_JS = load_js("browserd.daemon.snapshots", "settle_tracker.js")
_ACTION_JS = load_js("browserd.daemon.snapshots", "settle_action.js")
_THEN_JS = load_js("browserd.daemon.snapshots", "settle_then.js")


@dataclass(frozen=True)
class Settled:
    ticking: list[str] = field(default_factory=list)  # texts of elements that change on their own
    opening: bool = False  # the action opened a tab (a link to a new tab, window.open)
    downloading: bool = False  # the action asked for a download (a link with `download`)
    after: Any = None  # what `then_js` answered once the page had settled; None if it did not run
    # The page's DOM is as it was when the previous settle answered, and nothing asked for a frame since.
    unchanged: bool = False


@cache
def _action_script(then_js: str | None) -> str:
    """The settle script; with `then_js` (a function of no arguments), also what it answers on the settled
    page, in the same round trip. A failing `then_js` answers null and leaves the settle's answer alone."""
    if then_js is None:
        return _ACTION_JS
    return called(_THEN_JS, _ACTION_JS, then_js)


async def settle_action(
    page: Page | Frame,
    quiet_ms: int,
    max_ms: int,
    interrupt: Callable[[], bool],
    then_js: str | None = None,
    cdp: CDPSession | None = None,
) -> Settled:
    """Until what the last action started has finished (at most `max_ms`, or until `interrupt()` holds,
    e.g. once the navigation the action started turned out to be a download). Never raises: a page that
    will not settle is read as it is. `cdp`: the page's own CDP session, to evaluate over (`evaluate`)."""
    found: list[Any] | None = None
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while not interrupt():
                await anyio.sleep(_INTERRUPT_POLL_S)
            group.cancel_scope.cancel()

        group.start_soon(watch)
        found = await evaluate_across_navigation(
            page, _action_script(then_js), [GRACE_MS, quiet_ms, max_ms, _TICKING_TEXT_CHARS], max_ms, cdp
        )
        group.cancel_scope.cancel()
    if not found:
        return Settled()
    ticking = [text for text in found[0] if isinstance(text, str) and _DIGITS.search(text)]
    return Settled(ticking, bool(found[1]), bool(found[2]), found[4] if len(found) > 4 else None, found[3] is True)


async def frame_of(page: Page, locator: Locator, timeout_ms: float) -> Frame | None:
    """The frame `locator`'s element lives in, for an action about to work there; meanwhile the page and
    the frames between are told to take what other windows post them as that action's doing (TRACKER_JS).
    None when it cannot tell."""
    async with anyio.create_task_group() as group:
        group.start_soon(_quietly, page.main_frame.evaluate(_RELAY_JS, _RELAY_MS))
        try:
            handle = await locator.first.element_handle(timeout=timeout_ms)
            frame = await handle.owner_frame()
        except PlaywrightError:
            return None
        group.start_soon(_quietly, handle.dispose())
        between = frame.parent_frame if frame is not None else None
        while between is not None and between != page.main_frame:
            group.start_soon(_quietly, between.evaluate(_RELAY_JS, _RELAY_MS))
            between = between.parent_frame
    return frame


async def _quietly(call: Awaitable[Any]) -> None:
    with contextlib.suppress(PlaywrightError):  # a page gone or busy: the action reports that itself
        await call


async def settle_tab(
    tab: Tab, quiet_ms: int, max_ms: int, then_js: str | None = None, frame: Frame | None = None
) -> Settled:
    """Settle after an action in `tab` (the browser tools' and flow replay's wait); a tab or a download it
    started is waited for too, since each arrives as an event of its own after the page has answered.
    When the action's target was in a child `frame` (another process, often), that frame settles first: by
    then the messages it posted the page have arrived, and the page's settle waits for what they started."""
    downloads = tab.window.downloads

    def download_started() -> bool:
        return any(record.tab_id == tab.id and not record.reported for record in downloads.records)

    deadline = time.monotonic() + max_ms / 1000
    inner = await _settle_frames(frame, tab.page, quiet_ms, deadline, download_started)
    page_ms = max(0, int((deadline - time.monotonic()) * 1000)) if inner else max_ms
    settled = await settle_action(tab.page, quiet_ms, page_ms, download_started, then_js, tab.cdp)
    tab.settles += 1
    if inner:
        parts = (*inner, settled)
        settled = Settled(
            [text for part in parts for text in part.ticking],
            any(part.opening for part in parts),
            any(part.downloading for part in parts),
            settled.after,
        )
    if settled.downloading:
        await downloads.started(tab.id, max_ms / 1000)
    if settled.opening:
        with anyio.move_on_after(max_ms / 1000):
            while not tab.window.opened:
                await anyio.sleep(_OPENED_POLL_S)
    return settled


async def _settle_frames(
    frame: Frame | None, page: Page, quiet_ms: int, deadline: float, interrupt: Callable[[], bool]
) -> list[Settled]:
    """Settle `frame` and each frame above it short of the page's own, innermost first: a frame's messages
    reach its parent, which settles next. None settle when the action was in the main frame."""
    settled: list[Settled] = []
    while frame is not None and frame != page.main_frame and not frame.is_detached():
        left_ms = max(0, int((deadline - time.monotonic()) * 1000))
        settled.append(await settle_action(frame, quiet_ms, left_ms, interrupt))
        frame = frame.parent_frame
    return settled


async def evaluate_across_navigation(
    page: Page | Frame, script: str, arg: Any, max_ms: int, cdp: CDPSession | None = None
) -> Any:
    """`script`'s answer in the page's document, or in the one that replaces it when a navigation destroys it
    meanwhile (an action's, a script's redirect); None when neither answers within `max_ms`. `cdp`: the
    page's own CDP session, to evaluate over (`evaluate`)."""
    if max_ms <= 0:
        return None
    with anyio.move_on_after(max_ms / 1000 + 0.5):
        for _attempt in range(3):
            try:
                return await evaluate(page, script, arg, cdp)
            except PlaywrightError:
                # A navigation destroyed the document the script ran in: wait for the next.
                try:
                    await page.wait_for_load_state("domcontentloaded", timeout=max_ms)
                except PlaywrightError:
                    return None
    return None


async def evaluate(page: Page | Frame, script: str, arg: Any, cdp: CDPSession | None) -> Any:
    """The JSON answer of the function `script` called with `arg` in the page's main world: over the page's
    `cdp` session when it has one, else through Playwright (a frame's, or a backend without CDP).

    Playwright's evaluate runs through a script of its own that it installs in each new document first;
    after a load that costs the renderer 3-4 ms while the snapshot waits behind it (plain Playwright, goto +
    this evaluate + aria_snapshot on article.html, 100 rounds: 60-61 ms against 57-58 over CDP)."""
    if cdp is None:
        return await page.evaluate(script, arg)
    expression = f"({script})({json.dumps(arg)})"
    try:
        reply = await cdp.send(
            "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True, "silent": True}
        )
    except PlaywrightError:
        # The document went away meanwhile, or the backend let the session go: Playwright's evaluate waits
        # for the page's next document, where the script answers.
        return await page.evaluate(script, arg)
    failed = reply.get("exceptionDetails")
    if failed is not None:
        thrown = failed.get("exception") or {}
        raise PlaywrightError(str(thrown.get("description") or failed.get("text") or "the script failed"))
    return reply["result"].get("value")


def ticks(line: str, ticking: Sequence[str]) -> bool:
    """Whether a snapshot line shows one of the ticking texts, whatever its numbers read now."""
    shape = _DIGITS.sub("#", line)
    return any(_DIGITS.sub("#", text) in shape for text in ticking)
