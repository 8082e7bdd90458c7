"""Sessions that outlive their client (DESIGN.md §2, D-06, D-10, S1-16, S1-18) through the MCP SDK client.

A run holds the session it works in, so the session of a client that went away closes when the run
ends; a session login_keep_session kept lives on for `[runs] kept_session_idle_s` after its last use,
holding the daemon's idle exit, and is reachable by another client through run_task_template(sessionId).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.conftest import BrowserdHome, pid_alive, wait_for
from tests.e2e.test_runs import TERMINAL, login_steps, runs_client

pytestmark = pytest.mark.anyio


async def status_of(home: BrowserdHome) -> dict[str, Any]:
    answer = await anyio.to_thread.run_sync(lambda: home.browserd("status", "--json"))
    data: dict[str, Any] = json.loads(answer.stdout)
    return data


async def test_a_kept_login_outlives_its_client_holds_idle_exit_then_expires(home: BrowserdHome, site: str) -> None:
    """D-10, D-06, S1-16, S1-18: runs hold the sessions they use; a kept login expires when left unused."""
    home.env["BROWSERD_DAEMON_IDLE_EXIT_S"] = "1"
    home.env["BROWSERD_RUNS_KEPT_SESSION_IDLE_S"] = "6"
    async with runs_client(home) as runs:
        profile = await runs.call("get_runtime_profile", {})
        pid, own = profile["daemonPid"], profile["session"]["sessionId"]
        login = await runs.start("login_keep_session", {"steps": login_steps(site, "secret")}, mode="sync")
        assert login["status"] == "succeeded", login
        kept = login["result"]["sessionId"]
        slow = await runs.call(
            "run_task_template",
            {
                "templateId": "batch_extract_pages",
                "sessionId": own,
                "inputs": {"urls": [f"{site}/slow?ms=4000"]},
                "options": {"mode": "async"},
            },
        )

    async with runs_client(home) as runs:
        status = await status_of(home)
        assert status["pid"] == pid, "the kept session held the daemon's idle exit after its client left"
        sessions = {s["sessionId"]: s for s in status["sessions"]}
        assert sessions[kept]["kept"] and sessions[kept]["expiresAt"] and not sessions[kept]["connected"]
        assert status["idle"]["heldBy"]["keptSession"] == 1
        members = await runs.call(
            "run_task_template",
            {"templateId": "batch_extract_pages", "sessionId": kept, "inputs": {"urls": [f"{site}/members"]}},
        )
        assert "Welcome back, ann." in members["result"]["items"][0]["markdown"], "a second client uses the login"
        if (await runs.call("get_task_run", {"runId": slow["runId"]}))["status"] not in TERMINAL:
            assert sessions[own]["activeRuns"] == 1 and not sessions[own]["connected"], "the run holds it"
        run = await runs.finished(slow["runId"])
        assert run["status"] == "succeeded" and run["result"]["items"][0]["title"] == "slow"
        status = await status_of(home)
        assert own not in [s["sessionId"] for s in status["sessions"]], "it closed with its run"

    # Nobody uses the kept session now: it closes after its idle timeout, and only then the daemon exits.
    assert await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(pid), 60))
    log = home.log.read_text()
    closed = log.find(f"kept session {kept} was idle")
    assert closed != -1, "the kept session expired"
    assert closed < log.find("exiting", closed), "the daemon exited idle after the kept session closed"
