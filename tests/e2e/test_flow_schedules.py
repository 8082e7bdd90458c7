"""Cron triggers end to end (issue 14 item 8): the daemon keeps schedules and starts their runs; the CLI adds,
lists and removes them and can hand one to a systemd user timer."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import BROWSERD, BrowserdHome, mcp_client
from tests.e2e.results import failed
from tests.e2e.test_flows import call, record_form_flow, record_one

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]

SOON_S = 5  # from adding a schedule to its second: time for the manual run first, on a loaded machine too


async def finished(client: Any, run_id: str) -> dict[str, Any]:
    with anyio.fail_after(60):
        while True:
            run = (await call(client, "get_task_run", {"runId": run_id})).structured_content
            if run["status"] not in ("queued", "running"):
                return dict(run)
            await anyio.sleep(0.1)


async def listed(client: Any, schedule_id: str) -> dict[str, Any]:
    schedules = (await call(client, "flow_schedule", {"action": "list"})).structured_content["schedules"]
    return next(s for s in schedules if s["scheduleId"] == schedule_id)


def sessions(home: BrowserdHome) -> set[str]:
    status = home.browserd("status", "--json")
    assert status.returncode == 0, status.stderr
    return {s["sessionId"] for s in json.loads(status.stdout)["sessions"]}


async def test_a_schedule_runs_its_flow_in_a_session_of_its_own_that_closes(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow = await record_one(
            client, f"{site}/flow-steps.html", "browser_click", {"target": ".b2", "snapshot": "none"}
        )
        flow_id = flow["flowId"]
        wrong = {"action": "add", "flowId": flow_id, "cron": "61 * * * *"}
        bad = failed(await client.call_tool("flow_schedule", wrong), "INVALID_PARAMETER")
        assert bad["details"]["field"] == "cron"
        secret_flow = (await record_form_flow(client, site))["flowId"]
        refused = {"action": "add", "flowId": secret_flow, "cron": "* * * * *"}
        assert "sensitive" in failed(await client.call_tool("flow_schedule", refused), "INVALID_PARAMETER")["error"]

        before = sessions(home)
        # Once a minute, at a second a few seconds from now (the sixth field): the loop's run comes soon, and the
        # next one only after the schedule is removed.
        second = (int(time.time()) + SOON_S) % 60
        added = {"action": "add", "flowId": flow_id, "cron": f"* * * * * {second}"}
        schedule = (await call(client, "flow_schedule", added)).structured_content
        now = await call(client, "flow_schedule", {"action": "run", "scheduleId": schedule["scheduleId"]})
        run = await finished(client, now.structured_content["runId"])
        assert run["status"] == "succeeded", run
        # The daemon's own loop starts it at that second. (The manual run is not asserted to be the last one:
        # the second may have come since, and the loop's run then came after it.)
        with anyio.fail_after(90):
            while (await listed(client, schedule["scheduleId"]))["lastRunId"] == run["runId"]:
                await anyio.sleep(0.5)
        by_loop = await finished(client, (await listed(client, schedule["scheduleId"]))["lastRunId"])
        assert by_loop["status"] == "succeeded", by_loop
        await call(client, "flow_schedule", {"action": "remove", "scheduleId": schedule["scheduleId"]})
        gone = await client.call_tool("flow_schedule", {"action": "run", "scheduleId": schedule["scheduleId"]})
        failed(gone, "INVALID_PARAMETER")
        # Between runs a schedule holds nothing open: the runs' sessions closed with them.
        assert sessions(home) == before


async def test_the_command_line_hands_a_schedule_to_a_systemd_user_timer(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow = await record_one(
            client, f"{site}/flow-steps.html", "browser_click", {"target": ".b3", "snapshot": "none"}
        )
    empty_bin = home.root / "empty-bin"
    empty_bin.mkdir(exist_ok=True)
    env = {**home.env, "PATH": str(empty_bin)}  # no systemctl: a real user manager must never see these units

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([BROWSERD, *args], env=env, capture_output=True, text=True, timeout=60)

    refused = cli("flows", "schedule", "add", flow["flowId"], "--cron", "0 9 1 * 1", "--systemd")
    assert refused.returncode != 0 and "two schedules" in refused.stderr
    added = cli("flows", "schedule", "add", flow["flowId"], "--cron", "0 9 * * 1-5", "--systemd")
    assert added.returncode == 0, added.stderr
    schedule_id = added.stdout.split()[0]
    units = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user"
    timer = (units / f"browserd-flow-{schedule_id}.timer").read_text()
    service = (units / f"browserd-flow-{schedule_id}.service").read_text()
    assert "OnCalendar=Mon..Fri *-*-* 9:0:00" in timer
    assert f"ExecStart={BROWSERD} flows schedule run {schedule_id}" in service
    assert f"systemctl --user enable --now browserd-flow-{schedule_id}.timer" in added.stdout
    listing = cli("flows", "schedule", "list")
    assert schedule_id in listing.stdout and "(systemd)" in listing.stdout
    removed = cli("flows", "schedule", "remove", schedule_id)
    assert removed.returncode == 0, removed.stderr
    assert not list(units.glob(f"browserd-flow-{schedule_id}.*"))


async def test_an_on_page_trigger_runs_its_flow_in_the_tab_that_loaded_a_matching_page(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow = await record_one(client, f"{site}/flow-steps.html", "browser_click", {"target": ".b4"})
        trigger = {"action": "add", "flowId": flow["flowId"], "onPage": "**/flow-steps.html*trigger=*"}
        schedule = (await call(client, "flow_schedule", trigger)).structured_content
        both = {**trigger, "cron": "* * * * *"}
        assert failed(await client.call_tool("flow_schedule", both), "INVALID_PARAMETER")
        await call(client, "browser_open", {"url": f"{site}/flow-steps.html?other=1", "snapshot": "none"})
        await call(client, "browser_open", {"url": f"{site}/flow-steps.html?trigger=1", "snapshot": "none"})
        with anyio.fail_after(30):  # the run starts once the page has loaded, in this very tab
            while "Step 4" not in await log_text(client):
                await anyio.sleep(0.1)
        ran = (await listed(client, schedule["scheduleId"]))["lastRunId"]
        assert (await finished(client, ran))["status"] == "succeeded"
        await call(client, "flow_schedule", {"action": "remove", "scheduleId": schedule["scheduleId"]})


async def log_text(client: Any) -> str:
    return json.dumps((await call(client, "browser_get", {"what": "text", "target": "#log"})).structured_content)
