"""TaskOwner: the owner of tasks that browser event callbacks start.

Playwright calls event handlers (a dialog, a download) outside any task group of ours, so the work they
start needs an owner whose lifetime is obvious: a window, a session. Each task runs on its own, tracked
here; `cancel()` (a crash: sync, nothing to wait for) or `aclose()` (a close: cancel, then wait until they
have ended) stops them all, so none outlives its owner. Not an anyio TaskGroup: a task group must be left
by the task that entered it, and a window is opened by one request's task and closed by another's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

log = logging.getLogger(__name__)


class TaskOwner:
    def __init__(self, name: str) -> None:
        self.name = name
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def running(self) -> int:
        return len(self._tasks)

    def start_soon(self, func: Callable[..., Awaitable[Any]], *args: Any, name: str) -> bool:
        """Run `func(*args)` in a task owned here; False (and nothing runs) once the owner is closed."""
        if self._closed:
            log.debug("%s is closed: %s not started", self.name, name)
            return False

        async def run() -> None:
            try:
                await func(*args)
            except asyncio.CancelledError:
                raise
            except Exception:  # one handler's failure is logged, never lost in an unawaited task
                log.exception("%s: %s failed", self.name, name)

        task = asyncio.get_running_loop().create_task(run(), name=f"{self.name}: {name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    def cancel(self) -> None:
        """Stop every task and take no more; they end at their next await."""
        self._closed = True
        for task in self._tasks:
            task.cancel()

    async def aclose(self) -> None:
        """Stop every task and wait until each has ended."""
        self.cancel()
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


# Name prefixes of the tasks that belong to a window: what `browserd status` counts, so a leak shows.
_WINDOW_TASK_KINDS = {"periodicPublishes": "periodic publish", "urlGuards": "url guard", "windowEvents": "window "}


def window_task_counts() -> dict[str, int]:
    """Running tasks per kind that a window owns; all zero once every window is closed or abandoned."""
    names = [task.name or "" for task in anyio.get_running_tasks()]
    return {kind: sum(name.startswith(prefix) for name in names) for kind, prefix in _WINDOW_TASK_KINDS.items()}
