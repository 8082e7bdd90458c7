"""MCP tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28), as every front end keeps them.

A long call (a tool with `taskArguments`) from a client that declares the extension runs in the
background; the client polls `tasks/get` and may send `tasks/cancel`. This module holds what the stdio
shim and the daemon's HTTP endpoint share: the task record and its wire shape, the table of tasks with
their owners, and the arguments a call runs with as a task. Each front end runs the calls itself (the
shim with asyncio, the daemon with anyio). Plain Python only: the shim imports it.
"""

from __future__ import annotations

import base64
import os
import time
from dataclasses import dataclass, field
from typing import Any, Literal

EXTENSION = "io.modelcontextprotocol/tasks"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
POLL_INTERVAL_MS = 1000
MISSING_CAPABILITY = -32021

TaskStatus = Literal["working", "completed", "failed", "cancelled"]


class TaskUnknown(Exception):
    """No task of this id for this owner: never made, another client's, expired, or lost with a restart."""

    def message(self) -> str:
        return (
            f"Failed to retrieve task: task {self.args[0]!r} not found (finished tasks are kept for a while, none "
            "survive a daemon restart; the run a task started does: get_task_run)"
        )


def missing_capability() -> dict[str, Any]:
    """The `data` of the -32021 error a client that did not declare the extension gets from tasks/*."""
    return {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


def declares_tasks(meta: dict[str, Any] | None) -> bool:
    """Whether a 2026-07-28 request's `_meta` declares the extension among the client's capabilities."""
    capabilities = (meta or {}).get(CLIENT_CAPABILITIES_META) or {}
    return isinstance(capabilities, dict) and EXTENSION in (capabilities.get("extensions") or {})


def task_call_arguments(arguments: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments with the tool's task defaults where the client gave none (objects merged once)."""
    merged = dict(arguments)
    for key, value in defaults.items():
        given = merged.get(key)
        if given is None:
            merged[key] = value
        elif isinstance(value, dict) and isinstance(given, dict):
            merged[key] = {**value, **given}
    return merged


def _iso(epoch: float) -> str:
    # time, not datetime: the shim imports this module, and datetime alone would add milliseconds to its start.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


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

    def created(self) -> dict[str, Any]:
        """The CreateTaskResult a tools/call answers in lieu of its result."""
        return {**self.view(), "resultType": "task"}

    def progressed(self, done: float, total: float | None, message: str | None) -> None:
        counted = f"{done:g}/{total:g}" if total else f"{done:g}"
        self.status_message = f"{counted}: {message}" if message else counted
        self.updated_at = time.time()

    def ended(self, status: TaskStatus, result: dict[str, Any] | None = None, message: str | None = None) -> None:
        self.status, self.result, self.updated_at = status, result, time.time()
        if message is not None:
            self.status_message = message


class TaskTable:
    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._tasks: dict[str, McpTask] = {}

    def add(self, owner: str, tool: str) -> McpTask:
        self._purge()
        # 144 random bits (os.urandom, as secrets does, without the start-up cost of importing it in the shim).
        task = McpTask(f"task_{base64.urlsafe_b64encode(os.urandom(18)).decode()}", owner, tool, self.ttl_s)
        self._tasks[task.task_id] = task
        return task

    def owned(self, owner: str, task_id: str) -> McpTask:
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
