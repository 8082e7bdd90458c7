"""The MCP sampling path (issue 26): with no [llm] endpoint, a client that offers sampling lends its own model.
The official SDK client's sampling callback answers sampling/createMessage, which the daemon sends through
the shim (SAMPLE / SAMPLE_RESULT on the daemon socket)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp import types

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok

pytestmark = pytest.mark.anyio


def text_of_request(params: types.CreateMessageRequestParams) -> str:
    return "\n".join(m.content.text for m in params.messages if isinstance(m.content, types.TextContent))


def answer(text: str) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=text), model="client-model-7"
    )


async def test_scrape_json_and_an_agent_run_use_the_clients_model(home: BrowserdHome, site: str) -> None:
    asked: list[types.CreateMessageRequestParams] = []

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(params)
        text = text_of_request(params)
        if "calling one tool per answer" in (params.system_prompt or ""):  # the agent
            if "Main content of" not in text:
                return answer(json.dumps({"tool": "read", "arguments": {"reason": "read the price"}}))
            price = re.search(r"Price: \$([0-9.]+)", text)
            assert price, text
            return answer(json.dumps({"tool": "done", "arguments": {"answer": {"price": float(price.group(1))}}}))
        title = re.search(r"^# (.+)$", text, re.M)
        return answer(json.dumps({"title": title.group(1) if title else ""}))

    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    async with mcp_client(home, args=("--tools", "scrape,agent,runs"), sampling_callback=sampling) as client:
        scraped = ok(
            await client.call_tool("scrape", {"url": f"{site}/article.html", "format": "json", "schema": schema})
        ).structured_content
        run = ok(
            await client.call_tool(
                "agent_run", {"prompt": "The price?", "urls": [f"{site}/agent/product.html"], "mode": "sync"}
            )
        ).structured_content
    assert scraped["json"] == {"title": "An article"}
    assert scraped["llm"]["model"] == "client-model-7"
    assert run["status"] == "succeeded", run
    assert run["result"]["answer"] == {"price": 34.5} and run["result"]["model"] == "client-model-7"
    assert run["result"]["usage"]["promptTokens"] > 0
    # Page text goes to the client's model as data, fenced, never as its system prompt.
    assert all("Teapot Classic" not in (params.system_prompt or "") for params in asked)


async def test_a_client_without_sampling_gets_llm_not_configured(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "scrape")) as client:
        arguments = {"url": f"{site}/article.html", "format": "json"}
        failed(await client.call_tool("scrape", arguments), "LLM_NOT_CONFIGURED")


async def test_a_refused_sampling_request_is_an_llm_error_naming_why(home: BrowserdHome, site: str) -> None:
    async def refusing(context: Any, params: types.CreateMessageRequestParams) -> types.ErrorData:
        return types.ErrorData(code=-1, message="the user declined the sampling request")

    async with mcp_client(home, args=("--tools", "scrape"), sampling_callback=refusing) as client:
        arguments = {"url": f"{site}/article.html", "format": "json"}
        error = failed(await client.call_tool("scrape", arguments), "LLM_ERROR")
        ok(await client.call_tool("scrape", {"url": f"{site}/article.html"}))  # the daemon keeps serving
    assert "the user declined the sampling request" in error["error"]
    assert "[llm]" in error["recoverHint"]
