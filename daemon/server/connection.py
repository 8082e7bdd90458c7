"""One client connection: REGISTER, then concurrent REQUESTs, CANCELs and PINGs until it closes.

One connection is one session (DESIGN.md §2). Every request runs in the connection's task group,
so closing the connection cancels its requests before the session's pages close; a session that a
run still works in, or that login_keep_session kept, outlives the connection (sessions/manager.py).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import (
    BrowserdError,
    Cancelled,
    ExecutionError,
    InvalidParameter,
    NotAllowed,
    PageCrashed,
    request_timeout,
)
from browserd.daemon.llm.sampling import SamplingModel
from browserd.daemon.policy.trust import stricter
from browserd.daemon.runtime.browser import is_crash
from browserd.daemon.server.sampling_relay import SamplingRelay
from browserd.daemon.sessions.session import Session
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.registry import Tool
from browserd.daemon.tools.response import PageSeen, error_payload
from browserd.daemon.tools.response import Response as ToolResponse
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
    protocol_major,
)

if TYPE_CHECKING:
    from browserd.daemon.server.app import Daemon

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
        self.session: Session | None = None
        self.tools: dict[str, Tool[Any]] = {}
        # Lean answers (issue 10): the page header this client last saw, and whether it wants Playwright code.
        self.page_seen = PageSeen()
        self.codegen = False
        self._groups: list[str] | None = None
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
            elif isinstance(message, SessionEnd):
                return  # a shim that shuts down cleanly says so before closing
            elif isinstance(message, ClientCapabilities):
                self._offer_sampling(message.sampling)
            elif isinstance(message, SampleResult):
                self.sampling.answered(message)
            else:
                await self.send_error(InvalidParameter(f"unexpected {type(message).__name__} message from a client"))

    def _offer_sampling(self, offered: bool) -> None:
        if self.session is None:
            return
        samplers = self._daemon.services.llm.samplers
        if offered:
            samplers[self.session.id] = SamplingModel(self.sampling.ask, self._daemon.config.llm.max_tokens)
        else:
            samplers.pop(self.session.id, None)

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
        if message.role == "shim":
            try:
                selected = daemon.catalog.select(message.tools, daemon.config.mcp.tools)
            except BrowserdError as exc:
                await self.send_error(exc, message.id)
                return False
            self.tools = {t.name: t for t in selected}
            self.codegen = daemon.config.mcp.codegen if message.codegen is None else message.codegen
            self._groups = message.tools
            self.session = daemon.services.sessions.create(message.client.name, trust, connected=True)
            session_id = self.session.id
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
                tools=[t.spec() for t in self.tools.values()],
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
        timeout = self._daemon.config.daemon.request_timeout_s or None
        started = anyio.current_time()
        deadline = anyio.CancelScope()
        try:
            with anyio.fail_after(timeout) as deadline:
                return await self._call(request, deadline)
        except TimeoutError:
            # A tool may have moved the deadline (ToolContext.allow): report the one that struck.
            return error_payload(request_timeout(request.action, deadline.deadline - started))
        except BrowserdError as exc:
            return error_payload(exc)
        except PlaywrightError as exc:
            if is_crash(exc):
                return error_payload(PageCrashed("the browser crashed during the call", action=request.action))
            log.exception("unexpected Playwright error in %s", request.action)
            return error_payload(ExecutionError(str(exc).splitlines()[0] if str(exc) else repr(exc)))
        except Exception as exc:  # a bug in one tool must not take the daemon down
            log.exception("internal error in %s", request.action)
            return error_payload(
                ExecutionError(
                    f"internal error in {request.action}: {exc!r}",
                    hint="This is a browserd bug; the daemon log has the traceback.",
                )
            )

    async def _call(self, request: Request, deadline: anyio.CancelScope) -> Payload:
        if self.role == "control":
            return await self._daemon.control(request.action, request.params)
        if self.session is None:
            raise InvalidParameter("send REGISTER before REQUEST", hint="Register the connection first.")
        if request.session_id != self.session.id:
            raise NotAllowed(
                f"session {request.session_id} is not this connection's session",
                hint=f"Use sessionId {self.session.id}.",
            )
        tool = self._daemon.catalog.get(request.action, set(self.tools))
        params = tool.parse(request.params)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            await self.send(Event(id=request.id, progress=done, total=total, message=message))

        response = ToolResponse(self.codegen, self.page_seen)
        await tool.run(ToolContext(self._daemon.services, self.session, progress, deadline), params, response)
        return response.payload()

    async def tools_changed(self) -> None:
        if self.role == "shim":
            # The catalog's dynamic tools (published flows) changed: select again.
            selected = self._daemon.catalog.select(self._groups, self._daemon.config.mcp.tools)
            self.tools = {t.name: t for t in selected}
            await self.send(ToolsChanged(tools=[t.spec() for t in self.tools.values()]))

    async def _close_session(self) -> None:
        with anyio.CancelScope(shield=True):
            self._daemon.detach(self)
            self._offer_sampling(False)
            self.sampling.close()
            if self.session is not None:
                self._daemon.services.flows.stop_all(self.session.id)
                sessions = self._daemon.services.sessions
                await sessions.disconnect(self.session.id)
                still = self.session.id in sessions.sessions
                log.info("session %s %s", self.session.id, "outlives its connection" if still else "closed")
            await self._stream.aclose()


def connection_refused(reason: str) -> Error:
    return Error(
        error=ErrorInfo(error=reason, error_code="NOT_ALLOWED", recover_hint="Connect as the user who runs the daemon.")
    )
