"""Just enough HTTP/1.1 for the guard proxy: message heads, and bodies relayed by their framing (RFC 9112 §6).

The proxy reads each request on a browser's connection to check its target, so it must know where one
message ends and the next begins; it never interprets a body beyond its framing.
"""

from __future__ import annotations

from dataclasses import dataclass

from anyio.abc import ByteSendStream
from anyio.streams.buffered import BufferedByteReceiveStream

MAX_HEAD_BYTES = 64 * 1024
MAX_LINE_BYTES = 8 * 1024
CHUNK = 64 * 1024
UNTIL_CLOSE = -1


class BadMessage(Exception):
    pass


@dataclass
class Head:
    """A request line or status line and the header fields after it, in order."""

    first: str
    fields: list[tuple[str, str]]

    def get(self, name: str) -> str | None:
        name = name.lower()
        return next((value for key, value in self.fields if key.lower() == name), None)

    def has_token(self, name: str, token: str) -> bool:
        return any(
            token in (part.strip().lower() for part in value.split(","))
            for key, value in self.fields
            if key.lower() == name.lower()
        )

    def without(self, *names: str) -> Head:
        dropped = {name.lower() for name in names}
        return Head(self.first, [(k, v) for k, v in self.fields if k.lower() not in dropped])

    def encode(self) -> bytes:
        lines = [self.first, *(f"{key}: {value}" for key, value in self.fields), "", ""]
        return "\r\n".join(lines).encode("latin-1")


async def read_head(stream: BufferedByteReceiveStream) -> Head:
    raw = await stream.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES)
    first, *lines = raw.decode("latin-1").split("\r\n")
    fields = []
    for line in lines:
        key, colon, value = line.partition(":")
        if not colon or not key or key != key.strip():
            raise BadMessage(f"bad header line {line!r}")
        fields.append((key, value.strip()))
    return Head(first, fields)


def body_length(head: Head, *, request: bool, method: str = "GET", status: int = 0) -> int | None:
    """Bytes of the body: a number, None for chunked, or UNTIL_CLOSE (a response framed by closing)."""
    if not request and (method == "HEAD" or status < 200 or status in (204, 304)):
        return 0
    if head.get("transfer-encoding") is not None:
        if not head.has_token("transfer-encoding", "chunked"):
            if request:
                raise BadMessage("a request body that is not chunked needs a Content-Length")
            return UNTIL_CLOSE
        return None
    length = head.get("content-length")
    if length is None:
        return 0 if request else UNTIL_CLOSE
    if not length.isdigit():
        raise BadMessage(f"bad Content-Length {length!r}")
    return int(length)


async def relay_body(source: BufferedByteReceiveStream, sink: ByteSendStream, length: int | None) -> None:
    """Copy one body of `length` (as body_length answers) from source to sink, framing included."""
    if length is None:
        await _relay_chunked(source, sink)
    elif length == UNTIL_CLOSE:
        while True:
            await sink.send(await source.receive(CHUNK))  # ends with EndOfStream, by design
    else:
        await _relay_exactly(source, sink, length)


async def _relay_exactly(source: BufferedByteReceiveStream, sink: ByteSendStream, length: int) -> None:
    left = length
    while left > 0:
        data = await source.receive(min(left, CHUNK))
        left -= len(data)
        await sink.send(data)


async def _relay_chunked(source: BufferedByteReceiveStream, sink: ByteSendStream) -> None:
    while True:
        line = await source.receive_until(b"\r\n", MAX_LINE_BYTES)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError as exc:
            raise BadMessage(f"bad chunk size {size_text!r}") from exc
        await sink.send(line + b"\r\n")
        if size == 0:
            break
        await _relay_exactly(source, sink, size + 2)  # the chunk and its CRLF
    while True:  # trailer fields, up to the empty line
        trailer = await source.receive_until(b"\r\n", MAX_LINE_BYTES)
        await sink.send(trailer + b"\r\n")
        if not trailer:
            return
