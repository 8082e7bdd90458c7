"""Which model answers (issue 26): the endpoint, or the calling client's through sampling when it offers that and
no endpoint is configured, or when [llm] prefer_sampling says so."""

from __future__ import annotations

from browserd.daemon.config import LlmConfig
from browserd.daemon.llm.endpoint import Endpoint
from browserd.daemon.llm.llm_service import Llm
from browserd.daemon.llm.sampling import SamplingModel, sampling_request

ENDPOINT = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}


async def never(request: dict[str, object]) -> dict[str, object]:
    raise AssertionError("not asked in these tests")


def test_the_clients_model_serves_when_no_endpoint_is_configured() -> None:
    llm = Llm(LlmConfig())
    llm.samplers["s1"] = sampler = SamplingModel(never, 100)
    assert llm.model("s1") is sampler


def test_an_endpoint_wins_unless_sampling_is_preferred() -> None:
    llm = Llm(LlmConfig(**ENDPOINT))
    llm.samplers["s1"] = sampler = SamplingModel(never, 100)
    assert isinstance(llm.model("s1"), Endpoint)
    assert isinstance(llm.model("another session"), Endpoint)
    preferring = Llm(LlmConfig(**ENDPOINT, prefer_sampling=True))
    preferring.samplers["s1"] = sampler
    assert preferring.model("s1") is sampler


def test_tools_reach_a_sampled_model_as_text() -> None:
    tools = [{"type": "function", "function": {"name": "read", "description": "Read the page.", "parameters": {}}}]
    messages = [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": "Task."},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Main content."},
    ]
    request = sampling_request(messages, tools, 50)
    assert request["systemPrompt"].startswith("Rules.") and "- read: Read the page." in request["systemPrompt"]
    assert [m["role"] for m in request["messages"]] == ["user", "assistant", "user"]
    assert request["messages"][1]["content"]["text"] == '{"tool": "read", "arguments": {}}'
    assert request["messages"][2]["content"]["text"] == "Tool result:\nMain content."
    assert request["maxTokens"] == 50
