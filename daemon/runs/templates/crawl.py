"""`crawl` 1.0.0: a site's pages from a start URL, each page's markdown an artifact (issue 6 item 4).

The crawl itself is daemon/scrape/crawl.py (scope, robots.txt, de-duplication, concurrency through the
TaskExecutor). This template turns each delivered page into a step, an item and a markdown artifact,
stops between pages once the run is canceled, and puts the crawl's own figures in `result.crawl`.
Async unless the caller asks for sync: a crawl is long by nature.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import msgspec

from browserd.daemon.config import Config, CrawlConfig, RunsConfig
from browserd.daemon.errors import BrowserdError, InvalidParameter
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.runs.templates.batch_extract import PageJsonInputs, Summary
from browserd.daemon.runs.templates.template_interface import Template
from browserd.daemon.scrape.crawl import Crawler, CrawlPage, CrawlRequest, StopReason, compile_patterns
from browserd.daemon.scrape.links import check_http_url
from browserd.daemon.scrape.mapping import SitemapMode

# Bounds of the schema; the configured ones ([crawl] max_limit, max_concurrency) are checked when a run is asked for.
SCHEMA_MAX_LIMIT = 100_000
SCHEMA_MAX_CONCURRENCY = 20


class CrawlInputs(PageJsonInputs, kw_only=True):
    url: Annotated[str, msgspec.Meta(description="http(s) start URL; its site is what is crawled.")]
    limit: (
        Annotated[int, msgspec.Meta(ge=1, le=SCHEMA_MAX_LIMIT, description="Most pages (default [crawl]).")] | None
    ) = None
    max_depth: Annotated[int, msgspec.Meta(ge=0, le=1000, description="Links from the start page (0: it only).")] | (
        None
    ) = None
    include_paths: Annotated[
        list[str], msgspec.Meta(description="Regexes searched in path+query; follow only matching links.")
    ] = msgspec.field(default_factory=list)
    exclude_paths: Annotated[
        list[str], msgspec.Meta(description="Regexes searched in path+query; never follow matching links.")
    ] = msgspec.field(default_factory=list)
    allow_subdomains: Annotated[bool, msgspec.Meta(description="Also follow hosts under the start host.")] = False
    allow_external_links: Annotated[bool, msgspec.Meta(description="Follow links to any host.")] = False
    ignore_robots_txt: Annotated[bool, msgspec.Meta(description="Load pages robots.txt disallows.")] = False
    sitemap: Annotated[
        SitemapMode,
        msgspec.Meta(description="include: sitemap pages join the links; only: no links followed; skip."),
    ] = "include"
    sort_query: Annotated[bool, msgspec.Meta(description="?a=1&b=2 and ?b=2&a=1 are one page.")] = False
    concurrency: (
        Annotated[int, msgspec.Meta(ge=1, le=SCHEMA_MAX_CONCURRENCY, description="Pages loading at once.")] | None
    ) = None
    format: Annotated[
        Literal["markdown", "json"],
        msgspec.Meta(description="json: also the model's JSON of each page, per `prompt` and `schema` ([llm])."),
    ] = "markdown"


class CrawlItem(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    url: str
    success: bool
    depth: int
    final_url: str | None = None
    status: int | None = None
    title: str | None = None
    canonical_url: str | None = None
    links_count: int | None = None
    # Which path served the page: "fetch" (plain HTTP) or "browser".
    via: str | None = None
    # The page's markdown: get_artifact with this id.
    markdown_artifact_id: str | None = None
    markdown_bytes: int | None = None
    # format json: the model's answer for this page, and which model and how many tokens it took.
    json: Any = None
    llm: dict[str, Any] | None = None
    error: str | None = None
    error_code: str | None = None


class CrawlInfo(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    start_url: str
    stop_reason: StopReason
    pages: int
    duplicates: int
    skipped_by_robots: int
    discovered: int
    from_sitemap: int = 0
    limit: int
    max_depth: int
    crawl_delay_s: float | None = None


class CrawlResult(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    summary: Summary
    items: list[CrawlItem]
    crawl: CrawlInfo
    truncated: bool = False
    result_artifact_id: str | None = None


def crawl_request(inputs: CrawlInputs, config: CrawlConfig) -> CrawlRequest:
    """The engine's request: defaults from [crawl], and INVALID_PARAMETER beyond its maxima or for a bad URL."""
    check_http_url(inputs.url)
    limit = inputs.limit or config.default_limit
    if limit > config.max_limit:
        raise InvalidParameter(
            f"limit {limit} is above the maximum of {config.max_limit} pages",
            hint=f"Pass limit <= {config.max_limit} (or raise [crawl] max_limit).",
            field="limit",
        )
    concurrency = inputs.concurrency or config.default_concurrency
    if concurrency > config.max_concurrency:
        raise InvalidParameter(
            f"concurrency {concurrency} is above the maximum of {config.max_concurrency}",
            hint=f"Pass concurrency <= {config.max_concurrency}.",
            field="concurrency",
        )
    compile_patterns(inputs.include_paths, "includePaths")
    compile_patterns(inputs.exclude_paths, "excludePaths")
    return CrawlRequest(
        url=inputs.url,
        limit=limit,
        max_depth=config.default_max_depth if inputs.max_depth is None else inputs.max_depth,
        include_paths=tuple(inputs.include_paths),
        exclude_paths=tuple(inputs.exclude_paths),
        allow_subdomains=inputs.allow_subdomains,
        allow_external=inputs.allow_external_links,
        ignore_robots=inputs.ignore_robots_txt,
        sitemap=inputs.sitemap,
        sort_query=inputs.sort_query,
        concurrency=concurrency,
        only_main_content=inputs.only_main_content,
        page_timeout_ms=inputs.page_timeout_ms,
        render=inputs.render,
        block_resources=inputs.block_resources,
        max_crawl_delay_s=config.max_crawl_delay_s,
    )


class Crawl(Template[CrawlInputs]):
    template_id = "crawl"
    version = "1.0.0"
    name = "Site crawl"
    description = (
        "Crawl a site from a start URL (same site, robots.txt, canonical de-duplication); each page's "
        "markdown is an artifact."
    )
    inputs = CrawlInputs
    outputs = CrawlResult
    supports_partial_success = True

    def limits_under(self, config: Config) -> dict[str, int]:
        return {"maxLimit": config.crawl.max_limit, "maxConcurrency": config.crawl.max_concurrency}

    def check(self, inputs: CrawlInputs, config: Config) -> None:
        crawl_request(inputs, config.crawl)
        inputs.check_json(inputs.format == "json")

    def default_mode(self, inputs: CrawlInputs, config: RunsConfig, timeout_ms: int | None) -> Literal["sync", "async"]:
        return "async"

    async def run(self, ctx: RunContext, inputs: CrawlInputs) -> None:
        request = crawl_request(inputs, ctx.services.config.crawl)

        def publish() -> None:
            # Kept current page by page, so a run that times out still says how far the crawl got.
            summary = crawler.summary
            info = CrawlInfo(
                start_url=request.url,
                stop_reason=summary.stop_reason,
                pages=summary.pages,
                duplicates=summary.duplicates,
                skipped_by_robots=summary.skipped_by_robots,
                discovered=summary.discovered,
                from_sitemap=summary.from_sitemap,
                limit=request.limit,
                max_depth=request.max_depth,
                crawl_delay_s=summary.crawl_delay_s,
            )
            ctx.set_output(crawl=msgspec.to_builtins(info))

        async def on_page(page: CrawlPage) -> None:
            if ctx.cancel_requested:
                return  # loaded after the cancel: the run ends canceled with the pages before it
            await self._record(ctx, inputs, page)
            publish()
            await ctx.progress(f"{crawler.summary.pages} page(s), {crawler.summary.discovered} found")

        request = dataclasses.replace(request, trust_level=ctx.trust.level)
        crawler = Crawler(ctx.services, request, on_page, should_stop=lambda: ctx.cancel_requested)
        try:
            await crawler.run()
        finally:
            # A cancel that comes while a page is being recorded ends the crawl from that page's step, by
            # raising: the result still says where the crawl got, and why it stopped.
            if ctx.cancel_requested and crawler.summary.stop_reason == "running":
                crawler.summary.stop_reason = "stopped"
            publish()
        ctx.check_cancelled()

    async def _record(self, ctx: RunContext, inputs: CrawlInputs, page: CrawlPage) -> None:
        item = CrawlItem(
            url=page.url,
            success=page.ok,
            depth=page.depth,
            final_url=page.final_url,
            status=page.status,
            title=page.title,
            canonical_url=page.canonical_url,
            links_count=page.links_count if page.ok else None,
            via=page.via,
            error=page.error,
            error_code=page.error_code,
        )
        if page.markdown:
            encoded = page.markdown.encode()
            artifact = await ctx.add_artifact(encoded, "text/markdown", f"markdown of {page.final_url or page.url}")
            item.markdown_artifact_id, item.markdown_bytes = artifact.artifact_id, len(encoded)
        index = await ctx.add_step(f"page {page.url}")
        try:
            async with ctx.step(index):
                if page.failure is not None:
                    raise page.failure
                if inputs.format == "json":
                    answer = await inputs.page_json(ctx, page.markdown, page.final_url or page.url)
                    item.json, item.llm = answer.value, answer.info()
        except BrowserdError as exc:
            # The step records it; the crawl goes on. A page the model could not answer for is a failed item.
            if page.failure is None:
                item.success, item.error, item.error_code = False, exc.message, exc.code
        await ctx.add_item(_builtins(item))


def _builtins(item: CrawlItem) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(item)
    return data
