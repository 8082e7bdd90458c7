"""The script every window puts in each new document of its pages (clickables for snapshots, and what an
action starts, for settling), and its catching up with a document that loaded before the window existed."""

from __future__ import annotations

from contextlib import suppress

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from browserd.daemon.snapshots.aria_capture import CLICK_TRACKER_JS
from browserd.daemon.snapshots.settle import TRACKER_JS

WINDOW_SCRIPT = f"{CLICK_TRACKER_JS}\n{TRACKER_JS}"
_CATCH_UP_TIMEOUT_S = 2.0


async def catch_up(page: Page) -> None:
    """Runs WINDOW_SCRIPT in the document `page` shows now, which may predate the window (a tab the user
    shared, an attached browser's tab): new-document scripts never reach it. The script keeps out of a
    document that has it already. A page that will not run it (navigating, busy) is left as it is: the
    settle then waits a fixed quiet time there, as it does on a document without the tracker."""
    with anyio.move_on_after(_CATCH_UP_TIMEOUT_S), suppress(PlaywrightError):
        await page.evaluate(f"() => {{\n{WINDOW_SCRIPT}\n}}")
