"""The URL guard proxy on raw sockets (daemon/policy/proxy.py): what it forwards, refuses and survives."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from browserd.daemon.config import SecurityConfig
from browserd.daemon.policy import proxy as proxy_module
from browserd.daemon.policy import urls as urls_module
from browserd.daemon.policy.addresses import IPAddress
from browserd.daemon.policy.proxy import GuardProxy, Guards
from browserd.daemon.policy.urls import UrlPolicy

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def origin_server(seen: list[tuple[int, str]], *, keep_alive: bool = True) -> AsyncIterator[int]:
    """An HTTP server on 127.0.0.1 recording (connection number, request head) of every request.

    Each answer says keep-alive; with keep_alive=False the server still closes after one answer, as an
    origin does when an idle connection times out. /chunked answers with a chunked body.
    """
    connections = 0

    async def answer(stream: anyio.abc.SocketStream) -> None:
        nonlocal connections
        connections += 1
        number = connections
        reader = BufferedByteReceiveStream(stream)
        async with stream:
            try:
                while True:
                    head = (await reader.receive_until(b"\r\n\r\n", 65536)).decode()
                    seen.append((number, head))
                    path = head.split(" ")[1]
                    if path == "/chunked":
                        await stream.send(
                            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nchunk\r\n0\r\n\r\n"
                        )
                    else:
                        body = f"answer to {path}".encode()
                        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                    if not keep_alive:
                        return
            except (anyio.EndOfStream, anyio.IncompleteRead):
                return

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


async def exchange(proxy: GuardProxy, *requests: bytes, until: bytes = b"") -> bytes:
    """Send the requests one after the other on one connection; read until `until` arrives, or the end."""
    port = int(proxy.server.rsplit(":", 1)[1])
    received = b""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        with anyio.fail_after(10):
            for request in requests:
                await stream.send(request)
                try:
                    while not (until and until in received) and not received.endswith(request_end(request)):
                        received += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return received
    return received


def request_end(request: bytes) -> bytes:
    """What the answer to one of these test requests ends with (its body); nothing known for bad ones."""
    words = request.split(b" ")
    if len(words) < 3 or not words[1].startswith(b"http://"):
        return b"\0never"
    path = words[1].split(b"/", 3)[-1]
    return b"chunk\r\n0\r\n\r\n" if path == b"chunked" else b"answer to /" + path


def get(origin: str, path: str, *extra: str) -> bytes:
    host = origin.split("//")[1]
    return "\r\n".join([f"GET {origin}{path} HTTP/1.1", f"Host: {host}", *extra, "", ""]).encode()


async def test_a_tunnel_to_loopback_is_refused_and_recorded() -> None:
    async with guard() as proxy:
        reply = await exchange(proxy, b"CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n", until=b"</p>")
        assert reply.startswith(b"HTTP/1.1 403") and b"x-browserd-refused: loopback" in reply
        assert [(r.url, r.rule) for r in proxy.refusals] == [("127.0.0.1:9", "loopback")]


async def test_requests_of_one_connection_reuse_the_origin_connection() -> None:
    seen: list[tuple[int, str]] = []
    async with origin_server(seen) as port:
        origin = f"http://127.0.0.1:{port}"
        async with guard(remote_exempt_origins=[origin]) as proxy:
            reply = await exchange(
                proxy,
                get(origin, "/one?q=1", "Proxy-Connection: keep-alive"),
                get(origin, "/two"),
                get(origin, "/chunked"),
            )
    assert b"answer to /one?q=1" in reply and b"answer to /two" in reply and reply.endswith(b"5\r\nchunk\r\n0\r\n\r\n")
    assert [number for number, _ in seen] == [1, 1, 1], "the keep-alive origin connection was not reused"
    first = seen[0][1]
    assert first.startswith("GET /one?q=1 HTTP/1.1\r\n") and "Proxy-Connection" not in first


async def test_a_stale_origin_connection_is_replaced_for_the_next_request() -> None:
    seen: list[tuple[int, str]] = []
    async with origin_server(seen, keep_alive=False) as port:
        origin = f"http://127.0.0.1:{port}"
        async with guard(remote_exempt_origins=[origin]) as proxy:
            reply = await exchange(proxy, get(origin, "/one"), get(origin, "/two"))
    assert b"answer to /one" in reply and reply.endswith(b"answer to /two")
    assert [number for number, _ in seen] == [1, 2]


async def test_every_request_on_a_connection_is_checked() -> None:
    seen: list[tuple[int, str]] = []
    async with origin_server(seen) as port:
        origin = f"http://127.0.0.1:{port}"
        async with guard(remote_exempt_origins=[origin]) as proxy:
            refused = get(f"http://127.0.0.2:{port}", "/secret")
            reply = await exchange(proxy, get(origin, "/one"), refused, until=b"(rule loopback)")
            assert [(r.url, r.rule) for r in proxy.refusals] == [(f"http://127.0.0.2:{port}/secret", "loopback")]
    assert b"answer to /one" in reply and b"403 Forbidden" in reply
    assert [head.split(" ")[1] for _, head in seen] == ["/one"]


async def test_bad_requests_are_answered_and_the_guard_keeps_serving() -> None:
    async with guard() as proxy:
        assert (await exchange(proxy, b"nonsense\r\n\r\n")).startswith(b"HTTP/1.1 400")
        assert (await exchange(proxy, b"GET http://x:99999/ HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 400")
        assert (await exchange(proxy, b"GET /relative HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 400")
        reply = await exchange(proxy, b"GET http://10.0.0.1/ HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", until=b"</p>")
        assert b"x-browserd-refused: private-address" in reply


async def test_local_sessions_get_no_guard_unless_lists_are_set() -> None:
    async with Guards(UrlPolicy(SecurityConfig())) as guards:
        assert await guards.open("local") is None


async def test_an_unknown_host_gets_a_page_that_says_so() -> None:
    async with guard(trust="local", blocked_origins=["blocked.invalid"]) as proxy:
        reply = await exchange(proxy, b"GET http://nowhere.invalid/ HTTP/1.1\r\nHost: nowhere.invalid\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 502") and b"nowhere.invalid did not resolve" in reply


class PinnedResolver(UrlPolicy):
    """Answers one fixed address for every name, as a resolver under an attacker's control might once."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        return [ipaddress.ip_address("127.0.0.1")]


async def test_the_guard_connects_to_the_address_it_checked() -> None:
    """DNS rebinding gains nothing: the connection goes to the checked address, the name is not resolved again."""
    seen: list[tuple[int, str]] = []
    async with origin_server(seen) as port:
        policy = PinnedResolver(SecurityConfig(remote_exempt_origins=[f"rebind.invalid:{port}"]))
        async with Guards(policy) as guards:
            proxy = await guards.open("remote")
            assert proxy is not None
            reply = await exchange(proxy, get(f"http://rebind.invalid:{port}", "/page"))
            proxy.close()
    assert reply.endswith(b"answer to /page") and seen[0][1].startswith("GET /page ")


async def test_item4_a_silent_origin_gets_a_gateway_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 11 item 4: the guard's reads from an origin have a deadline."""
    monkeypatch.setattr(proxy_module, "ORIGIN_IDLE_TIMEOUT_S", 0.3)
    arrived = anyio.Event()

    async def silent(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.receive()
            arrived.set()
            await anyio.sleep_forever()  # reads the request, never answers

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, silent)
        origin = f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}"
        async with guard(remote_exempt_origins=[origin]) as proxy:
            reply = await exchange(proxy, get(origin, "/never"), until=b"</p>")
        tg.cancel_scope.cancel()
    assert arrived.is_set()
    assert reply.startswith(b"HTTP/1.1 504 Gateway Timeout"), reply


async def test_item4_a_dns_lookup_that_never_answers_resolves_to_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11 item 4: the URL policy's DNS lookups have a deadline (an unanswered one is not cached)."""
    monkeypatch.setattr(urls_module, "DNS_TIMEOUT_S", 0.2)
    lookups = 0

    async def unanswered(*args: object, **kwargs: object) -> list[object]:
        nonlocal lookups
        lookups += 1
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    monkeypatch.setattr(urls_module.anyio, "getaddrinfo", unanswered)
    policy = UrlPolicy(SecurityConfig())
    with anyio.fail_after(10):
        assert await policy.resolve("stalls.example", 443) == []
        assert await policy.resolve("stalls.example", 443) == []
    assert lookups == 2, "a lookup that timed out is asked again next time"
