"""A client of the daemon socket over asyncio: register, then concurrent requests matched by id."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from browserd.protocol import paths
from browserd.protocol.framing import FrameError, encode_frame, read_frame
from browserd.protocol.messages import (
    PROTOCOL_VERSION,
    Cancel,
    ClientCapabilities,
    ClientInfo,
    Error,
    Event,
    Message,
    Payload,
    Pong,
    Register,
    RegisterOk,
    Request,
    Response,
    Role,
    Sample,
    SampleResult,
    SessionEnd,
    ToolsChanged,
    TrustLevel,
)
from browserd.shim.spawn import connect_or_spawn

EventHandler = Callable[[Event], Awaitable[None]]
ToolsHandler = Callable[[ToolsChanged], Awaitable[None]]
SampleHandler = Callable[[Sample], Awaitable[SampleResult]]

# The daemon answers every request by its daemon.request_timeout_s (an error if the work ran past it); a
# shim waits that long plus this grace before it decides the daemon will not answer at all.
CALL_GRACE_S = 30.0
DEFAULT_REQUEST_TIMEOUT_S = 600.0
# How long a connect waits for a daemon it starts (daemon.spawn_timeout_s's default): a bound that a healthy start
# under load never nears, since a daemon that fails to start is reported as soon as it exits.
SPAWN_TIMEOUT_S = 30.0


def configured_call_timeout_s() -> float | None:
    """How long a call may wait for its answer: the daemon's request deadline plus CALL_GRACE_S (None: the
    configuration says requests never time out)."""
    from browserd.daemon.config import ConfigError, load

    try:
        request_timeout_s = load().daemon.request_timeout_s
    except ConfigError:
        request_timeout_s = DEFAULT_REQUEST_TIMEOUT_S  # the daemon refuses to start on it; its default then
    return call_timeout_s(request_timeout_s)


def call_timeout_s(request_timeout_s: float) -> float | None:
    """A call's wait for the daemon's request deadline `request_timeout_s` (0: requests never time out)."""
    return request_timeout_s + CALL_GRACE_S if request_timeout_s else None


class DaemonGone(Exception):
    """The connection to the daemon closed while a request waited for its answer."""


class NotDelivered(DaemonGone):
    """The message could not be written: the daemon never saw it, so sending it again is safe."""


class NoAnswer(Exception):
    """The daemon is connected but did not answer a call within its deadline (the call was cancelled)."""


class RegisterRefused(Exception):
    def __init__(self, error: Error) -> None:
        super().__init__(error.error.error)
        self.error = error


class DaemonClient:
    def __init__(
        self,
        client: ClientInfo,
        role: Role = "shim",
        trust_level: TrustLevel = "local",
        tools: list[str] | None = None,
        codegen: bool | None = None,
        on_tools_changed: ToolsHandler | None = None,
        call_timeout_s: float | None = None,
        on_sample: SampleHandler | None = None,
    ) -> None:
        """`call_timeout_s`: how long a request waits for its answer; default configured_call_timeout_s()."""
        self._client = client
        self._call_timeout_s = call_timeout_s if call_timeout_s is not None else configured_call_timeout_s()
        self._role: Role = role
        self._trust: TrustLevel = trust_level
        self._tool_groups = tools
        self._codegen = codegen
        self._on_tools_changed = on_tools_changed
        self._on_sample = on_sample
        # Questions of the daemon to the MCP client's model, answered while the read loop goes on.
        self._samples: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Message]] = {}
        self._event_handlers: dict[str, EventHandler] = {}
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self.registered: RegisterOk | None = None
        self.closed = asyncio.Event()

    @property
    def session_id(self) -> str:
        return self.registered.session_id if self.registered else ""

    async def connect(self, spawn: bool = True, timeout_s: float = SPAWN_TIMEOUT_S) -> RegisterOk:
        """Connect (starting the daemon if `spawn`) and register; retried while a dying daemon's socket lingers."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return await self._connect_once(spawn, max(deadline - time.monotonic(), 0.1))
            except DaemonGone:
                # A daemon killed mid-exit can accept a connection and drop it; its successor will answer.
                await self.close()
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)

    async def _connect_once(self, spawn: bool, timeout_s: float) -> RegisterOk:
        reader, writer = await connect_or_spawn(
            lambda: asyncio.open_unix_connection(str(paths.socket_path())), timeout_s, spawn
        )
        self._writer = writer
        self.closed = asyncio.Event()
        self._reader_task = asyncio.create_task(self._read_loop(reader))
        try:
            reply = await asyncio.wait_for(
                self._call(
                    lambda rid: Register(
                        id=rid,
                        protocol=PROTOCOL_VERSION,
                        client=self._client,
                        role=self._role,
                        trust_level=self._trust,
                        tools=self._tool_groups,
                        codegen=self._codegen,
                    )
                ),
                timeout_s,
            )
        except TimeoutError as exc:  # a daemon that accepts but never registers us is as good as none
            raise DaemonGone(f"the daemon did not answer REGISTER within {timeout_s:.1f} s") from exc
        if isinstance(reply, Error):
            raise RegisterRefused(reply)
        assert isinstance(reply, RegisterOk)
        self.registered = reply
        return reply

    async def request(
        self, action: str, params: dict[str, Any], on_event: EventHandler | None = None, request_id: str | None = None
    ) -> Payload:
        def build(rid: str) -> Request:
            return Request(
                id=rid, session_id=self.session_id, action=action, params=params, progress=on_event is not None
            )

        rid = request_id or self.new_id()
        try:
            reply = await asyncio.wait_for(self._call(build, on_event, rid), self._call_timeout_s)
        except TimeoutError as exc:
            # Tell the daemon to stop the work nobody waits for any more; it may be too stuck to hear it.
            with contextlib.suppress(DaemonGone):
                await self._send(Cancel(id=rid))
            raise NoAnswer(f"the daemon did not answer {action} within {self._call_timeout_s:g} s") from exc
        if isinstance(reply, Response):
            return reply.payload
        if isinstance(reply, Error):
            return Payload(success=False, error=reply.error)
        raise DaemonGone(f"unexpected {type(reply).__name__} in answer to {action}")

    async def offer_sampling(self, offered: bool) -> None:
        """Tell the daemon that this client's MCP client answers sampling/createMessage (issue 26)."""
        await self._send(ClientCapabilities(sampling=offered))

    async def _sample(self, message: Sample) -> None:
        assert self._on_sample is not None
        with contextlib.suppress(DaemonGone):
            await self._send(await self._on_sample(message))

    def new_id(self) -> str:
        return f"req_{os.getpid()}_{next(self._ids)}"

    async def cancel(self, request_id: str) -> None:
        if request_id in self._pending:
            await self._send(Cancel(id=request_id))

    async def close(self) -> None:
        if self._writer is not None and not self._writer.is_closing():
            try:
                if self.session_id:
                    await self._send(SessionEnd(session_id=self.session_id))
                self._writer.close()
                await self._writer.wait_closed()
            except (ConnectionError, OSError):
                pass
        if self._reader_task is not None:
            self._reader_task.cancel()
            await asyncio.gather(self._reader_task, return_exceptions=True)
        for task in self._samples:
            task.cancel()
        await asyncio.gather(*self._samples, return_exceptions=True)

    async def _call(
        self, build: Callable[[str], Message], on_event: EventHandler | None = None, request_id: str | None = None
    ) -> Message:
        rid = request_id or self.new_id()
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        if on_event is not None:
            self._event_handlers[rid] = on_event
        try:
            await self._send(build(rid))
            return await future
        finally:
            self._pending.pop(rid, None)
            self._event_handlers.pop(rid, None)

    async def _send(self, message: Message) -> None:
        if self._writer is None or self._writer.is_closing():
            raise NotDelivered("not connected to the daemon")
        try:
            self._writer.write(encode_frame(message))
            # A write to a dead daemon fails inside write() and closes the transport at once, while the
            # read loop may not have seen the end of the stream yet: then nothing was sent.
            if self._writer.is_closing():
                raise NotDelivered("the daemon's end of the connection is closed")
            await self._writer.drain()
        except (ConnectionError, OSError) as exc:
            raise NotDelivered(str(exc)) from exc

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                message = await read_frame(reader.readexactly)
                await self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError, OSError, FrameError):
            pass
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(DaemonGone("the daemon closed the connection"))

    async def _dispatch(self, message: Message) -> None:
        if isinstance(message, Event):
            handler = self._event_handlers.get(message.id)
            if handler is not None:
                await handler(message)
        elif isinstance(message, Sample) and self._on_sample is not None:
            task = asyncio.create_task(self._sample(message))
            self._samples.add(task)
            task.add_done_callback(self._samples.discard)
        elif isinstance(message, ToolsChanged):
            if self._on_tools_changed is not None:
                await self._on_tools_changed(message)
        elif isinstance(message, Error) and message.id is None:
            # A connection-level error with no id (a refused peer, a bad frame) answers the oldest call.
            waiting = next((f for f in self._pending.values() if not f.done()), None)
            if waiting is not None:
                waiting.set_result(message)
        elif isinstance(message, (Response, RegisterOk, Pong, Error)):
            future = self._pending.get(message.id or "")
            if future is not None and not future.done():
                future.set_result(message)
