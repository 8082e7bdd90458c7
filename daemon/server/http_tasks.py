"""Long calls made as MCP tasks over HTTP, run in the daemon's task group (protocol/mcp_tasks.py has the
record, its wire shape and the table the stdio shim uses too).

A client that declares the extension and calls a tool that can run as a task (crawl, run_task_template,
flow_run: their `task_arguments`) gets a task at once instead of waiting; the call runs here and the
client polls `tasks/get` until the task holds the tool's result, or sends `tasks/cancel`. A task answers
only the token (owner) that started it; its id is unguessable. Tasks live in memory for `[http]
task_ttl_s` after they end: the runs they started outlive the daemon in runs.db.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

from browserd.daemon.events import Progress
from browserd.daemon.runtime.idle_hold import IdleHold
from browserd.protocol.mcp_tasks import McpTask, TaskTable

log = logging.getLogger(__name__)

IDLE_REASON = "mcpTask"

# The call, given a progress callback, answering a CallToolResult.
Work = Callable[[Progress], Awaitable[dict[str, Any]]]


class McpTasks:
    def __init__(self, idle: IdleHold, ttl_s: float) -> None:
        self._idle = idle
        self._table = TaskTable(ttl_s)
        self._scopes: dict[str, anyio.CancelScope] = {}
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

    def start(self, owner: str, tool: str, work: Work) -> McpTask:
        """Start `work` as a task of `owner`; the task as created (status working)."""
        if self._group is None:
            raise RuntimeError("tasks start only while McpTasks.running()")
        task = self._table.add(owner, tool)
        self._scopes[task.task_id] = anyio.CancelScope()
        self._idle.acquire(IDLE_REASON)
        self._group.start_soon(self._run, task, work)
        return task

    async def _run(self, task: McpTask, work: Work) -> None:
        scope = self._scopes[task.task_id]

        async def progress(done: float, total: float | None, message: str | None) -> None:
            task.progressed(done, total, message)

        try:
            with scope:
                result = await work(progress)
            if scope.cancel_called:
                task.ended("cancelled", message=f"{task.tool} was cancelled")
            else:
                task.ended("completed", result)
        except Exception:  # the work answers errors itself; anything else is a bug, reported as such
            log.exception("MCP task %s (%s) failed", task.task_id, task.tool)
            task.ended("failed", message="internal error; the daemon log has the traceback")
        finally:
            self._scopes.pop(task.task_id, None)
            self._idle.release(IDLE_REASON)

    def get(self, owner: str, task_id: str) -> dict[str, Any]:
        return self._table.owned(owner, task_id).view()

    def cancel(self, owner: str, task_id: str) -> None:
        """Ask the task to stop; it ends cancelled unless it finished first (cancellation is cooperative)."""
        task = self._table.owned(owner, task_id)
        scope = self._scopes.get(task.task_id)
        if scope is not None:
            scope.cancel()
