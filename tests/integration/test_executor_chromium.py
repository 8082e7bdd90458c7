"""The task executor's run_in_context with real Chromium: a fresh context per BrowserTask (reference/000).

The executor's queue and worker limit, which need no browser, are tests/unit/test_executor.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import BrowserContext

from browserd.daemon.config import BrowserConfig
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.executor import TaskExecutor
from browserd.daemon.runtime.pool import BrowserPool

pytestmark = pytest.mark.anyio


class TitleTask:
    """A BrowserTask: open `url` in the given context and return the page's title."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.context: BrowserContext | None = None

    async def run(self, context: BrowserContext) -> str:
        self.context = context
        page = await context.new_page()
        await page.goto(self.url)
        return await page.title()


class FailingTask:
    async def run(self, context: BrowserContext) -> str:
        await context.new_page()
        raise RuntimeError("the task broke")


@pytest.fixture
async def runtime() -> AsyncIterator[BrowserRuntime]:
    runtime = BrowserRuntime(BrowserConfig())
    try:
        yield runtime
    finally:
        await runtime.aclose()


async def test_browser_task_runs_in_a_fresh_context_that_is_closed_afterwards(
    runtime: BrowserRuntime, site: str
) -> None:
    """reference/000, D-20: a BrowserTask gets its own context; the context closes whatever happens."""
    executor = TaskExecutor(BrowserPool(runtime, BrowserConfig()), workers=2, queue_size=2)
    data_url = "data:text/html,<title>From data</title><p>hi</p>"
    assert await executor.run_in_context(TitleTask(data_url)) == "From data"

    task = TitleTask(f"{site}/index.html")
    title = await executor.run_in_context(task)
    assert title == "browserd test site"
    assert task.context is not None
    browser = await runtime.browser()
    assert browser.contexts == [], "every task's context is closed after it returns"

    with pytest.raises(RuntimeError, match="the task broke"):
        await executor.run_in_context(FailingTask())
    assert browser.contexts == [], "a failing task's context is closed too"
    assert (executor.running, executor.waiting) == (0, 0)
    assert runtime.launches == 1, "tasks share one browser"


async def test_context_options_reach_the_new_context(runtime: BrowserRuntime) -> None:
    executor = TaskExecutor(BrowserPool(runtime, BrowserConfig()), workers=1, queue_size=0)

    class UserAgent:
        async def run(self, context: BrowserContext) -> str:
            page = await context.new_page()
            return str(await page.evaluate("navigator.userAgent"))

    assert await executor.run_in_context(UserAgent(), user_agent="browserd-test/1.0") == "browserd-test/1.0"
