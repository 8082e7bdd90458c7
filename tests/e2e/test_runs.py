"""Task runs end to end (issue 6; reference/001; S1-08..S1-92, D-36..D-41) through the MCP SDK client.

Every answer's structuredContent is checked against the outputSchema its tool announces (S1-88).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from tests.conftest import BrowserdHome, Gates, mcp_client, pid_alive, wait_for
from tests.e2e.results import failed, ok, text_of

pytestmark = pytest.mark.anyio

RUNS = ("--tools", "runs,pages")
TERMINAL = {"succeeded", "failed", "partial_success", "canceled"}


class Runs:
    """An SDK client plus the output schemas of its tools, so every answer is validated."""

    def __init__(self, client: Any, schemas: dict[str, dict[str, Any]]) -> None:
        self.client = client
        self.schemas = schemas

    async def call(self, name: str, arguments: dict[str, Any], **options: Any) -> dict[str, Any]:
        result = ok(await self.client.call_tool(name, arguments, **options))
        data: dict[str, Any] = result.structured_content
        jsonschema.validate(data, self.schemas[name])
        return data

    async def error(self, name: str, arguments: dict[str, Any], code: str) -> dict[str, Any]:
        return failed(await self.client.call_tool(name, arguments), code)

    async def start(self, template: str, inputs: dict[str, Any], **options: Any) -> dict[str, Any]:
        arguments: dict[str, Any] = {"templateId": template, "inputs": inputs}
        if options:
            arguments["options"] = options
        return await self.call("run_task_template", arguments)

    async def until(self, run_id: str, done: Callable[[dict[str, Any]], bool], timeout: float = 90) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while True:
                run = await self.call("get_task_run", {"runId": run_id, "includeSteps": True})
                if done(run):
                    return run
                await anyio.sleep(0.2)

    async def finished(self, run_id: str, timeout: float = 90) -> dict[str, Any]:
        return await self.until(run_id, lambda run: run["status"] in TERMINAL, timeout)

    async def artifact(self, artifact_id: str, limit: int | None = None) -> tuple[bytes, list[int]]:
        """The whole artifact, chunk by chunk as a client reads it; and each chunk's size."""
        data, sizes, offset = b"", [], 0
        while True:
            arguments: dict[str, Any] = {"artifactId": artifact_id, "offset": offset}
            if limit is not None:
                arguments["limit"] = limit
            chunk = await self.call("get_artifact", arguments)
            piece = base64.b64decode(chunk["data"])
            assert chunk["bytesReturned"] == len(piece) and chunk["offset"] == offset
            data, offset = data + piece, offset + len(piece)
            sizes.append(len(piece))
            if chunk["complete"]:
                assert offset == chunk["size"]
                return data, sizes


def runs_client(home: BrowserdHome, args: tuple[str, ...] = RUNS) -> Any:
    class _Context:
        async def __aenter__(self) -> Runs:
            self._cm = mcp_client(home, args=args)
            client = await self._cm.__aenter__()
            tools = (await client.list_tools()).tools
            schemas = {tool.name: tool.output_schema for tool in tools if tool.output_schema}
            return Runs(client, schemas)

        async def __aexit__(self, *exc: Any) -> None:
            await self._cm.__aexit__(*exc)

    return _Context()


def login_steps(site: str, password: str = "{{password}}") -> list[dict[str, Any]]:
    return [
        {"action": "open", "url": f"{site}/runs-login.html"},
        {"action": "fill", "target": "#user", "value": "ann"},
        {"action": "fill", "target": "#password", "value": password},
        {"action": "click", "target": "button[type=submit]"},
        {"action": "wait", "text": "Welcome back", "timeout": 20000},
    ]


def runs_db(home: BrowserdHome) -> Path:
    return Path(home.env["XDG_DATA_HOME"]) / "browserd" / "runs" / "runs.db"


async def test_every_run_tool_declares_an_output_schema_and_the_templates_are_listed(home: BrowserdHome) -> None:
    """S1-03, S1-06, S1-08, S1-11..S1-13, S1-49."""
    async with runs_client(home) as runs:
        for name in (
            "list_task_templates",
            "run_task_template",
            "get_task_run",
            "list_task_runs",
            "cancel_task_run",
            "get_artifact",
            "get_runtime_profile",
        ):
            assert runs.schemas.get(name, {}).get("type") == "object", f"{name} has no outputSchema"
        profile = await runs.call("get_runtime_profile", {})
        assert profile["runtimeVersion"] == "0.2.0"
        assert profile["limits"]["maxConcurrentRuns"] == 5
        assert profile["limits"]["maxRunTimeoutMs"] == 900_000
        assert profile["limits"]["maxArtifactInlineBytes"] == 262_144
        templates = {t["templateId"]: t for t in (await runs.call("list_task_templates", {}))["templates"]}
        batch = templates["batch_extract_pages"]
        assert batch["version"] == "1.0.0" and batch["limits"] == {"maxUrls": 1000, "maxConcurrency": 5}
        assert batch["trustLevelSupport"] == ["local", "remote"] and batch["supportsPartialSuccess"]
        assert batch["inputsSchema"]["properties"]["urls"]["maxItems"] == 1000
        login = templates["login_keep_session"]
        assert not login["supportsPartialSuccess"] and login["keepsSession"]


async def test_batch_extract_sync_answers_with_the_terminal_run_and_partial_success(
    home: BrowserdHome, site: str
) -> None:
    """S1-20, S1-23, S1-24, S1-43, S1-48, S1-89, D-37, D-41: 2 of 3 pages succeed -> partial_success."""
    urls = [f"{site}/index.html", f"{site}/help.html", f"{site}/status?code=404"]
    async with runs_client(home) as runs:
        run = await runs.start("batch_extract_pages", {"urls": urls}, mode="sync")
        assert run["status"] == "partial_success" and run["mode"] == "sync"
        assert run["progress"] == {"totalSteps": 3, "doneSteps": 3}
        assert run["result"]["summary"] == {"total": 3, "succeeded": 2, "failed": 1}
        index, help_page, missing = run["result"]["items"]
        assert index["url"] == urls[0] and index["finalUrl"] == urls[0] and index["status"] == 200
        assert index["title"] == "browserd test site" and index["success"] is True
        assert "# Welcome to the browserd test site" in index["markdown"] and index["linksCount"] > 10
        assert help_page["title"] == "Help page"
        assert missing["success"] is False and missing["status"] == 404 and "404" in missing["error"]
        assert run["error"]["errorCode"] == "STEP_EXECUTION_FAILED"
        assert run["error"]["details"]["stepErrorCode"] == "EXECUTION_ERROR"
        assert not run["sessionKept"]

        again = await runs.call("get_task_run", {"runId": run["runId"]})
        assert again["result"] == run["result"] and again["status"] == "partial_success"

        text = await runs.start("batch_extract_pages", {"urls": [f"{site}/help.html"], "format": "text"})
        assert text["mode"] == "sync", "auto runs a few URLs in sync (D-38)"
        assert text["status"] == "succeeded"
        assert text["result"]["items"][0]["text"].startswith("Help page")

        listed = await runs.call("list_task_runs", {"templateId": "batch_extract_pages"})
        assert [r["runId"] for r in listed["runs"]] == [text["runId"], run["runId"]], "newest first"
        partial = await runs.call("list_task_runs", {"status": "partial_success"})
        assert [r["runId"] for r in partial["runs"]] == [run["runId"]]
        assert (await runs.call("list_task_runs", {"limit": 1, "offset": 1}))["runs"][0]["runId"] == run["runId"]


async def test_batch_extract_async_answers_queued_then_is_polled_to_the_end(home: BrowserdHome, site: str) -> None:
    """S1-21, S1-22, S1-26, S1-27, S1-89: auto picks async for more than 5 URLs."""
    urls = [f"{site}/help.html?n={n}" for n in range(6)]
    async with runs_client(home) as runs:
        started = await runs.start("batch_extract_pages", {"urls": urls, "concurrency": 5})
        assert started["status"] == "queued" and started["mode"] == "async"
        assert started["createdAt"] > 0 and "result" not in started
        run = await runs.finished(started["runId"])
        assert run["status"] == "succeeded"
        assert run["result"]["summary"] == {"total": 6, "succeeded": 6, "failed": 0}
        assert [item["url"] for item in run["result"]["items"]] == urls, "items keep the order of the URLs"
        assert all(step["status"] == "succeeded" for step in run["steps"])


async def test_login_keep_session_in_the_callers_session_leaves_it_logged_in(home: BrowserdHome, site: str) -> None:
    """S1-16, S1-18, S1-49, D-41: sync and async; the caller's own browser tools continue in that session."""
    async with runs_client(home) as runs:
        session_id = (await runs.call("get_runtime_profile", {}))["session"]["sessionId"]
        run = await runs.call(
            "run_task_template",
            {
                "templateId": "login_keep_session",
                "sessionId": session_id,
                "inputs": {"steps": login_steps(site), "variables": {"password": "secret"}},
                "options": {"mode": "sync"},
            },
        )
        assert run["status"] == "succeeded", run
        assert run["result"]["sessionId"] == session_id and run["result"]["loggedIn"] is True
        assert run["result"]["finalUrl"].endswith("/members") and run["sessionKept"]
        assert [step["status"] for step in run["steps"]] == ["succeeded"] * 5
        text = ok(await runs.client.call_tool("browser_get", {"what": "text", "target": "main"}))
        assert "Welcome back, ann." in text_of(text)
        members = await runs.call(
            "run_task_template",
            {"templateId": "batch_extract_pages", "sessionId": session_id, "inputs": {"urls": [f"{site}/members"]}},
        )
        assert "Welcome back, ann." in members["result"]["items"][0]["markdown"], "a batch in the session has its login"

        started = await runs.call(
            "run_task_template",
            {
                "templateId": "login_keep_session",
                "inputs": {"steps": login_steps(site, "secret")},
                "options": {"mode": "async"},
            },
        )
        kept = await runs.finished(started["runId"])
        assert kept["status"] == "succeeded" and kept["sessionKept"]
        assert kept["result"]["sessionId"] != session_id, "a run without sessionId gets a session of its own"
        status = json.loads((await anyio.to_thread.run_sync(lambda: home.browserd("status", "--json"))).stdout)
        assert kept["result"]["sessionId"] in [s["sessionId"] for s in status["sessions"]], "and keeps it"
    stored = runs_db(home).read_bytes() + Path(f"{runs_db(home)}-wal").read_bytes()
    assert b"secret" not in stored, "passwords never reach runs.db"


async def test_a_failed_login_is_atomic_and_says_which_step_failed(home: BrowserdHome, site: str) -> None:
    """S1-49, S1-57, S1-61: failed (never partial_success), STEP_EXECUTION_FAILED + stepErrorCode."""
    async with runs_client(home) as runs:
        steps = login_steps(site, "wrong")
        steps[-1]["timeout"] = 1000
        run = await runs.start("login_keep_session", {"steps": steps})
        assert run["status"] == "failed" and not run["sessionKept"]
        error = run["error"]
        assert error["errorCode"] == "STEP_EXECUTION_FAILED"
        assert error["details"]["failedStep"] == "wait Welcome back"
        assert error["details"]["stepErrorCode"]
        assert [s["status"] for s in run["steps"]] == ["succeeded"] * 4 + ["failed"]
        status = json.loads((await anyio.to_thread.run_sync(lambda: home.browserd("status", "--json"))).stdout)
        assert run["sessionId"] not in [s["sessionId"] for s in status["sessions"]], "its session was closed"


async def test_cancel_mid_run_skips_the_pending_steps_and_keeps_the_results(home: BrowserdHome, site: str) -> None:
    """S1-30..S1-32, S1-46, D-36, D-39."""
    urls = [f"{site}/slow?ms=700&n={n}" for n in range(8)]
    async with runs_client(home) as runs:
        started = await runs.start("batch_extract_pages", {"urls": urls, "concurrency": 1}, mode="async")
        await runs.until(started["runId"], lambda run: run["progress"]["doneSteps"] >= 1)
        cancel = await runs.call("cancel_task_run", {"runId": started["runId"]})
        assert cancel["cancelRequested"] is True and cancel["currentStatus"] == "running"
        run = await runs.finished(started["runId"])
        assert run["status"] == "canceled" and run["error"]["errorCode"] == "RUN_CANCELED"
        statuses = [step["status"] for step in run["steps"]]
        done = statuses.count("succeeded")
        assert done >= 1 and statuses == ["succeeded"] * done + ["skipped"] * (8 - done)
        assert run["result"]["summary"]["succeeded"] == done == len(run["result"]["items"])
        assert run["result"]["items"][0]["title"] == "slow"
        again = await runs.call("cancel_task_run", {"runId": started["runId"]})
        assert again == {"cancelRequested": False, "currentStatus": "canceled"}


async def test_a_run_past_its_timeout_fails_with_run_timeout_and_keeps_what_finished(
    home: BrowserdHome, site: str, gates: Gates
) -> None:
    """S1-55, S1-82, S1-84, D-36: effective timeout = min(options.timeoutMs, template, runtime).

    Issue 11 item 13: the second page is held at a gate until the test ends, so it can only time out, and
    Chromium is launched before the timed run, so a loaded machine's slow launch does not eat its 10 s."""
    gate = f"hold-{uuid.uuid4().hex}"
    urls = [f"{site}/help.html", f"{site}/gate?key={gate}&parties=2&wait_s=120"]
    async with runs_client(home) as runs:
        warm = await runs.start("batch_extract_pages", {"urls": [f"{site}/help.html"]}, mode="sync")
        assert warm["status"] == "succeeded", warm
        started = await runs.start(
            "batch_extract_pages", {"urls": urls, "concurrency": 2}, mode="async", timeoutMs=10000
        )
        run = await runs.finished(started["runId"])
        assert run["status"] == "failed" and run["error"]["errorCode"] == "RUN_TIMEOUT"
        assert [step["status"] for step in run["steps"]] == ["succeeded", "failed"]
        assert run["steps"][1]["errorCode"] == "RUN_TIMEOUT"
        assert [item["title"] for item in run["result"]["items"]] == ["Help page"]
    gates.release(gate)


async def test_a_sync_call_cancelled_by_its_client_cancels_the_run(home: BrowserdHome, site: str) -> None:
    """Issue 6 item 1: the CANCEL of a sync run_task_template cancels the run too."""
    urls = [f"{site}/slow?ms=1500&n={n}" for n in range(4)]
    arguments = {
        "templateId": "batch_extract_pages",
        "inputs": {"urls": urls, "concurrency": 1},
        "options": {"mode": "sync"},
    }
    async with runs_client(home) as runs:
        with pytest.raises(Exception):  # noqa: B017 - the SDK raises its own timeout error
            await runs.client.call_tool("run_task_template", arguments, read_timeout_seconds=1.0)
        listed = await runs.call("list_task_runs", {})
        run = await runs.finished(listed["runs"][0]["runId"])
        assert run["status"] == "canceled"
        assert "skipped" in [step["status"] for step in run["steps"]]


async def test_a_sixth_concurrent_run_waits_queued_and_holds_idle_exit(home: BrowserdHome, site: str) -> None:
    """S1-75, D-20, D-36 (queued -> canceled), DESIGN §2 idle exit."""
    home.env["BROWSERD_DAEMON_IDLE_EXIT_S"] = "1"
    async with runs_client(home) as runs:
        pid = (await runs.call("get_runtime_profile", {}))["daemonPid"]
        started = [
            await runs.start("batch_extract_pages", {"urls": [f"{site}/slow?ms=8000&n={n}"]}, mode="async")
            for n in range(6)
        ]
        await runs.until(started[4]["runId"], lambda run: run["status"] == "running")
        sixth = await runs.call("get_task_run", {"runId": started[5]["runId"]})
        assert sixth["status"] == "queued"
        status = json.loads((await anyio.to_thread.run_sync(lambda: home.browserd("status", "--json"))).stdout)
        assert status["runs"]["active"] == 6 and status["runs"]["queued"] == 1
        assert status["idle"]["heldBy"]["run"] == 6
        canceled = await runs.call("cancel_task_run", {"runId": started[5]["runId"]})
        assert canceled["cancelRequested"]
        assert (await runs.finished(started[5]["runId"]))["status"] == "canceled"
    # The client is gone but five runs are still going: the daemon waits for them, then exits idle.
    await anyio.sleep(1.5)
    assert pid_alive(pid), "the daemon never exits idle while a run is active"
    assert await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(pid), 60))


async def test_large_content_becomes_an_artifact_read_back_in_chunks(home: BrowserdHome, site: str) -> None:
    """S1-34..S1-37, D-40: content over maxArtifactInlineBytes is an artifact; chunks never exceed it."""
    async with runs_client(home) as runs:
        run = await runs.start("batch_extract_pages", {"urls": [f"{site}/runs-big.html"]}, mode="sync")
        item = run["result"]["items"][0]
        assert item["success"] and "markdown" not in item
        artifact_id = item["contentArtifactId"]
        assert [a["artifactId"] for a in run["artifacts"]] == [artifact_id]
        assert run["artifacts"][0]["type"] == "markdown" and run["artifacts"][0]["size"] == item["contentBytes"]
        data, sizes = await runs.artifact(artifact_id, limit=10_000_000)
        assert len(data) == item["contentBytes"] > 262_144
        assert max(sizes) == 262_144, "a limit above maxArtifactInlineBytes is clamped"
        markdown = data.decode()
        assert markdown.startswith("Paragraph 1 of the big article") and "Paragraph 3000 of the big article" in markdown


async def test_a_5_mb_artifact_is_read_back_byte_exact(home: BrowserdHome) -> None:
    """S1-36: saved through the store, read through a real daemon sharing the data folder."""
    from browserd.daemon.runs.artifacts import ArtifactStore
    from browserd.daemon.runs.run_store import RunStore

    payload = os.urandom(5 * 1024 * 1024 + 123)
    root = runs_db(home).parent

    async def seed() -> str:
        store = RunStore(root)
        await store.open()
        try:
            return (
                await ArtifactStore(store, 262_144).save("run_seeded", payload, "application/octet-stream")
            ).artifact_id
        finally:
            store.close()

    artifact_id = await seed()
    async with runs_client(home) as runs:
        data, sizes = await runs.artifact(artifact_id)
    assert data == payload
    assert len(sizes) == 21 and set(sizes[:-1]) == {262_144}


async def test_an_expired_artifact_says_expired_and_an_unknown_one_not_found(home: BrowserdHome, site: str) -> None:
    """S1-38, S1-39, D-40: the TTL counts from the terminal state; a tombstone keeps EXPIRED apart."""
    home.env.update(
        BROWSERD_RUNS_TTL_S="1",
        BROWSERD_RUNS_CLEANUP_INTERVAL_S="0.5",
        BROWSERD_RUNS_MAX_ARTIFACT_INLINE_BYTES="200",
    )
    async with runs_client(home) as runs:
        run = await runs.start("batch_extract_pages", {"urls": [f"{site}/index.html"]}, mode="sync")
        assert run["result"]["truncated"] is True
        artifact_id = run["result"]["resultArtifactId"]
        whole, _ = await runs.artifact(artifact_id)
        assert json.loads(whole)["items"][0]["title"] == "browserd test site"
        # The daemon's own word that its sweep expired the artifact, not a sleep past the TTL.
        swept = await anyio.to_thread.run_sync(
            lambda: wait_for(lambda: "expired artifact(s)" in home.log.read_text(), 30)
        )
        assert swept, "the cleanup never expired the artifact"
        error = await runs.error("get_artifact", {"artifactId": artifact_id}, "ARTIFACT_EXPIRED")
        assert error["details"]["runId"] == run["runId"]
        assert not (runs_db(home).parent / "artifacts" / artifact_id).exists(), "the cleanup removed the file"
        await runs.error("get_artifact", {"artifactId": "art_0000000000000000"}, "ARTIFACT_NOT_FOUND")
        await runs.error("get_task_run", {"runId": run["runId"]}, "RUN_NOT_FOUND")


async def test_a_run_in_flight_when_the_daemon_is_killed_is_marked_failed_on_restart(
    home: BrowserdHome, site: str
) -> None:
    """D-08: the record outlives the daemon and says what happened; finished items are kept."""
    urls = [f"{site}/help.html", *(f"{site}/slow?ms=3000&n={n}" for n in range(5))]
    async with runs_client(home) as runs:
        pid = (await runs.call("get_runtime_profile", {}))["daemonPid"]
        started = await runs.start("batch_extract_pages", {"urls": urls, "concurrency": 1}, mode="async")
        await runs.until(started["runId"], lambda run: run["progress"]["doneSteps"] >= 1)
        status = json.loads((await anyio.to_thread.run_sync(lambda: home.browserd("status", "--json"))).stdout)
        browser_pid = status["browser"]["pid"]
        os.kill(pid, signal.SIGKILL)
        assert await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(pid), 10))
        if browser_pid and pid_alive(browser_pid):  # Chromium of the killed daemon: ours, end it
            os.kill(browser_pid, signal.SIGKILL)
        # The shim reconnects to (and starts) a new daemon on the next call.
        run = await runs.call("get_task_run", {"runId": started["runId"], "includeSteps": True})
        assert (await runs.call("get_runtime_profile", {}))["daemonPid"] != pid
    assert run["status"] == "failed"
    assert run["error"]["details"]["reason"] == "daemon_restarted"
    assert "daemon stopped while this run was running" in run["error"]["error"]
    statuses = [step["status"] for step in run["steps"]]
    assert statuses[0] == "succeeded" and "running" not in statuses and "pending" not in statuses
    assert statuses.count("failed") <= 1 and "skipped" in statuses
    assert run["result"]["items"][0]["title"] == "Help page"


async def test_bad_inputs_each_get_their_error_code_and_the_daemon_keeps_serving(home: BrowserdHome, site: str) -> None:
    """S1-14, S1-15, S1-25, S1-51..S1-54, S1-79, D-39."""
    async with runs_client(home) as runs:
        unknown = await runs.error("run_task_template", {"templateId": "nope", "inputs": {}}, "TEMPLATE_NOT_FOUND")
        assert "list_task_templates" in unknown["recoverHint"]
        version = await runs.error(
            "run_task_template",
            {"templateId": "batch_extract_pages", "templateVersion": "9.0.0", "inputs": {"urls": [f"{site}/"]}},
            "TEMPLATE_VERSION_UNSUPPORTED",
        )
        assert version["details"]["supportedVersions"] == ["1.0.0"]
        too_many = {"templateId": "batch_extract_pages", "inputs": {"urls": [f"{site}/?n={n}" for n in range(1001)]}}
        error = await runs.error("run_task_template", too_many, "INVALID_PARAMETER")
        assert error["details"]["field"] == "inputs.urls"
        bad_url = {"templateId": "batch_extract_pages", "inputs": {"urls": ["ftp://example.com/"]}}
        assert (await runs.error("run_task_template", bad_url, "INVALID_PARAMETER"))["details"]["field"] == (
            "inputs.urls[0]"
        )
        unknown_field = {"templateId": "batch_extract_pages", "inputs": {"urls": [f"{site}/"], "colour": 1}}
        await runs.error("run_task_template", unknown_field, "INVALID_PARAMETER")
        await runs.error("get_task_run", {"runId": "run_missing"}, "RUN_NOT_FOUND")
        await runs.error("cancel_task_run", {"runId": "run_missing"}, "RUN_NOT_FOUND")
        await runs.error("list_task_runs", {"limit": 101}, "INVALID_PARAMETER")
        await runs.error(
            "run_task_template",
            {"templateId": "login_keep_session", "inputs": {"steps": [{"action": "fill", "target": "#user"}]}},
            "INVALID_PARAMETER",
        )
        assert (await runs.call("list_task_runs", {}))["runs"] == [], "refused runs leave no record"
    async with runs_client(home, ("--tools", "runs", "--trust", "remote")) as remote:
        login = {"templateId": "login_keep_session", "inputs": {"steps": login_steps(site, "x")}}
        refused = await remote.error("run_task_template", login, "TRUST_LEVEL_NOT_ALLOWED")
        assert refused["details"]["trustLevel"] == "remote"


async def test_a_sync_caller_with_a_progress_token_sees_progress_naming_the_run(home: BrowserdHome, site: str) -> None:
    """D-38, S1-28: progress EVENTs become notifications/progress; the first one carries the runId."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    urls = [f"{site}/help.html?n={n}" for n in range(3)]
    arguments = {"templateId": "batch_extract_pages", "inputs": {"urls": urls}, "options": {"mode": "sync"}}
    async with runs_client(home) as runs:
        run = await runs.call("run_task_template", arguments, progress_callback=on_progress)
    assert seen, "no progress notification arrived"
    assert seen[0][2] == run["runId"]
    assert seen[-1][0] == 3 and seen[-1][1] == 3
    assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen), "progress only grows"


async def test_the_command_line_lists_follows_cancels_and_saves_artifacts(home: BrowserdHome, site: str) -> None:
    """Issue 6 item 6: browserd runs list|get|cancel|artifact, --json, --follow."""
    cli: Callable[..., Awaitable[Any]] = lambda *args: anyio.to_thread.run_sync(lambda: home.browserd(*args))  # noqa: E731
    async with runs_client(home) as runs:
        run = await runs.start("batch_extract_pages", {"urls": [f"{site}/runs-big.html"]}, mode="async")
        followed = await cli("runs", "get", run["runId"], "--follow")
        assert followed.returncode == 0, followed.stderr
        assert "succeeded" in followed.stdout and "steps" in followed.stderr
        listed = json.loads((await cli("runs", "list", "--json")).stdout)
        assert listed["runs"][0]["runId"] == run["runId"]
        got = json.loads((await cli("runs", "get", run["runId"], "--json")).stdout)
        artifact_id = got["result"]["items"][0]["contentArtifactId"]
        target = home.root / "big.md"
        saved = await cli("runs", "artifact", artifact_id, "-o", str(target))
        assert saved.returncode == 0, saved.stderr
        assert (
            target.read_text().startswith("Paragraph 1 of the big article")
            and target.stat().st_size == got["artifacts"][0]["size"]
        )
        slow = await runs.start("batch_extract_pages", {"urls": [f"{site}/slow?ms=3000"]}, mode="async")
        canceled = await cli("runs", "cancel", slow["runId"], "--json")
        assert json.loads(canceled.stdout)["cancelRequested"] is True
        missing = await cli("runs", "get", "run_missing")
        assert missing.returncode != 0 and "RUN_NOT_FOUND" in missing.stderr
