"""Starting a schedule's run (schedules.py): the one part of the cron loop that needs the daemon's services."""

from __future__ import annotations

from typing import TYPE_CHECKING

from browserd.daemon.flows.schedules import Schedule
from browserd.daemon.runs.manager import StartRequest

if TYPE_CHECKING:
    from browserd.daemon.services import Services


async def start_scheduled(services: Services, schedule: Schedule) -> str:
    """The schedule's flow as an async run in a session of the run's own, which closes when the run ends."""
    # The run needs a caller for its trust checks: a local one, gone again once the run has its own session.
    caller = services.sessions.create(f"schedule:{schedule.schedule_id}", "local")
    try:
        inputs = {"flowId": schedule.flow_id, "args": schedule.args, "startUrl": schedule.start_url, "tabTarget": "new"}
        run = await services.runs.start(StartRequest("flow", None, inputs, None, None, "async"), caller)
    finally:
        await services.sessions.close(caller.id)
    return run.record.run_id
