"""Scrape tools: one page in one format (`scrape`), a site's URLs (`map`), and a site's pages (`crawl`)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import msgspec

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.llm.schema import check_schema
from browserd.daemon.llm.structured import extract_json
from browserd.daemon.profiles.publisher import StateSource
from browserd.daemon.runs.run_records import RunMode
from browserd.daemon.runs.templates.crawl import CrawlInputs, crawl_request
from browserd.daemon.runtime.images import image_size
from browserd.daemon.scrape.links import check_http_url
from browserd.daemon.scrape.mapping import MapRequest, MapTask, SitemapMode
from browserd.daemon.scrape.scrape_service import ScrapeRequest, load_page, render
from browserd.daemon.scrape.selectors import check_selectors
from browserd.daemon.scrape.task import Format, Render
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.task_runs import RunOptions, RunTemplateParams, TaskRun, run_template
from browserd.daemon.tools.tool_registry import Params, Tool, tool

MAX_WAIT_FOR_MS = 60_000
# json: the page's main content read by the model ([llm]) into the shape `schema` gives, as `prompt` asks.
ScrapeFormat = Literal[Format, "json"]
JsonSchema = Annotated[
    dict[str, Any], msgspec.Meta(description="format json: a JSON Schema the answer must match (checked).")
]
ExtractPrompt = Annotated[str, msgspec.Meta(description="format json: what to extract, in words.")]


class ScrapeParams(Params, kw_only=True):
    url: Annotated[str, msgspec.Meta(description="http(s) URL of the page.")]
    format: ScrapeFormat = "markdown"
    schema: JsonSchema | None = None
    prompt: ExtractPrompt | None = None
    only_main_content: Annotated[bool, msgspec.Meta(description="Drop navigation, footers, ads (default true).")] | (
        None
    ) = None
    wait_for: Annotated[
        int, msgspec.Meta(ge=0, le=MAX_WAIT_FOR_MS, description="Wait exactly this many ms; 0: wait smartly.")
    ] = 0
    profile_id: (
        Annotated[
            str, msgspec.Meta(pattern=r"^[a-zA-Z0-9._-]{1,64}$", description="Login profile whose cookies to use.")
        ]
        | None
    ) = None
    include_tags: Annotated[list[str], msgspec.Meta(description="CSS selectors: keep only these parts.")] | None = None
    exclude_tags: Annotated[list[str], msgspec.Meta(description="CSS selectors: remove these parts.")] | None = None
    timeout: Annotated[int, msgspec.Meta(ge=1, le=300_000, description="Page load timeout in ms.")] | None = None
    mobile: bool = False
    headers: Annotated[dict[str, str], msgspec.Meta(description="Extra request headers.")] | None = None
    render: Annotated[
        Render,
        msgspec.Meta(
            description="auto: plain HTTP when the HTML holds the content, else the browser; always: the browser; "
            "never: plain HTTP only."
        ),
    ] = "auto"
    block_resources: (
        Annotated[bool, msgspec.Meta(description="Skip images, media, fonts, ads, trackers (default [scrape]).")] | None
    ) = None
    proxy: Annotated[str, msgspec.Meta(description="Proxy server for this page, e.g. http://host:3128.")] | None = None


class MapParams(Params, kw_only=True):
    url: Annotated[str, msgspec.Meta(description="http(s) URL of the site (any page of it).")]
    search: Annotated[str, msgspec.Meta(description="Keep URLs matching these words, best first.")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=5000)] = 100
    sitemap: SitemapMode = "include"
    same_site: Annotated[bool, msgspec.Meta(description="Only URLs of the same site (subdomains too).")] = True


class CrawlParams(CrawlInputs, kw_only=True):
    """The crawl template's inputs, plus how to run it."""

    mode: Annotated[RunMode, msgspec.Meta(description="async (default): answer with a runId at once; sync: wait.")] = (
        "async"
    )
    timeout_ms: Annotated[int, msgspec.Meta(ge=1, description="Deadline of the whole crawl, in ms.")] | None = None


@tool(
    "scrape",
    "scrape",
    "A page as markdown, html, links or a screenshot: read over plain HTTP when its HTML holds the content, "
    "else rendered by a real browser (`via` says which; `render` chooses). format json: the configured model "
    "([llm]) reads the main content and answers JSON matching `schema`, as `prompt` asks.",
    ScrapeParams,
    read_only=True,
)
async def scrape(ctx: ToolContext, params: ScrapeParams, response: Response) -> None:
    check_http_url(params.url)
    check_selectors(params.include_tags, "includeTags")
    check_selectors(params.exclude_tags, "excludeTags")
    as_json = params.format == "json"
    if not as_json and (params.schema is not None or params.prompt is not None):
        raise InvalidParameter("schema and prompt go with format json", field="format")
    check_schema(params.schema)
    # Before the page loads: a call that cannot be answered fails at once.
    model = ctx.services.llm.model(ctx.session.id) if as_json else None
    profiles = ctx.services.profiles
    named = profiles.profile_id(params.profile_id) if params.profile_id is not None else None
    # A remote session without profileId scrapes in a fresh anonymous context: never `master`'s cookies.
    profile_id = ctx.session.trust.default_profile(named, profiles.profile_id(None), "scrape with")
    request = ScrapeRequest(
        url=params.url,
        format="markdown" if params.format == "json" else params.format,
        only_main_content=params.only_main_content is not False,
        wait_for_ms=params.wait_for,
        profile_id=profile_id or "",
        include_tags=params.include_tags,
        exclude_tags=params.exclude_tags,
        timeout_ms=params.timeout,
        mobile=params.mobile,
        headers=params.headers,
        trust_level=ctx.session.trust_level,
        render=params.render,
        block_resources=params.block_resources,
        proxy=params.proxy,
    )
    snapshot = await profiles.load(profile_id) if profile_id is not None else None
    await ctx.progress(0, 2, f"loading {params.url}")
    state = snapshot.storage_state() if snapshot is not None else None
    page = await load_page(ctx.services, request, state, export_state=snapshot is not None)
    if snapshot is not None and page.storage_state is not None and page.storage_state != state:
        # Cookies the page set (in the browser or on the fast path) go back to the profile after the
        # answer, debounced and CAS-checked (S0-50..S0-53).
        profiles.publisher(snapshot.meta.profile_id).request(exported(page.storage_state, snapshot.version))
    await ctx.progress(1, 2, "extracting")
    result = await render(request, page, ctx.services.scrape.extraction)
    data: dict[str, Any] = {
        "url": page.final_url,
        "statusCode": page.status,
        "format": request.format,
        "profileId": profile_id,
        "profileVersion": snapshot.version if snapshot is not None else None,
        "title": page.title,
        **result.metadata,
    }
    hint = (
        login_hint(ctx, snapshot.meta.profile_id, snapshot.version, page.status, page.final_url) if snapshot else None
    )
    if hint:
        data["loginHint"] = hint
        response.text(f"Note: this page looks like it needs a login that profile {profile_id} lacks; {hint}")
    if page.timed_out:
        data["warning"] = "the page was still loading when it was read; this is what had loaded"
    if request.format in ("screenshot", "fullscreenshot"):
        data["width"], data["height"] = image_size(page.screenshot)
        response.image(page.screenshot, "image/png")
    elif request.format == "links":
        data["links"] = [{"url": link.url, "text": link.text} for link in result.links]
        response.text("\n".join(f"- [{link.text or link.url}]({link.url})" for link in result.links) or "(no links)")
    elif request.format == "html":
        # The page as the browser rendered it, unless only its main content was asked for (D-23).
        response.text(result.html if request.only_main_content else page.html)
    elif model is not None:
        await ctx.progress(1.5, 2, f"asking {model.name}")
        content = result.markdown[: ctx.services.config.llm.max_content_chars]
        answer = await extract_json(model, content, page.final_url, params.prompt, params.schema)
        data.update(format="json", json=answer.value, llm=answer.info())
        response.text(json.dumps(answer.value, ensure_ascii=False, indent=1))
    else:
        response.text(result.markdown)
    response.data(data)


def exported(state: dict[str, Any], base_version: int) -> StateSource:
    async def export() -> dict[str, Any]:
        return state

    return StateSource(export, base_version, name="scrape")


def login_hint(ctx: ToolContext, profile_id: str, version: int, status: int | None, final_url: str) -> str | None:
    """D-24: a profile that never logged in, refused (401/403) or sent to a login page."""
    if version != 0:
        return None
    path = urlsplit(final_url).path.lower()
    on_login_page = any(pattern in path for pattern in ctx.services.config.scrape.login_url_patterns)
    if status in (401, 403) or on_login_page:
        return f"run: browserd login --profile {profile_id}"
    return None


@tool(
    "map",
    "scrape",
    "A site's URLs from its sitemaps and links, filtered and ranked by `search`.",
    MapParams,
    read_only=True,
)
async def map_site(ctx: ToolContext, params: MapParams, response: Response) -> None:
    check_http_url(params.url)
    config = ctx.services.config.scrape
    request = MapRequest(
        params.url,
        params.search,
        params.limit,
        params.sitemap,
        params.same_site,
        config.smart_wait_max_ms,
        config.smart_wait_quiet_ms,
    )
    await ctx.session.trust.check_url(params.url)  # before a browser context is taken for it
    async with ctx.services.guards.guarding(ctx.session.trust.level) as guard:
        # Sitemaps are read through the context's HTTP client, which uses the context's proxy: the guard too.
        options = guard.context_options if guard else {}
        task = MapTask(request, ctx.session.trust, guard)
        result = await ctx.services.executor.run_in_context(task, local_only=guard is not None, **options)
    urls = [{"url": f.url, "text": f.text, "source": f.source} for f in result.urls]
    response.data({"url": params.url, "urls": urls, "total": result.total_found, "sitemaps": result.sitemaps})
    lines = [f"- {f.url}{'  ' + json.dumps(f.text) if f.text else ''}" for f in result.urls]
    shown = f"{len(urls)} of {result.total_found}" if result.total_found > len(urls) else str(len(urls))
    response.text(f"{shown} URL(s) found for {params.url}:\n" + "\n".join(lines))


@tool(
    "crawl",
    "runs",
    "Crawl a site from `url`: same site by default, robots.txt obeyed, duplicates (canonical, trailing slash, "
    "fragments) skipped; include/excludePaths are regexes on the path. Runs as a task run (template `crawl`): "
    "async by default, answering with a runId; follow it with get_task_run and read each page's markdown "
    "with get_artifact (tool group runs). mode sync waits for the result.",
    CrawlParams,
    output=TaskRun,
    task_arguments={"mode": "sync"},
)
async def crawl(ctx: ToolContext, params: CrawlParams, response: Response) -> None:
    check_http_url(params.url)
    crawl_request(params, ctx.services.config.crawl)  # the configured limits, before a run is created
    if params.format == "json":
        ctx.services.llm.model(ctx.session.id)  # LLM_NOT_CONFIGURED before a run is created
    inputs = {
        key: value
        for key, value in msgspec.to_builtins(params).items()
        if key not in ("mode", "timeoutMs") and value is not None
    }
    run = RunTemplateParams(
        template_id="crawl", inputs=inputs, options=RunOptions(mode=params.mode, timeout_ms=params.timeout_ms)
    )
    await run_template(ctx, run, response)


TOOLS: list[Tool[Any]] = [scrape, map_site, crawl]
