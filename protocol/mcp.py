"""What every MCP front end of browserd says the same way: the stdio shim and the daemon's HTTP endpoint.

Tool definitions for tools/list and tools/call results built from the daemon's answers, in plain JSON
values, so neither front end has a copy and the stdio shim stays free of the MCP SDK (DESIGN.md §1).
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec

from browserd.protocol.messages import ErrorInfo, ImageContent, Payload, TextContent, ToolSpec

INSTRUCTIONS = (
    "browserd drives a real Chromium. browser_open loads a page; browser_snapshot reads it with [ref=eN] "
    "refs that other tools act on. Errors carry errorCode and recoverHint: follow the hint."
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


def error_payload(code: str, message: str, hint: str) -> Payload:
    """An error raised by a front end itself, in the same shape as the daemon's (D-32)."""
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
