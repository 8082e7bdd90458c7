"""MCP over streamable HTTP at /mcp: the official SDK's transports in front of the daemon's tools.

The SDK's session manager serves every era its client speaks: legacy sessions (initialize, then one
`Mcp-Session-Id`, answers and progress on SSE streams) and the stateless 2026-07-28 single exchange.
The handlers here only translate: the tool catalog, errors and answers are the ones the stdio shim
gives (daemon/server/tool_clients.py, protocol/mcp.py). Per call they find the caller's token (mcp_guard.py) and
browser session (sessions.py); a long call from a client that declares the tasks extension becomes a
task (daemon/server/http_tasks.py).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from browserd.daemon.errors import BrowserdError, InvalidParameter
from browserd.daemon.events import Progress
from browserd.daemon.server.http.mcp_guard import McpGuard, token_of
from browserd.daemon.server.http.routeset import RouteSet
from browserd.daemon.server.http.sessions import HttpSession, HttpSessions
from browserd.daemon.server.http.tokens import TokenStore
from browserd.daemon.server.http_tasks import McpTasks
from browserd.daemon.server.tool_clients import guarded
from browserd.daemon.tools.response import error_payload
from browserd.protocol import __version__
from browserd.protocol.mcp import INSTRUCTIONS, call_result, tool_definition
from browserd.protocol.mcp_tasks import (
    EXTENSION,
    MISSING_CAPABILITY,
    TaskUnknown,
    missing_capability,
    task_call_arguments,
)
from browserd.protocol.messages import Payload, ToolSpec

if TYPE_CHECKING:
    from browserd.daemon.server.daemon_process import Daemon

log = logging.getLogger(__name__)

SESSION_ARGUMENT = "session"
# The `_meta` key of every answer over HTTP: the handle of the browser session the call ran in.
SESSION_META = "browserd/session"
# Short: every tool carries it in tools/list, and every character there costs the agent on every request.
_SESSION_SCHEMA = {"type": "string", "description": 'Browser session handle (bs_...) from an answer; "new": another.'}


class TaskParams(types.RequestParams):
    task_id: str


class McpEndpoint:
    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon
        self.sessions = HttpSessions(daemon)
        daemon.tools_listeners.append(self.sessions.reselect_tools)
        self.tasks = McpTasks(daemon.idle, daemon.config.http.task_ttl_s)
        self._definitions: dict[str, tuple[ToolSpec, dict[str, Any]]] = {}
        # No tool declares an argument as an HTTP header (x-mcp-header), so a 2026-07-28 call has no
        # Mcp-Param-* header to check: without this lookup the SDK would run tools/list on every call to
        # find out (2.3 ms of the daemon's CPU per call, measured with cProfile).
        server: Server[Any] = Server(
            "browserd", version=__version__, instructions=INSTRUCTIONS, get_tool_input_schema=lambda name: None
        )
        # Registered as plain handlers: they answer the wire dicts protocol/mcp.py builds, as the shim does.
        server.add_request_handler("tools/list", types.PaginatedRequestParams, self._list_tools)
        server.add_request_handler("tools/call", types.CallToolRequestParams, self._call_tool)
        server.middleware = []  # no OpenTelemetry span per message: a cost on every call, read by nobody here
        server.extensions[EXTENSION] = {}
        server.add_request_handler("tasks/get", TaskParams, self._get_task)
        server.add_request_handler("tasks/cancel", TaskParams, self._cancel_task)
        self.manager = StreamableHTTPSessionManager(server, session_idle_timeout=daemon.config.http.session_idle_s)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run(), anyio.create_task_group() as group:
            group.start_soon(self.sessions.expire)
            try:
                # Tasks end first (cancelled with the daemon), then the sessions they ran in close.
                async with self.tasks.running():
                    yield
            finally:
                group.cancel_scope.cancel()

    async def asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)
        if scope["type"] == "http" and scope["method"] == "DELETE":
            # The client ended its MCP session; the SDK has forgotten it, its browser session goes too.
            mcp_session_id = dict(scope["headers"]).get(MCP_SESSION_ID_HEADER.lower().encode())
            if mcp_session_id:
                await self.sessions.end_mcp_session(mcp_session_id.decode())

    def status(self) -> dict[str, Any]:
        return {"sessions": self.sessions.status()}

    # -- tools -----------------------------------------------------------------------------------

    async def _list_tools(self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
        token = token_of(ctx.request)
        daemon = self._daemon
        tools = daemon.catalog.select(token.tools, daemon.config.mcp.tools)
        result: dict[str, Any] = {"tools": [self._definition(t.spec()) for t in tools]}
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # ttl 0: a flow published later must show up on the next list, not after a cache expires.
            result.update(ttlMs=0, cacheScope="private", resultType="complete")
        return result

    def _definition(self, spec: ToolSpec) -> dict[str, Any]:
        """The tool as the shim lists it, plus the optional `session` argument every tool takes over HTTP."""
        cached = self._definitions.get(spec.name)
        if cached is not None and cached[0] is spec:
            return cached[1]
        definition = tool_definition(spec)
        schema = dict(definition["inputSchema"])
        schema["properties"] = {**schema.get("properties", {}), SESSION_ARGUMENT: _SESSION_SCHEMA}
        definition["inputSchema"] = schema
        self._definitions[spec.name] = (spec, definition)
        return definition

    async def _call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> dict[str, Any]:
        token = token_of(ctx.request)
        arguments = dict(params.arguments or {})
        handle = arguments.pop(SESSION_ARGUMENT, None)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        mcp_session_id = None if modern or ctx.request is None else ctx.request.headers.get(MCP_SESSION_ID_HEADER)
        try:
            if handle is not None and not isinstance(handle, str):
                raise InvalidParameter("`session` is a browser session handle (a string)", field=SESSION_ARGUMENT)
            entry, minted = await self.sessions.resolve(token, handle, mcp_session_id)
        except BrowserdError as exc:
            return {**call_result(error_payload(exc)), "resultType": "complete"}
        tool = entry.client.tools.get(params.name)
        if tool is not None and tool.task_arguments is not None and _declares_tasks(ctx):
            return self._start_task(token.token_id, entry, minted, params.name, {**arguments}, tool.task_arguments)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(done, total, message)

        payload = await self._call(entry, params.name, arguments, progress)
        return _answer(payload, entry, minted)

    async def _call(self, entry: HttpSession, name: str, arguments: dict[str, Any], progress: Progress) -> Payload:
        timeout = self._daemon.config.daemon.request_timeout_s
        with self.sessions.using(entry):
            return await guarded(name, timeout, lambda deadline: entry.client.call(name, arguments, progress, deadline))

    # -- tasks -----------------------------------------------------------------------------------

    def _start_task(
        self,
        owner: str,
        entry: HttpSession,
        minted: bool,
        name: str,
        arguments: dict[str, Any],
        defaults: dict[str, Any],
    ) -> dict[str, Any]:
        merged = task_call_arguments(arguments, defaults)

        async def work(progress: Progress) -> dict[str, Any]:
            return _answer(await self._call(entry, name, merged, progress), entry, minted)

        return {**self.tasks.start(owner, name, work).created(), "_meta": {SESSION_META: entry.handle}}

    async def _get_task(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        owner = _tasks_caller(ctx)
        try:
            return self.tasks.get(owner, params.task_id)
        except TaskUnknown as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message()) from None

    async def _cancel_task(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        owner = _tasks_caller(ctx)
        try:
            self.tasks.cancel(owner, params.task_id)
        except TaskUnknown as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message()) from None
        return {}


def _answer(payload: Payload, entry: HttpSession, minted: bool) -> dict[str, Any]:
    """The tools/call result, naming the browser session: in `_meta` always, in the text when it is new."""
    result = call_result(payload)
    if minted:
        result["content"].append(
            {
                "type": "text",
                "text": f'Browser session: {entry.handle}. Pass session="{entry.handle}" to later calls to keep '
                "working in its tabs.",
            }
        )
    result["_meta"] = {SESSION_META: entry.handle}
    result["resultType"] = "complete"  # required from 2026-07-28; older versions' results drop it
    return result


def _declares_tasks(ctx: ServerRequestContext[Any]) -> bool:
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False  # the SDK serves tasks only as the 2026-07-28 extension
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and EXTENSION in (capabilities.extensions or {})


def _tasks_caller(ctx: ServerRequestContext[Any]) -> str:
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(types.METHOD_NOT_FOUND, "tasks/* are served on protocol 2026-07-28 (the tasks extension)")
    if not _declares_tasks(ctx):
        raise MCPError(MISSING_CAPABILITY, "Missing required client capability", missing_capability())
    return token_of(ctx.request).token_id


def mcp_routes(daemon: Daemon) -> RouteSet:
    """POST/GET/DELETE /mcp behind the token and Origin guard."""
    assert daemon.http is not None
    endpoint = McpEndpoint(daemon)
    config = daemon.config.http
    guard = McpGuard(endpoint.asgi, TokenStore.of(config), config, daemon.http.address)
    return RouteSet([Route("/mcp", guard)], running=endpoint.running, status=endpoint.status)
