"""What every request to /mcp passes before the MCP SDK sees it: Host and Origin, the bearer token, the rate.

Refusals are plain HTTP answers (421/403, 401 with `WWW-Authenticate: Bearer`, 429 with `Retry-After`)
written before anything runs. A valid token becomes the request's `user` (the SDK's AuthenticatedUser),
so the SDK binds an `Mcp-Session-Id` to the token that opened it, and `token_of` gives the tools layer
the token's record.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, field

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from browserd.daemon.config import HttpConfig
from browserd.daemon.server.http.address import ListenAddress
from browserd.daemon.server.http.tokens import TokenRecord, TokenRefused, TokenStore

log = logging.getLogger(__name__)

_SCOPE_KEY = "browserd.token"


def token_of(request: Request | None) -> TokenRecord:
    """The token a request to /mcp came with (McpGuard let it through only with one)."""
    record = request.scope.get(_SCOPE_KEY) if request is not None else None
    if not isinstance(record, TokenRecord):
        raise RuntimeError("an /mcp request reached the tools without a token")
    return record


def security_settings(config: HttpConfig, address: ListenAddress) -> TransportSecuritySettings:
    """Host and Origin values a request may carry (DNS rebinding): the listen address, loopback names on a
    loopback listener, and what [http] allowed_hosts / allowed_origins add."""
    hosts = [str(address), *config.allowed_hosts]
    if address.loopback:
        hosts += ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
    schemes = ("https",) if config.tls_cert else ("http", "https")
    origins = [f"{scheme}://{host}" for host in hosts for scheme in schemes] + list(config.allowed_origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class RateLimit:
    """A token bucket per bearer token: `per_minute` requests in a burst, refilled evenly."""

    per_minute: int
    _buckets: dict[str, _Bucket] = field(default_factory=dict)

    def wait_s(self, key: str, now: float | None = None) -> float:
        """0 when the request may go now (and it is counted), else seconds until it may."""
        moment = time.monotonic() if now is None else now
        rate = self.per_minute / 60.0
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(self.per_minute), moment)
        bucket.tokens = min(float(self.per_minute), bucket.tokens + (moment - bucket.at) * rate)
        bucket.at = moment
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / rate


class McpGuard:
    def __init__(self, app: ASGIApp, tokens: TokenStore, config: HttpConfig, address: ListenAddress) -> None:
        self._app = app
        self._tokens = tokens
        self._origin = TransportSecurityMiddleware(security_settings(config, address))
        self._rate = RateLimit(config.rate_per_minute)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        request = Request(scope, receive)
        # Host and Origin first: a page on a rebound name learns nothing, not even whether a token is good.
        refused = await self._origin.validate_request(request)
        if refused is not None:
            await refused(scope, receive, send)
            return
        try:
            record = self._tokens.verify(_bearer(scope))
        except TokenRefused as exc:
            log.info("refused an /mcp request from %s: %s", _peer(scope), exc)
            await _send(
                send,
                401,
                "invalid_token",
                f"{exc}; send Authorization: Bearer <token> (make one with `browserd tokens create`)",
                {"www-authenticate": 'Bearer realm="browserd"'},
            )
            return
        wait = self._rate.wait_s(record.token_id)
        if wait > 0:
            retry = str(math.ceil(wait))
            await _send(
                send,
                429,
                "rate_limited",
                f"token {record.name!r} is over [http] rate_per_minute; retry in {retry} s",
                {"retry-after": retry},
            )
            return
        scope[_SCOPE_KEY] = record
        scope["user"] = AuthenticatedUser(
            AccessToken(token=record.token_id, client_id=record.token_id, scopes=[record.trust_level])
        )
        await self._app(scope, receive, send)


def _bearer(scope: Scope) -> str:
    value = Headers(scope=scope).get("authorization", "")
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "bearer" or not credentials.strip():
        raise TokenRefused("missing bearer token")
    return credentials.strip()


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"


async def _send(send: Send, status: int, error: str, description: str, headers: dict[str, str]) -> None:
    body = json.dumps({"error": error, "error_description": description}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(key.encode(), value.encode()) for key, value in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
