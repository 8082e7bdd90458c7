"""Cron triggers (reference/004 triggers, issue 14 item 8): flows run on a schedule the daemon keeps.

A schedule is a flow, a cron expression (five fields, parsed by croniter) and the non-sensitive
arguments to run with; schedules live in flows.db. While the daemon runs, one task sleeps until the
next schedule is due and starts its flow as an async run in a session of the run's own (closed when
the run ends): between runs a schedule holds no session, tab or browser open. A schedule made with
`systemd: true` is fired by a systemd user timer instead (systemd_timer.py), which also starts the
daemon when it is not running; the daemon's own loop leaves it alone.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
import msgspec

from browserd.daemon.errors import InvalidParameter

log = logging.getLogger(__name__)

SCHEDULE_ID_CHARS = 8
CRON_HINT = (
    "Five fields: minute hour day-of-month month day-of-week, e.g. '*/15 * * * *' (every 15 minutes) or "
    "'0 9 * * 1-5' (09:00 on weekdays)."
)


class Schedule(msgspec.Struct, rename="camel", kw_only=True):
    schedule_id: str
    flow_id: str
    cron: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    start_url: str | None = None
    # Fired by a systemd user timer, not by the daemon's loop.
    systemd: bool = False
    created_at: int = 0
    last_run_id: str | None = None
    last_at: int | None = None


def check_cron(expression: str) -> None:
    from croniter import croniter

    if len(expression.split()) != 5 or not croniter.is_valid(expression):
        raise InvalidParameter(f"`{expression}` is not a cron expression browserd reads", hint=CRON_HINT, field="cron")


def next_time(expression: str, after: float) -> float:
    """The first time (epoch seconds) after `after` that the expression names, in local time."""
    from croniter import croniter

    start = datetime.fromtimestamp(after, tz=UTC).astimezone()
    return float(croniter(expression, start).get_next(float))


def new_schedule_id() -> str:
    return f"sch_{secrets.token_hex(SCHEDULE_ID_CHARS // 2)}"


StartRun = Callable[[Schedule], Awaitable[str]]


@dataclass
class Scheduler:
    """The daemon's loop over its schedules: wakes for the next due one, or when the schedules change."""

    load: Callable[[], Awaitable[list[Schedule]]]
    start: StartRun
    ran: Callable[[str, str, int], Awaitable[None]]

    def __post_init__(self) -> None:
        self._changed = anyio.Event()
        # schedule id -> its next time, kept across wake-ups so a change elsewhere does not skip a due run.
        self._due: dict[str, float] = {}

    def changed(self) -> None:
        self._changed.set()

    async def serve(self) -> None:
        while True:
            self._changed = anyio.Event()
            schedules = [s for s in await self.load() if not s.systemd]
            now = time.time()
            self._due = {s.schedule_id: self._due.get(s.schedule_id) or next_time(s.cron, now) for s in schedules}
            for schedule in schedules:
                if self._due[schedule.schedule_id] <= now:
                    self._due[schedule.schedule_id] = next_time(schedule.cron, now)
                    await self.fire(schedule)
            wait = min(self._due.values(), default=now + 3600) - time.time()
            with anyio.move_on_after(max(0.0, wait)):
                await self._changed.wait()

    async def fire(self, schedule: Schedule) -> str | None:
        """Start the schedule's flow now; the run's id (None when it could not start: logged)."""
        try:
            run_id = await self.start(schedule)
        except Exception:  # a schedule whose flow is gone or refused must not stop the others
            log.exception("schedule %s of flow %s did not start", schedule.schedule_id, schedule.flow_id)
            return None
        await self.ran(schedule.schedule_id, run_id, int(time.time() * 1000))
        return run_id
