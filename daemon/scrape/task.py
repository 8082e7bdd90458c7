"""The browser part of a scrape: load the page in a fresh context and capture what the format needs.

Everything CPU-bound (extraction, markdown) happens after the context is closed, off the event loop.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import anyio
from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.errors import NavigationTimeout
from browserd.daemon.policy.refusals import UrlGuard
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.runtime.page_js import load_js
from browserd.daemon.scrape.resources import Blocking, ResourcePolicy
from browserd.daemon.scrape.smartwait import READINESS_JS, smart_wait
from browserd.daemon.sessions.navigation import navigate

if TYPE_CHECKING:
    from browserd.daemon.scrape.extract import Extraction

Format = Literal["markdown", "html", "links", "screenshot", "fullscreenshot"]
Render = Literal["auto", "always", "never"]
Via = Literal["fetch", "browser"]
VISUAL_FORMATS = ("screenshot", "fullscreenshot")


@dataclass(frozen=True)
class PageLoad:
    url: str
    format: Format
    wait_for_ms: int
    timeout_ms: int
    smart_wait_max_ms: int
    smart_wait_quiet_ms: int


@dataclass
class LoadedPage:
    final_url: str
    status: int | None
    title: str = ""
    html: str = ""
    screenshot: bytes = b""
    # What the context holds afterwards, for publishing a profile's login back (None: not asked).
    storage_state: dict[str, object] | None = None
    timed_out: bool = False
    via: Via = "browser"
    # The fast path extracts to decide whether its HTML is enough: that extraction, for render() to reuse.
    extraction: Extraction | None = None


@dataclass
class ScrapePageTask:
    """A BrowserTask (runtime/executor.py) that loads one page and captures it."""

    load: PageLoad
    # Whose URL policy the load runs under (checked before the page loads).
    trust: TrustPolicy
    export_state: bool = False
    # The URL guard the context's traffic goes through (daemon/policy/proxy.py), to name a refusal.
    guard: UrlGuard | None = None
    # What the page may not load (daemon/scrape/resources.py); None: everything.
    resources: ResourcePolicy | None = None
    # On a pooled context (daemon/runtime/contexts.py), which starts from cookies only.
    pooled: bool = False

    async def run(self, context: BrowserContext) -> LoadedPage:
        page = await context.new_page()
        await self.prepare(context, page)
        return await self.load_in(context, page)

    async def prepare(self, context: BrowserContext, page: Page) -> Blocking | None:
        """What a context needs once, before its first navigation: the readiness counters, the resource policy."""
        await context.add_init_script(script=READINESS_JS)
        if self.resources is None:
            return None
        visual = self.load.format in VISUAL_FORMATS
        return await self.resources.install(context, page, self.load.url, visual=visual)

    async def load_in(self, context: BrowserContext, page: Page) -> LoadedPage:
        load = self.load
        timed_out = False
        reply = None
        try:
            navigation = await navigate(
                page, load.url, self.guard, self.trust, wait_until="domcontentloaded", timeout=load.timeout_ms
            )
            reply = navigation.reply
        except NavigationTimeout:
            if page.url in ("", "about:blank"):
                raise
            timed_out = True  # something loaded: scrape what is there rather than nothing
        # waitFor and smartWait are exclusive (S0-69): an explicit wait means exactly that wait.
        settled = True
        if load.wait_for_ms > 0:
            await anyio.sleep(load.wait_for_ms / 1000)
        else:
            settled = await smart_wait(page, load.smart_wait_max_ms, load.smart_wait_quiet_ms)
        result = LoadedPage(
            final_url=page.url,
            status=reply.status if reply is not None else None,
            timed_out=timed_out or not settled,
        )
        try:
            # The title and the capture are independent round trips: asked together.
            if load.format in VISUAL_FORMATS:
                shot = page.screenshot(full_page=load.format == "fullscreenshot", type="png")
                result.title, result.screenshot = await asyncio.gather(page.title(), shot)
            else:
                result.title, result.html = await asyncio.gather(page.title(), page.content())
        except PlaywrightTimeout as exc:
            raise NavigationTimeout(f"capturing {load.url} timed out", url=load.url) from exc
        if self.export_state:
            try:
                if self.pooled:
                    result.storage_state = await _pooled_state(context, page)
                else:
                    result.storage_state = dict(await context.storage_state())
            except PlaywrightError:
                result.storage_state = None
        return result


async def _pooled_state(context: BrowserContext, page: Page) -> dict[str, object]:
    """What `context.storage_state()` answers for a pooled context, without its cost there.

    Playwright's version visits, in a page of its own, every origin the context ever showed that no page
    shows now; a warm context keeps that list from all its earlier uses, so that grows page after page.
    A pooled context started from cookies alone and its reset cleared every earlier origin's storage,
    so only the page's own origin can hold local storage."""
    entries, cookies = await asyncio.gather(page.evaluate(_LOCAL_STORAGE_JS), context.cookies())
    origins = []
    if entries and entries[1]:
        origins.append({"origin": entries[0], "localStorage": [{"name": k, "value": v} for k, v in entries[1]]})
    return {"cookies": cookies, "origins": origins}


_LOCAL_STORAGE_JS = load_js("browserd.daemon.scrape", "local_storage.js")
