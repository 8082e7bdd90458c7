"""The MCP stdio server one client talks to; every tool call is forwarded to the shared daemon.

It speaks both eras of MCP without the SDK (DESIGN.md §1): the initialize handshake (2024-11-05 ..
2025-11-25) and 2026-07-28, where each request carries its protocol version in `params._meta` and
`server/discover` replaces the handshake. The era is judged per request, so one process serves a
client that probes discover and then falls back to initialize.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import sys
from dataclasses import dataclass
from typing import Any

import msgspec

from browserd.protocol import __version__
from browserd.protocol.messages import (
    ClientInfo,
    ErrorInfo,
    Event,
    ImageContent,
    Payload,
    TextContent,
    ToolsChanged,
    ToolSpec,
    TrustLevel,
)
from browserd.shim.daemon_client import (
    DaemonClient,
    DaemonGone,
    NoAnswer,
    NotDelivered,
    RegisterRefused,
    call_timeout_s,
)
from browserd.shim.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    RequestId,
    RpcError,
    StdioChannel,
    decode,
)
from browserd.shim.spawn import DaemonUnavailable

log = logging.getLogger("browserd.shim")

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"

INSTRUCTIONS = (
    "browserd drives a real Chromium. browser_open loads a page; browser_snapshot reads it with [ref=eN] "
    "refs that other tools act on. Errors carry errorCode and recoverHint: follow the hint."
)


RESET_NOTICE = (
    "Note: the browserd daemon restarted since the previous call, so this client's browser session was "
    "reset: earlier tabs and refs are gone. Call browser_open again if a page is needed."
)


def tool_definition(spec: ToolSpec) -> dict[str, Any]:
    definition: dict[str, Any] = {"name": spec.name, "description": spec.description, "inputSchema": spec.input_schema}
    if spec.title:
        definition["title"] = spec.title
    if spec.output_schema:
        definition["outputSchema"] = spec.output_schema
    if spec.annotations:
        definition["annotations"] = spec.annotations
    return definition


def shim_error(code: str, message: str, hint: str) -> Payload:
    """An error the shim itself raises, in the same shape as the daemon's (D-32)."""
    return Payload(
        success=False,
        error=ErrorInfo(error=message, error_code=code, recover_hint=hint),
        content=[TextContent(f"Error [{code}]: {message}\nNext: {hint}")],
    )


def call_result(payload: Payload) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in payload.content:
        if isinstance(block, ImageContent):
            content.append(
                {"type": "image", "data": base64.b64encode(block.data).decode(), "mimeType": block.mime_type}
            )
        else:
            content.append({"type": "text", "text": block.text})
    result: dict[str, Any] = {"content": content}
    if payload.success:
        if isinstance(payload.data, dict):
            result["structuredContent"] = payload.data
    else:
        result["isError"] = True
        if payload.error is not None:
            result["structuredContent"] = msgspec.to_builtins(payload.error)
    return result


@dataclass(frozen=True)
class ShimSettings:
    spawn_timeout_s: float
    call_timeout_s: float | None


def read_settings() -> ShimSettings:
    """The shim's two settings from the configuration. It runs in a thread while the client initializes:
    the daemon's config module is not on the path to the initialize answer (issue 21)."""
    from browserd.daemon.config import ConfigError, DaemonConfig, load

    try:
        daemon = load().daemon
    except ConfigError as exc:
        log.warning("%s; using defaults", exc)
        daemon = DaemonConfig()
    return ShimSettings(daemon.spawn_timeout_s, call_timeout_s(daemon.request_timeout_s))


class McpShim:
    def __init__(
        self,
        channel: StdioChannel,
        tool_groups: list[str] | None,
        trust: TrustLevel,
        codegen: bool | None = None,
    ) -> None:
        self._out = channel
        self._groups = tool_groups
        self._codegen = codegen
        self._trust: TrustLevel = trust
        self._settings: ShimSettings | None = None
        self._server_info = {"name": "browserd", "version": __version__}
        self._tools: list[ToolSpec] = []
        self._connecting: asyncio.Task[DaemonClient] | None = None
        self._calls: dict[RequestId, tuple[asyncio.Task[None], DaemonClient | None, str]] = {}
        self._listeners: set[RequestId] = set()
        # The daemon session the client last heard from; a different one means its tabs were lost.
        self._known_session: str | None = None

    # -- the daemon side -------------------------------------------------------------------------

    def _client_task(self) -> asyncio.Task[DaemonClient]:
        task = self._connecting
        if task is None or (
            task.done() and (task.cancelled() or task.exception() is not None or task.result().closed.is_set())
        ):
            task = self._connecting = asyncio.create_task(self._connect())
        return task

    async def _client(self) -> DaemonClient:
        return await asyncio.shield(self._client_task())

    async def _connect(self) -> DaemonClient:
        if self._settings is None:
            self._settings = await asyncio.to_thread(read_settings)
        client = DaemonClient(
            ClientInfo(name="browserd-mcp", version=__version__, pid=os.getpid()),
            trust_level=self._trust,
            tools=self._groups,
            codegen=self._codegen,
            on_tools_changed=self._tools_changed,
            call_timeout_s=self._settings.call_timeout_s,
        )
        registered = await client.connect(spawn=True, timeout_s=self._settings.spawn_timeout_s)
        previous, self._tools = self._tools, registered.tools
        if previous and [t.name for t in previous] != [t.name for t in registered.tools]:
            self._notify_tools_changed()
        return client

    async def _tools_changed(self, message: ToolsChanged) -> None:
        self._tools = message.tools
        self._notify_tools_changed()

    def _notify_tools_changed(self) -> None:
        if not self._listeners:
            self._out.notify("notifications/tools/list_changed")
        for listener in self._listeners:  # 2026-07-28 delivers it on each subscriptions/listen stream
            self._out.notify("notifications/tools/list_changed", {"_meta": {META_SUBSCRIPTION: listener}})

    # -- the client side -------------------------------------------------------------------------

    async def serve(self) -> int:
        reader = await self._out.open_reader()
        self._client_task()  # start or find the daemon while the client is still initializing
        async with asyncio.TaskGroup() as group:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # a line over the limit: skip it, the next one starts clean
                    self._out.error(None, RpcError(INVALID_PARAMS, "message too large"))
                    continue
                if not line:
                    break
                if line.strip():
                    group.create_task(self._handle(line))
            for task, _client, _rid in list(self._calls.values()):
                task.cancel()
        if self._connecting is not None:
            self._connecting.cancel()
            with contextlib.suppress(BaseException):
                client = await self._connecting
                await client.close()
        return 0

    async def _handle(self, line: bytes) -> None:
        request_id: RequestId | None = None
        try:
            message = decode(line)
            request_id = message.get("id")
            method = message.get("method")
            params = message.get("params") or {}
            if not isinstance(method, str) or not isinstance(params, dict):
                return  # a response to nothing we sent, or junk: nothing to answer
            if request_id is None:
                await self._notification(method, params)
                return
            result = await self._request(request_id, method, params)
            if result is not None:
                self._out.result(request_id, result)
        except RpcError as exc:
            self._out.error(request_id, exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug here must cost one answer, never the client's connection
            log.exception("error while handling a message")
            self._out.error(request_id, RpcError(INTERNAL_ERROR, f"internal error: {exc!r}"))

    async def _notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/cancelled":
            await self._cancel(params.get("requestId"))

    async def _request(self, request_id: RequestId, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        modern = META_VERSION in meta
        if modern:
            self._check_modern_version(meta[META_VERSION])
        if method == "initialize":
            return self._initialize(params)
        if method == "server/discover":
            return self._stamp(self._discover())
        if method == "ping":
            return {}
        if method == "tools/list":
            return self._stamp(await self._list_tools(modern)) if modern else await self._list_tools(modern)
        if method == "tools/call":
            return await self._call_tool(request_id, params, modern)
        if method == "subscriptions/listen" and modern:
            self._listen(request_id, params)
            return None  # the stream stays open until the client cancels it
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    def _check_modern_version(self, requested: Any) -> None:
        if requested not in MODERN_VERSIONS:
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": [*MODERN_VERSIONS, *HANDSHAKE_VERSIONS], "requested": requested},
            )

    def _stamp(self, result: dict[str, Any]) -> dict[str, Any]:
        result["_meta"] = {META_SERVER_INFO: self._server_info}
        return result

    def _capabilities(self) -> dict[str, Any]:
        return {"tools": {"listChanged": True}}

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        return {
            "protocolVersion": version,
            "capabilities": self._capabilities(),
            "serverInfo": self._server_info,
            "instructions": INSTRUCTIONS,
        }

    def _discover(self) -> dict[str, Any]:
        return {
            "supportedVersions": list(MODERN_VERSIONS),
            "capabilities": self._capabilities(),
            "instructions": INSTRUCTIONS,
            "ttlMs": 0,
            "cacheScope": "private",
            "resultType": "complete",
        }

    async def _list_tools(self, modern: bool) -> dict[str, Any]:
        try:
            await self._client()
        except (DaemonUnavailable, DaemonGone, RegisterRefused, OSError) as exc:
            raise RpcError(INTERNAL_ERROR, f"browserd daemon unavailable: {exc}") from exc
        result: dict[str, Any] = {"tools": [tool_definition(spec) for spec in self._tools]}
        if modern:
            # ttl 0: a flow published later must show up on the next list, not after a cache expires.
            result.update(ttlMs=0, cacheScope="private", resultType="complete")
        return result

    async def _call_tool(self, request_id: RequestId, params: dict[str, Any], modern: bool) -> dict[str, Any] | None:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "tools/call needs a string `name` and an object `arguments`")
        token = (params.get("_meta") or {}).get("progressToken")
        task = asyncio.current_task()
        assert task is not None
        self._calls[request_id] = (task, None, "")
        try:
            payload = await self._forward(request_id, name, arguments, token)
        except asyncio.CancelledError:
            if request_id in self._calls:
                raise
            return None  # cancelled by the client: it expects no answer
        finally:
            self._calls.pop(request_id, None)
        result = call_result(payload)
        return self._stamp(result | {"resultType": "complete"}) if modern else result

    async def _forward(
        self, request_id: RequestId, name: str, arguments: dict[str, Any], token: Any, retried: bool = False
    ) -> Payload:
        try:
            client = await self._client()
        except (DaemonUnavailable, DaemonGone, RegisterRefused, OSError) as exc:
            return shim_error(
                "DAEMON_UNAVAILABLE",
                f"cannot reach the browserd daemon: {exc}",
                "Run `browserd doctor` to see what is wrong, then retry.",
            )
        daemon_id = client.new_id()
        self._calls[request_id] = (self._calls[request_id][0], client, daemon_id)

        async def progress(event: Event) -> None:
            notice: dict[str, Any] = {"progressToken": token, "progress": event.progress}
            if event.total is not None:
                notice["total"] = event.total
            if event.message:
                notice["message"] = event.message
            self._out.notify("notifications/progress", notice)

        try:
            payload = await client.request(name, arguments, progress if token is not None else None, daemon_id)
        except NotDelivered:
            if retried:
                return self._reset()
            # The daemon died before the call was written, so it never saw it: its successor takes it.
            client.closed.set()
            return await self._forward(request_id, name, arguments, token, retried=True)
        except DaemonGone:
            return self._reset()
        except NoAnswer as exc:
            return shim_error(
                "DAEMON_UNAVAILABLE",
                f"{exc}; it was asked to cancel the call",
                "Retry; if calls keep going unanswered, run `browserd status` and check the daemon log.",
            )
        if self._known_session not in (None, client.session_id):
            payload.content.insert(0, TextContent(RESET_NOTICE))
        self._known_session = client.session_id
        return payload

    def _reset(self) -> Payload:
        self._client_task()  # respawn now, so the next call finds a fresh daemon
        self._known_session = None  # this answer tells the client; the next session is news to nobody
        return shim_error(
            "SESSION_RESET",
            "the browserd daemon stopped during this call; a new daemon is starting and this client's "
            "browser session was reset (its tabs and refs are gone)",
            "Call browser_open again to reload the page, then browser_snapshot for fresh refs.",
        )

    async def _cancel(self, request_id: Any) -> None:
        if request_id in self._listeners:
            self._listeners.discard(request_id)
        entry = self._calls.pop(request_id, None)
        if entry is None:
            return
        task, client, daemon_id = entry
        if client is not None:
            with contextlib.suppress(DaemonGone):
                await client.cancel(daemon_id)
        task.cancel()

    def _listen(self, request_id: RequestId, params: dict[str, Any]) -> None:
        wanted = params.get("notifications") or {}
        self._listeners.add(request_id)
        self._out.notify(
            "notifications/subscriptions/acknowledged",
            {
                "_meta": {META_SUBSCRIPTION: request_id},
                "notifications": {"toolsListChanged": bool(wanted.get("toolsListChanged"))},
            },
        )


def run_stdio_server(tool_groups: list[str] | None, trust: TrustLevel, codegen: bool | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="browserd mcp: %(message)s")
    shim = McpShim(StdioChannel(), tool_groups, trust, codegen)
    try:
        import uvloop

        return uvloop.run(shim.serve())
    except ImportError:
        return asyncio.run(shim.serve())
