"""`multi_tab_compare` 1.0.0: the same extraction on several URLs, each in its own tab of one session,
side by side (issue 6 item 4).

Each URL gets a tab of its own, named by tabId in its item and in the comparison: a step per URL,
and a last step that compares title, status, word count, links count and headings across the pages
that loaded. A page that fails is an item with its error; the others are still compared
(partial_success). Each page's markdown (or text, or the tab's AI snapshot: `extract`) is an artifact.

Tabs count against [browser] max_tabs_per_session and max_total_tabs (S1-74, S1-76, S1-77): at most
MAX_CONCURRENCY pages, and no more than there is room for, load at once, each opened when its turn
comes. In the run's own session a tab is closed as soon as its page is read; in the caller's session
(sessionId) the tabs stay open for the browser tools, never becoming the active tab (D-13), and a
page past the cap is an item failed with LIMIT_EXCEEDED.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Literal

import anyio
import lxml.html  # type: ignore[import-untyped]
import msgspec
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.config import Config, RunsConfig
from browserd.daemon.errors import BrowserdError, ExecutionError
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.runs.templates.batch_extract import Summary, plain_text
from browserd.daemon.runs.templates.template_interface import Inputs, Template
from browserd.daemon.scrape.extract import extract, extract_links
from browserd.daemon.scrape.links import check_http_url
from browserd.daemon.scrape.smartwait import smart_wait
from browserd.daemon.sessions.navigation import goto
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.sessions.window import Window
from browserd.daemon.snapshots.aria_capture import capture

MAX_URLS = 20  # D-41
MAX_CONCURRENCY = 5  # a template's maxConcurrency (D-20)
HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
ExtractKind = Literal["markdown", "text", "snapshot"]
MIME_TYPES = {"markdown": "text/markdown", "text": "text/plain", "snapshot": "text/plain"}
# The fields compared, in the order of the table.
FIELDS = ("title", "status", "wordCount", "linksCount", "headings")


class CompareInputs(Inputs, kw_only=True):
    urls: Annotated[list[str], msgspec.Meta(min_length=2, max_length=MAX_URLS, description="http(s) URLs.")]
    extract: Annotated[
        ExtractKind,
        msgspec.Meta(description="What each page's artifact holds: markdown, plain text, or the tab's AI snapshot."),
    ] = "markdown"
    only_main_content: Annotated[bool, msgspec.Meta(description="Compare the main content only.")] = True
    page_timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=300_000, description="Load timeout per page.")] | None = None


class ComparedPage(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    url: str
    success: bool
    # Left out when no tab could be opened for the page (LIMIT_EXCEEDED).
    tab_id: str = ""
    final_url: str | None = None
    status: int | None = None
    title: str | None = None
    word_count: int | None = None
    links_count: int | None = None
    headings: list[str] | None = None
    # The page's markdown, text or snapshot (inputs.extract): get_artifact with this id.
    content_artifact_id: str | None = None
    error: str | None = None
    error_code: str | None = None
    # The error's details: a URL policy refusal names its `rule` here.
    details: dict[str, Any] | None = None


class FieldComparison(msgspec.Struct, kw_only=True, rename="camel"):
    field: str
    same: bool
    # One value per compared tab, in the order of `tabIds`.
    values: list[Any]


class Comparison(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    tab_ids: list[str]
    urls: list[str]
    fields: list[FieldComparison]
    same: list[str]
    different: list[str]
    # Headings that not every compared page has, per tabId.
    headings_only_in: dict[str, list[str]] = msgspec.field(default_factory=dict)
    # The same, as a markdown table for reading.
    table: str = ""


class CompareResult(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    summary: Summary
    items: list[ComparedPage]
    comparison: Comparison
    truncated: bool = False
    result_artifact_id: str | None = None


def compare(pages: list[ComparedPage]) -> Comparison:
    """The fields side by side for the pages that loaded; `same` when every value is equal."""
    loaded = [page for page in pages if page.success]
    rows: list[FieldComparison] = []
    for name in FIELDS:
        values = [msgspec.to_builtins(page).get(name) for page in loaded]
        rows.append(FieldComparison(field=name, same=all(v == values[0] for v in values), values=values))
    all_headings = [set(page.headings or []) for page in loaded]
    common = set.intersection(*all_headings) if all_headings else set()
    only_in = {
        page.tab_id: [h for h in page.headings or [] if h not in common]
        for page in loaded
        if any(h not in common for h in page.headings or [])
    }
    return Comparison(
        tab_ids=[page.tab_id for page in loaded],
        urls=[page.url for page in loaded],
        fields=rows,
        same=[row.field for row in rows if row.same],
        different=[row.field for row in rows if not row.same],
        headings_only_in=only_in,
        table=table(loaded, rows),
    )


def _cell(value: Any) -> str:
    if isinstance(value, list):
        value = "; ".join(str(v) for v in value) or "(none)"
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(pages: list[ComparedPage], rows: list[FieldComparison]) -> str:
    header = "| field | " + " | ".join(f"{p.tab_id} {p.url}" for p in pages) + " | same |"
    rule = "|---|" + "---|" * len(pages) + "---|"
    lines = [
        f"| {row.field} | " + " | ".join(_cell(v) for v in row.values) + f" | {'yes' if row.same else 'no'} |"
        for row in rows
    ]
    return "\n".join([header, rule, *lines])


def read_page(html: str, url: str, only_main_content: bool, kind: ExtractKind) -> tuple[str, int, int, list[str]]:
    """Markdown or text (as `kind` asks), word count, links count and headings (`## text`) of a loaded page."""
    extraction = extract(html, url, only_main_content=only_main_content)
    root = lxml.html.fromstring(extraction.html) if extraction.html.strip() else None
    words = len(root.text_content().split()) if root is not None else 0
    content = plain_text(extraction.html) if kind == "text" else extraction.markdown
    headings = []
    if root is not None:
        for element in root.iter(*HEADING_TAGS):
            text = " ".join(element.text_content().split())
            if text:
                headings.append("#" * int(element.tag[1]) + " " + text)
    return content, words, len(extract_links(html, url)), headings


async def _close(tab: Tab) -> None:
    # A tab already gone with its browser needs no closing.
    with anyio.CancelScope(shield=True), contextlib.suppress(PlaywrightError):
        await tab.page.close()


class MultiTabCompare(Template[CompareInputs]):
    template_id = "multi_tab_compare"
    version = "1.0.0"
    name = "Compare pages in tabs"
    description = (
        "Open several URLs in tabs of one session at once, extract each, and compare title, status, word count, "
        "links count and headings side by side."
    )
    inputs = CompareInputs
    outputs = CompareResult
    limits = {"maxUrls": MAX_URLS}  # noqa: RUF012
    supports_partial_success = True

    def check(self, inputs: CompareInputs, config: Config) -> None:
        for index, url in enumerate(inputs.urls):
            check_http_url(url, f"inputs.urls[{index}]")

    def default_mode(
        self, inputs: CompareInputs, config: RunsConfig, timeout_ms: int | None
    ) -> Literal["sync", "async"]:
        few = len(inputs.urls) <= config.auto_sync_max_urls
        return "sync" if few and (timeout_ms or 0) <= config.auto_sync_max_timeout_ms else "async"

    def plan(self, inputs: CompareInputs) -> list[str]:
        return [f"load {url}" for url in inputs.urls] + ["compare"]

    async def run(self, ctx: RunContext, inputs: CompareInputs) -> None:
        window = await ctx.session.window()
        if window.profile is not None:
            # Its tabs load with the profile's cookies and publish back to it.
            ctx.trust.check_profile(window.profile.profile_id, "compare pages in a window of")
        pages = [ComparedPage(url=url, success=False) for url in inputs.urls]
        # The caller's session (sessionId) keeps the tabs for the browser tools; the run's own frees each at once.
        keep = ctx.record.session_kept
        at_once = anyio.CapacityLimiter(max(1, min(MAX_CONCURRENCY, len(pages), ctx.session.tab_room())))
        async with anyio.create_task_group() as group:
            for index, page in enumerate(pages):
                group.start_soon(self._page, ctx, inputs, index, window, page, at_once, keep)
        compare_step = len(inputs.urls)
        async with ctx.step(compare_step):
            comparison = compare(pages)
        ctx.set_output(comparison=msgspec.to_builtins(comparison))

    async def _page(
        self,
        ctx: RunContext,
        inputs: CompareInputs,
        index: int,
        window: Window,
        page: ComparedPage,
        at_once: anyio.CapacityLimiter,
        keep: bool,
    ) -> None:
        try:
            async with at_once, ctx.step(index):
                tab = await window.new_tab(activate=False)
                page.tab_id = tab.id
                try:
                    await self._load(ctx, inputs, tab, page)
                finally:
                    if not keep:
                        await _close(tab)
        except BrowserdError as exc:
            page.error, page.error_code, page.details = exc.message, exc.code, exc.details or None
        else:
            page.success = True
        await ctx.add_item(msgspec.to_builtins(page), index)

    async def _load(self, ctx: RunContext, inputs: CompareInputs, tab: Tab, page: ComparedPage) -> None:
        config = ctx.services.config.scrape
        timeout_ms = inputs.page_timeout_ms or config.timeout_ms
        try:
            async with tab.lock:
                reply = (await goto(tab, page.url, ctx.trust, "domcontentloaded", timeout_ms)).reply
                await smart_wait(tab.page, config.smart_wait_max_ms, config.smart_wait_quiet_ms)
                page.final_url, page.title, html = tab.page.url, await tab.page.title(), await tab.page.content()
                snapshot = (await capture(tab.page)).text if inputs.extract == "snapshot" else ""
        except PlaywrightError as exc:  # the tab was closed or crashed under the load
            raise ExecutionError(str(exc).splitlines()[0], url=page.url, tabId=tab.id) from exc
        page.status = reply.status if reply is not None else None
        if page.status is not None and page.status >= 400:
            raise ExecutionError(f"{page.url} answered HTTP {page.status}", hint="Check the URL.", status=page.status)
        content, page.word_count, page.links_count, page.headings = await anyio.to_thread.run_sync(
            read_page, html, page.final_url, inputs.only_main_content, inputs.extract
        )
        name = f"{inputs.extract} of {page.final_url} ({page.tab_id})"
        data = (snapshot or content).encode()
        artifact = await ctx.add_artifact(data, MIME_TYPES[inputs.extract], name)
        page.content_artifact_id = artifact.artifact_id
