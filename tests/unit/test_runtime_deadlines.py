"""Issue 11 item 4: the runtime's waits on the outside world have deadlines and never block the event loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from browserd.daemon.config import BrowserConfig
from browserd.daemon.errors import ExecutionError
from browserd.daemon.runtime import browser as browser_module
from browserd.daemon.runtime import chromium as chromium_module
from browserd.daemon.runtime.browser import BrowserRuntime

pytestmark = pytest.mark.anyio


async def test_item4_chromium_version_is_awaited_with_a_deadline_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `--version` that hangs gives '' after the deadline, and the loop runs other tasks meanwhile."""
    hung = tmp_path / "chromium"
    hung.write_text("#!/bin/sh\nexec sleep 300\n")
    hung.chmod(0o755)
    monkeypatch.setattr(chromium_module, "VERSION_TIMEOUT_S", 0.5)
    runtime = BrowserRuntime(BrowserConfig(executable=str(hung)))
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.01)
            ticks += 1

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(tick)
            assert await runtime.executable_version() == ""
            tg.cancel_scope.cancel()
    assert ticks > 0, "the event loop stood still while --version ran"
    assert await runtime.executable_version() == "", "asked once: the answer is kept"


async def test_item4_a_driver_that_does_not_start_is_an_error_not_a_held_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Playwright driver start under the runtime lock has a deadline; the next caller is not stuck."""
    starts = 0

    async def stalled(preload: bool) -> Any:
        nonlocal starts
        starts += 1
        await anyio.sleep_forever()

    monkeypatch.setattr(browser_module, "start_driver", stalled)
    monkeypatch.setattr(browser_module, "DRIVER_START_TIMEOUT_S", 0.2)
    runtime = BrowserRuntime(BrowserConfig())
    with anyio.fail_after(10):
        for _ in range(2):
            with pytest.raises(ExecutionError, match="driver did not start"):
                await runtime.connect_over_cdp("http://127.0.0.1:9", 1000)
    assert starts == 2
