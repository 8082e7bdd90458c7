"""One call on a tab, from the tab-tool wrapper (tools/tabtool.py) to its answer.

What an action finds out on the way that its settle needs (the child frame its target lives in) travels
with the call, passed down as an argument: a later call on the same tab never sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from playwright.async_api import Frame

from browserd.daemon.sessions.tab import Tab
from browserd.daemon.snapshots.settle import Settled, frame_of, settle_tab
from browserd.daemon.snapshots.targets import IDENTITY_TIMEOUT_MS, EarlyAction, Target, locate


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
    # Reads that verify the action took (a fill's value), run while the page settles: they fail the call.
    checks: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # The ref of the plain text field the call filled and the value it now holds: when nothing else changed,
    # the snapshot after it is the last one with that line rewritten (snapshots/field_edit.py).
    filled: tuple[str, str] | None = None

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

    async def settle(self, quiet_ms: int, max_ms: int, then_js: str | None = None) -> Settled:
        """Wait for what the action started: in its target's frame first, then in the page. A failing check
        fails the call and ends the wait."""
        if not self.checks:
            return await settle_tab(self.tab, quiet_ms, max_ms, then_js, self.frame)
        settling = asyncio.ensure_future(settle_tab(self.tab, quiet_ms, max_ms, then_js, self.frame))
        try:
            for check in self.checks:
                await check()
        except BaseException:
            settling.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):  # the call's answer is the check's error
                await settling
            raise
        return await settling
