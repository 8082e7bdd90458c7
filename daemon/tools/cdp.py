"""`browser_connect_cdp`: attach the session to a Chromium already running with a debugging port (S2-30, D-14)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import CdpConnectFailed
from browserd.daemon.policy.cdp_endpoints import check_cdp_endpoint
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tool_registry import Params, Tool, tool


class ConnectCdpParams(Params, kw_only=True):
    endpoint: Annotated[
        str,
        msgspec.Meta(
            description="The browser's debugging endpoint: http://127.0.0.1:9222, or its ws://... browser URL."
        ),
    ]
    timeout: Annotated[int, msgspec.Meta(ge=1, le=120_000, description="Connect timeout in ms.")] = 10_000


@tool(
    "browser_connect_cdp",
    "devtools",
    "Attach to a Chromium already running with --remote-debugging-port: its tabs become this session's "
    "tabs in a new window. Closing that window or the session only disconnects; the browser stays open.",
    ConnectCdpParams,
)
async def browser_connect_cdp(ctx: ToolContext, params: ConnectCdpParams, response: Response) -> None:
    session = ctx.session
    await check_cdp_endpoint(session.trust, params.endpoint, "browser_connect_cdp")
    try:
        window = await session.open_window("cdp", endpoint=params.endpoint, timeout_ms=params.timeout)
    except PlaywrightError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else repr(exc)
        raise CdpConnectFailed(f"cannot attach to {params.endpoint}: {reason}", endpoint=params.endpoint) from exc
    tabs: list[dict[str, Any]] = []
    for tab in window.open_tabs():
        title = await tab.page.title()
        tabs.append({"tabId": tab.id, "url": tab.page.url, "title": title, "active": tab.id == window.active_tab_id})
    browser = window.context.browser
    response.data(
        {
            "windowId": window.id,
            "kind": window.kind,
            "endpoint": params.endpoint,
            "browserVersion": browser.version if browser is not None else None,
            "tabs": tabs,
        }
    )
    listing = "\n".join(f"- {t['tabId']}{' (active)' if t['active'] else ''} {t['title']!r} {t['url']}" for t in tabs)
    response.text(
        f"Attached to the browser at {params.endpoint} as {window.id} with {len(tabs)} tab(s)"
        + (f":\n{listing}" if tabs else "; browser_tabs with action 'new' opens one there")
        + f"\nbrowser_windows with action 'close' and windowId {window.id} disconnects; the browser and its "
        "tabs stay open."
    )
    response.code(f"browser = await playwright.chromium.connect_over_cdp({params.endpoint!r})")


TOOLS: list[Tool[Any]] = [browser_connect_cdp]
