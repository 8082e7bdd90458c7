"""Which model answers a call: the configured endpoint, or the calling client's own through MCP sampling
when it offers that and no endpoint is configured (or [llm] prefer_sampling says so)."""

from __future__ import annotations

from typing import Any

from browserd.daemon.config import LlmConfig
from browserd.daemon.errors import LlmNotConfigured
from browserd.daemon.llm.chat_model import Model
from browserd.daemon.llm.endpoint import Endpoint
from browserd.daemon.llm.keys import api_key
from browserd.daemon.llm.structured import JsonAnswer, extract_json


def configured(config: LlmConfig) -> bool:
    return bool(config.base_url and config.model)


def require_endpoint(config: LlmConfig) -> None:
    """LLM_NOT_CONFIGURED unless an endpoint is configured: for work that has no calling client to sample."""
    if not configured(config):
        missing = " and ".join(key for key in ("base_url", "model") if not getattr(config, key))
        raise LlmNotConfigured(f"no model is configured ([llm] {missing} unset) and this client offers no sampling")


class Llm:
    def __init__(self, config: LlmConfig) -> None:
        self.config = config
        self._endpoint: Endpoint | None = None
        # The sampling models of connected clients that offer sampling, by their session id.
        self.samplers: dict[str, Model] = {}

    def offers(self, session_id: str | None = None) -> bool:
        """Whether work for session `session_id` has a model at all: its client's sampling or an endpoint."""
        return (session_id or "") in self.samplers or configured(self.config)

    def model(self, session_id: str | None = None) -> Model:
        """The model for work on behalf of session `session_id`: its client's through sampling when it offers
        that and no endpoint is configured (or prefer_sampling), else the endpoint; LLM_NOT_CONFIGURED if neither."""
        sampler = self.samplers.get(session_id or "")
        if sampler is not None and (self.config.prefer_sampling or not configured(self.config)):
            return sampler
        require_endpoint(self.config)
        if self._endpoint is None:
            # The key is read once, when the endpoint is first used: it stays in this process's memory only.
            self._endpoint = Endpoint(self.config, api_key(self.config))
        return self._endpoint

    async def page_json(
        self, model: Model, markdown: str, url: str, prompt: str | None, schema: dict[str, Any] | None
    ) -> JsonAnswer:
        """A page's main content read by `model` into JSON, per `prompt` and `schema`: scrape, batch and crawl
        (format json). Only the first max_content_chars go to the model: a huge page must not cost a fortune."""
        return await extract_json(model, markdown[: self.config.max_content_chars], url, prompt, schema)

    async def aclose(self) -> None:
        if self._endpoint is not None:
            await self._endpoint.aclose()
