"""Warm browser contexts for short tasks: a context with one open page, reused page after page.

Opening a context and its first page costs a renderer process and several round trips; a page that
navigates on from the previous one reuses its renderer when the site is the same (a crawl, a batch of
one site's pages). A context is reused only under the same options (the pool's key), and only when
its user left no state behind that the next task could see: between uses `_reset` clears the page's
session storage, navigates to about:blank, deletes every cookie and clears the storage (local storage,
IndexedDB, cache storage, service workers) of every origin the task visited. A context whose reset
fails, or whose browser went away, is closed rather than reused. The reset runs after the task has
its answer, in the background; a lease of the same key waits for it rather than opening another context.

A login's cookies are pooled too, under a key of their own (the caller puts the profile in the key, so
no context ever passes from one profile to another): a fresh context starts from the storage state, a
reused one gets the state's cookies back after its reset, so every use starts from exactly the state
it was given. A state with local storage is not pooled (`poolable_state`): CDP can only write an
origin's local storage from a frame of that origin. Nor are contexts with a per-context proxy: their
callers open fresh ones (TaskExecutor.run_in_context).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
from playwright.async_api import Browser, BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.runtime.page_js import load_js

log = logging.getLogger(__name__)

IDLE_PER_KEY = 4
# Over all keys: each idle context holds a renderer, and every login profile has a key of its own.
IDLE_TOTAL = 12
RESET_TIMEOUT_S = 5
# Session storage belongs to the tab, not the origin's storage that Storage.clearDataForOrigin clears.
CLEAR_SESSION_STORAGE_JS = load_js("browserd.daemon.runtime", "session_storage_clear.js")


def poolable_state(state: Mapping[str, Any] | None) -> bool:
    """Whether a context starting from `state` may be pooled: no state, or cookies only."""
    return not state or not any(origin.get("localStorage") for origin in state.get("origins") or ())


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
    def __init__(self, idle_per_key: int = IDLE_PER_KEY, idle_total: int = IDLE_TOTAL) -> None:
        self._idle: dict[Hashable, list[WarmContext]] = {}
        self._idle_per_key = idle_per_key
        self._idle_total = idle_total
        self.created = 0
        self.reused = 0
        self.leased = 0
        # Contexts being reset (or closed) after their task answered, per key; set whenever one is done.
        self._resetting: dict[Hashable, int] = {}
        self._reset_done = anyio.Event()
        # Those releases, held so they are not collected, and awaited at close.
        self._releasing: set[asyncio.Future[None]] = set()

    def status(self) -> dict[str, int]:
        """For `browserd status`: contexts waiting, in use, and how often one was made or reused."""
        idle = sum(len(contexts) for contexts in self._idle.values())
        return {"idle": idle, "leased": self.leased, "created": self.created, "reused": self.reused}

    async def lease(
        self, browser: Browser, key: Hashable, options: dict[str, Any], state: Mapping[str, Any] | None = None
    ) -> WarmContext:
        """An idle context of `key` on this browser given `state`'s cookies, else a new one with `options`
        starting from `state` (which `poolable_state` must accept)."""
        while True:
            idle = self._idle.get(key, [])
            while idle:
                warm = idle.pop()
                usable = warm.browser is browser and browser.is_connected() and not warm.page.is_closed()
                if usable and await _restore(warm, state):
                    warm.uses += 1
                    self.reused += 1
                    self.leased += 1
                    return warm
                await _close(warm)
            if not self._resetting.get(key):
                break
            # A context of this key is being reset: waiting for it costs far less than opening one more
            # (a renderer, a page, the task's setup), which the idle cap would then close again.
            await self._reset_done.wait()
        if state:
            options = {**options, "storage_state": state}
        context = await browser.new_context(**options)
        try:
            page = await context.new_page()
            cdp = await context.new_cdp_session(page)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await context.close()
            raise
        self.created += 1
        self.leased += 1
        return WarmContext(browser, context, page, key, cdp, uses=1)

    def release(self, warm: WarmContext, reusable: bool) -> None:
        """Back to the pool once reset, or closed, in the background: the task that used the context has
        its answer without waiting for the reset (a navigation and the storage calls); a lease of the same
        key meanwhile waits for it (see `lease`)."""
        self.leased -= 1
        self._resetting[warm.key] = self._resetting.get(warm.key, 0) + 1
        task = asyncio.ensure_future(self._release(warm, reusable))
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def _release(self, warm: WarmContext, reusable: bool) -> None:
        try:
            idle = self._idle.setdefault(warm.key, [])
            total = sum(len(contexts) for contexts in self._idle.values())
            room = len(idle) < self._idle_per_key and total < self._idle_total
            if reusable and room and await _reset(warm):
                idle.append(warm)
                return
            await _close(warm)
        finally:
            self._resetting[warm.key] -= 1
            done, self._reset_done = self._reset_done, anyio.Event()
            done.set()

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            if self._releasing:
                await asyncio.gather(*self._releasing, return_exceptions=True)
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
                await warm.page.evaluate(CLEAR_SESSION_STORAGE_JS)
            await warm.page.goto("about:blank")
            await warm.context.clear_cookies()
            for origin in warm.visited:
                await warm.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
            warm.visited.clear()
            return True
    except (PlaywrightError, TimeoutError) as exc:
        log.debug("a warm context could not be reset; closing it: %s", exc)
        return False


async def _restore(warm: WarmContext, state: Mapping[str, Any] | None) -> bool:
    """Give a reset context the cookies of the state its lease starts from; False: it cannot be used."""
    cookies = list((state or {}).get("cookies") or ())
    if not cookies:
        return True
    try:
        with anyio.fail_after(RESET_TIMEOUT_S):
            await warm.context.add_cookies(cookies)
        return True
    except (PlaywrightError, TimeoutError) as exc:
        log.debug("a warm context could not take its state's cookies; closing it: %s", exc)
        return False


async def _close(warm: WarmContext) -> None:
    with suppress(PlaywrightError):  # its browser is gone already
        await warm.context.close()
