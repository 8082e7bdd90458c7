"""Long calls made as MCP tasks (the `io.modelcontextprotocol/tasks` extension, 2026-07-28).

A client that declares the extension and calls a tool that can run as a task (crawl, run_task_template,
flow_run: their `task_arguments`) gets a task at once instead of waiting; the call runs here in the
daemon's task group and the client polls `tasks/get` until the task holds the tool's result, or sends
`tasks/cancel`. A task answers only the token (owner) that started it; its id is unguessable. Tasks
live in memory for `[http] task_ttl_s` after they end: the runs they started outlive the daemon in
runs.db, so the status message names the run for `get_task_run`.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup

from browserd.daemon.runtime.idle_hold import IdleHold
from browserd.daemon.tools.context import Progress

log = logging.getLogger(__name__)

EXTENSION = "io.modelcontextprotocol/tasks"
POLL_INTERVAL_MS = 1000
IDLE_REASON = "mcpTask"

TaskStatus = Literal["working", "completed", "failed", "cancelled"]
# The call, given a progress callback, answering a CallToolResult.
Work = Callable[[Progress], Awaitable[dict[str, Any]]]


class TaskUnknown(Exception):
    """No task of this id for this owner: never made, another client's, expired, or lost with a restart."""


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class McpTask:
    task_id: str
    owner: str
    tool: str
    ttl_s: float
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    status: TaskStatus = "working"
    status_message: str | None = None
    result: dict[str, Any] | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def view(self) -> dict[str, Any]:
        """The task as tasks/get answers it (a DetailedTask): with its result once completed."""
        shape: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created_at),
            "lastUpdatedAt": _iso(self.updated_at),
            "ttlMs": round(self.ttl_s * 1000),
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        if self.status_message:
            shape["statusMessage"] = self.status_message
        if self.status == "completed" and self.result is not None:
            shape["result"] = self.result
        return shape


class McpTasks:
    def __init__(self, idle: IdleHold, ttl_s: float) -> None:
        self._idle = idle
        self.ttl_s = ttl_s
        self._tasks: dict[str, McpTask] = {}
        self._group: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Tasks run inside this block; leaving it (the daemon stopping) cancels those still working."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    def start(self, owner: str, tool: str, work: Work) -> dict[str, Any]:
        """Start `work` as a task of `owner`; the task as created (status working)."""
        if self._group is None:
            raise RuntimeError("tasks start only while McpTasks.running()")
        self._purge()
        task = McpTask(f"task_{secrets.token_urlsafe(18)}", owner, tool, self.ttl_s)
        self._tasks[task.task_id] = task
        self._idle.acquire(IDLE_REASON)
        self._group.start_soon(self._run, task, work)
        return task.view()

    async def _run(self, task: McpTask, work: Work) -> None:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            counted = f"{done:g}/{total:g}" if total else f"{done:g}"
            task.status_message = f"{counted}: {message}" if message else counted
            task.updated_at = time.time()

        try:
            with task.scope:
                task.result = await work(progress)
            if task.scope.cancel_called:
                task.status, task.status_message = "cancelled", f"{task.tool} was cancelled"
            else:
                task.status = "completed"
        except Exception:  # the work answers errors itself; anything else is a bug, reported as such
            log.exception("MCP task %s (%s) failed", task.task_id, task.tool)
            task.status, task.status_message = "failed", "internal error; the daemon log has the traceback"
        finally:
            task.updated_at = time.time()
            self._idle.release(IDLE_REASON)

    def get(self, owner: str, task_id: str) -> dict[str, Any]:
        return self._owned(owner, task_id).view()

    def cancel(self, owner: str, task_id: str) -> None:
        """Ask the task to stop; it ends cancelled unless it finished first (cancellation is cooperative)."""
        self._owned(owner, task_id).scope.cancel()

    def _owned(self, owner: str, task_id: str) -> McpTask:
        self._purge()
        task = self._tasks.get(task_id)
        if task is None or task.owner != owner:
            raise TaskUnknown(task_id)
        return task

    def _purge(self) -> None:
        now = time.time()
        for task_id, task in list(self._tasks.items()):
            if task.status != "working" and now - task.updated_at > task.ttl_s:
                del self._tasks[task_id]
