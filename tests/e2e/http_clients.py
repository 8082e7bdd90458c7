"""MCP clients of the daemon's HTTP endpoint for tests and benches: the official SDK's streamable-HTTP
client with a bearer token, and the tasks extension (io.modelcontextprotocol/tasks) as a client extension.

The SDK ships no tasks client, so `TasksExtension` is one here, written from the extension's spec: it
claims results of resultType "task" and resolves them by polling tasks/get until the task ends.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic import ConfigDict

from tests.conftest import BROWSERD, BrowserdHome, wait_for

TASKS = "io.modelcontextprotocol/tasks"
SESSION_META = "browserd/session"
ERAS = ("legacy", "2026-07-28")
TERMINAL_TASK = ("completed", "failed", "cancelled")


@dataclass
class HttpDaemon:
    """A home whose daemon serves MCP over HTTP on a loopback port of its own."""

    home: BrowserdHome
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        """Start the daemon (an HTTP client spawns none) unless it already runs: `browserd daemon --foreground
        --http`, detached, waited for here (a loaded machine can take longer than the spawner's 10 s)."""
        log = self.home.root / "http-daemon.out"
        if self.home.daemon_pid() is None:
            with open(log, "ab") as out:
                subprocess.Popen(
                    [BROWSERD, "daemon", "--foreground", "--quiet", "--http", f"127.0.0.1:{self.port}"],
                    env=self.home.env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    start_new_session=True,  # it outlives this call; stop_daemon ends it by its pid
                )
        assert wait_for(lambda: _listening(self.port), 90), f"nothing listens on {self.port}; see {log}"
        assert wait_for(lambda: self.home.daemon_pid() is not None, 30), "the daemon holds no lock"

    def token(self, name: str, trust: str = "local", tools: str | None = None, expires: str | None = None) -> str:
        args = ["tokens", "create", "--name", name, "--trust", trust]
        args += ["--tools", tools] if tools else []
        args += ["--expires", expires] if expires else []
        done = self.home.browserd(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def revoke(self, name: str) -> None:
        done = self.home.browserd("tokens", "revoke", name)
        assert done.returncode == 0, done.stderr


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def http_session(token: str | None, headers: dict[str, str] | None = None) -> httpx2.AsyncClient:
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return httpx2.AsyncClient(headers=sent, timeout=httpx2.Timeout(60, read=300))


@asynccontextmanager
async def http_client(
    url: str,
    token: str | None,
    mode: str = "legacy",
    headers: dict[str, str] | None = None,
    extensions: Sequence[ClientExtension] | None = None,
) -> AsyncIterator[Client]:
    async with (
        http_session(token, headers) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, extensions=extensions, cache=None) as client,
    ):
        yield client


def handle_of(result: Any) -> str:
    handle: str = (result.meta or {})[SESSION_META]
    return handle


# -- the tasks extension -----------------------------------------------------------------------------


class CreatedTask(types.Result):
    """CreateTaskResult: a task handle in lieu of the tool's result."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class TaskState(types.Result):
    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None


async def get_task(session: ClientSession, task_id: str) -> TaskState:
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), TaskState)


async def cancel_task(session: ClientSession, task_id: str) -> None:
    await session.send_request(CancelTask(params=TaskParams(task_id=task_id)), types.EmptyResult)


async def poll_task(session: ClientSession, task_id: str, until: tuple[str, ...] = TERMINAL_TASK) -> TaskState:
    with anyio.fail_after(180):
        while True:
            state = await get_task(session, task_id)
            if state.status in until:
                return state
            await anyio.sleep(0.2)


class TasksExtension(ClientExtension):
    identifier = TASKS

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._resolve)]

    @staticmethod
    async def _resolve(created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        state = await poll_task(ctx.session, created.task_id)
        assert state.status == "completed", f"task {created.task_id} ended {state.status}: {state.status_message}"
        return types.CallToolResult.model_validate(state.result, by_name=False)
