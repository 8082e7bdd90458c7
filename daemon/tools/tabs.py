"""Tabs and windows: list, open, select and close them (D-13: stable ids tab_N and win_N)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.sessions.navigation import check_url, goto
from browserd.daemon.sessions.session import Session
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.sessions.window import Window, WindowOptions
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tool_registry import Params, Tool, tool


class TabsParams(Params, kw_only=True):
    action: Literal["list", "new", "select", "close"] = "list"
    tab_id: Annotated[str, msgspec.Meta(description="The tab to select or close (tab_N).")] | None = None
    index: Annotated[int, msgspec.Meta(ge=0, description="Instead of tabId: position in the active window.")] | None = (
        None
    )
    url: Annotated[str, msgspec.Meta(description="For new: open this URL in it.")] | None = None


class WindowsParams(Params, kw_only=True):
    action: Literal["list", "new", "select", "close"] = "list"
    kind: Annotated[
        Literal["playwright", "extension"],
        msgspec.Meta(
            description="For new: 'playwright' (the daemon's own browser) or 'extension' (a tab group in the "
            "user's own Chrome, through the paired browserd extension)."
        ),
    ] = "playwright"
    window_id: Annotated[str, msgspec.Meta(description="The window to select or close (win_N).")] | None = None
    endpoint: (
        Annotated[
            str,
            msgspec.Meta(
                description="For new, kind playwright: the browser pool member (a name or a label) to open it on; "
                "default: the member with the most free capacity."
            ),
        ]
        | None
    ) = None
    options: Annotated[WindowOptions, msgspec.Meta(description="For new: how the window's context is set up.")] | (
        None
    ) = None


async def _tab_rows(session: Session) -> list[dict[str, Any]]:
    active_window = session.windows.get(session.active_window_id or "")
    rows = []
    for window in session.windows.values():
        for index, tab in enumerate(window.open_tabs()):
            rows.append(
                {
                    "tabId": tab.id,
                    "windowId": window.id,
                    "index": index,
                    "url": tab.page.url,
                    "title": await tab.page.title(),
                    "active": window is active_window and window.active_tab_id == tab.id,
                }
            )
    return rows


def _need(value: str | None, field: str, action: str) -> str:
    if value is None:
        raise InvalidParameter(f"action {action} needs {field}", field=field)
    return value


@tool("browser_tabs", "pages", "List, open, select or close tabs.", TabsParams)
async def browser_tabs(ctx: ToolContext, params: TabsParams, response: Response) -> None:
    session = ctx.session
    if params.action == "new":
        if params.url:
            await check_url(params.url, session.trust)  # before the tab exists: a refused URL leaves nothing behind
        tab = await (await session.window()).new_tab()
        if params.url:
            async with tab.lock:
                await goto(tab, params.url, session.trust)
                tab.take_events()
        response.text(f"Opened {tab.id}{' at ' + tab.page.url if params.url else ''}; it is now the active tab")
        ctx.services.flows.record_tab(session.id, "openTab", tab.page.url if params.url else None)
    elif params.action == "select":
        tab = await _chosen(session, params)
        await session.select_tab(tab)
        ctx.services.flows.record_tab(session.id, "switchTab", tab.page.url)
        response.text(f"{tab.id} is now the active tab ({tab.page.url}); browser_snapshot reads it")
    elif params.action == "close":
        tab = await _chosen(session, params)
        url = tab.page.url
        await session.close_tab(tab)
        ctx.services.flows.record_tab(session.id, "closeTab", url)
        response.text(f"Closed {tab.id}")
    rows = await _tab_rows(session)
    response.data({"tabs": rows})
    listing = "\n".join(
        f"- {r['tabId']}{' (active)' if r['active'] else ''} [{r['windowId']}] {r['title']!r} {r['url']}" for r in rows
    )
    response.text(f"Tabs:\n{listing}" if rows else "No open tabs; browser_open opens one.")


async def _chosen(session: Session, params: TabsParams) -> Tab:
    if params.index is not None and params.tab_id is None:
        tabs = (await session.window()).open_tabs()
        if params.index >= len(tabs):
            raise InvalidParameter(
                f"no tab at index {params.index}: the active window has {len(tabs)}",
                hint="Call browser_tabs with action 'list'.",
                field="index",
            )
        return tabs[params.index]
    return session.find_tab(_need(params.tab_id, "tabId", params.action))


def _window_row(session: Session, window: Window) -> dict[str, Any]:
    row: dict[str, Any] = {
        "windowId": window.id,
        "kind": window.kind,
        "label": window.backend.label,
        # The browser pool member it runs on ("local": the daemon's own Chromium).
        "endpoint": window.backend.slot.member.name if window.backend.slot is not None else None,
        # What the window may do beyond pages and actions, so a model need not learn it from an error.
        "capabilities": sorted(window.backend.capabilities),
        "active": window.id == session.active_window_id,
        "tabs": [t.id for t in window.open_tabs()],
        "options": msgspec.to_builtins(window.options),
    }
    if window.profile is not None:
        row["profile"] = window.profile.status()
    return row


async def _new_window(session: Session, params: WindowsParams) -> Window:
    if params.kind == "extension" and (params.options is not None or params.endpoint is not None):
        raise InvalidParameter(
            "an extension window is a tab group in the user's Chrome, which keeps its own settings",
            hint="Leave out options and endpoint for kind 'extension'.",
            field="options" if params.options is not None else "endpoint",
        )
    return await session.open_window(params.kind, params.options, endpoint=params.endpoint)


@tool(
    "browser_windows",
    "devtools",
    "List, open, select or close windows: each is isolated (own cookies and storage) with its own options.",
    WindowsParams,
)
async def browser_windows(ctx: ToolContext, params: WindowsParams, response: Response) -> None:
    session = ctx.session
    if params.action == "new":
        session.check_tab_room()  # before the window exists: a refused tab leaves no empty window behind
        window = await _new_window(session, params)
        await window.new_tab()
        response.text(f"Opened {window.id} with an empty tab; it is now the active window")
    elif params.action == "select":
        window = await session.window(_need(params.window_id, "windowId", "select"))
        session.active_window_id = window.id
        response.text(f"{window.id} is now the active window")
    elif params.action == "close":
        window_id = _need(params.window_id, "windowId", "close")
        closing = session.windows.get(window_id)
        await session.close_window(window_id)  # WindowNotFound when there is none
        if closing is not None:
            response.text(closing.backend.closed_note(window_id))
    rows = [_window_row(session, w) for w in await session.live_windows()]
    response.data({"windows": rows})
    listing = "\n".join(
        f"- {r['windowId']}{' (active)' if r['active'] else ''}{' (' + r['label'] + ')' if r['label'] else ''}: "
        f"{len(r['tabs'])} tab(s)"
        for r in rows
    )
    response.text(f"Windows:\n{listing}" if rows else "No windows yet; browser_open opens one.")


TOOLS: list[Tool[Any]] = [browser_tabs, browser_windows]
