"""What every model offers the daemon: one chat completion, possibly with tool calls, and its token usage.

Messages and tools are in the OpenAI chat-completions shape (role/content/tool_calls dicts, function
tools): the wire format of the endpoint, and a lingua franca the sampling path translates from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def info(self) -> dict[str, int]:
        return {"promptTokens": self.prompt_tokens, "completionTokens": self.completion_tokens}


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    # The model's JSON text, parsed by whoever runs the tool (a model may write invalid JSON).
    arguments: str


@dataclass
class Completion:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    # The model that answered, as the endpoint names it.
    model: str = ""

    def message(self) -> Message:
        """This answer as the assistant message of the conversation's next request."""
        message: Message = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in self.tool_calls
            ]
        return message


class Model(Protocol):
    """A chat model: the configured endpoint (llm/endpoint.py) or the calling client's (llm/sampling.py)."""

    @property
    def name(self) -> str: ...

    async def complete(
        self, messages: list[Message], tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None
    ) -> Completion: ...
