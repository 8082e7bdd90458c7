"""Page tools: open and navigate a tab, read it as a snapshot, find elements in it."""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec

from browserd.daemon.errors import InvalidParameter, NavigationTimeout
from browserd.daemon.flows.recording.recorded_action import MoveInHistory, Navigate
from browserd.daemon.sessions.navigation import HistoryMove, WaitUntil, check_url, goto, move_in_history, timed_out
from browserd.daemon.sessions.page_errors import navigation_errors, page_errors
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.sessions.window import REFUSED_EVENT
from browserd.daemon.snapshots.element_search import Search, match_line
from browserd.daemon.snapshots.reader import SnapshotOptions, read, save
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import ActionParams, SnapshotMode, TabParams, TimeoutMs, tab_tool
from browserd.daemon.tools.tool_registry import Tool

BLANK = "about:blank"
DOWNLOAD_NOTICE_S = 2.0  # how long after that error the download's own event may take to arrive
_FILE_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


class OpenParams(ActionParams, kw_only=True):
    url: Annotated[str, msgspec.Meta(description="http(s) URL (file: and about:blank for local sessions).")]
    wait_until: WaitUntil = "load"
    timeout: TimeoutMs | None = None
    new_tab: Annotated[bool, msgspec.Meta(description="Open in a new tab of the active window.")] = False
    profile_id: (
        Annotated[
            str,
            msgspec.Meta(pattern=r"^[a-zA-Z0-9._-]{1,64}$", description="Open in a window logged in as this profile."),
        ]
        | None
    ) = None
    publish: Annotated[bool, msgspec.Meta(description="With profileId: write its cookies back (default true).")] = True
    snapshot: SnapshotMode = "full"


class NavigateParams(ActionParams, kw_only=True):
    action: HistoryMove
    wait_until: WaitUntil = "load"
    timeout: TimeoutMs | None = None


MaxChars = Annotated[int, msgspec.Meta(ge=200, description="Cut the answer after this many characters.")]


class SnapshotParams(TabParams):
    interactive: Annotated[bool, msgspec.Meta(description="Only what can be acted on, under its headings.")] = False
    compact: Annotated[bool, msgspec.Meta(description="Drop unnamed wrapper elements.")] = False
    max_depth: Annotated[int, msgspec.Meta(ge=1, le=100)] | None = None
    scope: Annotated[str, msgspec.Meta(description="Only this element's subtree: a ref or CSS selector.")] | None = None
    delta: Annotated[bool, msgspec.Meta(description="Only the lines changed since this tab's last snapshot.")] = False
    max_chars: MaxChars | None = None
    offset: Annotated[int, msgspec.Meta(ge=0, description="Start here in a snapshot cut by maxChars.")] = 0
    save_to: Annotated[str, msgspec.Meta(description="File name: write the whole snapshot there.")] | None = None


class FindParams(TabParams):
    text: Annotated[str, msgspec.Meta(description="Case-insensitive text in the element's line.")] | None = None
    regex: Annotated[str, msgspec.Meta(description="Python regular expression over the element's line.")] | None = None
    role: Annotated[str, msgspec.Meta(description="ARIA role, e.g. button, link, textbox.")] | None = None
    name: Annotated[str, msgspec.Meta(description="Case-insensitive part of the accessible name.")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500)] = 50


async def _navigated(tab: Tab, what: str, response: Response, reply: Any, code: str) -> None:
    # The navigation this tool made is its answer, not news; what the URL policy refused on the way is.
    refused = [event for event in tab.take_events() if event.startswith(REFUSED_EVENT)]
    status = reply.status if reply is not None else None
    note = ""
    if status is not None and status >= 400:
        note = f" — the server answered HTTP {status} {reply.status_text}"
    response.data({"url": tab.page.url, "status": status, "tabId": tab.id})  # the title comes with the snapshot
    # The page header that follows names the URL whenever it is news to this client; a status that went
    # well is in the structured result only.
    response.text(f"{what}{note}")
    if refused:
        response.text("While loading, " + "; ".join(refused))
    response.code(code)


async def _open_target(ctx: ToolContext, params: OpenParams) -> Tab:
    await check_url(params.url, ctx.session.trust)
    if params.profile_id is not None:
        window = await ctx.session.window_for_profile(params.profile_id, params.publish)
        active = window.tabs.get(window.active_tab_id or "")
        return active if active is not None and not params.new_tab else await window.new_tab()
    # A session's first page is its first tab, new or not: the spare window's blank tab when one is ready.
    if params.new_tab and any(window.open_tabs() for window in ctx.session.windows.values()):
        return await (await ctx.session.window()).new_tab()
    return await ctx.session.tab(params.tab_id, create=True)


@tab_tool(
    "browser_open",
    "pages",
    "Open a URL in the active tab (or a new one) and answer with the page's snapshot.",
    OpenParams,
    resolve=_open_target,
    titled=True,
    records=lambda p: Navigate(url=p.url),
)
async def browser_open(ctx: ToolContext, call: TabCall, params: OpenParams, response: Response) -> None:
    tab = call.tab
    await ctx.progress(0, 1, f"opening {params.url}")
    loaded = await goto(tab, params.url, ctx.session.trust, params.wait_until, params.timeout)
    if loaded.downloaded:
        # Playwright answers goto before it tells of the download: the report below needs its record.
        await tab.window.downloads.started(tab.id, DOWNLOAD_NOTICE_S)
        tab.take_events()
        response.text(
            f"{params.url} is a file, not a page: it was downloaded (below); {tab.id} stays on {tab.page.url}"
        )
        response.data({"url": tab.page.url, "downloaded": True, "tabId": tab.id})
        response.code(f"async with page.expect_download() as info:\n    await page.goto({params.url!r})")
        return
    call.reads_ahead = True
    await _navigated(tab, "Opened", response, loaded.reply, f"await page.goto({params.url!r})")


@tab_tool(
    "browser_navigate",
    "pages",
    "Go back, forward, or reload the tab.",
    NavigateParams,
    titled=True,
    records=lambda p: MoveInHistory(move=p.action),
)
async def browser_navigate(ctx: ToolContext, call: TabCall, params: NavigateParams, response: Response) -> None:
    tab = call.tab
    page = tab.page
    before = page.url
    try:
        with navigation_errors(params.action, page.url):
            reply = await move_in_history(page, params.action, ctx.session.trust, params.wait_until, params.timeout)
    except NavigationTimeout as exc:
        raise await timed_out(tab, params.action, exc) from exc
    if params.action == "back" and page.url == BLANK != before:
        # The blank page every tab starts on is not a page the agent opened: undo and say so.
        await move_in_history(page, "forward", ctx.session.trust, params.wait_until, params.timeout)
        reply = None
    # Same-document moves (a single-page app's routes) answer no response but do move.
    moved = reply is not None or page.url != before or params.action == "reload"
    if not moved:
        tab.take_events()
        response.text(f"No page to go {params.action} to; still on {page.url}")
        response.data({"url": page.url, "moved": False, "tabId": tab.id})
        return
    verb = {"back": "Went back", "forward": "Went forward", "reload": "Reloaded"}[params.action]
    method = {"back": "go_back", "forward": "go_forward", "reload": "reload"}[params.action]
    call.reads_ahead = True
    await _navigated(tab, verb, response, reply, f"await page.{method}()")


@tab_tool(
    "browser_snapshot",
    "pages",
    "Accessibility snapshot of the tab with [ref=eN] refs for other tools. interactive=true for a short list "
    "of what can be acted on.",
    SnapshotParams,
    read_only=True,
)
async def browser_snapshot(ctx: ToolContext, call: TabCall, params: SnapshotParams, response: Response) -> None:
    tab = call.tab
    if params.save_to is not None and not _FILE_NAME.match(params.save_to):
        raise InvalidParameter("saveTo must be a plain file name (letters, digits, . _ -)", field="saveTo")
    options = SnapshotOptions(
        interactive=params.interactive,
        compact=params.compact,
        max_depth=params.max_depth,
        scope=params.scope,
        delta=params.delta,
        max_chars=params.max_chars or ctx.services.config.browser.snapshot_max_chars,
        timeout_ms=ctx.services.config.browser.snapshot_timeout_ms,
        offset=params.offset,
    )
    with page_errors("snapshot"):
        reading = await read(tab, options)
    data: dict[str, Any] = {
        "url": tab.page.url,
        "tabId": tab.id,
        "lines": reading.lines,
        "refs": reading.refs,
        "truncated": reading.truncated,
        "delta": reading.delta,
    }
    if reading.next_offset is not None:
        data["nextOffset"] = reading.next_offset
    if params.save_to is not None:
        path = save(reading, ctx.session.output_dir, params.save_to)
        data["savedTo"] = str(path)
        response.text(
            f"Saved the whole snapshot ({reading.lines} lines, {reading.refs} refs, {len(reading.full)} "
            f"characters) to {path}"
        )
        if not reading.truncated:
            response.page(reading.header)
            response.text(reading.snapshot)
    else:
        response.page(reading.header)
        response.text(reading.snapshot)
    response.data(data)


@tab_tool(
    "browser_find",
    "pages",
    "Find elements by text, regex, role or name; answers the matching lines only.",
    FindParams,
    read_only=True,
)
async def browser_find(ctx: ToolContext, call: TabCall, params: FindParams, response: Response) -> None:
    tab = call.tab
    search = Search.of(params.text, params.regex, params.role, params.name)
    with page_errors("find"):
        reading = await read(tab, SnapshotOptions(max_chars=1))
    found = search.found_in(reading.nodes)
    shown = found[: params.limit]
    lines = [f"- {match_line(node)}{f'  (in {where})' if where else ''}" for node, where in shown]
    more = (
        f"\n… and {len(found) - len(shown)} more; raise limit or narrow the search" if len(found) > len(shown) else ""
    )
    response.text(
        f"{len(found)} match(es) in {tab.id} ({tab.page.url}):\n" + "\n".join(lines) + more
        if found
        else f"No element in {tab.id} matches; browser_snapshot shows the whole page."
    )
    response.data(
        {
            "matches": [{"ref": n.ref, "role": n.role, "name": n.name, "line": n.text, "in": w} for n, w in shown],
            "total": len(found),
            "tabId": tab.id,
        }
    )


TOOLS: list[Tool[Any]] = [browser_open, browser_navigate, browser_snapshot, browser_find]
