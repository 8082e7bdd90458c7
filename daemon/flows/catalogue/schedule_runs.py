"""Starting a trigger's run (schedules.py): the one part of the triggers that needs the daemon's services."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from browserd.daemon.flows.catalogue.schedules import Schedule
from browserd.daemon.runs.manager import StartRequest

if TYPE_CHECKING:
    from browserd.daemon.services import Services
    from browserd.daemon.sessions.session import Session
    from browserd.daemon.sessions.tab import Tab


async def start_scheduled(services: Services, schedule: Schedule) -> str:
    """The schedule's flow as an async run in a session of the run's own, which closes when the run ends."""
    # The run needs a caller for its trust checks: a local one, gone again once the run has its own session.
    caller = services.sessions.create(f"schedule:{schedule.schedule_id}", "local", transport="schedule")
    try:
        inputs = {"flowId": schedule.flow_id, "args": schedule.args, "startUrl": schedule.start_url, "tabTarget": "new"}
        run = await services.runs.start(StartRequest("flow", None, inputs, None, None, "async"), caller)
    finally:
        await services.sessions.close(caller.id)
    return run.record.run_id


async def start_on_page(services: Services, schedule: Schedule, session: Session, tab: Tab) -> tuple[str, anyio.Event]:
    """An onPage trigger's flow as an async run in the session and tab whose page matched."""
    inputs = {"flowId": schedule.flow_id, "args": schedule.args, "tabTarget": "current", "tabId": tab.id}
    run = await services.runs.start(StartRequest("flow", None, inputs, session.id, None, "async"), session)
    return run.record.run_id, run.done
