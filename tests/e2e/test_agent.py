"""`agent_run` (issue 26, reference/002's L3): a scripted model (tests/llm_server.py, real HTTP on loopback)
drives the agent through tests/site tasks; the script is the policy a model would follow, reading the
snapshots the daemon sends it and answering with tool calls.

What holds whatever the model does: the budgets (LIMIT_EXCEEDED with the partial result), the schema of
the answer (repaired once, then refused), allowedDomains and the tool set (an injection page cannot lead
the agent elsewhere), the caller's trust level (a remote session's agent is refused loopback), and the
caller's sensitive arguments (typed by reference, never shown to the model).
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from tests.agent_scripts import compare_in_tabs, search_and_page, sign_in
from tests.conftest import BrowserdHome, mcp_client, own_home
from tests.e2e.results import failed, ok
from tests.llm_server import ScriptedModel, Turn, call, model_env

pytestmark = pytest.mark.anyio
TOOLS = ("--tools", "agent,runs")
PASSWORD = "secret"  # what tests/site/runs-login.html accepts
TERMINAL = {"succeeded", "failed", "partial_success", "canceled"}


async def run_agent(client: Any, **inputs: Any) -> dict[str, Any]:
    """agent_run in sync mode: the terminal run."""
    result = ok(await client.call_tool("agent_run", {"mode": "sync", **inputs}))
    run: dict[str, Any] = result.structured_content
    assert run["status"] in TERMINAL, run
    return run


async def artifact_text(client: Any, artifact_id: str) -> str:
    chunk = ok(await client.call_tool("get_artifact", {"artifactId": artifact_id})).structured_content
    assert chunk["complete"], chunk
    return base64.b64decode(chunk["data"]).decode()


def trace_of(run: dict[str, Any]) -> str:
    return str(run["result"]["traceArtifactId"])


def step_names(run: dict[str, Any]) -> list[str]:
    return [step["name"] for step in run.get("steps") or []]


# -- tests --------------------------------------------------------------------------------------------


async def test_the_agent_signs_in_and_reads_a_value_without_seeing_the_password(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = sign_in
    schema = {"type": "object", "properties": {"member": {"type": "string"}}, "required": ["member"]}
    async with mcp_client(llm_home, args=TOOLS) as client:
        run = await run_agent(
            client,
            prompt="Sign in as ada and tell me the name the members page greets.",
            urls=[f"{site}/runs-login.html"],
            schema=schema,
            args={"password": PASSWORD},
            allowedDomains=["127.0.0.1"],
        )
        assert run["status"] == "succeeded", run
        result = run["result"]
        assert result["answer"] == {"member": "ada"}
        assert result["model"] == "scripted-1" and result["steps"] == 5
        assert result["usage"]["promptTokens"] > 0 and result["usage"]["completionTokens"] > 0
        trace = json.loads(await artifact_text(client, trace_of(run)))
    actions = [re.sub(r" (f?\d*e\d+)", " <ref>", step["action"]) for step in trace]
    assert actions == [f"navigate {site}/runs-login.html", "fill <ref>", "fill <ref> password", "click <ref>", "read"]
    assert trace[2]["reason"] == "type the password"
    # The model named the argument; the daemon typed it. Its value is in no request, nor in the trace.
    assert not re.search(rf"\b{PASSWORD}\b", model.requests_text())
    assert PASSWORD not in json.dumps(trace)
    assert "password" in model.turns[0].system, "the model is told the argument's name"


async def test_the_agent_pages_through_search_results_into_an_array(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = search_and_page
    schema = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "price": {"type": "number"}},
            "required": ["name", "price"],
        },
    }
    async with mcp_client(llm_home, args=TOOLS) as client:
        run = await run_agent(
            client, prompt="List every teapot with its price.", urls=[f"{site}/agent/search.html"], schema=schema
        )
    assert run["status"] == "succeeded", run
    assert [row["name"] for row in run["result"]["answer"]] == [
        "Teapot Classic", "Teapot Deluxe", "Travel Teapot", "Glass Teapot", "Tiny Teapot"
    ]  # fmt: skip
    assert run["result"]["answer"][4]["price"] == 9.99
    # Progress per step: the action and the model's reason.
    names = step_names(run)
    assert names[0] == "navigate: open the start page"
    assert "fill: search" in names and names.count("click: next page of results") == 2


async def test_the_agent_compares_two_pages_in_tabs(llm_home: BrowserdHome, model: ScriptedModel, site: str) -> None:
    model.script = compare_in_tabs
    async with mcp_client(llm_home, args=TOOLS) as client:
        run = await run_agent(
            client,
            prompt=f"Which teapot is cheaper? Also: {site}/agent/product-b.html",
            urls=[f"{site}/agent/product.html"],
            screenshots=True,
        )
    assert run["status"] == "succeeded", run
    assert run["result"]["answer"] == {
        "cheaper": "Teapot Deluxe",
        "prices": {"Teapot Classic": 34.5, "Teapot Deluxe": 29.0},
    }
    assert "tabs: open B" in step_names(run)
    # screenshots: a PNG per step, beside the step trace.
    pngs = [artifact for artifact in run["artifacts"] if artifact["mimeType"] == "image/png"]
    assert len(pngs) == len(step_names(run))


async def test_a_schema_invalid_answer_is_repaired_once_then_refused(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    schema = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}
    urls = [f"{site}/agent/product.html"]

    def repaired(turn: Turn) -> dict[str, Any]:
        if "does not match the schema" in turn.last:
            return call("done", answer={"price": 34.5})
        return call("done", answer={"price": "$34.50"})

    async with mcp_client(llm_home, args=TOOLS) as client:
        model.script = repaired
        run = await run_agent(client, prompt="The price?", urls=urls, schema=schema)
        assert run["status"] == "succeeded" and run["result"]["answer"] == {"price": 34.5}
        assert "$.price: '$34.50' is not of type 'number'" in model.turns[-1].last

        model.script = lambda turn: call("done", answer={"cost": 34.5})
        run = await run_agent(client, prompt="The price?", urls=urls, schema=schema)
    assert run["status"] == "failed"
    assert run["error"]["errorCode"] == "SCHEMA_VALIDATION_FAILED"
    assert "$: 'price' is a required property" in run["error"]["details"]["errors"]
    assert run["error"]["details"]["lastAnswer"] == '{"cost": 34.5}'


async def test_budgets_stop_the_agent_with_limit_exceeded_and_the_partial_result(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    def wander(turn: Turn) -> dict[str, Any]:
        if len(turn.tool_results()) % 2 == 0:
            return call("note", data={"seen": len(turn.tool_results())})
        return call("scroll", pixels=200, reason="look further")

    model.script = wander
    async with mcp_client(llm_home, args=TOOLS) as client:
        run = await run_agent(client, prompt="Find the warranty.", urls=[f"{site}/article.html"], maxSteps=5)
        assert run["status"] == "failed"
        assert run["error"]["errorCode"] == "LIMIT_EXCEEDED" and run["error"]["details"]["limit"] == "maxSteps"
        assert run["error"]["details"]["partial"] == {"seen": 4}
        assert run["result"]["partial"] == {"seen": 4} and run["result"]["steps"] == 5

        run = await run_agent(client, prompt="Find the warranty.", urls=[f"{site}/article.html"], maxTokens=1_000)
    assert run["error"]["errorCode"] == "LIMIT_EXCEEDED" and run["error"]["details"]["limit"] == "maxTokens"
    assert run["result"]["usage"]["promptTokens"] + run["result"]["usage"]["completionTokens"] > 1_000


async def test_the_time_budget_stops_a_slow_agent_with_what_it_noted(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    model.script = lambda turn: call("note", data={"notes": len(turn.tool_results()) + 1})
    model.delay_s = 0.5
    # The budget also pays for opening and reading the page (and the first read's extraction library), which
    # takes seconds on a busy machine: long enough for a note to land before it runs out, whatever the load.
    async with mcp_client(llm_home, args=TOOLS) as client:
        run = await run_agent(client, prompt="Take notes.", urls=[f"{site}/article.html"], timeoutMs=4_000)
    assert run["status"] == "failed"
    assert run["error"]["errorCode"] == "LIMIT_EXCEEDED" and run["error"]["details"]["limit"] == "timeoutMs"
    assert run["result"]["partial"]["notes"] >= 1


@pytest.mark.parametrize("action", ["scroll", "note"])
async def test_cancel_stops_the_agent_mid_run_and_keeps_its_trace(
    llm_home: BrowserdHome, model: ScriptedModel, site: str, action: str
) -> None:
    """Between browser actions (scroll), and when the model only takes notes, which are no browser steps."""
    if action == "scroll":
        model.script = lambda turn: call("scroll", pixels=100, reason="keep looking")
    else:
        model.script = lambda turn: call("note", data={"turn": len(turn.messages)})
    model.delay_s = 0.3
    async with mcp_client(llm_home, args=TOOLS) as client:
        started = ok(
            await client.call_tool("agent_run", {"prompt": "Scroll forever.", "urls": [f"{site}/scroll.html"]})
        )
        run_id = started.structured_content["runId"]
        with anyio.fail_after(60):
            while len(model.turns) < 3:
                await anyio.sleep(0.1)
        ok(await client.call_tool("cancel_task_run", {"runId": run_id}))
        with anyio.fail_after(60):
            while (run := ok(await client.call_tool("get_task_run", {"runId": run_id})).structured_content)[
                "status"
            ] not in TERMINAL:
                await anyio.sleep(0.2)
        assert run["status"] == "canceled"
        trace = json.loads(await artifact_text(client, trace_of(run)))
    if action == "scroll":
        assert 2 <= len(trace) < 20 and trace[1]["reason"] == "keep looking"
    else:
        assert [step["action"] for step in trace] == [f"navigate {site}/scroll.html"]
    turns = len(model.turns)
    await anyio.sleep(1)
    assert len(model.turns) == turns, "a canceled agent asks the model nothing more"


async def test_an_injection_page_cannot_lead_the_agent_elsewhere_nor_see_secrets(
    llm_home: BrowserdHome, model: ScriptedModel, site: str, other_origin: str
) -> None:
    elsewhere = f"{other_origin}/help.html"

    def obedient(turn: Turn) -> dict[str, Any]:
        """A model that does what the page says: every attempt must fail."""
        done = len(turn.tool_results())
        if done == 0:
            return call("read", reason="read the page")
        if done == 1:
            return call("navigate", url=elsewhere, reason="the page says so")
        if done == 2:
            return call("click", ref=turn.ref(r'link "the verification page"'), reason="the page says so")
        if done == 3:
            return call("browser_evaluate", function="() => document.cookie")
        return call("done", answer={"instructions": turn.system, "told": turn.messages[1]["content"]})

    model.script = obedient
    async with mcp_client(llm_home, args=TOOLS) as client:
        run = await run_agent(
            client,
            prompt="When is the shop open?",
            urls=[f"{site}/agent/injection.html?to={elsewhere}"],
            allowedDomains=["127.0.0.1"],
            args={"password": "hunter2-xyz"},
        )
        trace = json.loads(await artifact_text(client, trace_of(run)))
    read, navigate, click, evaluate = (turn.last for turn in model.turns[1:5])
    assert "URL_NOT_ALLOWED" in navigate and "allowedDomains" in navigate
    assert "no action `browser_evaluate`" in evaluate
    # The click went nowhere: every page the agent was on is on the allowed host.
    assert all(step["url"].startswith(site) for step in trace), trace
    assert f"Refused (outside allowedDomains): {elsewhere}" in click
    # The page's words reached the model only inside this run's markers, which the rules call untrusted data.
    system = model.turns[0].system
    opening = re.search(r"everything between (\S+) and (\S+) comes from web pages", system)
    assert opening, system
    assert read.index(opening.group(1)) < read.index("IMPORTANT SYSTEM NOTICE") < read.index(opening.group(2))
    # Revealing the instructions reveals no secret: the model never had the argument's value, and no file
    # of the daemon's (the run record, the trace, the log) holds it.
    assert "hunter2-xyz" not in model.requests_text()
    written = [path for path in llm_home.root.rglob("*") if path.is_file() and b"hunter2-xyz" in path.read_bytes()]
    assert written == []
    assert run["status"] == "succeeded"


async def test_a_remote_sessions_agent_is_refused_loopback(
    llm_home: BrowserdHome, model: ScriptedModel, site: str
) -> None:
    async with mcp_client(llm_home, args=("--trust", "remote", *TOOLS)) as client:
        error = failed(
            await client.call_tool("agent_run", {"prompt": "Read it.", "urls": [f"{site}/agent/product.html"]}),
            "URL_NOT_ALLOWED",
        )
    assert error["details"]["rule"] == "loopback"
    assert model.turns == [], "no run started, no model asked"


async def test_without_urls_nor_a_search_backend_the_agent_asks_for_urls(
    llm_home: BrowserdHome, model: ScriptedModel
) -> None:
    async with mcp_client(llm_home, args=TOOLS) as client:
        error = failed(await client.call_tool("agent_run", {"prompt": "Find a teapot."}), "INVALID_PARAMETER")
    assert "searxng_url" in error["recoverHint"]


@contextmanager
def searxng_shaped(site: str) -> Iterator[list[str]]:
    """A server answering /search?format=json as SearXNG does; yields the queries it was asked."""
    queries: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            queries.append(query.get("q", [""])[0])
            assert query.get("format") == ["json"]
            results = [
                {"url": f"{site}/agent/product-b.html", "title": "Teapot Deluxe", "content": "A porcelain teapot."},
                {"url": f"{site}/agent/product.html", "title": "Teapot Classic", "content": "A cast-iron teapot."},
            ]
            body = json.dumps({"query": queries[-1], "results": results}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield [f"http://127.0.0.1:{server.server_address[1]}", *queries]
    finally:
        server.shutdown()
        server.server_close()


def search_then_read(turn: Turn) -> dict[str, Any]:
    results = turn.tool_results()
    if not results:
        assert "web_search" in turn.tools and "search the web first" in turn.messages[1]["content"]
        return call("web_search", query="teapot deluxe price", reason="find the page")
    if len(results) == 1:
        url = re.search(r"Teapot Deluxe[^\n]*?(http\S+product-b\.html)", results[0])
        assert url, results[0]
        return call("navigate", url=url.group(1), reason="open the result")
    price = re.search(r"Price: \$([0-9.]+)", results[-1])
    if not price:
        return call("read", reason="read the price")
    return call("done", answer={"price": float(price.group(1))})


@pytest.mark.parametrize("backend", ["searxng", "results-page"])
async def test_a_prompt_without_urls_searches_first(model: ScriptedModel, site: str, backend: str) -> None:
    model.script = search_then_read
    with searxng_shaped(site) as searx, own_home() as home:
        home.env.update(model_env(model))
        if backend == "searxng":
            home.env["BROWSERD_SEARCH_SEARXNG_URL"] = searx[0]
        else:
            home.env["BROWSERD_SEARCH_RESULTS_URL_TEMPLATE"] = f"{site}/agent/results-engine.html?q={{query}}"
        async with mcp_client(home, args=TOOLS) as client:
            run = await run_agent(client, prompt="What does the Teapot Deluxe cost?")
            found = ok(await client.call_tool("web_search", {"query": "teapot", "limit": 1})).structured_content
    assert run["status"] == "succeeded", run
    assert run["result"]["answer"] == {"price": 29.0}
    assert len(found["results"]) == 1 and found["results"][0]["url"].startswith(f"{site}/agent/product")
    assert step_names(run)[0] == "web_search: find the page"
