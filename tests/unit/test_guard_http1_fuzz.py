"""Malformed and ambiguous requests through the URL guard (issue 20): each is refused with a 400 and none of its
bytes reach the origin, whatever its other headers, their order and case, or the body (often a second,
smuggled request). Well-formed requests built from the same pieces still arrive, exactly once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import anyio.abc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_guard_proxy import guard

SMUGGLED = b"GET http://127.0.0.2/admin HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n"
# Header lines that make a request's framing ambiguous or its head malformed; {n} a length, {m} another.
AMBIGUOUS = {
    "duplicate Content-Length": ["Content-Length: {n}", "Content-Length: {m}"],
    "same Content-Length twice": ["Content-Length: {n}", "content-length: {n}"],
    "Content-Length with Transfer-Encoding": ["Content-Length: {n}", "Transfer-Encoding: chunked"],
    "Transfer-Encoding with Content-Length": ["Transfer-Encoding: chunked", "Content-Length: {n}"],
    "obsolete line folding": ["X-Folded: a", " b"],
    "obsolete line folding by tab": ["X-Folded: a", "\tb"],
    "folded Content-Length": ["Content-Length: {n}", " {m}"],
    "bare CR in a value": ["X-Value: a\rb"],
    "bare CR before Content-Length": ["X-Value: a\rContent-Length: {n}"],
    "bare LF line": ["X-Value: a\nContent-Length: {n}"],
    "Transfer-Encoding not chunked": ["Transfer-Encoding: identity"],
    "Transfer-Encoding gzip last": ["Transfer-Encoding: chunked, gzip"],
    "two Transfer-Encodings": ["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"],
    "space before the colon": ["Content-Length : {n}"],
    "signed Content-Length": ["Content-Length: +{n}"],
}
PLAIN = st.lists(
    st.tuples(st.sampled_from(["Accept", "X-Trace", "User-Agent", "Cookie"]), st.text("abcdefgh0123 =;", max_size=12)),
    max_size=4,
)


@asynccontextmanager
async def recording_origin(received: list[bytes]) -> AsyncIterator[str]:
    """An origin that records every byte it receives and answers each head with a short 200."""

    async def answer(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            data = b""
            try:
                while True:
                    chunk = await stream.receive()
                    received.append(chunk)
                    data += chunk
                    if b"\r\n\r\n" in data:
                        data = b""
                        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(listener.serve, answer)
        yield f"127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}"
        tasks.cancel_scope.cancel()


async def through_guard(build: str, *, to_the_end: bool = False) -> tuple[bytes, bytes]:
    """The guard's answer to the request `build` makes for the origin's host, and what the origin received;
    `to_the_end`: every answer until the guard closes the connection (pipelined requests), not just the first."""
    received: list[bytes] = []
    async with recording_origin(received) as host, guard(remote_exempt_origins=[f"http://{host}"]) as proxy:
        port = int(proxy.server.rsplit(":", 1)[1])
        answer = b""
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(build.replace("{host}", host).encode("latin-1"))
            with anyio.move_on_after(3):
                try:
                    while (
                        to_the_end
                        or b"\r\n\r\n" not in answer
                        or (answer.startswith(b"HTTP/1.1 200") and b"ok" not in answer)
                    ):
                        answer += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    pass
        await anyio.sleep(0.05)  # anything the guard forwarded has reached the origin
    return answer, b"".join(received)


def request(method: str, lines: list[str], body: bytes, path: str = "/p") -> str:
    head = [f"{method} http://{{host}}{path} HTTP/1.1", "Host: {host}", *lines]
    return "\r\n".join(head) + "\r\n\r\n" + body.decode("latin-1")


@pytest.mark.parametrize("kind", sorted(AMBIGUOUS))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["GET", "POST", "PUT"]),
    plain=PLAIN,
    where=st.integers(0, 4),
    n=st.integers(0, 40),
    m=st.integers(0, 40),
    body=st.sampled_from([b"", b"0\r\n\r\n", SMUGGLED, b"0\r\n\r\n" + SMUGGLED, b"abc"]),
)
def test_an_ambiguous_request_is_refused_and_never_forwarded(
    kind: str, method: str, plain: list[tuple[str, str]], where: int, n: int, m: int, body: bytes
) -> None:
    if kind == "duplicate Content-Length" and n == m:
        m = n + 1
    lines = [f"{name}: {value.strip()}" for name, value in plain]
    bad = [line.format(n=n, m=m) for line in AMBIGUOUS[kind]]
    lines[min(where, len(lines)) : min(where, len(lines))] = bad
    answer, forwarded = anyio.run(through_guard, request(method, lines, body))
    assert forwarded == b"", f"{kind}: the origin received {forwarded!r}"
    assert answer.startswith(b"HTTP/1.1 400") or answer == b"", f"{kind}: the guard answered {answer[:200]!r}"


@pytest.mark.parametrize("kind", sorted(AMBIGUOUS))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["GET", "POST"]),
    first_body=st.binary(max_size=20),
    n=st.integers(0, 40),
    m=st.integers(0, 40),
    body=st.sampled_from([b"", b"0\r\n\r\n" + SMUGGLED, b"abc"]),
)
def test_a_pipelined_ambiguous_request_is_refused_like_a_first_one(
    kind: str, method: str, first_body: bytes, n: int, m: int, body: bytes
) -> None:
    """The ambiguous head arrives in the same read as a well-formed request's body: the first request is
    relayed, the second refused and none of it forwarded."""
    if kind == "duplicate Content-Length" and n == m:
        m = n + 1
    first = request("POST", [f"Content-Length: {len(first_body)}"], first_body)
    second = request(method, [line.format(n=n, m=m) for line in AMBIGUOUS[kind]], body, path="/second")
    answer, forwarded = anyio.run(partial(through_guard, first + second, to_the_end=True))
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert forwarded.count(b"POST /p HTTP/1.1") == 1, forwarded
    assert b"/second" not in forwarded and b"/admin" not in forwarded, f"{kind}: the origin received {forwarded!r}"
    assert answer.count(b"HTTP/1.1 ") == 1 or b"HTTP/1.1 400" in answer, f"{kind}: the guard answered {answer!r}"


@settings(max_examples=15, deadline=None)
@given(plain=PLAIN, body=st.binary(max_size=30))
def test_a_well_formed_request_arrives_once_with_its_body(plain: list[tuple[str, str]], body: bytes) -> None:
    lines = [f"{name}: {value.strip()}" for name, value in plain] + [f"Content-Length: {len(body)}"]
    answer, forwarded = anyio.run(through_guard, request("POST", lines, body))
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert forwarded.count(b"POST /p HTTP/1.1") == 1 and forwarded.endswith(b"\r\n\r\n" + body)
