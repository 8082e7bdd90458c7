"""Page tools: open a page in the session's tab and read it as an accessibility snapshot."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import msgspec
from browserd.daemon.errors import InvalidParameter, SessionNotFound, UrlNotAllowed
from browserd.daemon.sessions.manager import Session, Tab
from browserd.daemon.sessions.page_errors import navigation_errors, page_errors
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.registry import Params, Tool, tool
from browserd.daemon.tools.response import Response
from playwright.async_api import Page

TimeoutMs = Annotated[int, msgspec.Meta(ge=1, le=300_000, description="Milliseconds before giving up.")]


class OpenParams(Params):
    url: Annotated[str, msgspec.Meta(description="http(s) URL (file: and about:blank for local sessions).")]
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] = "load"
    timeout: TimeoutMs | None = None


class SnapshotParams(Params):
    max_chars: (
        Annotated[int, msgspec.Meta(ge=200, description="Cut the snapshot after this many characters.")] | None
    ) = None


_SCHEMES = {"http", "https", "about", "file"}


def check_url(url: str, session: Session) -> None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in _SCHEMES:
        raise InvalidParameter(
            f"unsupported URL `{url}`: expected http(s), file: or about:blank",
            hint="Pass an absolute URL such as https://example.com/.",
            field="url",
        )
    if scheme == "file" and session.trust_level != "local":
        raise UrlNotAllowed(f"a {session.trust_level} session cannot open file: URLs", url=url, rule="file-scheme")


async def page_header(tab: Tab) -> str:
    page: Page = tab.page
    return f"- Page: {page.url}\n- Title: {await page.title()}\n- Tab: {tab.id}"


@tool(
    "browser_open",
    "pages",
    "Open a URL in the session's active tab (a new tab if it has none).",
    OpenParams,
)
async def browser_open(ctx: ToolContext, params: OpenParams, response: Response) -> None:
    check_url(params.url, ctx.session)
    tab = await ctx.session.active_tab()
    assert tab is not None
    async with tab.lock:
        await ctx.progress(0, 1, f"opening {params.url}")
        with navigation_errors(params.url, tab.page.url):
            reply = await tab.page.goto(params.url, wait_until=params.wait_until, timeout=params.timeout)
        status = reply.status if reply is not None else None
        title = await tab.page.title()
    response.data({"url": tab.page.url, "status": status, "title": title, "tabId": tab.id})
    response.text(f"Opened {tab.page.url} (HTTP {status if status is not None else '-'})\n{await page_header(tab)}")
    response.code(f"await page.goto({params.url!r}, wait_until={params.wait_until!r})")


@tool(
    "browser_snapshot",
    "pages",
    "Accessibility snapshot of the active tab with [ref=eN] element refs.",
    SnapshotParams,
    read_only=True,
)
async def browser_snapshot(ctx: ToolContext, params: SnapshotParams, response: Response) -> None:
    tab = await ctx.session.active_tab(create=False)
    if tab is None:
        raise SessionNotFound("this session has no open tab yet")
    limit = params.max_chars or ctx.services.config.browser.snapshot_max_chars
    async with tab.lock:
        with page_errors("snapshot"):
            snapshot = await tab.page.aria_snapshot(mode="ai")
            header = await page_header(tab)
    truncated = len(snapshot) > limit
    body = snapshot[:limit]
    if truncated:
        body += f"\n… snapshot cut at {limit} of {len(snapshot)} characters; pass a larger maxChars to see more."
    response.text(f"{header}\n```yaml\n{body}\n```")
    response.code("await page.aria_snapshot(mode='ai')")


TOOLS: list[Tool[Any]] = [browser_open, browser_snapshot]
