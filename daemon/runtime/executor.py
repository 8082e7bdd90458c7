"""Browser tasks and the executor that bounds how many run and wait at once (reference/000, D-20).

A BrowserTask turns an input into an output given a browser context; scrape, templates and flows
all run through `TaskExecutor.run_in_context`, so the worker limit and the BUSY answer apply to all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import anyio
from playwright.async_api import BrowserContext

from browserd.daemon.errors import Busy
from browserd.daemon.runtime.browser import BrowserRuntime

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class BrowserTask(Protocol[T_co]):
    async def run(self, context: BrowserContext) -> T_co: ...


class TaskExecutor:
    """At most `workers` tasks run; at most `queue_size` wait; beyond that a caller gets BUSY at once."""

    def __init__(self, runtime: BrowserRuntime, workers: int, queue_size: int) -> None:
        self._runtime = runtime
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

    async def run_in_context(self, task: BrowserTask[T], **context_options: Any) -> T:
        """Run `task` in a fresh context of the shared browser, closed afterwards whatever happens."""

        async def work() -> T:
            browser = await self._runtime.browser()
            context = await browser.new_context(**context_options)
            try:
                return await task.run(context)
            finally:
                with anyio.CancelScope(shield=True):
                    await context.close()

        return await self.run(work)
