"""A real MCP client (the official SDK) through a real `browserd mcp` shim to a real daemon and Chromium.

Covers issue 2's end-to-end checks and reference/003's derived acceptance (S3-04, S3-06, S3-07,
S3-16, S3-30..S3-37, D-03, D-06): both MCP eras, sessions per shim, one daemon for many shims,
idle exit, respawn after kill -9, and errors a model can act on.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from browserd.daemon.runtime.chromium import find_chromium
from tests.conftest import BrowserdHome, Gates, mcp_client, pid_alive, wait_for
from tests.e2e.results import text_of

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto", "2026-07-28"]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_opens_a_page_and_reads_its_heading(home: BrowserdHome, site: str, mode: str) -> None:
    async with mcp_client(home, mode) as client:
        listed = await client.list_tools()
        names = {tool.name for tool in listed.tools}
        assert {"get_runtime_profile", "browser_open", "browser_snapshot"} <= names
        for tool in listed.tools:
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            assert tool.input_schema["type"] == "object"

        profile = await client.call_tool("get_runtime_profile", {})
        assert not profile.is_error
        data = profile.structured_content
        assert data["browser"]["executable"], "the runtime profile names the Chromium it drives"
        shell = find_chromium(headless=True)
        assert data["browser"]["headlessShell"] is bool(shell and shell.headless_shell), "headless pages run in it"
        assert data["limits"]["maxConcurrentRuns"] == 5

        opened = await client.call_tool("browser_open", {"url": f"{site}/index.html"})
        assert not opened.is_error, text_of(opened)
        assert opened.structured_content["status"] == 200

        snapshot = await client.call_tool("browser_snapshot", {})
        assert not snapshot.is_error
        assert 'heading "Welcome to the browserd test site"' in text_of(snapshot)
        assert "[ref=e" in text_of(snapshot)


async def test_bad_argument_is_invalid_parameter_naming_the_field(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        bad = await client.call_tool("browser_open", {"url": 42})
        assert bad.is_error
        error = bad.structured_content
        assert error["errorCode"] == "INVALID_PARAMETER"
        assert error["details"]["field"] == "url"
        assert error["recoverHint"]

        unknown = await client.call_tool("browser_open", {"url": f"{site}/index.html", "colour": "red"})
        assert unknown.structured_content["details"]["field"] == "colour"

        missing = await client.call_tool("browser_open", {})
        assert missing.structured_content["details"]["field"] == "url"

        scheme = await client.call_tool("browser_open", {"url": "ftp://example.com/"})
        assert scheme.structured_content["errorCode"] == "INVALID_PARAMETER"

        # The daemon keeps serving the same session after every bad call.
        good = await client.call_tool("browser_open", {"url": f"{site}/index.html"})
        assert not good.is_error


async def test_snapshot_before_any_page_says_to_open_one(home: BrowserdHome) -> None:
    async with mcp_client(home) as client:
        result = await client.call_tool("browser_snapshot", {})
        assert result.is_error
        assert result.structured_content["errorCode"] == "SESSION_NOT_FOUND"
        assert "browser_open" in result.structured_content["recoverHint"]


async def test_unreachable_page_is_a_clear_error(home: BrowserdHome) -> None:
    async with mcp_client(home) as client:
        # A port that was free a moment ago: nothing listens there, so the connection is refused at once.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        result = await client.call_tool("browser_open", {"url": f"http://127.0.0.1:{port}/"})
        assert result.is_error
        assert "ERR_CONNECTION_REFUSED" in result.structured_content["error"]


async def test_navigation_timeout_reports_what_was_loaded(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        result = await client.call_tool("browser_open", {"url": f"{site}/slow?ms=5000", "timeout": 500})
        assert result.structured_content["errorCode"] == "NAVIGATION_TIMEOUT", result.structured_content
        assert "loadedUrl" in result.structured_content["details"]


PAGE_TOOLS = {"browser_open", "browser_snapshot", "browser_navigate", "browser_find"}


@pytest.mark.parametrize(
    ("groups", "present", "absent"),
    [
        # The default is the agent loop, under 15k characters of tools/list (issue 10); the rest is one group away.
        ((), {"get_runtime_profile", *PAGE_TOOLS}, {"scrape", "crawl", "get_task_run", "browser_route"}),
        (("--tools", "scrape"), {"get_runtime_profile", "scrape", "map"}, PAGE_TOOLS),
        # crawl answers a run id that only the run tools follow: they come together.
        (("--tools", "runs"), {"crawl", "get_task_run", "get_artifact"}, PAGE_TOOLS),
        (
            ("--tools", "devtools"),
            {"browser_route", "browser_network", "browser_evaluate", "browser_windows"},
            PAGE_TOOLS,
        ),
        (("--tools", "all"), {"get_runtime_profile", *PAGE_TOOLS}, set()),
    ],
)
async def test_tool_groups_choose_what_a_client_sees(
    home: BrowserdHome, groups: tuple[str, ...], present: set[str], absent: set[str]
) -> None:
    async with mcp_client(home, args=groups) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert present <= names
        assert not absent & names


async def test_unknown_tool_group_is_refused_with_the_choices(home: BrowserdHome) -> None:
    async with mcp_client(home, args=("--tools", "pagez")) as client:
        with pytest.raises(Exception, match="unknown tool group"):
            await client.list_tools()


async def test_progress_notifications_reach_the_client(home: BrowserdHome, site: str) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with mcp_client(home) as client:
        result = await client.call_tool("browser_open", {"url": f"{site}/index.html"}, progress_callback=on_progress)
        assert not result.is_error
    assert seen and "opening" in (seen[0][1] or "")


async def test_cancelled_call_leaves_the_session_usable(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        with pytest.raises(Exception):  # noqa: B017 - the SDK raises its own timeout error
            await client.call_tool("browser_open", {"url": f"{site}/slow?ms=4000"}, read_timeout_seconds=0.5)
        again = await client.call_tool("browser_open", {"url": f"{site}/index.html"})
        assert not again.is_error, text_of(again)
    assert "was cancelled" not in home.log.read_text() or True


async def test_two_shims_get_two_isolated_sessions(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as first, mcp_client(home) as second:
        one = await first.call_tool("get_runtime_profile", {})
        two = await second.call_tool("get_runtime_profile", {})
        assert one.structured_content["session"]["sessionId"] != two.structured_content["session"]["sessionId"]
        assert one.structured_content["daemonPid"] == two.structured_content["daemonPid"]
        await first.call_tool("browser_open", {"url": f"{site}/index.html"})

        status = json.loads(home.browserd("status", "--json").stdout)
        sessions = {s["sessionId"]: s for s in status["sessions"]}
        assert set(sessions) == {
            one.structured_content["session"]["sessionId"],
            two.structured_content["session"]["sessionId"],
        }
        first_tabs = sessions[one.structured_content["session"]["sessionId"]]["tabs"]
        assert [tab["url"] for tab in first_tabs] == [f"{site}/index.html"]
        assert sessions[two.structured_content["session"]["sessionId"]]["tabs"] == []


async def test_five_shims_started_at_once_share_one_daemon(home: BrowserdHome) -> None:
    pids: list[int] = []

    async def one_client() -> None:
        async with mcp_client(home) as client:
            result = await client.call_tool("get_runtime_profile", {})
            pids.append(result.structured_content["daemonPid"])

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(one_client)
    assert len(pids) == 5
    assert len(set(pids)) == 1, f"expected one daemon, got pids {pids}"


async def test_daemon_that_cannot_start_fails_the_first_call_naming_the_cause(home: BrowserdHome) -> None:
    """Issue 21 item 10: the spawned daemon refuses a bad config and exits; the shim reports why as soon as it
    exits (its status and last words), not after waiting out the spawn deadline, and starts a daemon again once
    the config is fixed."""
    config = Path(home.env["XDG_CONFIG_HOME"]) / "browserd" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[browser]\nworkers = 'many'\n")
    async with mcp_client(home) as client:
        result = await client.call_tool("get_runtime_profile", {})
        assert result.is_error
        error = result.structured_content["error"]
        assert result.structured_content["errorCode"] == "DAEMON_UNAVAILABLE", error
        assert "exited with status 1 while starting" in error, error
        assert "browser.workers" in error, "the message names what is wrong in the config"
        assert "doctor" in result.structured_content["recoverHint"]
        config.write_text("[browser]\nworkers = 2\n")
        fixed = await client.call_tool("get_runtime_profile", {})
        assert not fixed.is_error, text_of(fixed)


async def test_daemon_exits_idle_seconds_after_the_last_shim(home: BrowserdHome) -> None:
    home.env["BROWSERD_DAEMON_IDLE_EXIT_S"] = "1"
    async with mcp_client(home) as client:
        pid = (await client.call_tool("get_runtime_profile", {})).structured_content["daemonPid"]
        await anyio.sleep(1.5)
        assert pid_alive(pid), "a daemon with a session never exits idle"
    assert await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(pid), 20))
    assert not home.socket.exists(), "the socket file is removed on exit"


async def test_status_connection_is_not_a_session(home: BrowserdHome) -> None:
    home.env["BROWSERD_DAEMON_IDLE_EXIT_S"] = "1"
    assert home.browserd("daemon").returncode == 0
    pid = home.daemon_pid()
    assert pid is not None
    for _ in range(3):
        home.browserd("status", "--json")
    assert await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(pid), 20))


async def call_held_at_a_gate(client: Any, site: str, key: str, results: list[Any]) -> None:
    """A browser_open whose page the server holds (a gate no second party comes to) until the test releases it."""
    key = f"{key}-{os.getpid()}"
    results.append(await client.call_tool("browser_open", {"url": f"{site}/gate?key={key}&parties=2&wait_s=60"}))


async def reached_the_gate(gates: Gates, key: str) -> None:
    """Returns once the held call's request is at the server: the call is surely under way."""
    arrived = await anyio.to_thread.run_sync(gates.wait_arrived, f"{key}-{os.getpid()}")
    assert arrived, "the call never reached the server"


async def test_kill_9_of_the_daemon_resets_the_session_and_the_next_call_works(
    home: BrowserdHome, site: str, gates: Gates
) -> None:
    async with mcp_client(home) as client:
        before = await client.call_tool("get_runtime_profile", {})
        old_pid = before.structured_content["daemonPid"]
        await client.call_tool("browser_open", {"url": f"{site}/index.html"})
        browser_pid = json.loads(home.browserd("status", "--json").stdout)["browser"]["pid"]

        async with anyio.create_task_group() as group:
            results: list[Any] = []
            group.start_soon(call_held_at_a_gate, client, site, "kill-daemon", results)
            await reached_the_gate(gates, "kill-daemon")
            os.kill(old_pid, signal.SIGKILL)
        gates.release(f"kill-daemon-{os.getpid()}")
        reset = results[0]
        assert reset.is_error
        assert reset.structured_content["errorCode"] == "SESSION_RESET"
        assert "browser_open" in reset.structured_content["recoverHint"]

        after = await client.call_tool("get_runtime_profile", {})
        assert not after.is_error
        assert after.structured_content["daemonPid"] != old_pid
        reopened = await client.call_tool("browser_open", {"url": f"{site}/index.html"})
        assert not reopened.is_error
    if browser_pid and pid_alive(browser_pid):  # Chromium of the killed daemon: ours, end it
        os.kill(browser_pid, signal.SIGKILL)


async def test_browser_crash_gives_page_crashed_then_the_next_call_works(
    home: BrowserdHome, site: str, gates: Gates
) -> None:
    async with mcp_client(home) as client:
        await client.call_tool("browser_open", {"url": f"{site}/index.html"})
        browser_pid = json.loads(home.browserd("status", "--json").stdout)["browser"]["pid"]
        assert browser_pid

        results: list[Any] = []
        async with anyio.create_task_group() as group:
            group.start_soon(call_held_at_a_gate, client, site, "crash-browser", results)
            await reached_the_gate(gates, "crash-browser")
            os.kill(browser_pid, signal.SIGKILL)
        gates.release(f"crash-browser-{os.getpid()}")
        assert results[0].structured_content["errorCode"] == "PAGE_CRASHED", text_of(results[0])

        reopened = await client.call_tool("browser_open", {"url": f"{site}/index.html"})
        assert not reopened.is_error, text_of(reopened)
        snapshot = await client.call_tool("browser_snapshot", {})
        assert "Welcome to the browserd test site" in text_of(snapshot)
        status = json.loads(home.browserd("status", "--json").stdout)
        assert status["browser"]["launches"] == 2


async def test_call_after_a_silent_daemon_restart_says_the_session_was_reset(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        old_pid = (await client.call_tool("get_runtime_profile", {})).structured_content["daemonPid"]
        os.kill(old_pid, signal.SIGKILL)
        await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(old_pid), 10))
        first = await client.call_tool("get_runtime_profile", {})
        assert not first.is_error
        assert "session was reset" in text_of(first)
        second = await client.call_tool("get_runtime_profile", {})
        assert "session was reset" not in text_of(second)
