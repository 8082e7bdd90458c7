"""The task executor: a worker limit, a bounded queue, BUSY at once beyond it (D-20, reference/000)."""

from __future__ import annotations

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from browserd.daemon.config import BrowserConfig
from browserd.daemon.errors import Busy
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.executor import TaskExecutor
from browserd.daemon.runtime.pool import BrowserPool

pytestmark = pytest.mark.anyio


def small_executor() -> TaskExecutor:
    # run() never touches the runtime, so no browser is launched here.
    return TaskExecutor(BrowserPool(BrowserRuntime(BrowserConfig()), BrowserConfig()), workers=1, queue_size=1)


class Blocker:
    """Work that says it started and then waits until the test releases it."""

    def __init__(self, result: str) -> None:
        self.result = result
        self.started = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self) -> str:
        self.started.set()
        await self.release.wait()
        return self.result


async def test_full_queue_answers_busy_at_once_and_queued_work_still_completes() -> None:
    """D-20: one running, one waiting; a third caller gets BUSY immediately, never an endless wait."""
    executor = small_executor()
    first, second = Blocker("first"), Blocker("second")
    results: list[str] = []

    async def submit(work: Blocker) -> None:
        results.append(await executor.run(work))

    async with anyio.create_task_group() as tg:
        tg.start_soon(submit, first)
        await first.started.wait()
        tg.start_soon(submit, second)
        await wait_all_tasks_blocked()
        assert (executor.running, executor.waiting) == (1, 1)
        assert not second.started.is_set(), "the second task must wait for the only worker"

        third_ran = False

        async def third() -> str:
            nonlocal third_ran
            third_ran = True
            return "third"

        with anyio.fail_after(5), pytest.raises(Busy) as caught:
            await executor.run(third)
        assert caught.value.code == "BUSY"
        assert caught.value.info().error_code == "BUSY"
        assert "1 browser tasks running and 1 waiting" in caught.value.message
        assert not third_ran
        assert (executor.running, executor.waiting) == (1, 1), "a refused call leaves the counters alone"

        first.release.set()
        await second.started.wait()
        assert (executor.running, executor.waiting) == (1, 0)
        second.release.set()
    assert results == ["first", "second"]
    assert (executor.running, executor.waiting) == (0, 0)


async def test_queue_of_zero_runs_up_to_the_workers_and_refuses_the_rest() -> None:
    """D-20: queue_size 0 means no waiting at all; every worker still takes a task."""
    executor = TaskExecutor(BrowserPool(BrowserRuntime(BrowserConfig()), BrowserConfig()), workers=2, queue_size=0)
    blockers = [Blocker("a"), Blocker("b")]
    async with anyio.create_task_group() as tg:
        for blocker in blockers:
            tg.start_soon(executor.run, blocker)
            await blocker.started.wait()
        assert executor.running == 2
        with pytest.raises(Busy):
            await executor.run(Blocker("c"))
        for blocker in blockers:
            blocker.release.set()
    assert (executor.running, executor.waiting) == (0, 0)


async def test_cancelling_a_waiting_task_frees_its_place_in_the_queue() -> None:
    """D-20: a cancelled waiter leaves the counters right, so its place can be taken again."""
    executor = small_executor()
    first, waiter, later = Blocker("first"), Blocker("waiter"), Blocker("later")
    async with anyio.create_task_group() as tg:
        tg.start_soon(executor.run, first)
        await first.started.wait()

        waiting_scope = anyio.CancelScope()
        tg.start_soon(_run_in_scope, executor, waiter, waiting_scope)
        await wait_all_tasks_blocked()
        assert executor.waiting == 1
        with pytest.raises(Busy):
            await executor.run(later)
        waiting_scope.cancel()
        await wait_all_tasks_blocked()
        assert (executor.running, executor.waiting) == (1, 0)
        assert not waiter.started.is_set(), "a cancelled waiter never runs"

        tg.start_soon(executor.run, later)  # the freed place in the queue is usable, not BUSY
        await wait_all_tasks_blocked()
        assert executor.waiting == 1
        first.release.set()
        await later.started.wait()
        later.release.set()
    assert (executor.running, executor.waiting) == (0, 0)


async def _run_in_scope(executor: TaskExecutor, work: Blocker, scope: anyio.CancelScope) -> None:
    with scope:
        await executor.run(work)


async def test_cancelling_or_failing_a_running_task_gives_its_worker_back() -> None:
    executor = small_executor()
    running = Blocker("running")
    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()
        tg.start_soon(_run_in_scope, executor, running, scope)
        await running.started.wait()
        scope.cancel()
    assert (executor.running, executor.waiting) == (0, 0)

    async def broken() -> None:
        raise ValueError("task failed")

    with pytest.raises(ValueError, match="task failed"):
        await executor.run(broken)
    assert (executor.running, executor.waiting) == (0, 0)

    async def fine() -> str:
        return "ok"

    with anyio.fail_after(5):
        assert await executor.run(fine) == "ok", "the worker is free again after a cancel and a failure"
