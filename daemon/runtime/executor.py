"""Browser tasks and the executor that bounds how many run and wait at once (reference/000, D-20).

A BrowserTask turns an input into an output given a browser context; scrape, templates and flows
all run through `TaskExecutor.run_in_context`, so the worker limit and the BUSY answer apply to all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import anyio
from playwright.async_api import Browser, BrowserContext

from browserd.daemon.errors import Busy
from browserd.daemon.runtime.pool import BrowserPool

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class BrowserTask(Protocol[T_co]):
    async def run(self, context: BrowserContext) -> T_co: ...


class TaskExecutor:
    """At most `workers` tasks run; at most `queue_size` wait; beyond that a caller gets BUSY at once."""

    def __init__(self, pool: BrowserPool, workers: int, queue_size: int) -> None:
        self.pool = pool
        self._slots = anyio.Semaphore(workers)
        self._queue_size = queue_size
        self._waiting = 0
        self.running = 0

    @property
    def waiting(self) -> int:
        return self._waiting

    async def run(self, work: Callable[[], Awaitable[T]]) -> T:
        if self._slots.value == 0 and self._waiting >= self._queue_size:
            raise Busy(f"{self.running} browser tasks running and {self._waiting} waiting")
        self._waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self._waiting -= 1
        self.running += 1
        try:
            return await work()
        finally:
            self.running -= 1
            self._slots.release()

    async def run_in_context(self, task: BrowserTask[T], *, local_only: bool = False, **context_options: Any) -> T:
        """Run `task` in a fresh context on a browser pool member, closed afterwards whatever happens.
        `local_only`: the context's traffic goes through the daemon's guard proxy, which only its own
        Chromium reaches."""

        async def work() -> T:
            async with self.pool.lease(local_only=local_only) as slot:
                return await in_fresh_context(slot.browser, task, context_options)

        return await self.run(work)


async def in_fresh_context(browser: Browser, task: BrowserTask[T], options: dict[str, Any]) -> T:
    context = await browser.new_context(**options)
    try:
        return await task.run(context)
    finally:
        with anyio.CancelScope(shield=True):
            await context.close()
