"""The URL guard: a small HTTP proxy on 127.0.0.1 that each guarded browser context sends all its traffic to.

Chromium sends every request of the context through it: navigations, every hop of a redirect chain,
subresources, fetch/XHR, workers, WebSockets, and the context's own HTTP client (`context.request`,
used by `map`). For each request or CONNECT tunnel the guard checks the target with the UrlPolicy,
resolving the host itself, and then connects to exactly the address it checked, so a name that
resolves to a public address for the check and to a private one a moment later (DNS rebinding)
gains nothing. A refused request gets a 403 page (plain http) or a failed tunnel (https), and the
refusal is reported to the window so tools can name the rule. A browser connection carries request
after request (keep-alive): each one is checked, and an origin connection is reused only for the
host and port it was opened and checked for.

Why a proxy rather than `context.route`: Playwright does not call route handlers for the follow-up
request of a redirect, even of a redirect the handler fulfilled itself, so a route guard cannot see
where a redirect leads. Request routes of browser_route run before the traffic leaves Chromium and
are unaffected: a mocked response never reaches the guard, everything else always does.

Not covered: WebRTC (UDP, which does not use the proxy) and DNS prefetching (lookups, no connections).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import SplitResult, urlsplit

import anyio
import anyio.abc
from anyio.abc import ByteReceiveStream, ByteSendStream, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from browserd.daemon.errors import NotSupported
from browserd.daemon.policy.addresses import IPAddress
from browserd.daemon.policy.http1 import CHUNK, UNTIL_CLOSE, BadMessage, Head, body_length, read_head, relay_body
from browserd.daemon.policy.origins import DEFAULT_PORTS
from browserd.daemon.policy.refusals import REFUSED_HEADER, UrlGuard
from browserd.daemon.policy.urls import Refusal, UrlPolicy
from browserd.protocol.messages import TrustLevel

log = logging.getLogger(__name__)

# A browser connection with no request for this long is closed; the browser opens another when needed.
IDLE_TIMEOUT_S = 60
CONNECT_TIMEOUT_S = 10
# An origin that sends nothing for this long is cut off: the browser gets a 504 if no answer had begun,
# else a closed connection. Generous, since a tunnel or a WebSocket may rightly sit quiet for minutes.
ORIGIN_IDLE_TIMEOUT_S = 300.0
# Hop-by-hop fields: they concern one connection, not the message (RFC 9110 §7.6.1).
_HOP_BY_HOP = ("connection", "keep-alive", "proxy-connection", "proxy-authorization", "te")
_CLOSED = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)

_BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


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


def _gateway_timeout(netloc: str) -> bytes:
    host = _escape(netloc)
    body = (
        f"<!doctype html><title>No answer from {host}</title><h1>No answer from {host}</h1>"
        f"<p>The server sent nothing for {ORIGIN_IDLE_TIMEOUT_S:g} s.</p>"
    ).encode()
    head = f"HTTP/1.1 504 Gateway Timeout\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n"
    return f"{head}Connection: close\r\n\r\n".encode() + body


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


class GuardProxy(UrlGuard):
    """The guard of one browser context: its own listener, so the port says whose traffic it is."""

    def __init__(self, policy: UrlPolicy, trust: TrustLevel, listener: anyio.abc.SocketListener) -> None:
        self.policy = policy
        self.trust: TrustLevel = trust
        self._listener = listener
        self._scope = anyio.CancelScope()
        super().__init__()
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

    async def _serve_client(self, client: SocketStream) -> None:
        async with client:
            try:
                await self._relay(client)
            except (BadRequest, BadMessage, anyio.DelimiterNotFound, ValueError) as exc:
                log.debug("URL guard: bad or idle request: %s", exc)
                with suppress(*_CLOSED):
                    await client.send(_BAD_REQUEST)
            except _CLOSED:
                pass  # either side hung up: nothing more to relay
            except Exception:  # one broken connection must not stop the guard of the whole window
                log.exception("URL guard: relaying failed")

    async def _relay(self, client: SocketStream) -> None:
        """Requests of one browser connection, each checked; kept alive while both sides allow it."""
        link = _Link(client, BufferedByteReceiveStream(client))
        try:
            while True:
                with anyio.move_on_after(IDLE_TIMEOUT_S) as idle:
                    head = await read_head(link.incoming)
                if idle.cancelled_caught or not await self._request(head, link):
                    return  # idle, or one side ends the connection: the browser opens another when needed
        finally:
            if link.upstream is not None:
                await link.upstream.stream.aclose()

    async def _request(self, head: Head, link: _Link) -> bool:
        """Relay one request and its answer; whether the connection may carry another one."""
        try:
            method, target, version = head.first.split(" ", 2)
        except ValueError as exc:
            raise BadRequest(f"bad request line {head.first!r}") from exc
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
            await link.client.send(_refusal_page(refusal))
            return False
        key = (host.lower(), port)
        reused = link.upstream is not None and link.upstream.key == key
        if not reused and not await link.open(key, addresses):
            return False
        if scheme is None:
            assert link.upstream is not None
            await link.client.send(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await _pipe_both(link.incoming, link.client, link.upstream)
            return False
        try:
            return await _exchange(head, method, urlsplit(target), version, link, may_retry=reused)
        except _Stale:
            # The origin had closed the idle connection we reused: the same request on a new one.
            return await link.open(key, addresses) and await _exchange(
                head, method, urlsplit(target), version, link, may_retry=False
            )


class _OriginReceive(ByteReceiveStream):
    """An origin connection's receiving side, every read bounded by ORIGIN_IDLE_TIMEOUT_S: heads, bodies and
    tunnels all read through it, so no silent origin holds a guard task forever."""

    def __init__(self, stream: SocketStream) -> None:
        self._stream = stream

    async def receive(self, max_bytes: int = 65536) -> bytes:
        with anyio.fail_after(ORIGIN_IDLE_TIMEOUT_S):
            return await self._stream.receive(max_bytes)

    async def aclose(self) -> None:
        await self._stream.aclose()


@dataclass
class _Upstream:
    key: tuple[str, int]  # the host and port it was opened for
    stream: SocketStream
    reader: BufferedByteReceiveStream


@dataclass
class _Link:
    """One connection of the browser, and the connection to an origin it relays to at the moment."""

    client: SocketStream
    incoming: BufferedByteReceiveStream
    upstream: _Upstream | None = None

    async def open(self, key: tuple[str, int], addresses: list[IPAddress]) -> bool:
        """Connect to the first of `addresses` that answers (closing the previous origin connection)."""
        if self.upstream is not None:
            await self.upstream.stream.aclose()
            self.upstream = None
        for address in addresses:
            try:
                with anyio.fail_after(CONNECT_TIMEOUT_S):
                    stream = await anyio.connect_tcp(str(address), key[1])
            except (OSError, TimeoutError):
                continue
            self.upstream = _Upstream(key, stream, BufferedByteReceiveStream(_OriginReceive(stream)))
            return True
        # Where the browser would show its own "cannot reach" page, say what the guard tried.
        host = _escape(key[0])
        what = f"{host} did not resolve" if not addresses else f"no answer from {host}:{key[1]}"
        body = f"<!doctype html><title>Cannot reach {host}</title><h1>Cannot reach {host}</h1><p>{what}</p>"
        head = f"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n"
        await self.client.send(f"{head}Connection: close\r\n\r\n{body}".encode())
        return False


class _Stale(Exception):
    """A reused origin connection turned out closed before it answered anything."""


async def _exchange(
    head: Head, method: str, target: SplitResult, version: str, link: _Link, *, may_retry: bool
) -> bool:
    """One plain-http request and its answer; whether both connections may carry another one."""
    upstream = link.upstream
    assert upstream is not None
    upgrade = head.get("upgrade") is not None and head.has_token("connection", "upgrade")
    client_closes = version == "HTTP/1.0" or any(head.has_token(f, "close") for f in ("connection", "proxy-connection"))
    path = (target.path or "/") + (f"?{target.query}" if target.query else "")
    out = Head(f"{method} {path} {version}", head.without(*_HOP_BY_HOP).fields)
    if upgrade:
        out.fields.append(("Connection", "Upgrade"))
    request_length = body_length(head, request=True)
    retry = may_retry and not upgrade and request_length == 0
    try:
        await upstream.stream.send(out.encode())
    except _CLOSED as exc:
        if retry:
            raise _Stale from exc
        raise
    if upgrade:
        await _pipe_both(link.incoming, link.client, upstream)
        return False
    await relay_body(link.incoming, upstream.stream, request_length)
    while True:
        try:
            reply = await read_head(upstream.reader)
        except TimeoutError:
            await link.client.send(_gateway_timeout(target.netloc))
            return False
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError) as exc:
            if retry:
                raise _Stale from exc
            raise
        retry = False
        status_text = reply.first.split(" ", 2)[1] if reply.first.count(" ") else ""
        if not status_text.isdigit():
            raise BadMessage(f"bad status line from {target.netloc}: {reply.first!r}")
        status = int(status_text)
        if status == 101:  # a WebSocket: from here on, raw bytes both ways
            await link.client.send(reply.encode())
            await _pipe_both(link.incoming, link.client, upstream)
            return False
        if status >= 200:
            break
        await link.client.send(reply.encode())  # 100 Continue, 103 Early Hints
    length = body_length(reply, request=False, method=method.upper(), status=status)
    keep = not client_closes and length != UNTIL_CLOSE and not reply.first.startswith("HTTP/1.0")
    keep = keep and not reply.has_token("connection", "close")
    answer = reply.without(*_HOP_BY_HOP)
    if not keep:
        answer.fields.append(("Connection", "close"))
    await link.client.send(answer.encode())
    await relay_body(upstream.reader, link.client, length)
    return keep


async def _pipe_both(incoming: BufferedByteReceiveStream, client: SocketStream, upstream: _Upstream) -> None:
    """Raw bytes both ways (a tunnel, a WebSocket) until either side stops."""

    async def copy(source: ByteReceiveStream, sink: ByteSendStream) -> None:
        try:
            while True:
                await sink.send(await source.receive(CHUNK))
        except _CLOSED:
            pass
        tasks.cancel_scope.cancel()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(copy, incoming, upstream.stream)
        tasks.start_soon(copy, upstream.reader, client)


class Guards:
    """The daemon's URL policy and the guards of its browser contexts, served in this object's task group."""

    def __init__(self, policy: UrlPolicy, upstream_proxy: str = "") -> None:
        self.policy = policy
        # [browser] proxy: a guard connects to the address it checked, so it cannot also go through a proxy.
        self.upstream_proxy = upstream_proxy
        self._task_group: anyio.abc.TaskGroup | None = None

    def refuse_proxy(self, trust: TrustLevel, proxy: str | None = None) -> None:
        """NOT_SUPPORTED when a context of this trust level needs a guard and would use a proxy too."""
        if (self.upstream_proxy if proxy is None else proxy) and self.policy.guarded(trust):
            raise NotSupported(
                "a URL guard (remote trust level or [security] lists) cannot be combined with a proxy: "
                "the guard must resolve and connect to each host itself to check its address",
                hint="Use a local session without [security] lists for proxied pages, or unset the proxy.",
            )

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
        self.refuse_proxy(trust)
        if self._task_group is None:
            raise RuntimeError("URL guards run only inside `async with guards:`")
        listeners = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        listener = listeners.listeners[0]
        assert isinstance(listener, anyio.abc.SocketListener)
        guard = GuardProxy(self.policy, trust, listener)
        self._task_group.start_soon(guard.serve, name=f"url guard {guard.server}")
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
