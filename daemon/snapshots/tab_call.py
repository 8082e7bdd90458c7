"""One call on a tab, from the tab-tool wrapper (tools/tabtool.py) to its answer.

What an action finds out on the way that its settle needs (the child frame its target lives in) travels
with the call, passed down as an argument: a later call on the same tab never sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame

from browserd.daemon.sessions.tab import Tab
from browserd.daemon.snapshots.aria_capture import Capture, PageFacts, annotated, read_ahead
from browserd.daemon.snapshots.settle import Settled, frame_of, settle_tab
from browserd.daemon.snapshots.targets import IDENTITY_TIMEOUT_MS, EarlyAction, Target, aborted, locate

# A snapshot this long takes a few milliseconds to read (article.html: 30 lines, 3-4 ms; shop.html: 300, 10 ms).
READ_AHEAD_LINES = 200


@dataclass
class TabCall:
    tab: Tab
    # The answer shows the page once it has settled (an action with a snapshot): only then is the child
    # frame an action's target lives in worth finding, so that the settle covers that frame's work too.
    settles: bool = False
    # The child frame of the action's target; None in the main frame (or when the call does not settle).
    frame: Frame | None = None
    # The element helper that took the action (elements/filling.py, choosing.py: "fill", "flatpickr", "mirror"...),
    # set by the tool once it has acted: a recorded step keeps it, so its replay goes the same way.
    setter: str | None = None
    # Reads run while the page settles: a check that the action took (a fill's value) fails the call.
    checks: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # The ref of the one-line text field the call filled or typed into, and the value it now holds: when
    # nothing else changed, the snapshot after it is the last one with that line rewritten (field_edit.py).
    filled: tuple[str, str] | None = None
    # The call loaded a page: the snapshot is read while the page settles, Playwright's script for the new
    # document installed meanwhile, and kept when the page settled as it loaded (Settled.unchanged). Only
    # where the tab's last snapshot was short: that saves a round trip, while a read the page outdates is
    # wasted, and a long one costs more than the round trip (READ_AHEAD_LINES).
    reads_ahead: bool = False
    ahead: Capture | None = None  # that snapshot, once kept

    async def locate(self, target: str, early: EarlyAction | None = None) -> Target:
        """The element a ref or selector names (snapshots/targets.py; `early` is started there on a plain text
        field). In a child frame, when the call settles, that frame is found now, before the action, and the
        page told to count what the frame posts it meanwhile as the action's doing (snapshots/settle.py)."""
        found = await locate(self.tab, target, early)
        if found.in_frame and self.settles:
            # Only refs inside frames pay the extra round trip; the main frame's settle needs no frame.
            self.frame = await frame_of(self.tab.page, found.locator, IDENTITY_TIMEOUT_MS)
        return found

    async def check_meanwhile(self, check: Callable[[], Awaitable[None]]) -> None:
        """Run `check` alongside the settle when the call settles (its round trip overlaps the settle's),
        else now."""
        if self.settles:
            self.checks.append(check)
        else:
            await check()

    async def settle(
        self, quiet_ms: int, max_ms: int, then_js: str | None = None, snapshot_timeout_ms: int | None = None
    ) -> Settled:
        """Wait for what the action started: in its target's frame first, then in the page. A failing check
        fails the call and ends the wait. With `reads_ahead` (and `then_js` the page facts), the snapshot is
        read meanwhile: `ahead` holds it when the page did not change while it settled."""
        reading = None
        loads = (self.tab.navigations, self.tab.document)
        if self.reads_ahead and _short_snapshots(self.tab) and len(self.tab.page.frames) == 1:
            reading = asyncio.ensure_future(read_ahead(self.tab.page, snapshot_timeout_ms))
            # Its request leaves before the settle's: installing Playwright's script in the new document, which
            # the read needs first, takes longer than the whole settle after a load.
            await asyncio.sleep(0)
        try:
            settled = await self._settled(quiet_ms, max_ms, then_js)
        except BaseException:
            if reading is not None:
                await aborted(reading)
            raise
        if reading is None:
            return settled
        facts = PageFacts.of(settled.after)
        # A page that loaded another meanwhile (a script's redirect) settled a document the read never saw.
        if not settled.unchanged or facts is None or loads != (self.tab.navigations, self.tab.document):
            await aborted(reading)  # a fresh read follows the settle
            return settled
        with contextlib.suppress(PlaywrightError):  # read again after the settle, and fail there if it must
            self.ahead = annotated(await reading, facts, boxed=True)
        return settled

    async def _settled(self, quiet_ms: int, max_ms: int, then_js: str | None) -> Settled:
        if not self.checks:
            return await settle_tab(self.tab, quiet_ms, max_ms, then_js, self.frame)
        settling = asyncio.ensure_future(settle_tab(self.tab, quiet_ms, max_ms, then_js, self.frame))
        try:
            for check in self.checks:
                await check()
        except BaseException:
            await aborted(settling)  # the call's answer is the check's error
            raise
        return await settling


def _short_snapshots(tab: Tab) -> bool:
    """Whether the tab's pages read quickly so far: its last snapshot had at most READ_AHEAD_LINES lines (a
    tab that has read none yet does not guess)."""
    last = tab.last_capture
    return last is not None and last.text.count("\n") < READ_AHEAD_LINES
