"""The console's one push channel: the daemon's events (daemon/events.py) as Server-Sent Events, so every
page updates when something happens instead of asking again and again."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from browserd.daemon.events import Events
from browserd.daemon.runtime.idle_hold import IdleHold

# A comment line this often keeps proxies and the browser from taking a quiet stream for a dead one.
KEEPALIVE_S = 15.0
# The browser reconnects this long after the stream ends (a daemon restart).
RETRY_MS = 2_000


async def _messages(events: Events, idle: IdleHold) -> AsyncIterator[str]:
    # An open console holds the daemon's idle exit, like a connected client: the page would go blank under it.
    idle.acquire("console")
    try:
        async for message in _events(events):
            yield message
    finally:
        idle.release("console")


async def _events(events: Events) -> AsyncIterator[str]:
    with events.listen() as listener:
        yield f"retry: {RETRY_MS}\nevent: hello\ndata: {{}}\n\n"
        while True:
            with anyio.move_on_after(KEEPALIVE_S) as quiet:
                batch, lost = await listener.next_batch()
            if quiet.cancelled_caught:
                yield ": still here\n\n"
                continue
            if lost:
                # Some events did not fit: the page reads its whole state again.
                yield "event: resync\ndata: {}\n\n"
            for event in batch:
                yield f"data: {msgspec.json.encode(event).decode()}\n\n"


def stream_routes(events: Events, idle: IdleHold) -> list[Route]:
    async def stream(request: Request) -> Response:
        messages = _messages(events, idle)
        return StreamingResponse(messages, media_type="text/event-stream", headers={"X-Accel-Buffering": "no"})

    return [Route("/api/events", stream)]
