"""The tool mechanism: a tool is a handler plus a msgspec Struct of parameters.

The Struct is the single source of truth: tools/list shows the JSON Schema generated from it, and
the same Struct validates every call, so schema and validation cannot disagree.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from browserd.daemon.errors import BrowserdError, InvalidParameter, UnknownTool
from browserd.daemon.services import ToolAnswer
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.departures import departures_explained
from browserd.daemon.tools.response import Response
from browserd.protocol.messages import TextContent, ToolSpec

if TYPE_CHECKING:
    from browserd.daemon.services import Services
    from browserd.daemon.sessions.session import Session

# pages: the agent loop (open, snapshot, act, read); devtools: what a page's developer reaches for (windows,
# storage, network, routes, console, dialogs, downloads, PDF, CDP attach), off by default to keep tools/list short.
GROUPS = ("core", "pages", "devtools", "scrape", "runs", "flows", "agent")
ALWAYS_ON = "core"

P = TypeVar("P", bound=msgspec.Struct)
Handler = Callable[[ToolContext, P, Response], Awaitable[None]]


class Params(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True):
    """Base of every parameter Struct: camelCase on the wire, unknown fields refused."""


class NoParams(Params):
    pass


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    # MCP clients handle plain nested objects far better than $ref/$defs.
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {key: _inline_refs(value, defs) for key, value in node.items() if key != "title"}
    if isinstance(node, list):
        return [_inline_refs(item, defs) for item in node]
    return node


def _optional(node: Any) -> Any:
    """`X | None = None` as plain X: leaving a property out already means None, and clients pay per token.
    For the same reason a flag that is off unless given does not say `default: false`."""
    if isinstance(node, list):
        return [_optional(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _optional(value) for key, value in node.items()}
    if node.get("type") == "boolean" and node.get("default", True) is False:
        del node["default"]
    choices = node.get("anyOf")
    if isinstance(choices, list) and node.get("default", 0) is None:
        kept = [choice for choice in choices if choice != {"type": "null"}]
        if len(kept) == 1:
            rest = {key: value for key, value in node.items() if key not in ("anyOf", "default")}
            return {**kept[0], **rest}
    return node


def output_schema(result: type[msgspec.Struct]) -> dict[str, Any]:
    """MCP outputSchema of a result Struct; results leave out None fields (omit_defaults), as the schema says."""
    schema = msgspec.json.schema(result)
    defs = schema.pop("$defs", {})
    body = _optional(_inline_refs(schema, defs))
    body.pop("description", None)
    return dict(body)


def input_schema(params: type[msgspec.Struct]) -> dict[str, Any]:
    schema = msgspec.json.schema(params)
    defs = schema.pop("$defs", {})
    body = _optional(_inline_refs(schema, defs))
    body.pop("description", None)  # the tool's own description says it once
    body.setdefault("properties", {})
    if not body.get("required"):
        body.pop("required", None)  # an empty list says nothing, and every client pays for it
    return dict(body)


@dataclass(frozen=True)
class Tool(Generic[P]):
    name: str
    group: str
    description: str
    params: type[P]
    handler: Handler[P]
    read_only: bool = False
    # The Struct its structuredContent follows; announced as outputSchema in tools/list.
    output: type[msgspec.Struct] | None = None
    # An inputSchema looser than `params`' own (which still checks every call), for tools that many
    # clients pay for in tools/list: published flows (issue 14, S4-110).
    schema: dict[str, Any] | None = None
    # Set for a long call that a client may make as an MCP task (the tasks extension): the arguments
    # it then runs with unless the client gave them (one level of objects merged), e.g. mode sync, since
    # the task already answers at once.
    task_arguments: dict[str, Any] | None = None

    def spec(self) -> ToolSpec:
        return self._spec

    @cached_property
    def _spec(self) -> ToolSpec:
        # Built once per tool: its JSON Schema costs milliseconds, and every REGISTER lists every tool.
        return ToolSpec(
            name=self.name,
            description=self.description,
            input_schema=self.schema if self.schema is not None else input_schema(self.params),
            group=self.group,
            output_schema=output_schema(self.output) if self.output is not None else None,
            annotations={"readOnlyHint": True} if self.read_only else None,
            task_arguments=self.task_arguments,
        )

    async def run(self, ctx: ToolContext, params: P, response: Response) -> None:
        """The handler, with a tab that went back to its user reported as that (tools/departures.py); the
        call goes in the session's log (sessions/call_log.py) however it ends."""
        started = time.time()
        error_code: str | None = "CANCELLED"
        try:
            with departures_explained(ctx.session):
                await self.handler(ctx, params, response)
            error_code = None
        except BrowserdError as exc:
            error_code = exc.code
            raise
        except Exception:
            error_code = BrowserdError.code
            raise
        finally:
            ctx.session.calls.add(self.name, params, started, error_code)

    def parse(self, arguments: dict[str, Any]) -> P:
        try:
            return msgspec.convert(arguments, self.params)
        except msgspec.ValidationError as exc:
            raise _invalid_parameter(self.name, str(exc)) from exc


_FIELD_PATTERNS = (
    re.compile(r"at `\$\.([A-Za-z0-9_]+)"),
    re.compile(r"missing required field `([^`]+)`"),
    re.compile(r"unknown field `([^`]+)`"),
)


def _invalid_parameter(tool: str, message: str) -> InvalidParameter:
    field = next((m.group(1) for p in _FIELD_PATTERNS if (m := p.search(message))), None)
    where = f" (parameter `{field}`)" if field else ""
    return InvalidParameter(f"{tool}: {message}{where}", field=field, tool=tool)


def tool(
    name: str,
    group: str,
    description: str,
    params: type[P],
    *,
    read_only: bool = False,
    output: type[msgspec.Struct] | None = None,
    task_arguments: dict[str, Any] | None = None,
) -> Callable[[Handler[P]], Tool[P]]:
    if group not in GROUPS:
        raise ValueError(f"unknown tool group {group}")

    def register(handler: Handler[P]) -> Tool[P]:
        return Tool(name, group, description, params, handler, read_only, output, task_arguments=task_arguments)

    return register


class Catalog:
    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        self._tools = {t.name: t for t in tools}
        # Tools that come and go while the daemon runs (published flows, flow_<slug>): every client has them.
        self.dynamic: Callable[[], list[Tool[Any]]] = list

    def __iter__(self) -> Any:
        return iter(self._tools.values())

    def select(self, groups: Iterable[str] | None, default: Iterable[str]) -> list[Tool[Any]]:
        """The tools a client sees: `core` plus the groups it asked for (`all` for every group)."""
        wanted = set(default if groups is None else groups)
        unknown = wanted - set(GROUPS) - {"all"}
        if unknown:
            raise InvalidParameter(
                f"unknown tool group(s): {', '.join(sorted(unknown))}",
                hint=f"Choose from {', '.join(GROUPS)} or all.",
                field="tools",
            )
        if "all" in wanted:
            wanted = set(GROUPS)
        wanted.add(ALWAYS_ON)
        return [t for t in self._tools.values() if t.group in wanted] + self.dynamic()

    def get(self, name: str, allowed: set[str]) -> Tool[Any]:
        found = self._tools.get(name)
        if found is None and name in allowed:
            found = next((t for t in self.dynamic() if t.name == name), None)
        if found is None or name not in allowed:
            raise UnknownTool(f"unknown tool `{name}`", tool=name)
        return found

    # The ToolCaller of daemon/services.py: how runs run a tool by name.

    def check(self, name: str, arguments: dict[str, Any]) -> None:
        self.get(name, {name}).parse(arguments)

    async def call(self, name: str, arguments: dict[str, Any], services: Services, session: Session) -> dict[str, Any]:
        """The tool's handler on `session` with no progress reporting; its BrowserdError propagates."""
        return (await self.answer(name, arguments, services, session)).data

    async def answer(self, name: str, arguments: dict[str, Any], services: Services, session: Session) -> ToolAnswer:
        tool = self.get(name, {name})
        params = tool.parse(arguments)

        async def quiet(done: float, total: float | None, message: str | None) -> None:
            return None

        response = Response()
        await tool.run(ToolContext(services, session, quiet), params, response)
        payload = response.payload()
        text = "\n".join(block.text for block in payload.content or [] if isinstance(block, TextContent))
        return ToolAnswer(text, payload.data if isinstance(payload.data, dict) else {})
