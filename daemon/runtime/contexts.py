"""Warm browser contexts for short tasks: a context with one open page, reused page after page.

Opening a context and its first page costs a renderer process and several round trips; a page that
navigates on from the previous one reuses its renderer when the site is the same (a crawl, a batch of
one site's pages). A context is reused only under the same options (the pool's key), and only when
its user left no state behind that the next task could see: between uses `reset` clears the page's
session storage, navigates to about:blank, deletes every cookie and clears the storage (local storage,
IndexedDB, cache storage, service workers) of every origin the task visited. A context whose reset
fails, or whose browser went away, is closed rather than reused.

Contexts carrying a login's storage state or a per-context proxy are not pooled: their callers open
fresh ones (TaskExecutor.run_in_context).
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
from playwright.async_api import Browser, BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

log = logging.getLogger(__name__)

IDLE_PER_KEY = 4
RESET_TIMEOUT_S = 5


@dataclass
class WarmContext:
    browser: Browser
    context: BrowserContext
    page: Page
    key: Hashable
    cdp: CDPSession
    # Whatever the first user installed once for every later use (routes, their state).
    extras: dict[str, Any] = field(default_factory=dict)
    visited: set[str] = field(default_factory=set)
    uses: int = 0

    def visit(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            self.visited.add(f"{parts.scheme}://{parts.netloc}")


class ContextPool:
    def __init__(self, idle_per_key: int = IDLE_PER_KEY) -> None:
        self._idle: dict[Hashable, list[WarmContext]] = {}
        self._idle_per_key = idle_per_key
        self.created = 0
        self.reused = 0

    async def lease(self, browser: Browser, key: Hashable, options: dict[str, Any]) -> WarmContext:
        """An idle context of `key` on this browser, else a new one with `options`."""
        idle = self._idle.get(key, [])
        while idle:
            warm = idle.pop()
            if warm.browser is browser and browser.is_connected() and not warm.page.is_closed():
                warm.uses += 1
                self.reused += 1
                return warm
            await _close(warm)
        context = await browser.new_context(**options)
        try:
            page = await context.new_page()
            cdp = await context.new_cdp_session(page)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await context.close()
            raise
        self.created += 1
        return WarmContext(browser, context, page, key, cdp, uses=1)

    async def release(self, warm: WarmContext, reusable: bool) -> None:
        """Back to the pool once reset, or closed."""
        with anyio.CancelScope(shield=True):
            idle = self._idle.setdefault(warm.key, [])
            if reusable and len(idle) < self._idle_per_key and await _reset(warm):
                idle.append(warm)
                return
            await _close(warm)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            for idle in self._idle.values():
                for warm in idle:
                    await _close(warm)
            self._idle.clear()


async def _reset(warm: WarmContext) -> bool:
    warm.visit(warm.page.url)
    try:
        with anyio.fail_after(RESET_TIMEOUT_S):
            if len(warm.context.pages) != 1:
                return False  # the task opened popups: not worth tracking what they did
            if warm.page.url.startswith(("http:", "https:")):
                # Session storage belongs to the tab, not the origin's storage the CDP call clears.
                await warm.page.evaluate("() => { try { sessionStorage.clear(); } catch (e) {} }")
            await warm.page.goto("about:blank")
            await warm.context.clear_cookies()
            for origin in warm.visited:
                await warm.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
            warm.visited.clear()
            return True
    except (PlaywrightError, TimeoutError) as exc:
        log.debug("a warm context could not be reset; closing it: %s", exc)
        return False


async def _close(warm: WarmContext) -> None:
    with suppress(PlaywrightError):  # its browser is gone already
        await warm.context.close()
