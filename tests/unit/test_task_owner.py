"""Issue 11 item 4: tasks that page events start (dialog answers, downloads) have an owner that ends them."""

from __future__ import annotations

import anyio
import pytest

from browserd.daemon.runtime.tasks import TaskOwner

pytestmark = pytest.mark.anyio


async def test_item4_closing_the_owner_cancels_its_tasks_and_refuses_late_ones() -> None:
    owner = TaskOwner("window win_1")
    started, cancelled = anyio.Event(), anyio.Event()

    async def waits_forever() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    assert owner.start_soon(waits_forever, name="dialog")
    with anyio.fail_after(10):
        await started.wait()
        assert owner.running == 1
        await owner.aclose()
    assert cancelled.is_set() and owner.running == 0
    assert not owner.start_soon(waits_forever, name="late dialog"), "a closed owner starts nothing"


async def test_item4_a_failing_task_is_logged_and_leaves_the_others_running(caplog: pytest.LogCaptureFixture) -> None:
    owner = TaskOwner("downloads")
    finished = anyio.Event()

    async def fails() -> None:
        raise RuntimeError("the transfer broke")

    async def finishes() -> None:
        await anyio.sleep(0)
        finished.set()

    owner.start_soon(fails, name="download dl_1")
    owner.start_soon(finishes, name="download dl_2")
    with anyio.fail_after(10):
        await finished.wait()
        while owner.running:
            await anyio.sleep(0.01)
    assert "download dl_1 failed" in caplog.text and "the transfer broke" in caplog.text
    owner.cancel()
