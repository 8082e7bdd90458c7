"""Length-prefixed msgpack frames: a 4-byte big-endian length, then one encoded Message."""

from __future__ import annotations

import struct
from collections.abc import Awaitable, Callable

import msgspec

from browserd.protocol.messages import Message

HEADER = struct.Struct(">I")
DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Message)


class FrameError(Exception):
    """A frame that cannot be accepted. `fatal` means the stream is out of sync and must close."""

    def __init__(self, message: str, *, fatal: bool) -> None:
        super().__init__(message)
        self.fatal = fatal


def encode_frame(message: Message) -> bytes:
    body = _encoder.encode(message)
    return HEADER.pack(len(body)) + body


def frame_length(header: bytes, max_bytes: int) -> int:
    """The body length announced by a header; oversized frames are fatal, the stream cannot resync."""
    length: int = HEADER.unpack(header)[0]
    if length > max_bytes:
        raise FrameError(f"frame of {length} bytes exceeds the limit of {max_bytes}", fatal=True)
    return length


def decode_body(body: bytes) -> Message:
    """One frame body; a body that does not decode spoils only itself, the stream stays in sync."""
    try:
        message: Message = _decoder.decode(body)
        return message
    # Bad UTF-8 in a string and absurdly deep nesting escape msgspec as these two, not DecodeError.
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise FrameError(f"undecodable frame: {exc}", fatal=False) from exc


ReadExactly = Callable[[int], Awaitable[bytes]]


async def read_frame(read_exactly: ReadExactly, max_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> Message:
    """The next message from a stream, given its `read exactly n bytes` primitive."""
    length = frame_length(await read_exactly(HEADER.size), max_bytes)
    return decode_body(await read_exactly(length))
