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
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import urlsplit

import anyio
import anyio.abc
import h11
from anyio.abc import ByteReceiveStream, ByteSendStream, SocketStream

from browserd.daemon.errors import NotSupported
from browserd.daemon.policy.addresses import IPAddress
from browserd.daemon.policy.http1 import CHUNK, BadMessage, Peer, forwarded, has_token
from browserd.daemon.policy.origins import DEFAULT_PORTS
from browserd.daemon.policy.urls import Refusal, UrlPolicy
from browserd.protocol.messages import TrustLevel

log = logging.getLogger(__name__)

# A browser connection with no request for this long is closed; the browser opens another when needed.
IDLE_TIMEOUT_S = 60
CONNECT_TIMEOUT_S = 10
# An origin that sends nothing for this long is cut off: the browser gets a 504 if no answer had begun,
# else a closed connection. Generous, since a tunnel or a WebSocket may rightly sit quiet for minutes.
ORIGIN_IDLE_TIMEOUT_S = 300.0
REFUSALS_KEPT = 50
# Marks the guard's own refusal page, so a navigation that ends on it can be reported as a refusal.
REFUSED_HEADER = "x-browserd-refused"
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
            except (BadRequest, BadMessage, h11.LocalProtocolError, ValueError) as exc:
                log.debug("URL guard: bad or idle request: %s", exc)
                with suppress(*_CLOSED):
                    await client.send(_BAD_REQUEST)
            except _CLOSED:
                pass  # either side hung up: nothing more to relay
            except Exception:  # one broken connection must not stop the guard of the whole window
                log.exception("URL guard: relaying failed")

    async def _relay(self, client: SocketStream) -> None:
        """Requests of one browser connection, each checked; kept alive while both sides allow it."""
        link = _Link(client, Peer(client, client, h11.SERVER))
        try:
            while True:
                with anyio.move_on_after(IDLE_TIMEOUT_S) as idle:
                    event = await link.browser.next_event()
                if idle.cancelled_caught or not isinstance(event, h11.Request):
                    return  # idle, or the browser closed the connection: it opens another when needed
                if not await self._request(event, link) or not link.browser.reusable():
                    return
        finally:
            if link.upstream is not None:
                await link.upstream.stream.aclose()

    async def _request(self, request: h11.Request, link: _Link) -> bool:
        """Relay one request and its answer; whether the connection may carry another one."""
        method, target = request.method.decode("ascii").upper(), request.target.decode("latin-1")
        self.requests += 1
        if method == "CONNECT":
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
        assert link.upstream is not None
        if scheme is None:
            if not isinstance(await link.browser.next_event(), h11.EndOfMessage):
                raise BadRequest("a CONNECT request with a body")
            await link.browser.send(h11.Response(status_code=200, headers=[], reason=b"Connection Established"))
            if link.browser.leftover:  # a TLS hello sent right behind the CONNECT
                await link.upstream.stream.send(link.browser.leftover)
            await _pipe_both(link, b"")
            return False
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            return await _exchange(request, path, link, may_retry=reused)
        except _Stale:
            # The origin had closed the idle connection we reused: the same request on a new one.
            return await link.open(key, addresses) and await _exchange(request, path, link, may_retry=False)


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
    origin: Peer


@dataclass
class _Link:
    """One connection of the browser, and the connection to an origin it relays to at the moment."""

    client: SocketStream
    browser: Peer
    upstream: _Upstream | None = None

    async def open(self, key: tuple[str, int], addresses: list[IPAddress]) -> bool:
        """Connect to the first of `addresses` that answers (closing the previous origin connection)."""
        await self.drop_upstream()
        for address in addresses:
            try:
                with anyio.fail_after(CONNECT_TIMEOUT_S):
                    stream = await anyio.connect_tcp(str(address), key[1])
            except (OSError, TimeoutError):
                continue
            self.upstream = _Upstream(key, stream, Peer(_OriginReceive(stream), stream, h11.CLIENT))
            return True
        # Where the browser would show its own "cannot reach" page, say what the guard tried.
        host = _escape(key[0])
        what = f"{host} did not resolve" if not addresses else f"no answer from {host}:{key[1]}"
        body = f"<!doctype html><title>Cannot reach {host}</title><h1>Cannot reach {host}</h1><p>{what}</p>"
        head = f"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n"
        await self.client.send(f"{head}Connection: close\r\n\r\n{body}".encode())
        return False

    async def drop_upstream(self) -> None:
        if self.upstream is not None:
            await self.upstream.stream.aclose()
            self.upstream = None


class _Stale(Exception):
    """A reused origin connection turned out closed before it answered anything."""


async def _exchange(request: h11.Request, path: str, link: _Link, *, may_retry: bool) -> bool:
    """One plain-http request and its answer; whether the browser's connection may carry another one."""
    upstream = link.upstream
    assert upstream is not None
    origin, browser = upstream.origin, link.browser
    raw = list(request.headers.raw_items())
    upgrade = has_token(raw, b"connection", b"upgrade") and any(k.lower() == b"upgrade" for k, _ in raw)
    fields = forwarded(raw, keep=(b"upgrade",) if upgrade else ())
    if upgrade:
        fields.append((b"Connection", b"Upgrade"))
    bodyless = not any(k.lower() in (b"content-length", b"transfer-encoding") for k, _ in raw)
    retry = may_retry and not upgrade and bodyless
    try:
        await origin.send(h11.Request(method=request.method, target=path.encode("latin-1"), headers=fields))
    except _CLOSED as exc:
        if retry:
            raise _Stale from exc
        raise
    # The request's body (a retry on a fresh connection has relayed it already: only bodyless ones are retried).
    while browser.conn.their_state is h11.SEND_BODY:
        event = await browser.next_event()
        if isinstance(event, h11.EndOfMessage):
            break
        if not isinstance(event, h11.Data):
            raise BadRequest("the browser closed the connection inside a request body")
        await origin.send(event)
    await origin.send(h11.EndOfMessage())
    while True:
        try:
            event = await origin.next_event()
        except TimeoutError:
            await link.client.send(_gateway_timeout(upstream.key[0]))
            return False
        except _CLOSED as exc:
            if retry:
                raise _Stale from exc
            raise
        except BadMessage as exc:
            if retry and origin.ended:  # closed before it answered: h11 calls that an incomplete message
                raise _Stale from exc
            raise
        if isinstance(event, h11.ConnectionClosed):
            if retry:
                raise _Stale
            raise anyio.EndOfStream
        retry = False
        if isinstance(event, h11.InformationalResponse):
            if event.status_code == 101:  # a WebSocket: from here on, raw bytes both ways
                keep = (b"connection", b"upgrade")
                reply = h11.InformationalResponse(
                    status_code=101, headers=forwarded(list(event.headers.raw_items()), keep=keep), reason=event.reason
                )
                await browser.send(reply)
                if browser.leftover:
                    await upstream.stream.send(browser.leftover)
                await _pipe_both(link, origin.leftover)
                return False
            await browser.send(event)  # 100 Continue, 103 Early Hints
            continue
        if isinstance(event, h11.Response):
            break
        raise BadMessage(f"unexpected {type(event).__name__} from {upstream.key[0]}")
    answer = h11.Response(
        status_code=event.status_code, headers=forwarded(list(event.headers.raw_items())), reason=event.reason
    )
    await browser.send(answer)
    while not isinstance(part := await origin.next_event(), h11.EndOfMessage):
        if not isinstance(part, h11.Data):
            break  # the origin closed a response framed by its end: the browser's connection ends with it
        await browser.send(part)
    else:
        await browser.send(h11.EndOfMessage())
        if not origin.reusable():
            await link.drop_upstream()
        return True
    await link.drop_upstream()
    return False


async def _pipe_both(link: _Link, from_origin: bytes) -> None:
    """Raw bytes both ways (a tunnel, a WebSocket) until either side stops; `from_origin`: bytes the origin sent
    with its switch, the browser's leftovers having gone to the origin already."""
    upstream = link.upstream
    assert upstream is not None
    if from_origin:
        await link.client.send(from_origin)

    async def copy(source: ByteReceiveStream, sink: ByteSendStream) -> None:
        try:
            while True:
                await sink.send(await source.receive(CHUNK))
        except _CLOSED:
            pass
        tasks.cancel_scope.cancel()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(copy, link.client, upstream.stream)
        tasks.start_soon(copy, upstream.origin.receive, link.client)


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
