"""Triggers (reference/004, issue 14 item 8): flows the daemon starts on a schedule or when a page loads.

A schedule is a flow, a cron expression (five fields, or six with croniter's trailing seconds field) or an
onPage URL glob, and the non-sensitive arguments to run with; schedules live in flows.db. An onPage trigger
starts its flow in the tab of any daemon session whose main frame finished loading a matching URL (Playwright glob
semantics), in that session, as an async run; a tab its own triggered run is still working in does not
trigger again, so a flow that reloads its page cannot start itself over and over. While the daemon
runs, one task sleeps until the next cron schedule is due and starts its flow as an async run in a
session of the run's own (closed when the run ends): between runs a schedule holds no session, tab or
browser open. A schedule made with `systemd: true` is fired by a systemd user timer instead
(shim/flow_systemd_timers.py), which also starts the daemon when it is not running; the daemon's loop leaves
it alone.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows.flow_model import Owner
from browserd.daemon.sessions.urlglob import url_glob
from browserd.protocol.messages import TrustLevel

if TYPE_CHECKING:
    from browserd.daemon.sessions.session import Session
    from browserd.daemon.sessions.tab import Tab

log = logging.getLogger(__name__)

SCHEDULE_ID_CHARS = 8
CRON_HINT = (
    "Five fields: minute hour day-of-month month day-of-week, e.g. '*/15 * * * *' (every 15 minutes) or "
    "'0 9 * * 1-5' (09:00 on weekdays); an optional sixth field is the second, e.g. '* * * * * 30'."
)


class Schedule(msgspec.Struct, rename="camel", kw_only=True):
    schedule_id: str
    flow_id: str
    # Who added it (None: before owners were recorded, the user: local); its runs never exceed that level.
    owner: Owner | None = None
    cron: str | None = None
    on_page: str | None = None
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    start_url: str | None = None
    # Fired by a systemd user timer, not by the daemon's loop.
    systemd: bool = False
    created_at: int = 0
    last_run_id: str | None = None
    last_at: int | None = None


def check_cron(expression: str) -> None:
    from croniter import croniter

    # Six fields: croniter reads the last as the second (a minute's schedule then fires within seconds, not at
    # the next minute); seven would add a year, which browserd does not offer.
    if len(expression.split()) not in (5, 6) or not croniter.is_valid(expression):
        raise InvalidParameter(f"`{expression}` is not a cron expression browserd reads", hint=CRON_HINT, field="cron")


def next_time(expression: str, after: float) -> float:
    """The first time (epoch seconds) after `after` that the expression names, in local time."""
    from croniter import croniter

    start = datetime.fromtimestamp(after, tz=UTC).astimezone()
    return float(croniter(expression, start).get_next(float))


def new_schedule_id() -> str:
    return f"sch_{secrets.token_hex(SCHEDULE_ID_CHARS // 2)}"


# Starts a schedule's flow now, for a caller of the given level: the run's id.
StartRun = Callable[[Schedule, TrustLevel], Awaitable[str]]
# Starts a schedule's flow in a session's tab: the run's id and the event set when it ends.
StartOnPage = Callable[[Schedule, "Session", "Tab"], Awaitable[tuple[str, anyio.Event]]]
PAGE_QUEUE = 64
RETRY_S = 60


@dataclass
class Scheduler:
    """The daemon's loop over its schedules: wakes for the next due one, or when the schedules change."""

    load: Callable[[], Awaitable[list[Schedule]]]
    start: StartRun
    start_on_page: StartOnPage
    ran: Callable[[str, str, int], Awaitable[None]]

    def __post_init__(self) -> None:
        self._changed = anyio.Event()
        # schedule id -> its next time, kept across wake-ups so a change elsewhere does not skip a due run.
        self._due: dict[str, float] = {}
        self._on_page: list[tuple[re.Pattern[str], Schedule]] = []
        # (session id, tab id) of tabs a triggered run works in.
        self._busy: set[tuple[str, str]] = set()
        self._loads: MemoryObjectSendStream[tuple[Schedule, Session, Tab]]
        self._loaded: MemoryObjectReceiveStream[tuple[Schedule, Session, Tab]]
        self._loads, self._loaded = anyio.create_memory_object_stream(PAGE_QUEUE)

    def changed(self) -> None:
        self._changed.set()

    def page_loaded(self, session: Session, tab: Tab) -> None:
        """A main frame finished loading (called from the page's event): queue the triggers it matches."""
        url = tab.page.url
        if (session.id, tab.id) in self._busy:
            return
        for pattern, schedule in self._on_page:
            if pattern.fullmatch(url):
                try:
                    self._loads.send_nowait((schedule, session, tab))
                except anyio.WouldBlock:
                    log.warning("onPage trigger %s dropped: too many pages loading at once", schedule.schedule_id)

    async def serve(self) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._on_pages, group)
            await self._cron()

    async def _on_pages(self, group: anyio.abc.TaskGroup) -> None:
        async for schedule, session, tab in self._loaded:
            key = (session.id, tab.id)
            if key in self._busy or tab.page.is_closed():
                continue
            self._busy.add(key)
            try:
                run_id, done = await self.start_on_page(schedule, session, tab)
            except Exception:  # the session closed, the flow is gone: the others go on
                log.exception("onPage trigger %s did not start", schedule.schedule_id)
                self._busy.discard(key)
                continue
            await self.ran(schedule.schedule_id, run_id, int(time.time() * 1000))
            group.start_soon(self._free, key, done)

    async def _free(self, key: tuple[str, str], done: anyio.Event) -> None:
        await done.wait()
        self._busy.discard(key)

    async def _cron(self) -> None:
        while True:
            try:
                await self._cron_once()
            except Exception:  # a broken store must not take the daemon down: try again in a while
                log.exception("the flow schedules could not be read")
                with anyio.move_on_after(RETRY_S):
                    await self._changed.wait()

    async def _cron_once(self) -> None:
        """Start what is due; then wait for the next due time or a change of the schedules."""
        self._changed = anyio.Event()
        loaded = await self.load()
        self._on_page = [(url_glob(s.on_page), s) for s in loaded if s.on_page]
        schedules = [s for s in loaded if s.cron and not s.systemd]
        now = time.time()
        self._due = {s.schedule_id: self._due.get(s.schedule_id) or next_time(s.cron or "", now) for s in schedules}
        for schedule in schedules:
            if self._due[schedule.schedule_id] <= now:
                self._due[schedule.schedule_id] = next_time(schedule.cron or "", now)
                await self.fire(schedule)
        wait = min(self._due.values(), default=now + 3600) - time.time()
        with anyio.move_on_after(max(0.0, wait)):
            await self._changed.wait()

    async def fire(self, schedule: Schedule, caller: TrustLevel = "local") -> str | None:
        """Start the schedule's flow now for a `caller` of that level (the daemon's own loop: local); the run's id
        (None when it could not start: logged)."""
        try:
            run_id = await self.start(schedule, caller)
        except Exception:  # a schedule whose flow is gone or refused must not stop the others
            log.exception("schedule %s of flow %s did not start", schedule.schedule_id, schedule.flow_id)
            return None
        await self.ran(schedule.schedule_id, run_id, int(time.time() * 1000))
        return run_id
