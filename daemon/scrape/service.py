"""The scrape service: one page, one format, through a fresh headless context (reference/000)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from browserd.daemon.scrape.extract import Extraction, Link, extract, extract_links, page_metadata
from browserd.daemon.scrape.task import Format, LoadedPage, PageLoad, ScrapePageTask
from browserd.protocol.messages import TrustLevel

if TYPE_CHECKING:
    # Only a type here: services.py builds on scrape (through runs), so scrape must not import it back.
    from browserd.daemon.services import Services


@dataclass(frozen=True)
class ScrapeRequest:
    url: str
    format: Format = "markdown"
    only_main_content: bool = True
    wait_for_ms: int = 0
    profile_id: str = "master"
    include_tags: list[str] | None = None
    exclude_tags: list[str] | None = None
    timeout_ms: int | None = None
    mobile: bool = False
    headers: dict[str, str] | None = None
    # The calling session's trust level: the URL policy it loads under (remote: no private addresses).
    trust_level: TrustLevel = "local"


@dataclass
class ScrapeResult:
    format: Format
    page: LoadedPage
    metadata: dict[str, Any]
    markdown: str = ""
    html: str = ""
    links: list[Link] = field(default_factory=list)


async def context_options(
    services: Services, request: ScrapeRequest, storage_state: Mapping[str, Any] | None
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if storage_state is not None:
        options["storage_state"] = storage_state
    if request.mobile:
        options.update(await services.runtime.mobile_options())
    if request.headers:
        options["extra_http_headers"] = request.headers
    return options


async def load_page(
    services: Services, request: ScrapeRequest, storage_state: Mapping[str, Any] | None, export_state: bool
) -> LoadedPage:
    config = services.config.scrape
    load = PageLoad(
        url=request.url,
        format=request.format,
        wait_for_ms=request.wait_for_ms,
        timeout_ms=request.timeout_ms or config.timeout_ms,
        smart_wait_max_ms=config.smart_wait_max_ms,
        smart_wait_quiet_ms=config.smart_wait_quiet_ms,
    )
    await services.guards.policy.check_url(request.url, request.trust_level)
    async with services.guards.guarding(request.trust_level) as guard:
        task = ScrapePageTask(load, export_state=export_state, guard=guard)
        options = await context_options(services, request, storage_state) | (guard.context_options if guard else {})
        return await services.executor.run_in_context(task, **options)


async def render(request: ScrapeRequest, page: LoadedPage) -> ScrapeResult:
    """The format's payload and the page's metadata, computed off the event loop."""

    def work() -> ScrapeResult:
        result = ScrapeResult(request.format, page, {})
        if request.format in ("screenshot", "fullscreenshot"):
            return result
        if request.format == "links":
            result.links = extract_links(page.html, page.final_url)
            meta = page_metadata(page.html, page.final_url)
        else:
            extraction: Extraction = extract(
                page.html,
                page.final_url,
                only_main_content=request.only_main_content,
                include_tags=request.include_tags,
                exclude_tags=request.exclude_tags,
            )
            result.markdown = extraction.markdown
            result.html = extraction.html
            result.metadata["mainContentFound"] = extraction.main_content_found
            meta = extraction.metadata
        result.metadata.update(
            title=meta.title, description=meta.description, language=meta.language, canonicalUrl=meta.canonical_url
        )
        return result

    return await anyio.to_thread.run_sync(work)
