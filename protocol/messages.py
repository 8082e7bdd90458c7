"""Messages exchanged over the daemon socket (DESIGN.md §2, reference/003 S3-30..S3-37).

Every message is a msgspec Struct tagged by its `type` field, so one decoder validates the shape of
any frame at the boundary and the rest of the code only ever sees typed objects.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

# Major.minor: a different major is refused at REGISTER; a newer minor only adds optional fields.
PROTOCOL_VERSION = "1.1"  # 1.1: CLIENT_CAPABILITIES, SAMPLE, SAMPLE_RESULT (MCP sampling relay)

TrustLevel = Literal["local", "remote"]
Role = Literal["shim", "control"]


class _Message(msgspec.Struct, tag_field="type", omit_defaults=True, rename="camel"):
    pass


class ClientInfo(msgspec.Struct, omit_defaults=True):
    name: str
    version: str = ""
    pid: int = 0


class DaemonInfo(msgspec.Struct, omit_defaults=True):
    version: str
    pid: int
    protocol: str = PROTOCOL_VERSION


class ToolSpec(msgspec.Struct, omit_defaults=True, rename="camel"):
    """One tool as an MCP client sees it; the daemon is its only author."""

    name: str
    description: str
    input_schema: dict[str, Any]
    group: str
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    # Set when the tool may run as an MCP task (protocol/mcp_tasks.py): the arguments it then defaults to.
    task_arguments: dict[str, Any] | None = None


class TextContent(msgspec.Struct, tag_field="type", tag="text"):
    text: str


class ImageContent(msgspec.Struct, tag_field="type", tag="image", rename="camel"):
    # Raw bytes on the wire (msgpack bin); the shim base64-encodes them for JSON-RPC.
    data: bytes
    mime_type: str


Content = TextContent | ImageContent


class ErrorInfo(msgspec.Struct, rename="camel"):
    """The one error shape of every layer (reference/001 §7, D-32): every field always present."""

    error: str
    error_code: str
    recover_hint: str = ""
    details: dict[str, Any] = msgspec.field(default_factory=dict)


class Payload(msgspec.Struct, omit_defaults=True):
    success: bool
    data: Any = None
    content: list[Content] = msgspec.field(default_factory=list)
    error: ErrorInfo | None = None


class Register(_Message, tag="REGISTER"):
    id: str
    protocol: str
    client: ClientInfo
    role: Role = "shim"
    trust_level: TrustLevel = "local"
    profile_id: str | None = None
    tools: list[str] | None = None
    # Answers carry their Playwright code when true; None leaves it to the daemon's `[mcp] codegen`.
    codegen: bool | None = None


class RegisterOk(_Message, tag="REGISTER_OK"):
    id: str
    session_id: str
    daemon: DaemonInfo
    trust_level: TrustLevel = "local"
    tools: list[ToolSpec] = msgspec.field(default_factory=list)


class Request(_Message, tag="REQUEST"):
    id: str
    session_id: str
    action: str
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    # False when nobody reads this request's progress (an MCP call without a progressToken): the daemon
    # then sends it no EVENT, a message per call that the shim would only drop.
    progress: bool = True


class Response(_Message, tag="RESPONSE"):
    id: str
    session_id: str
    payload: Payload


class Event(_Message, tag="EVENT"):
    id: str
    kind: Literal["progress", "log"] = "progress"
    progress: float = 0.0
    total: float | None = None
    message: str | None = None


class Cancel(_Message, tag="CANCEL"):
    id: str


class ToolsChanged(_Message, tag="TOOLS_CHANGED"):
    tools: list[ToolSpec]


class SessionStart(_Message, tag="SESSION_START"):
    session_id: str


class SessionEnd(_Message, tag="SESSION_END"):
    session_id: str


class Ping(_Message, tag="PING"):
    id: str


class Pong(_Message, tag="PONG"):
    id: str


class ClientCapabilities(_Message, tag="CLIENT_CAPABILITIES"):
    """Shim -> daemon, once its MCP client has initialized: what that client offers the daemon."""

    # The client answers sampling/createMessage: its own model may serve scrape format=json and agent runs.
    sampling: bool = False


class Sample(_Message, tag="SAMPLE"):
    """Daemon -> shim: ask the MCP client's model; `request` is the params of sampling/createMessage.
    Sent only to a shim that announced sampling (ClientCapabilities)."""

    id: str
    request: dict[str, Any]


class SampleResult(_Message, tag="SAMPLE_RESULT"):
    """Shim -> daemon: the client's CreateMessageResult, or why there is none."""

    id: str
    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None


class Error(_Message, tag="ERROR"):
    """A connection-level error: a bad frame, a refused REGISTER, a message out of place."""

    error: ErrorInfo
    id: str | None = None


Message = (
    Register
    | RegisterOk
    | Request
    | Response
    | Event
    | Cancel
    | ToolsChanged
    | SessionStart
    | SessionEnd
    | Ping
    | Pong
    | ClientCapabilities
    | Sample
    | SampleResult
    | Error
)


def protocol_major(version: str) -> str:
    return version.split(".", 1)[0]
