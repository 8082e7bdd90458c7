"""A sync run and the request deadline agree (issue 11 item 3).

`[daemon] request_timeout_s` cuts every request; a sync run_task_template call waits under it only
while its run is queued. Once the run is running, its own effective timeout (options.timeoutMs, the
template's maxTimeoutMs, `[runs] max_run_timeout_ms`) governs and the call's deadline moves past it,
so the run ends with its result or RUN_TIMEOUT naming the limit, never cut by the request. A call
that does reach the request deadline says so, naming `[daemon] request_timeout_s`. Small limits
here: a 2 s request deadline and one run at a time, against tests/site's /slow and /hang pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client, own_home
from tests.e2e.results import failed, ok

pytestmark = pytest.mark.anyio
TOOLS = ("--tools", "runs")
REQUEST_TIMEOUT_S = 2


@pytest.fixture(scope="module")
def home() -> Iterator[BrowserdHome]:
    with own_home() as home:
        home.env["BROWSERD_DAEMON_REQUEST_TIMEOUT_S"] = str(REQUEST_TIMEOUT_S)
        home.env["BROWSERD_RUNS_MAX_CONCURRENT_RUNS"] = "1"
        yield home


def batch(url: str, timeout_ms: int, mode: str = "sync") -> dict[str, Any]:
    return {
        "templateId": "batch_extract_pages",
        "inputs": {"urls": [url], "pageTimeoutMs": 120_000},
        "options": {"mode": mode, "timeoutMs": timeout_ms},
    }


async def test_a_sync_run_longer_than_the_request_deadline_answers_its_result(home: BrowserdHome, site: str) -> None:
    """The page answers after 3 s, past the 2 s request deadline and well within the run's own timeout."""
    async with mcp_client(home, args=TOOLS) as client:
        run = ok(await client.call_tool("run_task_template", batch(f"{site}/slow?ms=3000", 60_000))).structured_content
        assert run["status"] == "succeeded", run
        assert "Slow page" in run["result"]["items"][0]["markdown"]


async def test_a_sync_run_past_its_own_timeout_fails_with_run_timeout_naming_the_limit(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home, args=TOOLS) as client:
        run = ok(await client.call_tool("run_task_template", batch(f"{site}/hang", 3_000))).structured_content
        assert run["status"] == "failed", run
        error = run["error"]
        assert error["errorCode"] == "RUN_TIMEOUT", error
        assert error["details"]["limit"] == "options.timeoutMs" and error["details"]["timeoutMs"] == 3_000
        assert "options.timeoutMs" in error["recoverHint"]


async def test_a_queued_sync_run_reaching_the_request_deadline_names_it_and_is_canceled(
    home: BrowserdHome, site: str
) -> None:
    """The only run slot is taken, so the sync run waits queued until the request deadline."""
    async with mcp_client(home, args=TOOLS) as client:
        busy = ok(await client.call_tool("run_task_template", batch(f"{site}/hang", 120_000, "async")))
        busy_id = busy.structured_content["runId"]
        try:
            error = failed(
                await client.call_tool("run_task_template", batch(f"{site}/help.html", 60_000)), "EXECUTION_ERROR"
            )
            assert error["details"]["limit"] == "daemon.request_timeout_s", error
            assert "request_timeout_s" in error["recoverHint"] and "async" in error["recoverHint"]
            waited = ok(await client.call_tool("get_task_run", {"runId": error["details"]["runId"]}))
            assert waited.structured_content["status"] == "canceled"
        finally:
            ok(await client.call_tool("cancel_task_run", {"runId": busy_id, "force": True}))
