"""The resource policy of scrapes and runs: what a page may load when all we keep is its text.

Markdown needs the document, its scripts (they may build the content), styles (hidden text is told
apart by them) and the requests its scripts make. It does not need images, media or fonts, nor ads
and trackers, which are often what holds a page's `load` event back. Every request of a scrape's page
passes `ResourcePolicy.blocks`: one of those types, or a URL that EasyList / EasyPrivacy (through
braveblock, Brave's adblock-rust engine, which bundles both lists) or the operator's own list files
match, is failed inside the browser, so it never leaves the machine.

The policy sits at the CDP level (`Fetch.enable` on a CDP session of each page of the context), not
on Playwright's `context.route`: a route sends every request through Playwright's route machinery
(a Route object, a client stack trace, an abort or fallback call) and switches the HTTP cache off.
Measured on 10 real article pages (tests/bench/scrape.py), that cost about 200 ms of each page's
navigation; the CDP handler answers a paused request with one command. The page's own document is
let through by frame, before any filter runs.

Frames' documents are blocked too unless the scrape is a screenshot: their text never reaches the
markdown. Service workers are not registered in a scrape's context (service_workers="block", set by
the scrape service): their requests would bypass the page's interception.

Screenshots keep images, media, fonts and frames (they are what a screenshot shows) but still drop ads.
Interactive sessions never get this policy; browser_route blocks there on request.

Costs, measured on this machine: building the engine from both lists about 1.4 s and 60 MB (once per
daemon, off the event loop, on the first scrape that blocks); matching one URL about 6 µs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

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
                # A frame's document, which markdown never reads (the cleaner drops iframes): kept out, its
                # subresources never exist, which a cross-site frame would load from a renderer of its own
                # that this page's interception does not see.
                return True
        return self.blocks(engine, url, blocking.page_url, kind, visual=blocking.visual)

    async def install(self, context: BrowserContext, page: Page, page_url: str, *, visual: bool = False) -> Blocking:
        """Apply the policy to `page` and every later page of `context`; what it blocks is counted in the result."""
        engine = await self.engine()
        blocking = Blocking(page_url, visual)

        async def attach(target: Page) -> None:
            cdp = await context.new_cdp_session(target)
            main_frame = (await cdp.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]

            async def paused(event: dict[str, Any]) -> None:
                kind = _kind(event)
                url = event["request"]["url"]
                try:
                    if self.blocks_request(engine, blocking, kind, url, main=event.get("frameId") == main_frame):
                        blocking.blocked += 1
                        self.blocked += 1
                        await cdp.send(
                            "Fetch.failRequest", {"requestId": event["requestId"], "errorReason": "BlockedByClient"}
                        )
                    else:
                        await cdp.send("Fetch.continueRequest", {"requestId": event["requestId"]})
                except PlaywrightError:
                    pass  # the page or context closed while the request was in flight

            cdp.on("Fetch.requestPaused", paused)
            await cdp.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})

        def on_page(opened: Page) -> None:
            # A popup's first requests may pass before this attaches; its text is not what a scrape reads.
            task = asyncio.ensure_future(attach(opened))
            blocking.attaching.add(task)
            task.add_done_callback(_settle(blocking.attaching))

        await attach(page)
        context.on("page", on_page)
        return blocking


def _kind(event: dict[str, Any]) -> str:
    """The request's resource type; the browser's own icon fetches (type Other) count as the images they are."""
    kind = str(event.get("resourceType", "other")).lower()
    if kind == "other":
        headers = event["request"].get("headers") or {}
        accept = next((str(v) for k, v in headers.items() if k.lower() == "accept"), "")
        if accept.startswith("image/"):
            return "image"
    return kind


def _settle(tasks: set[asyncio.Future[None]]) -> Callable[[asyncio.Future[None]], None]:
    def done(task: asyncio.Future[None]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("blocking resources on a new page failed: %r", task.exception())

    return done


@dataclass
class Blocking:
    """The policy as installed in one context; a warm context's next page updates `page_url`."""

    page_url: str
    visual: bool
    blocked: int = 0
    # Attachments to the context's later pages still under way (held so they are not collected).
    attaching: set[asyncio.Future[None]] = field(default_factory=set)
