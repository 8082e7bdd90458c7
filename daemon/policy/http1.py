"""HTTP/1.1 for the guard proxy, on h11 (a maintained parser; RFC 9112) rather than by hand.

Both connections of a relayed request go through h11 state machines: the browser's request and the origin's
answer are parsed into events and written out again by h11, so each side receives framing h11 produced from
what it understood, never bytes passed on unparsed. An ambiguous message therefore cannot mean one thing to
the guard and another to the origin (request smuggling). Requests are also held to stricter rules than h11's
own, since no browser sends these and a proxy has no reason to guess: obsolete line folding, a line ending
in a bare LF, more than one Content-Length, and Content-Length with Transfer-Encoding are refused. (h11
itself refuses a bare CR, conflicting Content-Lengths, a Transfer-Encoding other than chunked, a bad
Content-Length, whitespace before a colon and a missing Host.)
"""

from __future__ import annotations

import re

import anyio
import h11
from anyio.abc import ByteReceiveStream, ByteSendStream

MAX_HEAD_BYTES = 64 * 1024
CHUNK = 64 * 1024
# Hop-by-hop fields: they concern one connection, not the message (RFC 9110 §7.6.1).
HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"proxy-authorization", b"te", b"upgrade"})
# A line folded onto the previous one (RFC 9112 §5.2), or a line ending in LF without its CR.
_LOOSE_LINES = re.compile(rb"\r\n[ \t]|(?<!\r)\n")
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length[ \t]*:", re.IGNORECASE)
_TRANSFER_ENCODING = re.compile(rb"\r\ntransfer-encoding[ \t]*:", re.IGNORECASE)


class BadMessage(Exception):
    pass


def _end_of_head(head: bytes) -> int:
    """Where the head ends (its empty line included), or -1 while it has not."""
    end = head.find(b"\r\n\r\n")
    return end + 4 if end >= 0 else -1


def _check_head(received: bytes) -> None:
    """Obsolete folding and bare LFs in the request head `received` starts with (whole or in part so far), seen
    before h11 parses it (which would accept and unfold them)."""
    end = _end_of_head(received)
    head = received if end < 0 else received[:end]
    if _LOOSE_LINES.search(head):
        raise BadMessage("a request head with a folded line or a bare LF")
    # Counted here: h11 merges equal Content-Lengths, and lets Transfer-Encoding override one.
    lengths = len(_CONTENT_LENGTH.findall(head))
    if lengths > 1 or (lengths and _TRANSFER_ENCODING.search(head)):
        raise BadMessage("a request with more than one Content-Length, or with Transfer-Encoding too")


class Peer:
    """One side of a relayed connection: bytes read into h11 events, events written back as bytes."""

    def __init__(self, receive: ByteReceiveStream, send: ByteSendStream, role: type[h11.CLIENT] | type[h11.SERVER]):
        self.receive = receive
        self.send_stream = send
        self.conn = h11.Connection(role, max_incomplete_event_size=MAX_HEAD_BYTES)
        # Requests (the browser's side) are held to the strict rules above.
        self.strict = role is h11.SERVER
        # The other side closed its end: what it left unfinished is a closed connection, not a bad message.
        self.ended = False

    async def next_event(self) -> object:
        """The next event; ConnectionClosed at the end of the stream, PAUSED once the protocol switched."""
        while True:
            if self.strict and self.conn.their_state is h11.IDLE:
                # Every head, also one that came in the same read as the previous message's body (pipelined):
                # h11's buffer then starts with it.
                _check_head(self.conn.trailing_data[0])
            try:
                event = self.conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise BadMessage(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self.receive.receive(CHUNK)
            except anyio.EndOfStream:
                data, self.ended = b"", True
            self.conn.receive_data(data)

    async def send(self, event: h11.Event) -> None:
        data = self.conn.send(event)
        if data:
            await self.send_stream.send(data)

    @property
    def leftover(self) -> bytes:
        """Bytes received after the message that switched protocols (a tunnel's or a WebSocket's first ones)."""
        return bytes(self.conn.trailing_data[0])

    def reusable(self) -> bool:
        """Whether the connection may carry the next message: then it is made ready for it."""
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
            return True
        return False


def forwarded(headers: list[tuple[bytes, bytes]], *, keep: tuple[bytes, ...] = ()) -> list[tuple[bytes, bytes]]:
    """The end-to-end fields of a message (those the next hop should see), with `keep` among the hop-by-hop ones;
    a Content-Length beside a Transfer-Encoding (which wins, RFC 9112 §6.3) is dropped."""
    chunked = any(name.lower() == b"transfer-encoding" for name, _ in headers)
    return [
        (name, value)
        for name, value in headers
        if (name.lower() not in HOP_BY_HOP or name.lower() in keep)
        and not (chunked and name.lower() == b"content-length")
    ]


def has_token(headers: list[tuple[bytes, bytes]], name: bytes, token: bytes) -> bool:
    return any(
        token in (part.strip().lower() for part in value.split(b",")) for key, value in headers if key.lower() == name
    )
