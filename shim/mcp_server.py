"""The MCP stdio server one client talks to; every tool call is forwarded to the shared daemon.

It speaks both eras of MCP without the SDK (DESIGN.md §1): the initialize handshake (2024-11-05 ..
2025-11-25) and 2026-07-28, where each request carries its protocol version in `params._meta` and
`server/discover` replaces the handshake. The era is judged per request, so one process serves a
client that probes discover and then falls back to initialize. A 2026-07-28 client that declares the tasks
extension gets long calls (tools with taskArguments) as MCP tasks, run here in the background
(protocol/mcp_tasks.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from browserd.protocol import __version__
from browserd.protocol.mcp import INSTRUCTIONS, call_result, error_payload, tool_definition
from browserd.protocol.mcp_tasks import (
    EXTENSION,
    MISSING_CAPABILITY,
    McpTask,
    TaskTable,
    TaskUnknown,
    declares_tasks,
    missing_capability,
    task_call_arguments,
)
from browserd.protocol.messages import (
    ClientInfo,
    ErrorInfo,
    Event,
    Payload,
    Sample,
    SampleResult,
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

# How long a sampling request waits for the client's answer; the daemon's own deadline ([llm]) is the real one.
SAMPLE_WAIT_S = 900.0

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
# A stdio shim has one client: every task is its own. Finished tasks are kept this long for tasks/get.
TASK_OWNER = "stdio"
TASK_TTL_S = 3600.0

RESET_NOTICE = (
    "Note: the browserd daemon restarted since the previous call, so this client's browser session was "
    "reset: earlier tabs and refs are gone. Call browser_open again if a page is needed."
)


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
        self._tasks = TaskTable(TASK_TTL_S)
        # Whether the client answers sampling/createMessage, and the ones this shim asked that wait for it.
        self._sampling = False
        self._asks: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self._ask_ids = itertools.count(1)

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
            on_sample=self._sample,
        )
        registered = await client.connect(spawn=True, timeout_s=self._settings.spawn_timeout_s)
        if self._sampling:  # the client initialized while this connection was being made
            await client.offer_sampling(True)
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
            if method is None and request_id in self._asks:
                self._asks[request_id].set_result(message)  # the client's answer to our sampling request
                return
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
            result = self._initialize(params)
            await self._offer_sampling()
            return result
        if method == "server/discover":
            return self._stamp(self._discover())
        if method == "ping":
            return {}
        if method == "tools/list":
            return self._stamp(await self._list_tools(modern)) if modern else await self._list_tools(modern)
        if method == "tools/call":
            return await self._call_tool(request_id, params, modern)
        if method in ("tasks/get", "tasks/cancel") and modern:
            return await self._task_request(method, params)
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
        capabilities = params.get("capabilities")
        self._sampling = isinstance(capabilities, dict) and isinstance(capabilities.get("sampling"), dict)
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
            "capabilities": {**self._capabilities(), "extensions": {EXTENSION: {}}},
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
        meta = params.get("_meta") or {}
        if modern and declares_tasks(meta) and (defaults := await self._task_arguments(name)) is not None:
            return self._stamp(self._start_task(name, task_call_arguments(arguments, defaults)))
        token = meta.get("progressToken")
        task = asyncio.current_task()
        assert task is not None
        self._calls[request_id] = (task, None, "")
        try:
            payload = await self._forward(request_id, name, arguments, self._notifier(token))
        except asyncio.CancelledError:
            if request_id in self._calls:
                raise
            return None  # cancelled by the client: it expects no answer
        finally:
            self._calls.pop(request_id, None)
        result = call_result(payload)
        return self._stamp(result | {"resultType": "complete"}) if modern else result

    async def _forward(
        self,
        request_id: RequestId,
        name: str,
        arguments: dict[str, Any],
        progress: Callable[[Event], Awaitable[None]] | None,
        retried: bool = False,
    ) -> Payload:
        try:
            client = await self._client()
        except (DaemonUnavailable, DaemonGone, RegisterRefused, OSError) as exc:
            return error_payload(
                "DAEMON_UNAVAILABLE",
                f"cannot reach the browserd daemon: {exc}",
                "Run `browserd doctor` to see what is wrong, then retry.",
            )
        daemon_id = client.new_id()
        self._calls[request_id] = (self._calls[request_id][0], client, daemon_id)
        try:
            payload = await client.request(name, arguments, progress, daemon_id)
        except NotDelivered:
            if retried:
                return self._reset()
            # The daemon died before the call was written, so it never saw it: its successor takes it.
            client.closed.set()
            return await self._forward(request_id, name, arguments, progress, retried=True)
        except DaemonGone:
            return self._reset()
        except NoAnswer as exc:
            return error_payload(
                "DAEMON_UNAVAILABLE",
                f"{exc}; it was asked to cancel the call",
                "Retry; if calls keep going unanswered, run `browserd status` and check the daemon log.",
            )
        if self._known_session not in (None, client.session_id):
            payload.content.insert(0, TextContent(RESET_NOTICE))
        self._known_session = client.session_id
        return payload

    def _notifier(self, token: Any) -> Callable[[Event], Awaitable[None]] | None:
        """notifications/progress for a call that asked for them (it carried a progressToken)."""
        if token is None:
            return None

        async def progress(event: Event) -> None:
            notice: dict[str, Any] = {"progressToken": token, "progress": event.progress}
            if event.total is not None:
                notice["total"] = event.total
            if event.message:
                notice["message"] = event.message
            self._out.notify("notifications/progress", notice)

        return progress

    # -- MCP tasks (2026-07-28, protocol/mcp_tasks.py) ---------------------------------------------

    async def _task_arguments(self, name: str) -> dict[str, Any] | None:
        """The tool's task defaults when it may run as a task; the tools are known once the daemon answered."""
        with contextlib.suppress(DaemonUnavailable, DaemonGone, RegisterRefused, OSError):
            await self._client()  # unreachable: the call goes the usual way and reports it
        spec = next((t for t in self._tools if t.name == name), None)
        return spec.task_arguments if spec is not None else None

    def _start_task(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        task = self._tasks.add(TASK_OWNER, name)
        runner = asyncio.create_task(self._run_task(task, arguments))
        self._calls[task.task_id] = (runner, None, "")  # tasks/cancel cancels it as notifications/cancelled would
        return task.created()

    async def _run_task(self, task: McpTask, arguments: dict[str, Any]) -> None:
        async def progress(event: Event) -> None:
            task.progressed(event.progress, event.total, event.message)

        try:
            payload = await self._forward(task.task_id, task.tool, arguments, progress)
        except asyncio.CancelledError:
            task.ended("cancelled", message=f"{task.tool} was cancelled")
            return
        finally:
            self._calls.pop(task.task_id, None)
        task.ended("completed", {**call_result(payload), "resultType": "complete"})

    async def _task_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if not declares_tasks(params.get("_meta")):
            raise RpcError(MISSING_CAPABILITY, "Missing required client capability", missing_capability())
        task_id = params.get("taskId")
        try:
            task = self._tasks.owned(TASK_OWNER, task_id if isinstance(task_id, str) else "")
        except TaskUnknown as exc:
            raise RpcError(INVALID_PARAMS, exc.message()) from None
        if method == "tasks/cancel":
            await self._cancel(task.task_id)
            return self._stamp({"resultType": "complete"})
        return self._stamp({**task.view(), "resultType": "complete"})

    # -- sampling: the daemon asks the client's model (issue 26) --------------------------------------

    async def _offer_sampling(self) -> None:
        """Tell a daemon already connected; a connection still being made tells it once registered (_connect)."""
        task = self._connecting
        if not self._sampling or task is None or not task.done() or task.cancelled() or task.exception():
            return
        with contextlib.suppress(DaemonGone):
            await task.result().offer_sampling(True)

    async def _sample(self, message: Sample) -> SampleResult:
        ask_id = f"browserd-sample-{next(self._ask_ids)}"
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._asks[ask_id] = answer
        try:
            self._out.request(ask_id, "sampling/createMessage", message.request)
            reply = await asyncio.wait_for(answer, SAMPLE_WAIT_S)
        except TimeoutError:
            return SampleResult(id=message.id, error=_sample_error("the client did not answer"))
        finally:
            self._asks.pop(ask_id, None)
        result = reply.get("result")
        if not isinstance(result, dict):
            error = reply.get("error") or {}
            return SampleResult(id=message.id, error=_sample_error(str(error.get("message") or "no result")))
        return SampleResult(id=message.id, result=result)

    def _reset(self) -> Payload:
        self._client_task()  # respawn now, so the next call finds a fresh daemon
        self._known_session = None  # this answer tells the client; the next session is news to nobody
        return error_payload(
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


def _sample_error(message: str) -> ErrorInfo:
    return ErrorInfo(error=message, error_code="LLM_ERROR", recover_hint="The MCP client refused or failed sampling.")


def run_stdio_server(tool_groups: list[str] | None, trust: TrustLevel, codegen: bool | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="browserd mcp: %(message)s")
    shim = McpShim(StdioChannel(), tool_groups, trust, codegen)
    try:
        import uvloop

        return uvloop.run(shim.serve())
    except ImportError:
        return asyncio.run(shim.serve())
