"""The URL guard proxy on raw sockets (daemon/policy/proxy.py): what it forwards, refuses and survives."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from browserd.daemon.policy.proxy import GuardProxy, Guards
from browserd.daemon.policy.urls import UrlPolicy
from browserd.protocol.config import SecurityConfig

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def origin_server(seen: list[bytes]) -> AsyncIterator[int]:
    """A one-answer HTTP server on 127.0.0.1 that records each request head it gets."""

    async def answer(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            seen.append(await BufferedByteReceiveStream(stream).receive_until(b"\r\n\r\n", 65536))
            await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello")

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, answer)
        yield listener.extra(anyio.abc.SocketAttribute.local_port)
        tg.cancel_scope.cancel()


@asynccontextmanager
async def guard(trust: str = "remote", **security: list[str]) -> AsyncIterator[GuardProxy]:
    async with Guards(UrlPolicy(SecurityConfig(**security))) as guards:  # type: ignore[arg-type]
        opened = await guards.open(trust)  # type: ignore[arg-type]
        assert opened is not None
        yield opened
        opened.close()


async def exchange(proxy: GuardProxy, request: bytes) -> bytes:
    port = int(proxy.server.rsplit(":", 1)[1])
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(request)
        received = b""
        with anyio.fail_after(10):
            try:
                while True:
                    received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return received


async def test_a_tunnel_to_loopback_is_refused_and_recorded() -> None:
    async with guard() as proxy:
        reply = await exchange(proxy, b"CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 403") and b"x-browserd-refused: loopback" in reply
        assert [(r.url, r.rule) for r in proxy.refusals] == [("127.0.0.1:9", "loopback")]


async def test_forwards_an_exempt_origin_in_origin_form_one_request_per_connection() -> None:
    seen: list[bytes] = []
    async with origin_server(seen) as port:
        origin = f"http://127.0.0.1:{port}"
        async with guard(remote_exempt_origins=[origin]) as proxy:
            request = (
                f"GET {origin}/page?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nProxy-Connection: keep-alive\r\n\r\n"
            )
            reply = await exchange(proxy, request.encode())
    assert reply.endswith(b"hello") and b"Connection: close" in reply and b"keep-alive" not in reply
    head = seen[0].decode()
    assert head.startswith("GET /page?q=1 HTTP/1.1\r\n")
    assert "Proxy-Connection" not in head and "Connection: close" in head


async def test_bad_requests_are_answered_and_the_guard_keeps_serving() -> None:
    async with guard() as proxy:
        assert (await exchange(proxy, b"nonsense\r\n\r\n")).startswith(b"HTTP/1.1 400")
        assert (await exchange(proxy, b"GET http://x:99999/ HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 400")
        assert (await exchange(proxy, b"GET /relative HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 400")
        reply = await exchange(proxy, b"GET http://10.0.0.1/ HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n")
        assert b"x-browserd-refused: private-address" in reply


async def test_local_sessions_get_no_guard_unless_lists_are_set() -> None:
    async with Guards(UrlPolicy(SecurityConfig())) as guards:
        assert await guards.open("local") is None
