"""`browser_connect_cdp`: attach the session to a Chromium already running with a debugging port (S2-30, D-14)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

import msgspec
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import CdpConnectFailed, InvalidParameter, UrlNotAllowed
from browserd.daemon.policy.addresses import address_rule
from browserd.daemon.policy.origins import DEFAULT_PORTS
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tool_registry import Params, Tool, tool

_SCHEMES = ("http", "https", "ws", "wss")


class ConnectCdpParams(Params, kw_only=True):
    endpoint: Annotated[
        str,
        msgspec.Meta(
            description="The browser's debugging endpoint: http://127.0.0.1:9222, or its ws://... browser URL."
        ),
    ]
    timeout: Annotated[int, msgspec.Meta(ge=1, le=120_000, description="Connect timeout in ms.")] = 10_000


async def _check_endpoint(ctx: ToolContext, endpoint: str) -> None:
    parts = urlsplit(endpoint)
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES or not parts.hostname:
        raise InvalidParameter(
            f"`{endpoint}` is not a debugging endpoint",
            hint="Pass the http:// address of the browser's debugging port, e.g. http://127.0.0.1:9222.",
            field="endpoint",
        )
    if ctx.services.config.security.cdp_allow_remote_hosts:
        return
    # A debugging port gives full control of that browser: by default only one on this machine.
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise InvalidParameter(f"bad port in `{endpoint}`", field="endpoint") from exc
    addresses = await ctx.services.guards.policy.resolve(parts.hostname, port)
    if not addresses or any(address_rule(address) != "loopback" for address in addresses):
        raise UrlNotAllowed(
            f"{endpoint} is not on this machine; browser_connect_cdp attaches to loopback endpoints only",
            hint="Attach to a browser on this machine, or set security.cdp_allow_remote_hosts in the config.",
            url=endpoint,
            rule="cdp-not-loopback",
        )


@tool(
    "browser_connect_cdp",
    "devtools",
    "Attach to a Chromium already running with --remote-debugging-port: its tabs become this session's "
    "tabs in a new window. Closing that window or the session only disconnects; the browser stays open.",
    ConnectCdpParams,
)
async def browser_connect_cdp(ctx: ToolContext, params: ConnectCdpParams, response: Response) -> None:
    session = ctx.session
    session.trust.check_cdp("browser_connect_cdp")
    await _check_endpoint(ctx, params.endpoint)
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
