"""`batch_extract_pages` 1.0.0: many pages through the scrape pipeline, a few at a time (S1-13, D-41).

Pages load with the cookies of `profileId`, else of the run's session when it has a window (a
sessionId the caller passed), through the scrape service (fast path or browser). One step per URL.
Up to `concurrency` pages load at once in a sliding window (a new one starts as soon as one ends,
S1-76), and as many again may be extracting meanwhile (in worker threads), so extraction never holds
a load back; each load goes through the TaskExecutor, so the worker limit and BUSY apply as for `scrape`. A page whose
content is larger than maxArtifactInlineBytes is stored as an artifact and its item names it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
import msgspec

from browserd.daemon.config import Config, RunsConfig
from browserd.daemon.errors import BrowserdError, ExecutionError, InvalidParameter
from browserd.daemon.llm.schema import check_schema
from browserd.daemon.llm.structured import JsonAnswer
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.runs.templates.template_interface import Inputs, Template
from browserd.daemon.scrape.document import parse
from browserd.daemon.scrape.extract import extract_links
from browserd.daemon.scrape.links import check_http_url
from browserd.daemon.scrape.scrape_service import ScrapeRequest, load_page, render
from browserd.daemon.scrape.task import Render

MAX_URLS = 1000
MAX_CONCURRENCY = 5

# json: the model ([llm]) reads each page's main content into the shape `schema` gives, as `prompt` asks.
BatchFormat = Literal["markdown", "text", "html", "json"]


class PageLoadInputs(Inputs, kw_only=True):
    """How templates that scrape pages load them (daemon/scrape/scrape_service.py), as `scrape` does."""

    only_main_content: Annotated[bool, msgspec.Meta(description="Drop navigation, footers, ads.")] = True
    page_timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=300_000, description="Load timeout per page.")] | None = None
    render: Annotated[
        Render, msgspec.Meta(description="auto: plain HTTP when the HTML holds the content; always: the browser.")
    ] = "auto"
    block_resources: (
        Annotated[bool, msgspec.Meta(description="Skip images, media, fonts, ads, trackers (default [scrape]).")] | None
    ) = None


class PageJsonInputs(PageLoadInputs, kw_only=True):
    """Pages loaded as `scrape` loads them, and JSON per page (format json): what the model extracts from each
    page's main content."""

    schema: Annotated[dict[str, Any], msgspec.Meta(description="format json: JSON Schema of each answer.")] | None = (
        None
    )
    prompt: Annotated[str, msgspec.Meta(description="format json: what to extract from each page.")] | None = None

    def check_json(self, wanted: bool) -> None:
        if not wanted and (self.schema is not None or self.prompt is not None):
            raise InvalidParameter("schema and prompt go with format json", field="inputs.format")
        if wanted:
            check_schema(self.schema, "inputs.schema")

    async def page_json(self, ctx: RunContext, markdown: str, url: str) -> JsonAnswer:
        # The caller's client's model (sampling) or the endpoint: the run's own session has no client.
        model = ctx.services.llm.model(ctx.record.owner_session_id)
        return await ctx.services.llm.page_json(model, markdown, url, self.prompt, self.schema)


class BatchInputs(PageJsonInputs, kw_only=True):
    urls: Annotated[list[str], msgspec.Meta(min_length=1, max_length=MAX_URLS, description="http(s) URLs.")]
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=MAX_CONCURRENCY, description="Pages loading at once.")] = 3
    format: BatchFormat = "markdown"
    profile_id: (
        Annotated[str, msgspec.Meta(pattern=r"^[a-zA-Z0-9._-]{1,64}$", description="Login profile to use.")] | None
    ) = None


class PageItem(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    url: str
    success: bool
    final_url: str | None = None
    status: int | None = None
    title: str | None = None
    markdown: str | None = None
    text: str | None = None
    html: str | None = None
    # format json: the model's answer, and which model and how many tokens it took.
    json: Any = None
    llm: dict[str, Any] | None = None
    links_count: int | None = None
    # Which path served the page: "fetch" (plain HTTP) or "browser".
    via: str | None = None
    # The content was larger than maxArtifactInlineBytes: it is in this artifact instead.
    content_artifact_id: str | None = None
    content_bytes: int | None = None
    error: str | None = None
    error_code: str | None = None


class Summary(msgspec.Struct, rename="camel"):
    total: int
    succeeded: int
    failed: int


class BatchResult(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    summary: Summary
    items: list[PageItem]
    # The result was too large to inline: `items` is cut and the whole result is this artifact (D-40).
    truncated: bool = False
    result_artifact_id: str | None = None


_WHITESPACE = re.compile(r"[ \t\r\f\v]+")


def plain_text(html: str) -> str:
    if not html.strip():
        return ""
    # parse(): the scrape pipeline's reading of HTML, which control characters and lone surrogates cannot cut short.
    text = parse(html).text_content()
    lines = (_WHITESPACE.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


class BatchExtractPages(Template[BatchInputs]):
    template_id = "batch_extract_pages"
    version = "1.0.0"
    name = "Batch page extraction"
    description = (
        "Load many pages and extract each one's title and markdown, text or html; or JSON (format json: the "
        "configured model reads each page as `prompt` asks, into `schema`)."
    )
    inputs = BatchInputs
    outputs = BatchResult
    limits = {"maxUrls": MAX_URLS, "maxConcurrency": MAX_CONCURRENCY}  # noqa: RUF012
    supports_partial_success = True

    def check(self, inputs: BatchInputs, config: Config) -> None:
        for index, url in enumerate(inputs.urls):
            check_http_url(url, f"inputs.urls[{index}]")
        inputs.check_json(inputs.format == "json")

    def check_trust(self, inputs: BatchInputs, trust: TrustPolicy) -> None:
        if inputs.profile_id is not None:
            trust.check_profile(inputs.profile_id, "extract pages with")

    def default_mode(self, inputs: BatchInputs, config: RunsConfig, timeout_ms: int | None) -> Literal["sync", "async"]:
        # A few pages finish well within a client's request timeout, unless the caller expects a long run.
        few = len(inputs.urls) <= config.auto_sync_max_urls
        return "sync" if few and (timeout_ms or 0) <= config.auto_sync_max_timeout_ms else "async"

    def plan(self, inputs: BatchInputs) -> list[str]:
        return [f"extract {url}" for url in inputs.urls]

    async def run(self, ctx: RunContext, inputs: BatchInputs) -> None:
        state: Any = None
        window = ctx.session.windows.get(ctx.session.active_window_id or "")
        if inputs.profile_id is not None:
            ctx.trust.check_profile(inputs.profile_id, "extract pages with")
            state = (await ctx.services.profiles.load(inputs.profile_id)).storage_state()
        elif window is not None:
            if window.profile is not None:
                ctx.trust.check_profile(window.profile.profile_id, "extract pages with the cookies of")
            # A session given by sessionId (one login_keep_session logged in, say): its cookies go along.
            state = await window.context.storage_state()
        queue = iter(range(len(inputs.urls)))
        loading = anyio.Semaphore(inputs.concurrency)

        async def worker() -> None:
            for index in queue:  # shared by the workers: each takes the next URL when it is free
                if ctx.cancel_requested:
                    return
                await self._page(ctx, inputs, index, state, loading)

        async with anyio.create_task_group() as workers:
            # Twice the loads: half the workers may be extracting while the others load.
            for _ in range(min(2 * inputs.concurrency, len(inputs.urls))):
                workers.start_soon(worker)

    async def _page(
        self, ctx: RunContext, inputs: BatchInputs, index: int, state: Any, loading: anyio.Semaphore
    ) -> None:
        url = inputs.urls[index]
        item = PageItem(url=url, success=False)
        # The step starts when its page may load, so steps waiting behind other loads stay pending.
        await loading.acquire()
        if ctx.cancel_requested:  # canceled while it waited: its step stays pending, to be skipped
            loading.release()
            return
        held = True

        def loaded() -> None:
            nonlocal held
            if held:
                held = False
                loading.release()

        try:
            async with ctx.step(index):
                await self._extract(ctx, inputs, url, state, item, loaded)
        except BrowserdError as exc:
            item.success, item.error, item.error_code = False, exc.message, exc.code
        else:
            item.success = True
        finally:
            loaded()
        await ctx.add_item(msgspec.to_builtins(item), index)

    async def _extract(
        self, ctx: RunContext, inputs: BatchInputs, url: str, state: Any, item: PageItem, loaded: Callable[[], None]
    ) -> None:
        """Load and extract one page; `loaded()` once the page is in, so the next load starts meanwhile."""
        request = ScrapeRequest(
            url=url,
            format="markdown",
            only_main_content=inputs.only_main_content,
            profile_id=inputs.profile_id or "",
            timeout_ms=inputs.page_timeout_ms,
            trust_level=ctx.trust.level,
            render=inputs.render,
            block_resources=inputs.block_resources,
        )
        page = await load_page(ctx.services, request, state, export_state=False)
        loaded()
        item.final_url, item.status, item.title, item.via = page.final_url, page.status, page.title, page.via
        if page.status is not None and page.status >= 400:
            raise ExecutionError(f"{url} answered HTTP {page.status}", hint="Check the URL.", status=page.status)
        limiter = ctx.services.scrape.extraction
        result = await render(request, page, limiter)

        def finish() -> tuple[int, str]:
            links = len(extract_links(page.html, page.final_url))
            if inputs.format in ("markdown", "json"):
                return links, result.markdown
            if inputs.format == "text":
                return links, plain_text(result.html)
            return links, result.html if inputs.only_main_content else page.html

        item.links_count, content = await anyio.to_thread.run_sync(finish, limiter=limiter)
        if inputs.format == "json":
            answer = await inputs.page_json(ctx, content, page.final_url)
            item.json, item.llm = answer.value, answer.info()
            return
        encoded = content.encode()
        if len(encoded) > ctx.services.config.runs.max_artifact_inline_bytes:
            mime = {"markdown": "text/markdown", "text": "text/plain", "html": "text/html"}[inputs.format]
            artifact = await ctx.add_artifact(encoded, mime, f"{inputs.format} of {url}")
            item.content_artifact_id, item.content_bytes = artifact.artifact_id, len(encoded)
        else:
            setattr(item, inputs.format, content)
