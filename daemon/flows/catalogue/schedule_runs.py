"""Starting a trigger's run (schedules.py): the one part of the triggers that needs the daemon's services.

A triggered run has the lowest of three trust levels: the schedule's owner's, the flow's owner's and the
caller's (`flow_schedule run` from a session; local for the daemon's cron loop and a systemd timer; for an
onPage trigger, the session whose page loaded). A run lower than the session whose page matched works in a
session of its own, on the same URL, since that session's windows have no URL guard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from browserd.daemon.flows.catalogue.schedules import Schedule
from browserd.daemon.flows.owners import level_of
from browserd.daemon.policy.trust import stricter
from browserd.daemon.runs.run_manager import StartRequest
from browserd.protocol.messages import TrustLevel

if TYPE_CHECKING:
    from browserd.daemon.services import Services
    from browserd.daemon.sessions.session import Session
    from browserd.daemon.sessions.tab import Tab


async def run_level(services: Services, schedule: Schedule, caller: TrustLevel) -> TrustLevel:
    flow = await services.flows.get(schedule.flow_id)
    return stricter(stricter(level_of(schedule.owner), level_of(flow.meta.owner)), caller)


async def start_scheduled(services: Services, schedule: Schedule, caller_level: TrustLevel = "local") -> str:
    """The schedule's flow as an async run in a session of the run's own, which closes when the run ends."""
    level = await run_level(services, schedule, caller_level)
    # The run needs a caller for its trust checks: one of the run's level, gone again once the run has its own session.
    caller = services.sessions.create(f"schedule:{schedule.schedule_id}", level, transport="schedule")
    try:
        inputs = {"flowId": schedule.flow_id, "args": schedule.args, "startUrl": schedule.start_url, "tabTarget": "new"}
        run = await services.runs.start(StartRequest("flow", None, inputs, None, None, "async", level), caller)
    finally:
        await services.sessions.close(caller.id)
    return run.record.run_id


async def start_on_page(services: Services, schedule: Schedule, session: Session, tab: Tab) -> tuple[str, anyio.Event]:
    """An onPage trigger's flow as an async run in the session and tab whose page matched."""
    level = await run_level(services, schedule, session.trust_level)
    if level == session.trust_level:
        inputs = {"flowId": schedule.flow_id, "args": schedule.args, "tabTarget": "current", "tabId": tab.id}
        request = StartRequest("flow", None, inputs, session.id, None, "async", level)
    else:
        inputs = {"flowId": schedule.flow_id, "args": schedule.args, "tabTarget": "new", "startUrl": tab.page.url}
        request = StartRequest("flow", None, inputs, None, None, "async", level)
    run = await services.runs.start(request, session)
    return run.record.run_id, run.done
