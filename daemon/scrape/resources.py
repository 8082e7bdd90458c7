"""The resource policy of scrapes and runs: what a page may load when all we keep is its text.

Markdown needs the document, its scripts (they may build the content), styles (hidden text is told
apart by them) and the requests its scripts make. It does not need images, media or fonts, nor ads
and trackers, which are often what holds a page's `load` event back. Every request of a scrape's page
passes `ResourcePolicy.blocks`: one of those types, or a URL that EasyList / EasyPrivacy (through
braveblock, Brave's adblock-rust engine, which bundles both lists) or the operator's own list files
match, is failed inside the browser, so it never leaves the machine.

The policy sits at the CDP level (`Fetch.enable` on the page's CDP session and on each of its frames
that Chromium renders in another process, daemon/scrape/interception.py), not on Playwright's
`context.route`: a route sends every request through Playwright's route machinery (a Route object, a
client stack trace, an abort or fallback call) and switches the HTTP cache off. Measured on 10 real
article pages (tests/bench/scrape.py), that cost about 200 ms of each page's navigation; the CDP
handler answers a paused request with one command. The page's own document is let through by frame,
before any filter runs.

Frames' documents are blocked too unless the scrape is a screenshot: their text never reaches the
markdown. A scrape's page opens no popups and no shared workers, and service workers are not
registered in a scrape's context (service_workers="block", set by the scrape service): see
interception.py for why.

Screenshots keep images, media, fonts and frames (they are what a screenshot shows) but still drop ads.
Interactive sessions never get this policy; browser_route blocks there on request.

Costs, measured on this machine: building the engine from both lists about 1.4 s and 60 MB (once per
daemon, off the event loop, on the first scrape that blocks); matching one URL about 6 µs.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import anyio
from playwright.async_api import Browser, BrowserContext, Page

from browserd.daemon.scrape.interception import CONFINE_JS, PopupGuard, intercept

log = logging.getLogger(__name__)

# The resource types (CDP's, lower-cased) that markdown never needs.
UNNEEDED_TYPES = frozenset({"image", "media", "font"})
# CDP's resource types, lower-cased -> the request types of the ABP filter syntax.
_FILTER_TYPES = {
    "document": "document",
    "stylesheet": "stylesheet",
    "image": "image",
    "media": "media",
    "font": "font",
    "script": "script",
    "xhr": "xmlhttprequest",
    "fetch": "xmlhttprequest",
    "websocket": "websocket",
    "ping": "ping",
}


class _Engine(Protocol):
    def check_network_urls(self, url: str, source_url: str, request_type: str) -> bool: ...


def _build_engine(list_files: Sequence[str]) -> _Engine:
    import braveblock  # type: ignore[import-untyped]

    rules: list[str] = []
    for name in list_files:
        try:
            rules.extend(Path(name).expanduser().read_text(errors="replace").splitlines())
        except OSError as exc:  # a missing list must not stop scraping: the bundled lists still apply
            log.warning("[scrape] block_lists: cannot read %s: %s", name, exc)
    engine: _Engine = braveblock.Adblocker(rules=rules)
    return engine


class ResourcePolicy:
    """Decides per request; the filter engine is built once, on first use, in a worker thread."""

    def __init__(self, list_files: Sequence[str] = ()) -> None:
        self._list_files = tuple(list_files)
        self._engine: _Engine | None = None
        self._lock = anyio.Lock()
        # One popup guard per browser (a relaunched Chromium is another Browser).
        self._guards: weakref.WeakKeyDictionary[Browser, PopupGuard] = weakref.WeakKeyDictionary()
        self.blocked = 0

    async def engine(self) -> _Engine:
        async with self._lock:
            if self._engine is None:
                self._engine = await anyio.to_thread.run_sync(_build_engine, self._list_files)
            return self._engine

    def blocks(self, engine: _Engine, url: str, page_url: str, resource_type: str, *, visual: bool) -> bool:
        """Whether a request (not the page's own document: the caller asked for that) is dropped."""
        if not visual and resource_type in UNNEEDED_TYPES:
            return True
        if not url.startswith(("http:", "https:")):
            return False
        return engine.check_network_urls(url, page_url or url, _FILTER_TYPES.get(resource_type, "other"))

    def blocks_request(self, engine: _Engine, blocking: Blocking, kind: str, url: str, *, main: bool) -> bool:
        """Whether a paused request of a page under `blocking` is dropped; `main`: its frame is the page's own."""
        if kind == "document":
            if main:
                return False  # the page's own document (and each hop of its redirects): the caller asked for it
            if not blocking.visual:
                # A frame's document, which markdown never reads (the cleaner drops iframes): kept out, so
                # none of its subresources, nor a renderer for a cross-site one, ever exists.
                return True
        return self.blocks(engine, url, blocking.page_url, kind, visual=blocking.visual)

    async def install(self, context: BrowserContext, page: Page, page_url: str, *, visual: bool = False) -> Blocking:
        """Apply the policy to `page`, its frames in other renderers and its popups (daemon/scrape/interception.py);
        what it blocks is counted in the result. Meant for a context with that one page."""
        engine = await self.engine()
        blocking = Blocking(page_url, visual)

        def decide(kind: str, url: str, main: bool) -> bool:
            if not self.blocks_request(engine, blocking, kind, url, main=main):
                return False
            blocking.blocked += 1
            self.blocked += 1
            return True

        cdp = await context.new_cdp_session(page)
        await intercept(cdp, decide)
        await context.add_init_script(script=CONFINE_JS)
        if context.browser is not None:
            guard = await self._popup_guard(context.browser)
            target = (await cdp.send("Target.getTargetInfo"))["targetInfo"]
            guard.guard(target["browserContextId"], target["targetId"])
            context.on("close", lambda _: guard.release(target["browserContextId"]))
        return blocking

    async def _popup_guard(self, browser: Browser) -> PopupGuard:
        """The browser's guard, started on the first scrape that blocks."""
        async with self._lock:
            guard = self._guards.get(browser)
            if guard is None:
                guard = self._guards[browser] = await PopupGuard.start(browser)
            return guard


@dataclass
class Blocking:
    """The policy as installed in one context; a warm context's next page updates `page_url`."""

    page_url: str
    visual: bool
    blocked: int = 0
