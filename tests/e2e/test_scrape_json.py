"""`scrape format=json` (issue 26): the page's main content goes to the model with the prompt; its answer is
checked against the schema, repaired once with the validation errors, else refused with the last answer.
The model is a scripted OpenAI-compatible server on loopback (tests/llm_server.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.llm_fixtures import API_KEY
from tests.e2e.results import failed, ok, text_of
from tests.llm_server import ScriptedModel, Turn, answer_json

pytestmark = pytest.mark.anyio
TOOLS = ("--tools", "scrape")

ARTICLE_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "sections": {"type": "array", "items": {"type": "string"}}},
    "required": ["title", "sections"],
}
PRODUCT_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "price": {"type": "number"}, "inStock": {"type": "boolean"}},
    "required": ["name", "price", "inStock"],
}


def page_text(turn: Turn) -> str:
    """The page as the model was given it: between the markers the system message names."""
    opening = re.search(r"between the markers (\S+) and (\S+)\.", turn.system)
    assert opening, f"the instructions name the page's markers:\n{turn.system}"
    start, end = opening.group(1), opening.group(2)
    user = turn.messages[1]["content"]
    assert start in user and end in user, "the page text is fenced by the markers"
    return user.split(start, 1)[1].split(end, 1)[0]


def read_article(turn: Turn) -> Any:
    text = page_text(turn)
    title = re.search(r"^# (.+)$", text, re.M)
    return {"title": title.group(1) if title else "", "sections": re.findall(r"^## (.+)$", text, re.M)}


def read_product(turn: Turn) -> Any:
    text = page_text(turn)
    name = re.search(r"^# (.+)$", text, re.M)
    price = re.search(r"Price: \$([0-9.]+)", text)
    return {
        "name": name.group(1) if name else "",
        "price": float(price.group(1)) if price else 0,
        "inStock": "In stock" in text,
    }


async def test_scrape_json_reads_an_article_into_the_schema(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = lambda turn: answer_json(read_article(turn))
    async with mcp_client(llm_home, args=TOOLS) as client:
        arguments = {
            "url": f"{site}/article.html",
            "format": "json",
            "schema": ARTICLE_SCHEMA,
            "prompt": "Title and sections",
        }
        result = ok(await client.call_tool("scrape", arguments))
    data = result.structured_content
    assert data["json"] == {
        "title": "An article",
        "sections": ["Why browsers settle", "What an agent reads", "Comments"],
    }
    assert data["llm"]["model"] == "scripted-1" and data["llm"]["repaired"] is False
    usage = data["llm"]["usage"]
    assert usage["promptTokens"] > 0 and usage["completionTokens"] > 0
    assert '"title": "An article"' in text_of(result)
    turn = model.turns[0]
    assert "Title and sections" in turn.messages[1]["content"]
    assert '"required":["title","sections"]' in turn.system, "the schema goes to the model"
    # Main content only: the site navigation stays out of what the model pays for.
    assert "Single-page app" not in page_text(turn)
    assert turn.headers.get("Authorization") == f"Bearer {API_KEY}"
    assert API_KEY not in llm_home.log.read_text()


async def test_scrape_json_reads_a_product_page(llm_home: BrowserdHome, model: ScriptedModel, site: str) -> None:
    model.script = lambda turn: answer_json(read_product(turn))
    async with mcp_client(llm_home, args=TOOLS) as client:
        arguments = {"url": f"{site}/agent/product.html", "format": "json", "schema": PRODUCT_SCHEMA}
        data = ok(await client.call_tool("scrape", arguments)).structured_content
    assert data["json"] == {"name": "Teapot Classic", "price": 34.5, "inStock": True}
    assert data["format"] == "json" and data["url"].endswith("/agent/product.html")


async def test_a_schema_invalid_answer_is_repaired_once_with_the_errors(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    def script(turn: Turn) -> Any:
        if len(turn.messages) == 2:
            return answer_json({"name": "Teapot Classic", "price": "cheap"})  # price must be a number
        return answer_json({"name": "Teapot Classic", "price": 34.5, "inStock": True})

    model.script = script
    async with mcp_client(llm_home, args=TOOLS) as client:
        arguments = {"url": f"{site}/agent/product.html", "format": "json", "schema": PRODUCT_SCHEMA}
        data = ok(await client.call_tool("scrape", arguments)).structured_content
    assert data["json"]["price"] == 34.5 and data["llm"]["repaired"] is True
    repair = model.turns[1].last
    assert "$.price: 'cheap' is not of type 'number'" in repair
    assert "'inStock' is a required property" in repair


async def test_an_answer_still_invalid_after_the_repair_is_refused_with_it(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = lambda turn: answer_json({"name": "Teapot Classic"})
    async with mcp_client(llm_home, args=TOOLS) as client:
        arguments = {"url": f"{site}/agent/product.html", "format": "json", "schema": PRODUCT_SCHEMA}
        error = failed(await client.call_tool("scrape", arguments), "SCHEMA_VALIDATION_FAILED")
        # The daemon keeps serving.
        ok(await client.call_tool("scrape", {"url": f"{site}/agent/product.html"}))
    assert len(model.turns) == 2, "one answer and one repair, no more"
    assert error["details"]["lastAnswer"] == '{"name": "Teapot Classic"}'
    assert "$: 'price' is a required property" in error["details"]["errors"]
    assert error["details"]["model"] == "scripted-1"


async def test_a_bad_schema_or_prompt_without_json_is_refused_before_loading(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    async with mcp_client(llm_home, args=TOOLS) as client:
        bad = {"url": f"{site}/article.html", "format": "json", "schema": {"type": "no-such-type"}}
        error = failed(await client.call_tool("scrape", bad), "INVALID_PARAMETER")
        assert error["details"]["field"] == "schema"
        stray = {"url": f"{site}/article.html", "prompt": "Title"}
        failed(await client.call_tool("scrape", stray), "INVALID_PARAMETER")
    assert model.turns == []


async def test_without_a_model_format_json_says_how_to_configure_one(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=TOOLS) as client:
        error = failed(
            await client.call_tool("scrape", {"url": f"{site}/article.html", "format": "json"}), "LLM_NOT_CONFIGURED"
        )
    assert "base_url" in error["recoverHint"] and "api_key_env" in error["recoverHint"]
    assert "sampling" in error["recoverHint"]


TITLE_SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}


def read_title(turn: Turn) -> Any:
    title = re.search(r"^# (.+)$", page_text(turn), re.M)
    return {"title": title.group(1) if title else "(none)"}


async def test_batch_extract_pages_answers_json_per_page(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = lambda turn: answer_json(read_title(turn))
    urls = [f"{site}/article.html", f"{site}/agent/product.html"]
    inputs = {"urls": urls, "format": "json", "schema": TITLE_SCHEMA, "prompt": "The page's title"}
    async with mcp_client(llm_home, args=("--tools", "runs")) as client:
        arguments = {"templateId": "batch_extract_pages", "inputs": inputs, "options": {"mode": "sync"}}
        run = ok(await client.call_tool("run_task_template", arguments)).structured_content
    assert run["status"] == "succeeded", run
    items = run["result"]["items"]
    assert [item["json"] for item in items] == [{"title": "An article"}, {"title": "Teapot Classic"}]
    assert all(item["llm"]["model"] == "scripted-1" and item["llm"]["usage"]["promptTokens"] > 0 for item in items)


async def test_crawl_answers_json_per_page_and_a_refused_answer_fails_only_its_page(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    def script(turn: Turn) -> Any:
        title = read_title(turn)
        return answer_json({"wrong": True} if title["title"] == "Crawl home" else title)

    model.script = script
    async with mcp_client(llm_home, args=("--tools", "runs")) as client:
        arguments = {
            "url": f"{site}/crawl/index.html", "limit": 3, "format": "json", "schema": TITLE_SCHEMA, "mode": "sync"
        }  # fmt: skip
        run = ok(await client.call_tool("crawl", arguments)).structured_content
    items = run["result"]["items"]
    assert len(items) == 3, items
    answered = [item for item in items if item["success"]]
    assert answered and all(item["json"]["title"] for item in answered)
    home = next(item for item in items if item["url"] == f"{site}/crawl/index.html")
    assert not home["success"] and home["errorCode"] == "SCHEMA_VALIDATION_FAILED"
    assert run["status"] == "partial_success"
