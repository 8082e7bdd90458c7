"""The calling MCP client's own model, through sampling/createMessage (the shim relays it: SAMPLE and
SAMPLE_RESULT on the daemon socket).

Sampling messages carry text, and tool use in sampling is new and rare among clients, so tools travel
as text: the system prompt lists them and asks for one JSON object `{"tool": name, "arguments": {...}}`,
which becomes a ToolCall. Sampling reports no token counts: usage is estimated at four characters per
token.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from browserd.daemon.errors import LlmFailed
from browserd.daemon.llm.chat_model import Completion, Message, ToolCall, Usage
from browserd.daemon.llm.schema import NotJson, parse_answer

Ask = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
CHARS_PER_TOKEN = 4

TOOLS_RULE = (
    "You act by calling one tool per answer. Answer with exactly one JSON object and nothing else: "
    '{{"tool": "<name>", "arguments": {{...}}}}. The tools (name, what it does, its arguments as JSON '
    "Schema):\n{tools}"
)


def _tool_lines(tools: list[dict[str, Any]]) -> str:
    lines = []
    for tool in tools:
        function = tool["function"]
        parameters = json.dumps(function.get("parameters", {}), separators=(",", ":"))
        lines.append(f"- {function['name']}: {function.get('description', '')} {parameters}")
    return "\n".join(lines)


def sampling_request(messages: list[Message], tools: list[dict[str, Any]] | None, max_tokens: int) -> dict[str, Any]:
    """The params of sampling/createMessage for a chat-completions conversation."""
    system = [m.get("content") or "" for m in messages if m["role"] == "system"]
    if tools:
        system.append(TOOLS_RULE.format(tools=_tool_lines(tools)))
    sampled: list[dict[str, Any]] = []
    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "system":
            continue
        if role == "assistant":
            calls = message.get("tool_calls") or []
            text = content or "\n".join(
                json.dumps({"tool": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"] or "{}")})
                for c in calls
            )
            sampled.append({"role": "assistant", "content": {"type": "text", "text": text}})
        elif role == "tool":
            sampled.append({"role": "user", "content": {"type": "text", "text": f"Tool result:\n{content}"}})
        else:
            sampled.append({"role": "user", "content": {"type": "text", "text": content}})
    return {
        "messages": sampled,
        "systemPrompt": "\n\n".join(system),
        "includeContext": "none",
        "maxTokens": max_tokens,
    }


class SamplingModel:
    def __init__(self, ask: Ask, max_tokens: int) -> None:
        self._ask = ask
        self._max_tokens = max_tokens
        self._name = "mcp-sampling"

    @property
    def name(self) -> str:
        return self._name

    async def complete(
        self, messages: list[Message], tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None
    ) -> Completion:
        request = sampling_request(messages, tools, min(max_tokens or self._max_tokens, self._max_tokens))
        result = await self._ask(request)
        content = result.get("content")
        blocks = content if isinstance(content, list) else [content]
        text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        self._name = str(result.get("model") or self._name)
        sent = len(json.dumps(request["messages"])) + len(request["systemPrompt"])
        usage = Usage(sent // CHARS_PER_TOKEN, len(text) // CHARS_PER_TOKEN + 1)
        calls = _tool_call(text) if tools else []
        return Completion(text="" if calls else text, tool_calls=calls, usage=usage, model=self._name)


def _tool_call(text: str) -> list[ToolCall]:
    """The one tool call a sampled answer asks for; none when it is no such JSON object (the model said text)."""
    try:
        value = parse_answer(text)
    except NotJson:
        return []
    if not isinstance(value, dict) or not isinstance(value.get("tool"), str):
        return []
    arguments = value.get("arguments") if isinstance(value.get("arguments"), dict) else {}
    return [ToolCall(f"call_{secrets.token_hex(4)}", value["tool"], json.dumps(arguments))]


def sampling_failed(message: str) -> LlmFailed:
    return LlmFailed(
        f"the client's model (MCP sampling) did not answer: {message}",
        hint="Accept the sampling request in the MCP client, or configure an endpoint in [llm] (docs/llm.md).",
        reason="sampling",
    )
