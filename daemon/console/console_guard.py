"""The console's door (issue 25): in front of every console route. A request must come from a loopback
address, name this server by a loopback Host (a DNS-rebinding page names its own domain), carry no
foreign Origin (and an Origin at all when it changes something), and bring the console's cookie; the
one-time link (`/open?token=`) is traded for that cookie and redirects to the console, so the token
leaves the address bar and the history. An MCP client's HTTP token opens nothing here: only the cookie
counts. Without it: 401 and no page.
"""

from __future__ import annotations

import ipaddress

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from browserd.daemon.console.auth import COOKIE_TTL_S, OPEN_PATH, ConsoleAuth
from browserd.daemon.policy.addresses import loopback_host

COOKIE = "browserd_console"
_SAFE_METHODS = frozenset({"GET", "HEAD"})
_FETCH_SITES = frozenset({"same-origin", "none"})
NO_ACCESS = "The browserd console opens only from the link `browserd console` prints.\n"
# Served with every console answer: nothing loads from elsewhere, no page frames it, no URL leaks as a Referer.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _loopback_client(scope: Scope) -> bool:
    client = scope.get("client")
    if not client:
        return False
    try:
        return ipaddress.ip_address(client[0]).is_loopback
    except ValueError:
        return False


def route_path(scope: Scope) -> str:
    """The path inside the console's mount (a Mount keeps the whole path and adds its prefix to root_path)."""
    path: str = scope["path"]
    return path.removeprefix(scope.get("root_path", "")) or "/"


def refusal(scope: Scope, headers: Headers) -> str | None:
    """Why this request may not reach the console at all (before any cookie is looked at), or None."""
    if not _loopback_client(scope):
        return "the console answers this machine only"
    server = scope.get("server")
    host = headers.get("host", "")
    if server is None or not loopback_host(host, server[1]):
        return "Host is not this server's loopback address"
    origin = headers.get("origin")
    if origin is not None and origin != f"{scope.get('scheme', 'http')}://{host}":
        return "requests from other pages are refused"
    if origin is None and scope["method"] not in _SAFE_METHODS:
        return "a change must come from the console's own page (no Origin)"
    if headers.get("sec-fetch-site", "none") not in _FETCH_SITES and route_path(scope) != OPEN_PATH:
        return "requests from other sites are refused"
    return None


class ConsoleGuard:
    """ASGI middleware in front of every console route: the checks above, the link, the cookie."""

    def __init__(self, app: ASGIApp, auth: ConsoleAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the console has none, and nothing gets past the door unchecked
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        answer = self._check(request)
        if answer is not None:
            await _secured(answer)(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": [*message.get("headers", []), *headers]}
            await send(message)

        await self.app(scope, receive, send_secured)

    def _check(self, request: Request) -> Response | None:
        reason = refusal(request.scope, request.headers)
        if reason is not None:
            return PlainTextResponse(f"Refused: {reason}.\n", status_code=403)
        if route_path(request.scope) == OPEN_PATH:
            cookie = self.auth.redeem(request.query_params.get("token", ""))
            if cookie is None:
                return PlainTextResponse("This console link was used already or has expired.\n" + NO_ACCESS, 401)
            root = request.scope.get("root_path", "")
            answer = RedirectResponse(f"{root}/", status_code=303)
            answer.set_cookie(
                COOKIE, cookie, max_age=int(COOKIE_TTL_S), path=root or "/", httponly=True, samesite="strict"
            )
            return answer
        if not self.auth.admits(request.cookies.get(COOKIE)):
            return PlainTextResponse(NO_ACCESS, status_code=401)
        return None


def _secured(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    return response
