"""The console as a client of the daemon: a session of its own, tool calls through the daemon's catalog
(the very handlers MCP clients reach, so the console never holds a copy of a tool's logic), and the
one JSON answer and error shape of its routes."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from browserd.daemon.errors import BrowserdError, InvalidParameter
from browserd.daemon.services import Services
from browserd.daemon.sessions.session import Session
from browserd.protocol.messages import TrustLevel

log = logging.getLogger(__name__)

CLIENT_NAME = "browserd console"
Handler = Callable[[Request], Awaitable[Response]]


def json_answer(data: Any, status: int = 200) -> Response:
    return Response(msgspec.json.encode(data), status_code=status, media_type="application/json")


def error_answer(exc: BrowserdError) -> Response:
    status = 404 if exc.code.endswith("_NOT_FOUND") else 400
    return json_answer(msgspec.to_builtins(exc.info()), status)


def answers_errors(handler: Handler) -> Handler:
    """A route whose BrowserdError becomes the daemon's error shape (and anything else a 500 that says so)."""

    async def route(request: Request) -> Response:
        try:
            return await handler(request)
        except BrowserdError as exc:
            return error_answer(exc)
        except Exception:
            log.exception("console: %s %s failed", request.method, request.url.path)
            failure = BrowserdError("the console's request failed; the daemon's log says why")
            return json_answer(msgspec.to_builtins(failure.info()), 500)

    return route


async def body_of(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = msgspec.json.decode(raw) if raw else {}
    except msgspec.DecodeError as exc:
        raise InvalidParameter(f"the request body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise InvalidParameter("the request body must be a JSON object")
    return body


def int_param(request: Request, name: str, default: int) -> int:
    """A whole-number query parameter (`?offset=50`), or INVALID_PARAMETER naming it."""
    text = request.query_params.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise InvalidParameter(f"`{name}` must be a whole number, not {text!r}", field=name) from None


class ConsoleClient:
    def __init__(self, services: Services) -> None:
        self.services = services
        self._sessions: dict[TrustLevel, Session] = {}

    def session(self, trust: TrustLevel = "local") -> Session:
        """The console's own session (local, like the person at this machine): what it replays runs there. A run
        a remote session made runs again in a remote one (`trust`): its inputs never gain the console's rights."""
        sessions = self.services.sessions
        session = self._sessions.get(trust)
        if session is None or session.id not in sessions.sessions:
            session = self._sessions[trust] = sessions.create(CLIENT_NAME, trust, connected=True, transport="console")
        return session

    async def call(self, tool: str, arguments: dict[str, Any], trust: TrustLevel = "local") -> dict[str, Any]:
        """A tool's own handler on the console's session of `trust`; its BrowserdError propagates."""
        return await self.services.tools.call(tool, arguments, self.services, self.session(trust))
