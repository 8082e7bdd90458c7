"""An OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio,
OpenRouter...) over httpx.

httpx rather than the `openai` package: the daemon already holds httpx (the scrape fast path), the
request is one POST of plain JSON, and `import openai` (3.57, after httpx) costs 0.69 s and 29 MB RSS more
(pydantic and its models; measured with the load average at 5.2), for one method of it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from browserd.daemon.config import LlmConfig
from browserd.daemon.errors import LlmFailed
from browserd.daemon.llm.chat_model import Completion, Message, ToolCall, Usage

log = logging.getLogger(__name__)

BODY_SHOWN = 300  # characters of an endpoint's error body an error quotes


class Endpoint:
    """The configured endpoint; one connection pool, closed with the daemon."""

    def __init__(self, config: LlmConfig, key: str | None) -> None:
        self.config = config
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        timeout = httpx.Timeout(config.request_timeout_s, connect=config.connect_timeout_s)
        # trust_env=False: a proxy for the browser's traffic is no reason to send the key through it.
        self._client = httpx.AsyncClient(
            base_url=config.base_url.rstrip("/") + "/", headers=headers, timeout=timeout, trust_env=False
        )

    @property
    def name(self) -> str:
        return self.config.model

    async def aclose(self) -> None:
        await self._client.aclose()

    async def complete(
        self, messages: list[Message], tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None
    ) -> Completion:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            # [llm] max_tokens caps every answer: a run's remaining budget may be far above what the model allows.
            "max_tokens": min(max_tokens or self.config.max_tokens, self.config.max_tokens),
            "temperature": 0,
        }
        if tools:
            body["tools"] = tools
        where = f"{self.config.base_url} (model {self.config.model})"
        try:
            reply = await self._client.post("chat/completions", json=body)
        except httpx.TimeoutException as exc:
            raise LlmFailed(
                f"the model at {where} did not answer within {self.config.request_timeout_s:.0f} s",
                hint="Raise [llm] request_timeout_s for a slow local model, or check that the endpoint is up.",
                reason="timeout",
            ) from exc
        except httpx.HTTPError as exc:
            raise LlmFailed(f"cannot reach the model at {where}: {exc}", reason="connect") from exc
        if reply.status_code >= 400:
            raise LlmFailed(
                f"the model at {where} answered HTTP {reply.status_code}: {reply.text[:BODY_SHOWN]}",
                hint=_status_hint(reply.status_code),
                status=reply.status_code,
            )
        try:
            return _completion(reply.json(), self.config.model)
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LlmFailed(
                f"the model at {where} answered something that is no chat completion: {reply.text[:BODY_SHOWN]}",
                hint="Check that [llm] base_url is the endpoint's OpenAI-compatible root (it usually ends in /v1).",
                reason="bad-answer",
            ) from exc


def _status_hint(status: int) -> str:
    if status in (401, 403):
        return "The endpoint refused the key: check [llm] api_key_env / api_key_file (docs/llm.md)."
    if status == 404:
        return "Check [llm] base_url (usually ending in /v1) and that [llm] model exists there."
    if status == 429:
        return "The endpoint is rate-limiting: wait and retry, or lower the run's concurrency."
    return LlmFailed.hint


def _completion(answer: dict[str, Any], configured: str) -> Completion:
    message = answer["choices"][0]["message"]
    calls = [
        ToolCall(
            id=str(call.get("id") or f"call_{index}"),
            name=call["function"]["name"],
            arguments=_arguments(call["function"].get("arguments")),
        )
        for index, call in enumerate(message.get("tool_calls") or [])
    ]
    usage = answer.get("usage") or {}
    return Completion(
        text=message.get("content") or "",
        tool_calls=calls,
        usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
        model=str(answer.get("model") or configured),
    )


def _arguments(raw: Any) -> str:
    # Some servers send the arguments as an object rather than the JSON text the API specifies.
    if raw is None:
        return "{}"
    return raw if isinstance(raw, str) else json.dumps(raw)
