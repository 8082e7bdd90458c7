"""What the daemon shows of its sessions and active runs: one summary, for `browserd status` and for the
extension's side panel (which the bridge keeps up to date), so the two never tell different stories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from browserd.daemon.sessions.call_log import CALLS_KEPT

if TYPE_CHECKING:
    from browserd.daemon.services import Services


def sessions(services: Services) -> list[dict[str, Any]]:
    """Each session: its client, trust level, lifetime (connected, active runs, kept), open tabs, last call."""
    summaries = []
    for session in services.sessions.sessions.values():
        tabs = [{"tabId": tab.id, "windowId": tab.window.id, "url": tab.page.url} for tab in session.all_tabs()]
        summaries.append(
            {
                "sessionId": session.id,
                "client": session.client_name,
                "trustLevel": session.trust_level,
                "transport": session.transport,
                **services.sessions.describe(session.id),
                "tabs": tabs,
                "lastCall": session.calls.last,
            }
        )
    return summaries


def runs(services: Services) -> dict[str, Any]:
    """How many runs are active, running and queued, and each active run's progress."""
    manager = services.runs
    active = [
        {
            "runId": run.record.run_id,
            "templateId": run.record.template_id,
            "status": run.record.status,
            "doneSteps": run.record.done_steps,
            "totalSteps": run.record.total_steps,
            "sessionId": run.record.session_id,
        }
        for run in manager.active.values()
    ]
    return {**manager.active_count, "runs": active}


def log(services: Services) -> list[dict[str, Any]]:
    """The sessions' recent tool calls, oldest first (sessions/call_log.py: never a value)."""
    calls = [
        {"sessionId": session.id, **call}
        for session in services.sessions.sessions.values()
        for call in session.calls.calls
    ]
    return sorted(calls, key=lambda call: call["at"])[-CALLS_KEPT:]


def activity(services: Services) -> dict[str, Any]:
    return {"sessions": sessions(services), "runs": runs(services), "log": log(services)}
