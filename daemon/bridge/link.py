"""One authenticated extension connection: requests out to the extension, its answers and events back."""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

import anyio
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from browserd.daemon.errors import BrowserdError, ExecutionError, ExtensionNotConnected

log = logging.getLogger(__name__)

CALL_TIMEOUT_S = 30.0

EventHandler = Callable[[dict[str, Any]], None]
# Hears a call's answer (result, error) the moment its frame is read, in order with the events around it.
AnswerHandler = Callable[[Any, "BrowserdError | None"], None]


class _Call:
    def __init__(self, answered: AnswerHandler | None) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self.error: BrowserdError | None = None
        self.answered = answered


class ExtensionLink:
    """Requests `{type: REQUEST, id, action, params}` answered by `{type: RESPONSE, id, result | error}`.

    Events `{type: EVENT, sessionId, ...}` go to the handler the session registered, and `{kind: ended}`
    when the extension ends the session (SESSION_END) or the connection ends. When the connection
    ends every call in flight fails at once with EXTENSION_NOT_CONNECTED: nothing waits for an answer
    that cannot come (the service worker was suspended, the browser closed).
    """

    def __init__(self, extension_id: str, ws: ServerConnection) -> None:
        self.extension_id = extension_id
        self._ws = ws
        self._ids = itertools.count(1)
        self._calls: dict[int, _Call] = {}
        self._handlers: dict[str, EventHandler] = {}
        self.closed = False
        self._close_asked = anyio.Event()
        self._close_with = (1000, "")

    def on_events(self, session_id: str, handler: EventHandler | None) -> None:
        if handler is None:
            self._handlers.pop(session_id, None)
        else:
            self._handlers[session_id] = handler

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            raise ExtensionNotConnected("the browserd extension is not connected")
        try:
            await self._ws.send(json.dumps(message))
        except ConnectionClosed as exc:
            raise ExtensionNotConnected("the browserd extension disconnected") from exc

    async def call(
        self,
        action: str,
        params: dict[str, Any],
        timeout_s: float = CALL_TIMEOUT_S,
        answered: AnswerHandler | None = None,
    ) -> Any:
        """The extension's answer to `action`; `answered` also hears it, before any frame read after it."""
        call_id = next(self._ids)
        call = _Call(answered)
        self._calls[call_id] = call
        try:
            await self.send({"type": "REQUEST", "id": call_id, "action": action, "params": params})
            with anyio.fail_after(timeout_s):
                await call.done.wait()
        except TimeoutError as exc:
            raise ExecutionError(
                f"the extension did not answer {action} within {timeout_s:.0f} s",
                hint="Check that the browserd side panel is open and retry.",
                action=action,
            ) from exc
        finally:
            self._calls.pop(call_id, None)
        if call.error is not None:
            raise call.error
        return call.result

    async def serve(self) -> None:
        """Read until the connection ends; then fail what is in flight."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._close_when_asked)
            try:
                await self._read()
            finally:
                tg.cancel_scope.cancel()

    async def _close_when_asked(self) -> None:
        # Closing waits for the extension's close frame: done here, not in the task of whoever asked.
        await self._close_asked.wait()
        await self._ws.close(*self._close_with)

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                try:
                    message = json.loads(raw)
                except ValueError:
                    log.warning("bridge: a frame that is not JSON from %s", self.extension_id)
                    continue
                if isinstance(message, dict):
                    self._dispatch(message)
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            for call in self._calls.values():
                call.error = ExtensionNotConnected("the browserd extension disconnected while the call was running")
                call.done.set()
            for session_id in list(self._handlers):
                self._end_session(session_id)

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "RESPONSE":
            call = self._calls.get(message.get("id"))  # type: ignore[arg-type]
            if call is None:
                return
            error = message.get("error")
            if isinstance(error, dict):
                call.error = ExecutionError(
                    str(error.get("error", "the extension refused the call")),
                    hint=str(error.get("recoverHint") or ExecutionError.hint),
                    extensionCode=error.get("errorCode"),
                )
            call.result = message.get("result")
            call.done.set()
            # The caller's task wakes later, after the reader has passed on the events that followed this
            # answer: a caller relaying answers and events in their order hears the answer here.
            if call.answered is not None:
                call.answered(call.result, call.error)
        elif kind == "EVENT":
            handler = self._handlers.get(str(message.get("sessionId")))
            if handler is not None:
                handler(message)
        elif kind == "SESSION_END":
            self._end_session(str(message.get("sessionId")))

    def _end_session(self, session_id: str) -> None:
        # The user stopped the session in the side panel, or the extension went away: its handler hears it last.
        handler = self._handlers.pop(session_id, None)
        if handler is not None:
            handler({"kind": "ended", "sessionId": session_id})

    def close(self, code: int = 1000, reason: str = "") -> None:
        """End the connection soon (unpair, daemon shutdown); calls in flight then fail."""
        self._close_with = (code, reason)
        self._close_asked.set()
