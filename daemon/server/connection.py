"""One client connection: REGISTER, then concurrent REQUESTs, CANCELs and PINGs until it closes.

One connection is one session (DESIGN.md §2). Every request runs in the connection's task group,
so closing the connection cancels its requests before the session's pages close; a session that a
run still works in, or that login_keep_session kept, outlives the connection (sessions/session_manager.py).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from browserd.daemon.errors import (
    BrowserdError,
    Cancelled,
    InvalidParameter,
    NotAllowed,
)
from browserd.daemon.llm.sampling import SamplingModel
from browserd.daemon.policy.trust import stricter
from browserd.daemon.server.sampling_relay import SamplingRelay
from browserd.daemon.server.tool_clients import ToolClient, guarded
from browserd.daemon.tools.response import error_payload
from browserd.protocol.framing import FrameError, encode_frame, read_frame
from browserd.protocol.messages import (
    PROTOCOL_VERSION,
    Cancel,
    ClientCapabilities,
    DaemonInfo,
    Error,
    ErrorInfo,
    Event,
    Message,
    Payload,
    Ping,
    Pong,
    Register,
    RegisterOk,
    Request,
    Response,
    SampleResult,
    SessionEnd,
    ToolsChanged,
    ToolSpec,
    protocol_major,
)

if TYPE_CHECKING:
    from browserd.daemon.server.daemon_process import Daemon

log = logging.getLogger(__name__)

_CLOSED = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError)


class Connection:
    def __init__(self, stream: SocketStream, daemon: Daemon) -> None:
        self._stream = stream
        self._reader = BufferedByteReceiveStream(stream)
        self._daemon = daemon
        self._send_lock = anyio.Lock()
        self._inflight: dict[str, anyio.CancelScope] = {}
        self.role = "unregistered"
        self.client_name = ""
        self.client: ToolClient | None = None
        # The client's own model, once the shim says the client offers sampling (issue 26).
        self.sampling = SamplingRelay(self.send, daemon.config.llm.request_timeout_s)

    async def send(self, message: Message) -> None:
        try:
            async with self._send_lock:
                await self._stream.send(encode_frame(message))
        except _CLOSED:
            log.debug("client went away before %s could be sent", type(message).__name__)

    async def send_error(self, code_error: BrowserdError, request_id: str | None = None) -> None:
        await self.send(Error(error=code_error.info(), id=request_id))

    async def serve(self) -> None:
        try:
            async with anyio.create_task_group() as requests:
                await self._read_loop(requests)
                requests.cancel_scope.cancel()
        finally:
            await self._close_session()

    async def _read_loop(self, requests: anyio.abc.TaskGroup) -> None:
        max_bytes = self._daemon.config.daemon.max_frame_bytes
        while True:
            try:
                message = await read_frame(self._reader.receive_exactly, max_bytes)
            except FrameError as exc:
                await self.send_error(InvalidParameter(str(exc), hint="Send length-prefixed msgpack frames."))
                if exc.fatal:
                    return
                continue
            except _CLOSED:
                return
            if isinstance(message, Request):
                if message.id in self._inflight:
                    # Answers are matched by id: a second call under the same id could never be told apart.
                    duplicate = InvalidParameter(f"request id {message.id} is already in flight", hint="Use a new id.")
                    await self.send(
                        Response(id=message.id, session_id=message.session_id, payload=error_payload(duplicate))
                    )
                    continue
                self._inflight[message.id] = anyio.CancelScope()
                requests.start_soon(self._run_request, message)
            elif isinstance(message, Cancel):
                scope = self._inflight.get(message.id)
                if scope is not None:
                    scope.cancel()
            elif isinstance(message, Ping):
                await self.send(Pong(id=message.id))
            elif isinstance(message, Register):
                if not await self._register(message):
                    return
            elif isinstance(message, ClientCapabilities):
                self._offer_sampling(message.sampling)
            elif isinstance(message, SampleResult):
                self.sampling.answered(message)
            elif isinstance(message, SessionEnd):
                return  # a shim that shuts down cleanly says so before closing
            else:
                await self.send_error(InvalidParameter(f"unexpected {type(message).__name__} message from a client"))

    def _offer_sampling(self, offered: bool) -> None:
        if self.client is None:
            return
        samplers = self._daemon.services.llm.samplers
        if offered:
            samplers[self.client.session.id] = SamplingModel(self.sampling.ask, self._daemon.config.llm.max_tokens)
        else:
            samplers.pop(self.client.session.id, None)

    async def _register(self, message: Register) -> bool:
        if self.role != "unregistered":
            await self.send_error(InvalidParameter("this connection is already registered"), message.id)
            return True
        if protocol_major(message.protocol) != protocol_major(PROTOCOL_VERSION):
            await self.send_error(
                InvalidParameter(
                    f"protocol {message.protocol} is not supported by this daemon (protocol {PROTOCOL_VERSION})",
                    hint="Upgrade browserd so that client and daemon match, then `browserd stop`.",
                ),
                message.id,
            )
            return False
        daemon = self._daemon
        # The daemon may lower a requested level, never raise it (DESIGN.md §5).
        trust = stricter(message.trust_level, daemon.config.daemon.max_trust_level)
        self.client_name = message.client.name
        session_id = ""
        tools: list[ToolSpec] = []
        if message.role == "shim":
            try:
                daemon.catalog.groups(message.tools, daemon.config.mcp.tools)  # unknown groups: refused here
            except BrowserdError as exc:
                await self.send_error(exc, message.id)
                return False
            session = daemon.services.sessions.create(message.client.name, trust, connected=True)
            self.client = ToolClient(daemon.services, daemon.catalog, session, message.tools, message.codegen)
            tools = self.client.specs()
            session_id = session.id
            daemon.attach(self)
        self.role = message.role
        log.info(
            "registered %s client %s (pid %s) as %s",
            self.role,
            message.client.name,
            message.client.pid,
            session_id or "control",
        )
        await self.send(
            RegisterOk(
                id=message.id,
                session_id=session_id,
                daemon=DaemonInfo(version=daemon.version, pid=os.getpid()),
                trust_level=trust,
                tools=tools,
            )
        )
        return True

    async def _run_request(self, request: Request) -> None:
        scope = self._inflight[request.id]
        try:
            with scope:
                payload = await self._dispatch(request)
            if scope.cancel_called:
                payload = error_payload(Cancelled(f"{request.action} was cancelled"))
        finally:
            self._inflight.pop(request.id, None)
        await self.send(Response(id=request.id, session_id=request.session_id, payload=payload))
        if self.role == "control" and request.action == "stop" and payload.success:
            self._daemon.request_stop("browserd stop")

    async def _dispatch(self, request: Request) -> Payload:
        timeout = self._daemon.config.daemon.request_timeout_s
        return await guarded(request.action, timeout, lambda deadline: self._call(request, deadline))

    async def _call(self, request: Request, deadline: anyio.CancelScope) -> Payload:
        if self.role == "control":
            return await self._daemon.control(request.action, request.params)
        if self.client is None:
            raise InvalidParameter("send REGISTER before REQUEST", hint="Register the connection first.")
        if request.session_id != self.client.session.id:
            raise NotAllowed(
                f"session {request.session_id} is not this connection's session",
                hint=f"Use sessionId {self.client.session.id}.",
            )

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if request.progress:
                await self.send(Event(id=request.id, progress=done, total=total, message=message))

        return await self.client.call(request.action, request.params, progress, deadline)

    async def tools_changed(self) -> None:
        if self.client is not None:
            # The catalog's dynamic tools (published flows) changed: select again.
            await self.send(ToolsChanged(tools=self.client.reselect()))

    async def _close_session(self) -> None:
        with anyio.CancelScope(shield=True):
            self._daemon.detach(self)
            self._offer_sampling(False)
            self.sampling.close()
            if self.client is not None:
                await self._daemon.end_session(self.client.session.id)
            await self._stream.aclose()


def connection_refused(reason: str) -> Error:
    return Error(
        error=ErrorInfo(error=reason, error_code="NOT_ALLOWED", recover_hint="Connect as the user who runs the daemon.")
    )
