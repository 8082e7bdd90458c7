"""Just enough W3C WebDriver to borrow a Chromium from chromedriver or a Selenium Grid 4 router.

`POST /session` asks for a Chromium (the Grid's distributor picks a node and queues when all are full);
its answer's capabilities say where the browser's DevTools endpoint is: Grid 4 publishes `se:cdp` (a
WebSocket URL through the router), a plain chromedriver `goog:chromeOptions.debuggerAddress` (host:port
of the browser it started). Playwright then attaches over CDP, and `DELETE /session/{id}` ends the
browser when the window or worker is done with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from browserd.daemon.errors import ExecutionError

BROWSER_NAME = "chrome"


def session_capabilities(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The new-session body: Chrome capabilities, `extra` merged over them (chromeOptions merged too)."""
    always: dict[str, Any] = {"browserName": BROWSER_NAME, **extra}
    return {"capabilities": {"alwaysMatch": always, "firstMatch": [{}]}}


def cdp_address(capabilities: Mapping[str, Any], endpoint: str) -> str | None:
    """Where to attach over CDP, from a new session's capabilities; None when they name no DevTools endpoint.

    A debuggerAddress names the host as chromedriver sees it ("localhost:PORT"); seen from here the browser is
    on the WebDriver endpoint's host, so a loopback name is replaced by that host."""
    grid = capabilities.get("se:cdp")
    if isinstance(grid, str) and grid:
        return grid
    options = capabilities.get("goog:chromeOptions")
    address = options.get("debuggerAddress") if isinstance(options, Mapping) else None
    if not isinstance(address, str) or not address:
        return None
    host, _, port = address.rpartition(":")
    if host in ("localhost", "127.0.0.1", "[::1]", "::1", ""):
        host = urlsplit(endpoint).hostname or "127.0.0.1"
    return f"http://{host}:{port}"


@dataclass(frozen=True)
class WebDriverSession:
    endpoint: str
    session_id: str
    cdp_url: str


async def new_session(client: httpx.AsyncClient, endpoint: str, capabilities: Mapping[str, Any]) -> WebDriverSession:
    reply = await client.post(f"{endpoint.rstrip('/')}/session", json=session_capabilities(capabilities))
    value = _value(reply)
    session_id = value.get("sessionId")
    caps = value.get("capabilities") or {}
    if not isinstance(session_id, str):
        raise ExecutionError(f"the WebDriver endpoint {endpoint} answered no session id")
    cdp = cdp_address(caps, endpoint)
    if cdp is None:
        await delete_session(client, WebDriverSession(endpoint, session_id, ""))
        raise ExecutionError(
            f"the WebDriver session at {endpoint} names no DevTools endpoint (se:cdp or debuggerAddress)",
            hint="Use a Chromium node: Selenium Grid 4 publishes se:cdp, chromedriver a debuggerAddress.",
        )
    return WebDriverSession(endpoint, session_id, cdp)


async def delete_session(client: httpx.AsyncClient, session: WebDriverSession) -> None:
    await client.delete(f"{session.endpoint.rstrip('/')}/session/{session.session_id}")


def _value(reply: httpx.Response) -> dict[str, Any]:
    try:
        body = reply.json()
    except ValueError:
        body = {}
    value = body.get("value") if isinstance(body, dict) else None
    if reply.status_code >= 400 or not isinstance(value, dict):
        message = value.get("message") if isinstance(value, dict) else reply.text[:200]
        raise ExecutionError(f"WebDriver new session failed (HTTP {reply.status_code}): {message}")
    return value
