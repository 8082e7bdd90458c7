"""The URL guard: a small HTTP proxy on 127.0.0.1 that each guarded browser context sends all its traffic to.

Chromium sends every request of the context through it: navigations, every hop of a redirect chain,
subresources, fetch/XHR, workers, WebSockets, and the context's own HTTP client (`context.request`,
used by `map`). For each request or CONNECT tunnel the guard checks the target with the UrlPolicy,
resolving the host itself, and then connects to exactly the address it checked, so a name that
resolves to a public address for the check and to a private one a moment later (DNS rebinding)
gains nothing. A refused request gets a 403 page (plain http) or a failed tunnel (https), and the
refusal is reported to the window so tools can name the rule.

Why a proxy rather than `context.route`: Playwright does not call route handlers for the follow-up
request of a redirect, even of a redirect the handler fulfilled itself, so a route guard cannot see
where a redirect leads. Request routes of browser_route run before the traffic leaves Chromium and
are unaffected: a mocked response never reaches the guard, everything else always does.

Not covered: WebRTC (UDP, which does not use the proxy) and DNS prefetching (lookups, no connections).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, Self
from urllib.parse import urlsplit

import anyio
import anyio.abc
from anyio.abc import ByteReceiveStream, ByteSendStream, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from browserd.daemon.policy.addresses import IPAddress
from browserd.daemon.policy.origins import DEFAULT_PORTS
from browserd.daemon.policy.urls import Refusal, UrlPolicy
from browserd.protocol.messages import TrustLevel

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
HEAD_TIMEOUT_S = 30
CONNECT_TIMEOUT_S = 10
CHUNK = 64 * 1024
REFUSALS_KEPT = 50
# Marks the guard's own refusal page, so a navigation that ends on it can be reported as a refusal.
REFUSED_HEADER = "x-browserd-refused"
# Hop-by-hop headers of the client's request that must not reach the origin server.
_PROXY_HEADERS = ("proxy-connection", "proxy-authorization", "connection", "keep-alive")
_CLOSED = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)

_BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
OnRefused = Callable[[Refusal], None]


class BadRequest(Exception):
    pass


def _refusal_page(refusal: Refusal) -> bytes:
    body = (
        "<!doctype html><title>Refused by the browserd URL policy</title>"
        f"<h1>Refused by the browserd URL policy</h1><p>{_escape(refusal.url)}: {_escape(refusal.reason)} "
        f"(rule {refusal.rule})</p>"
    ).encode()
    head = (
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n{REFUSED_HEADER}: {refusal.rule}\r\n\r\n"
    )
    return head.encode() + body


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _host_port(authority: str) -> tuple[str, int]:
    parts = urlsplit(f"//{authority}")
    try:
        port = parts.port
    except ValueError as exc:
        raise BadRequest(f"bad port in {authority!r}") from exc
    if not parts.hostname or port is None:
        raise BadRequest(f"bad CONNECT target {authority!r}")
    return parts.hostname, port


class GuardProxy:
    """The guard of one browser context: its own listener, so the port says whose traffic it is."""

    def __init__(self, policy: UrlPolicy, trust: TrustLevel, listener: anyio.abc.SocketListener) -> None:
        self.policy = policy
        self.trust: TrustLevel = trust
        self._listener = listener
        self._scope = anyio.CancelScope()
        self.refusals: deque[Refusal] = deque(maxlen=REFUSALS_KEPT)
        self.on_refused: OnRefused | None = None
        self._refused_total = 0
        self.requests = 0
        self.server = f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}"

    async def serve(self) -> None:
        with self._scope:
            try:
                async with self._listener, anyio.create_task_group() as connections:
                    while True:
                        client = await self._listener.accept()
                        connections.start_soon(self._serve_client, client)
            except Exception:  # fails closed: the context's requests find no proxy, none goes out unchecked
                log.exception("the URL guard at %s stopped", self.server)

    def close(self) -> None:
        self._scope.cancel()

    @property
    def context_options(self) -> dict[str, Any]:
        """What browser.new_context needs to send all of the context's traffic through this guard."""
        return {"proxy": {"server": self.server}}

    def mark(self) -> int:
        """A bookmark in the refusals, for `refusal_since` after a navigation."""
        return self._refused_total

    def navigation_refusal(self, mark: int, page_url: str, reply_headers: dict[str, str] | None) -> Refusal | None:
        """After a navigation from `mark`: the refusal that ended it, if any (reply_headers None: it failed).

        A refused plain-http target ends on the guard's refusal page; a refused https target (a tunnel)
        fails the navigation, whose error names the first URL of the redirect chain, not the refused one.
        """
        if reply_headers is None:
            return self.refusal_since(mark, page_url)
        if reply_headers.get(REFUSED_HEADER):
            return self.refusal_since(mark, page_url, last=True)
        return None

    def refusal_since(self, mark: int, url: str, *, last: bool = False) -> Refusal | None:
        """The refusal of `url` since `mark` (a tunnel refusal names host:port only), else the first (last)."""
        recent = list(self.refusals)[max(0, len(self.refusals) - (self._refused_total - mark)) :]
        if not recent:
            return None
        netloc = urlsplit(url).netloc
        for refusal in recent:
            if refusal.url in (url, netloc):
                return refusal
        return recent[-1] if last else recent[0]

    def _refuse(self, refusal: Refusal) -> None:
        log.info("URL guard refused %s (%s)", refusal.url, refusal.rule)
        self.refusals.append(refusal)
        self._refused_total += 1
        if self.on_refused is not None:
            self.on_refused(refusal)

    async def _serve_client(self, client: SocketStream) -> None:
        async with client:
            try:
                await self._relay(client)
            except (BadRequest, anyio.DelimiterNotFound, TimeoutError, ValueError) as exc:
                log.debug("URL guard: bad or idle request: %s", exc)
                with suppress(*_CLOSED):
                    await client.send(_BAD_REQUEST)
            except _CLOSED:
                pass  # either side hung up: nothing more to relay
            except Exception:  # one broken connection must not stop the guard of the whole window
                log.exception("URL guard: relaying failed")

    async def _relay(self, client: SocketStream) -> None:
        incoming = BufferedByteReceiveStream(client)
        with anyio.fail_after(HEAD_TIMEOUT_S):
            head = await incoming.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES)
        request_line, *headers = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = request_line.split(" ", 2)
        except ValueError as exc:
            raise BadRequest(f"bad request line {request_line!r}") from exc
        self.requests += 1
        if method.upper() == "CONNECT":
            host, port = _host_port(target)
            scheme, url = None, target
        else:
            parts = urlsplit(target)
            scheme = parts.scheme.lower()
            if scheme not in DEFAULT_PORTS or not parts.hostname:
                raise BadRequest(f"not an absolute http URL: {target!r}")
            host, port = parts.hostname, parts.port or DEFAULT_PORTS[scheme]
            url = target
        refusal, addresses = await self.policy.check_target(url, scheme, host, port, self.trust, connect=True)
        if refusal is not None:
            self._refuse(refusal)
            await client.send(_refusal_page(refusal))
            return
        upstream = await _connect(addresses, port)
        if upstream is None:
            await client.send(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        async with upstream:
            if scheme is None:
                await client.send(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                parts = urlsplit(target)
                path = parts.path or "/"
                kept = [h for h in headers if h and h.split(":", 1)[0].strip().lower() not in _PROXY_HEADERS]
                upgrade = any(h.lower().startswith("upgrade:") for h in kept)
                # One request per connection: a second one on it could name another host, checked by nobody.
                connection = "Connection: Upgrade" if upgrade else "Connection: close"
                line = f"{method} {path}{'?' + parts.query if parts.query else ''} {version}"
                await upstream.send("\r\n".join([line, *kept, connection, "", ""]).encode("latin-1"))
            await _pipe_both(incoming, client, upstream, rewrite_reply=scheme is not None)


async def _connect(addresses: list[IPAddress], port: int) -> SocketStream | None:
    for address in addresses:
        try:
            with anyio.fail_after(CONNECT_TIMEOUT_S):
                return await anyio.connect_tcp(str(address), port)
        except (OSError, TimeoutError):
            continue
    return None


async def _pipe_both(
    incoming: BufferedByteReceiveStream, client: SocketStream, upstream: SocketStream, *, rewrite_reply: bool
) -> None:
    async def copy(source: ByteReceiveStream, sink: ByteSendStream) -> None:
        try:
            while True:
                await sink.send(await source.receive(CHUNK))
        except _CLOSED:
            pass
        tasks.cancel_scope.cancel()

    async def reply() -> None:
        # The answer of a plain http request tells the browser not to reuse this connection either.
        replied = BufferedByteReceiveStream(upstream)
        try:
            head = await replied.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES)
            await client.send(_closing(head) + b"\r\n\r\n")
        except _CLOSED:
            tasks.cancel_scope.cancel()
            return
        await copy(replied, client)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(copy, incoming, upstream)
        if rewrite_reply:
            tasks.start_soon(reply)
        else:
            tasks.start_soon(copy, upstream, client)


def _closing(head: bytes) -> bytes:
    lines = head.split(b"\r\n")
    status = lines[0].split(b" ", 2)
    if len(status) > 1 and status[1].startswith(b"1"):
        return head  # 101 Switching Protocols (a WebSocket) and other interim answers stay as they are
    kept = [line for line in lines[1:] if line.split(b":", 1)[0].strip().lower() not in (b"connection", b"keep-alive")]
    return b"\r\n".join([lines[0], *kept, b"Connection: close"])


class Guards:
    """The daemon's URL policy and the guards of its browser contexts, served in this object's task group."""

    def __init__(self, policy: UrlPolicy) -> None:
        self.policy = policy
        self._task_group: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Self:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)
        self._task_group = None

    async def open(self, trust: TrustLevel) -> GuardProxy | None:
        """A running guard for a new context of this trust level, or None when it needs none."""
        if not self.policy.guarded(trust):
            return None
        if self._task_group is None:
            raise RuntimeError("URL guards run only inside `async with guards:`")
        listeners = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        listener = listeners.listeners[0]
        assert isinstance(listener, anyio.abc.SocketListener)
        guard = GuardProxy(self.policy, trust, listener)
        self._task_group.start_soon(guard.serve)
        return guard

    @asynccontextmanager
    async def guarding(self, trust: TrustLevel) -> AsyncIterator[GuardProxy | None]:
        """A guard for one short-lived context (a scrape, a map), closed with it."""
        guard = await self.open(trust)
        try:
            yield guard
        finally:
            if guard is not None:
                guard.close()
