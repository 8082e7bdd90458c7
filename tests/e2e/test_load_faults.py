"""Load and faults (issue 11 items 5 and 14): many clients at once, a fuzzed stdio side, Chromium killed mid-call.

Bounded in count and time: 16 clients x 50 calls, a fixed number of fuzz examples, three kills. Each part
ends with a call that must work, since what a user notices after a fault is whether the next call does.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import BROWSERD, BrowserdHome, Gates, mcp_client, own_home, until
from tests.e2e.results import ok, text_of

pytestmark = pytest.mark.anyio

ALL_TOOLS = ("--tools", "all")


def status(home: BrowserdHome) -> dict[str, Any]:
    result = home.browserd("status", "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def listening_tcp_sockets(pid: int) -> int:
    """TCP sockets in LISTEN state that process `pid` holds open (the guard proxies' listeners)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    listening = 0
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: TCP_LISTEN
                listening += 1
    return listening


async def kill_browser(home: BrowserdHome) -> int:
    pid = status(home)["browser"]["pid"]
    assert pid, "no browser to kill"
    os.kill(pid, signal.SIGKILL)
    return int(pid)


@pytest.fixture
def fault_home(site: str) -> Iterator[BrowserdHome]:
    """A daemon of the test's own (its Chromium gets killed), its remote sessions allowed onto the test site."""
    with own_home() as home:
        home.env["BROWSERD_SECURITY_REMOTE_EXEMPT_ORIGINS"] = site
        yield home


# -- item 5: a crash leaves nothing behind ------------------------------------------------------------


async def test_item5_a_browser_crash_leaves_no_window_task_socket_or_listener(
    fault_home: BrowserdHome, site: str
) -> None:
    home = fault_home
    async with (
        mcp_client(home, args=ALL_TOOLS) as local,
        mcp_client(home, args=("--trust", "remote", *ALL_TOOLS)) as remote,
    ):
        daemon_pid = (await local.call_tool("get_runtime_profile", {})).structured_content["daemonPid"]
        baseline = listening_tcp_sockets(daemon_pid)
        profile = f"crash-{uuid.uuid4().hex[:8]}"
        ok(await local.call_tool("browser_open", {"url": f"{site}/index.html", "profileId": profile}))
        ok(await remote.call_tool("browser_open", {"url": f"{site}/index.html"}))
        ok(await remote.call_tool("browser_windows", {"action": "new"}))
        before = status(home)["tasks"]
        assert before["periodicPublishes"] >= 1 and before["urlGuards"] >= 2, before
        assert listening_tcp_sockets(daemon_pid) >= baseline + 2, "each guarded window listens on a port"

        await kill_browser(home)

        # Without any call of the sessions: the crash itself closes what their windows held.
        def all_gone() -> bool:
            left = status(home)["tasks"]
            return not any(left.values()) and listening_tcp_sockets(daemon_pid) == baseline

        await until(all_gone, "the dead windows' publishers, guards and listeners to end")
        reopened = ok(await local.call_tool("browser_open", {"url": f"{site}/help.html", "profileId": profile}))
        assert reopened.structured_content["status"] == 200
        ok(await remote.call_tool("browser_open", {"url": f"{site}/help.html"}))


# -- item 14: kill -9 of Chromium during a scrape, a run and an action ------------------------------------


@contextmanager
def gate(gates: Gates) -> Iterator[str]:
    """A gate key nobody else uses; released on exit, so the server's thread ends too."""
    key = f"fault-{uuid.uuid4().hex}"
    try:
        yield key
    finally:
        gates.release(key)


async def kill_during(home: BrowserdHome, gates: Gates, key: str, call: Any) -> Any:
    """Start `call()`, wait until its page request is held at the gate, kill Chromium, return its answer."""
    answers: list[Any] = []

    async def run() -> None:
        answers.append(await call())

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        assert await anyio.to_thread.run_sync(gates.wait_arrived, key), "the call never reached the page"
        await kill_browser(home)
    return answers[0]


async def test_item14_kill_9_of_chromium_during_a_scrape_a_run_and_an_action(
    fault_home: BrowserdHome, site: str, gates: Gates
) -> None:
    home = fault_home
    async with mcp_client(home, args=ALL_TOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html"}))
        launches = status(home)["browser"]["launches"]

        with gate(gates) as key:
            url = f"{site}/gate?key={key}&parties=2&wait_s=60"
            # render always: the fast path would fetch the page without the browser that is killed.
            scrape = {"url": url, "render": "always"}
            answer = await kill_during(home, gates, key, lambda: client.call_tool("scrape", scrape))
        assert answer.is_error, text_of(answer)
        scraped = ok(await client.call_tool("scrape", {"url": f"{site}/help.html"}))
        assert "Help page" in text_of(scraped)

        with gate(gates) as key:
            inputs = {"urls": [f"{site}/gate?key={key}&parties=2&wait_s=60"], "render": "always"}
            arguments = {"templateId": "batch_extract_pages", "inputs": inputs, "options": {"mode": "sync"}}
            answer = await kill_during(home, gates, key, lambda: client.call_tool("run_task_template", arguments))
        run = answer.structured_content or {}
        assert answer.is_error or run.get("status") in ("failed", "partial_success"), text_of(answer)
        arguments["inputs"] = {"urls": [f"{site}/help.html"]}
        again = ok(await client.call_tool("run_task_template", arguments)).structured_content
        assert again["status"] == "succeeded", again

        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html"}))
        with gate(gates) as key:
            fetch = f"async () => (await fetch('/gate?key={key}&parties=2&wait_s=60')).status"
            answer = await kill_during(
                home, gates, key, lambda: client.call_tool("browser_evaluate", {"expression": fetch})
            )
        assert answer.is_error and answer.structured_content["errorCode"] == "PAGE_CRASHED", text_of(answer)
        reopened = ok(await client.call_tool("browser_open", {"url": f"{site}/help.html"}))
        assert reopened.structured_content["status"] == 200
        assert status(home)["browser"]["launches"] == launches + 3, "one relaunch per kill"


# -- item 14: 16 clients x 50 mixed calls --------------------------------------------------------------


async def test_item14_sixteen_clients_fifty_mixed_calls_no_error_no_crossed_answer(
    home: BrowserdHome, site: str
) -> None:
    clients, calls = 16, 50
    errors: list[str] = []
    done = 0

    async def one_client(n: int) -> None:
        nonlocal done
        own = f"{site}/index.html?client={n}"
        async with mcp_client(home) as client:
            session = ok(await client.call_tool("get_runtime_profile", {})).structured_content["session"]
            for i in range(calls):
                # Mostly cheap reads, a page load every tenth call: the point is many sessions at once.
                kind = 0 if i % 10 == 0 else i % 5
                if kind == 0:
                    result = await client.call_tool("browser_open", {"url": own, "snapshot": "none"})
                    seen = result.structured_content and result.structured_content.get("url")
                elif kind in (1, 2):
                    result = await client.call_tool("browser_get", {"what": "url"})
                    seen = result.structured_content and result.structured_content.get("value")
                elif kind == 3:
                    result = await client.call_tool("get_runtime_profile", {})
                    seen = own if (result.structured_content or {}).get("session") == session else "another session"
                else:
                    result = await client.call_tool("browser_tabs", {"action": "list"})
                    urls = [row["url"] for row in (result.structured_content or {}).get("tabs", [])]
                    seen = own if urls == [own] else urls
                if result.is_error:
                    errors.append(f"client {n} call {i}: {text_of(result)}")
                elif seen != own:
                    errors.append(f"client {n} call {i} (kind {kind}) answered for another session: {seen}")
                done += 1

    async with mcp_client(home) as warm:  # the daemon and Chromium started once, not by 16 racing shims
        ok(await warm.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        for n in range(clients):
            tg.start_soon(one_client, n)
    elapsed = time.monotonic() - started
    print(f"{clients} clients x {calls} calls: {elapsed:.1f} s, {done / elapsed:.0f} calls/s")  # a figure, no assert
    assert done == clients * calls
    assert errors == [], f"{len(errors)} bad answers, first ones:\n" + "\n".join(errors[:5])


# -- item 14: the MCP stdio side fuzzed ------------------------------------------------------------------


class RawShim:
    """`browserd mcp` driven with raw lines on stdin, for what no SDK client would ever send."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.buffer = b""
        self.ids = 10**6

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(line.rstrip(b"\n") + b"\n")

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A well-formed request and its answer (skipping notifications and answers to fuzzed ids)."""
        self.ids += 1
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            request["params"] = params
        await self.send(json.dumps(request).encode())
        assert self.process.stdout is not None
        with anyio.fail_after(60):
            while True:
                while b"\n" not in self.buffer:
                    self.buffer += await self.process.stdout.receive()
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == self.ids:
                    answer: dict[str, Any] = message
                    return answer


@asynccontextmanager
async def raw_shim(home: BrowserdHome) -> AsyncIterator[RawShim]:
    async with await anyio.open_process([BROWSERD, "mcp"], env=home.env) as process:
        shim = RawShim(process)
        initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz"}}
        assert "result" in await shim.call("initialize", initialize)
        await shim.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        try:
            yield shim
        finally:
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
huge_ids = st.one_of(st.integers(min_value=2**63, max_value=2**200), st.text(min_size=1000, max_size=5000))
methods = st.sampled_from(["tools/call", "tools/list", "ping", "initialize", "no/such/method", "", "resources/list"])
requests = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": methods | json_values},
    optional={"id": huge_ids | json_values, "params": json_values},
)
cancels = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "method": st.just("notifications/cancelled"),
        "params": st.fixed_dictionaries({"requestId": huge_ids | json_values}),
    }
)
wrong_tool_calls = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.integers(min_value=1, max_value=1000),
        "method": st.just("tools/call"),
        "params": st.fixed_dictionaries(
            {"name": st.sampled_from(["browser_open", "scrape", "nope"]) | json_values, "arguments": json_values}
        ),
    }
)
garbage = st.binary(max_size=200).filter(lambda b: b"\n" not in b)
lines = st.one_of(
    garbage,
    st.text(max_size=200).map(lambda text: text.replace("\n", " ").encode()),
    (requests | cancels | wrong_tool_calls).map(lambda message: json.dumps(message).encode()),
)


async def test_item14_the_stdio_side_survives_malformed_json_rpc(home: BrowserdHome, site: str) -> None:
    async with raw_shim(home) as shim:
        batches: list[list[bytes]] = []

        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(st.lists(lines, min_size=1, max_size=8))
        def collect(batch: list[bytes]) -> None:
            batches.append(batch)

        collect()
        for batch in batches:
            for line in batch:
                await shim.send(line)
            pong = await shim.call("ping")
            assert pong.get("result") == {}, f"the shim stopped answering after {batch!r}: {pong}"
        answer = await shim.call("tools/call", {"name": "browser_open", "arguments": {"url": f"{site}/help.html"}})
        assert answer["result"].get("isError") is not True, answer
    async with mcp_client(home) as client:  # the daemon behind the shim serves a fresh client too
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html"}))


# -- item 4: the annotation script before a snapshot has a deadline ----------------------------------------


async def test_item4_a_snapshot_of_a_stuck_page_answers(fault_home: BrowserdHome, site: str) -> None:
    """Issue 11 item 4: a busy main thread holds the annotation script; the snapshot still answers (an error
    naming the stuck page, not the daemon's request deadline) and the session goes on in another window."""
    home = fault_home
    home.env["BROWSERD_BROWSER_SNAPSHOT_TIMEOUT_MS"] = "2000"
    home.env["BROWSERD_DAEMON_REQUEST_TIMEOUT_S"] = "90"
    async with mcp_client(home, args=ALL_TOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
        spin = "setTimeout(() => { for (;;) {} }, 50)"  # ends with the daemon: own_home stops it
        ok(await client.call_tool("browser_evaluate", {"expression": spin}))
        stuck = await client.call_tool("browser_snapshot", {})
        assert "ran past" not in text_of(stuck), "only the daemon's request deadline ended the snapshot"
        # Another window is another browser context, whose pages never share the stuck renderer.
        ok(await client.call_tool("browser_windows", {"action": "new"}))
        ok(await client.call_tool("browser_open", {"url": f"{site}/help.html", "snapshot": "none"}))
        assert "Help page" in text_of(ok(await client.call_tool("browser_snapshot", {})))
