"""Scrape tools: one page in one format (`scrape`), a site's URLs (`map`), and a site's pages (`crawl`)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import msgspec

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.llm.schema import check_schema
from browserd.daemon.runs.run_records import RunMode
from browserd.daemon.runs.templates.crawl import CrawlInputs
from browserd.daemon.runtime.images import image_size
from browserd.daemon.scrape import mapping
from browserd.daemon.scrape.links import check_http_url
from browserd.daemon.scrape.mapping import MapRequest, SitemapMode
from browserd.daemon.scrape.scrape_service import ScrapeRequest, scrape_page
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
    request = ScrapeRequest(
        url=params.url,
        format="markdown" if params.format == "json" else params.format,
        only_main_content=params.only_main_content is not False,
        wait_for_ms=params.wait_for,
        include_tags=params.include_tags,
        exclude_tags=params.exclude_tags,
        timeout_ms=params.timeout,
        mobile=params.mobile,
        headers=params.headers,
        render=params.render,
        block_resources=params.block_resources,
        proxy=params.proxy,
    )
    scraped = await scrape_page(ctx.services, request, ctx.session.trust, params.profile_id, ctx.progress)
    page, result = scraped.page, scraped.result
    data: dict[str, Any] = {
        "url": page.final_url,
        "statusCode": page.status,
        "format": request.format,
        "profileId": scraped.profile_id,
        "profileVersion": scraped.profile_version,
        "title": page.title,
        **result.metadata,
    }
    if scraped.login_hint:
        data["loginHint"] = scraped.login_hint
        response.text(
            f"Note: this page looks like it needs a login that profile {scraped.profile_id} lacks; {scraped.login_hint}"
        )
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
        answer = await ctx.services.llm.page_json(model, result.markdown, page.final_url, params.prompt, params.schema)
        data.update(format="json", json=answer.value, llm=answer.info())
        response.text(json.dumps(answer.value, ensure_ascii=False, indent=1))
    else:
        response.text(result.markdown)
    response.data(data)


@tool(
    "map",
    "scrape",
    "A site's URLs from its sitemaps and links, filtered and ranked by `search`.",
    MapParams,
    read_only=True,
)
async def map_site(ctx: ToolContext, params: MapParams, response: Response) -> None:
    check_http_url(params.url)
    request = MapRequest(params.url, params.search, params.limit, params.sitemap, params.same_site)
    result = await mapping.map_site(ctx.services, request, ctx.session.trust)
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
    check_http_url(params.url)  # the configured limits are the template's check, before a run is created
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
