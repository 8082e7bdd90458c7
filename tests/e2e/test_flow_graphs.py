"""V2 flows end to end (issue 14 item 5, reference/004 §2): nodes and edges with control flow, data and tabs.

The graphs reuse targets recorded through the browser tools on tests/site pages, so every browser node
acts through the same verified replay; which element was acted on is read from the page's own log.
"""

from __future__ import annotations

import http.server
import json
import os
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok
from tests.e2e.test_flows import ARGS, call, record_form_flow, record_one
from tests.unit.test_flows_export import closed_port, edges, node

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]


async def save(client: Any, name: str, nodes: list[Any], links: list[Any], **extra: Any) -> str:
    flow = {"id": f"flow_{name}_{secrets.token_hex(3)}", "name": name, "nodes": nodes, "edges": links, **extra}
    return str((await call(client, "flow_save", {"flow": flow})).structured_content["flowId"])


async def rows_of(client: Any, flow_id: str) -> list[dict[str, Any]]:
    answer = await call(client, "dataset_export", {"flowId": flow_id, "format": "json"})
    return list(json.loads(answer.structured_content["text"]))


def step_of(recorded: dict[str, Any], index: int, node_id: str, **extra: Any) -> dict[str, Any]:
    return {**recorded["flow"]["steps"][index], "id": node_id, **extra}


async def test_if_foreach_http_dataset_write_extract_and_an_on_error_edge(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        recorded = await record_form_flow(client, site)
        nodes = [
            node("api", "http", url=f"{site}/api/items"),
            node("up", "if", condition='${outputs.api.status} == 200 && ${outputs.api.json.source} == "server"'),
            step_of(recorded, 0, "email"),
            step_of(recorded, 1, "pw"),
            step_of(recorded, 2, "signin"),
            node("each", "foreach", items="${outputs.api.json.items}"),
            node("row", "datasetWrite", fields={"name": "${vars.item.name}", "n": "{itemIndex}"}),
            step_of(recorded, 3, "bob", timeoutMs=800),
            node("note", "datasetWrite", fields={"name": "error", "n": "${outputs.bob.error.errorCode}"}),
            node("page", "extract", value="snapshot"),
        ]
        links = edges(
            "api>up", "up>email:true", "email>pw", "pw>signin", "signin>each", "each>row:body", "each>bob",
            "bob>note:onError", "bob>page", "note>page",
        )  # fmt: skip
        variables = recorded["flow"]["variables"]
        flow_id = await save(client, "graph", nodes, links, variables=variables)
        run = {"flowId": flow_id, "args": ARGS, "startUrl": f"{site}/flow-form.html?v=nobob"}
        answer = ok(await client.call_tool("flow_run", run)).structured_content
        assert answer["status"] == "succeeded", json.dumps(answer)[:4000]
        outputs = answer["outputs"]
        assert outputs["up"] == {"result": True} and outputs["api"]["status"] == 200
        assert "Sign in" in outputs["page"]["snapshot"]
        log = (await call(client, "browser_get", {"what": "text", "target": "#log"})).structured_content
        assert "click:signin" in json.dumps(log) and "delete" not in json.dumps(log)
        by_node = {s["stepId"]: s for s in answer["steps"]}
        assert by_node["bob"]["status"] == "failed" and by_node["note"]["status"] == "success"
        rows = [{k: v for k, v in row.items() if k != "runId"} for row in await rows_of(client, flow_id)]
        code = outputs["bob"]["error"]["errorCode"]
        assert rows == [{"name": "Teapot", "n": "0"}, {"name": "Mug", "n": "1"}, {"name": "error", "n": code}]
        assert code in ("TARGET_NOT_VERIFIED", "ELEMENT_NOT_FOUND", "ELEMENT_AMBIGUOUS")
        # The if's other way: nothing signs in, and the run still ends well.
        await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})
        flow = (await call(client, "flow_get", {"flowId": flow_id})).structured_content
        flow["nodes"][1]["condition"] = "${outputs.api.status} != 200"
        await call(client, "flow_save", {"flow": flow})
        again = ok(await client.call_tool("flow_run", {"flowId": flow_id, "args": ARGS})).structured_content
        assert again["status"] == "succeeded" and again["outputs"]["up"] == {"result": False}
        assert {s["stepId"] for s in again["steps"] if s["status"] == "skipped"} >= {"email", "signin", "each"}


async def test_while_loops_until_its_condition_and_stops_at_max_iterations(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        recorded = await record_one(
            client, f"{site}/flow-steps.html", "browser_click", {"target": ".b1", "snapshot": "none"}
        )
        tabs_before = (await call(client, "browser_tabs", {"action": "list"})).structured_content
        nodes = [
            node("w", "while", condition="${outputs.w.iteration} < 3"),
            step_of(recorded, 0, "click"),
            node("fan", "foreach", items='["a", "b", "c", "d", "e"]', concurrency=3),
            node("get", "http", url=f"{site}/api/items?item={{item}}"),
            node("keep", "datasetWrite", fields={"item": "{item}", "status": "${outputs.get.status}"}),
            node("spin", "while", condition="true", maxIterations=2),
            node("nap", "delay", ms=1),
            node("done", "delay", ms=0),
        ]
        links = edges(
            "w>click:body", "click>w", "w>fan", "fan>get:body", "get>keep", "fan>spin", "spin>nap:body", "nap>spin",
            "spin>done:onError",
        )  # fmt: skip
        flow_id = await save(client, "loops", nodes, links)
        run = {"flowId": flow_id, "startUrl": f"{site}/flow-steps.html"}  # a fresh page: no click logged yet
        answer = ok(await client.call_tool("flow_run", run)).structured_content
        assert answer["status"] == "succeeded", json.dumps(answer)[:4000]
        log = (await call(client, "browser_get", {"what": "text", "target": "#log"})).structured_content
        assert json.dumps(log).count("Step 1") == 3
        assert answer["outputs"]["spin"]["error"]["errorCode"] == "LIMIT_EXCEEDED"
        assert len(answer["outputs"]["fan"]["items"]) == 5
        rows = await rows_of(client, flow_id)
        assert sorted(r["item"] for r in rows) == ["a", "b", "c", "d", "e"] and {r["status"] for r in rows} == {"200"}
        # The extra lanes' tabs are closed again.
        tabs_after = (await call(client, "browser_tabs", {"action": "list"})).structured_content
        assert len(tabs_after["tabs"]) == len(tabs_before["tabs"])


async def tab_list(client: Any) -> list[dict[str, Any]]:
    return list((await call(client, "browser_tabs", {"action": "list"})).structured_content["tabs"])


async def help_tabs(client: Any) -> int:
    return sum(tab["url"].endswith("/help.html") for tab in await tab_list(client))


async def test_tab_nodes_and_a_subflow_with_a_sensitive_value(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        form = await record_form_flow(client, site)
        popup = await record_one(client, f"{site}/newtab.html", "browser_click", {"target": "#popup"})
        nodes = [
            step_of(popup, 0, "pop"),
            node("sw", "switchTab", url=f"{site}/help.html"),
            node("read", "extract"),
            node("cl", "closeTab"),
            node("op", "openTab", url=f"{site}/flow-form.html"),
            node("sub", "subflow", flowId=form["flowId"], args={"email": "{email}"}),
            node("log", "extract"),
        ]
        links = edges("pop>sw", "sw>read", "read>cl", "cl>op", "op>sub", "sub>log")
        help_before = await help_tabs(client)  # the recording's own click opened one
        variables = [{"key": "email"}, {"key": "password", "sensitive": True}]
        flow_id = await save(client, "tabs", nodes, links, variables=variables)
        answer = ok(await client.call_tool("flow_run", {"flowId": flow_id, "args": ARGS})).structured_content
        assert answer["status"] == "succeeded", json.dumps(answer)[:4000]
        outputs = answer["outputs"]
        assert "Help page" in outputs["read"]["text"]
        assert "click:delete-bob" in outputs["log"]["text"] and answer["url"].endswith("/flow-form.html")
        assert set(outputs["sub"]) == set()  # the form flow reads nothing
        assert await help_tabs(client) == help_before  # the popup the run opened, it closed


async def test_bad_graphs_are_refused_at_save_time_and_the_daemon_keeps_serving(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        cases = [
            ([node("a", "delay", ms=0), node("b", "delay", ms=0), node("c", "delay", ms=0)],
             edges("a>b", "b>c", "c>b"), "cycle"),
            ([node("a", "teleport")], [], "teleport"),
            ([node("a", "delay", ms=0)], edges("a>nowhere"), "nowhere"),
            ([node("a", "if", condition="os.system('x')")], [], "condition"),
        ]  # fmt: skip
        for nodes, links, said in cases:
            flow = {"id": f"flow_bad_{secrets.token_hex(3)}", "name": "bad", "nodes": nodes, "edges": links}
            error = failed(await client.call_tool("flow_save", {"flow": flow}), "INVALID_PARAMETER")
            assert said in error["error"] and error["recoverHint"], error
            assert failed(await client.call_tool("flow_get", {"flowId": flow["id"]}), "FLOW_NOT_FOUND")
        await call(client, "flow_list", {})


async def test_a_tab_switch_while_recording_becomes_a_switch_tab_step_that_replays(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        await call(client, "browser_open", {"url": f"{site}/newtab.html", "snapshot": "none"})
        await call(client, "flow_record_start", {"name": "popup"})
        await call(client, "browser_click", {"target": "#popup", "snapshot": "none"})
        with anyio.fail_after(10):  # the popup's page may still be loading
            while not (help_tab := [t for t in await tab_list(client) if t["url"].endswith("/help.html")]):
                await anyio.sleep(0.05)
        await call(client, "browser_tabs", {"action": "select", "tabId": help_tab[0]["tabId"]})
        await call(client, "browser_get", {"what": "text", "target": "h1"})
        await call(client, "browser_tabs", {"action": "close", "tabId": help_tab[0]["tabId"]})
        flow = (await call(client, "flow_record_stop", {})).structured_content["flow"]
        assert [s["type"] for s in flow["steps"]] == ["click", "switchTab", "extract", "closeTab"]
        assert flow["steps"][1]["url"].endswith("/help.html")
        answer = ok(await client.call_tool("flow_run", {"flowId": flow["id"]})).structured_content
        assert answer["status"] == "succeeded", json.dumps(answer)[:4000]
        assert answer["outputs"]["s3"] == {"text": "Help page"}
        assert not any(t["url"].endswith("/help.html") for t in await tab_list(client))


@contextmanager
def request_log(host: str) -> Iterator[tuple[str, list[str]]]:
    """A server on loopback address `host` that answers 200 to anything and keeps every request line."""
    seen: list[str] = []

    class Logged(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.requestline)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_CONNECT = do_GET

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer((host, 0), Logged)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"{host}:{server.server_address[1]}", seen
    finally:
        server.shutdown()


async def test_an_http_node_goes_through_the_session_guard_on_every_hop(home: BrowserdHome, site: str) -> None:
    """A remote session's http node: a redirect to a refused address stops the run with URL_NOT_ALLOWED and
    the refused host (127.0.0.2, loopback like the exempt test site) never receives the request."""
    home.env["BROWSERD_SECURITY_REMOTE_EXEMPT_ORIGINS"] = site
    with request_log("127.0.0.2") as (other, seen):
        async with mcp_client(home, args=("--trust", "remote", "--tools", "all")) as client:
            for url in (
                f"{site}/redirect?to={quote(f'http://{other}/secret')}",
                f"{site}/redirect?to={quote(f'https://{other}/secret')}",  # a tunnel the guard refuses
                f"http://{other}/secret",
            ):
                flow_id = await save(client, "hop", [node("hop", "http", url=url)], [])
                answer = (await call(client, "flow_run", {"flowId": flow_id})).structured_content
                assert answer["status"] == "failed", json.dumps(answer)[:2000]
                assert answer["error"]["details"]["stepErrorCode"] == "URL_NOT_ALLOWED"
                step = answer["steps"][0]
                assert step["errorCode"] == "URL_NOT_ALLOWED" and step["details"]["rule"] == "loopback", step
                assert "remote_exempt_origins" in step["recoverHint"] and other in step["message"]
            # The daemon keeps serving, and a chain of allowed hops arrives through the guard.
            flow_id = await save(client, "chain", [node("api", "http", url=f"{site}/api/redirect")], [])
            answer = (await call(client, "flow_run", {"flowId": flow_id})).structured_content
            assert answer["status"] == "succeeded", json.dumps(answer)[:2000]
            assert answer["outputs"]["api"]["status"] == 200 and answer["outputs"]["api"]["url"] == f"{site}/api/items"
    assert seen == []


async def test_a_replayed_step_waits_for_the_work_its_input_started(home: BrowserdHome, site: str) -> None:
    """The browser tools' action-aware settle: the suggestions a debounced input handler shows 150 ms after
    typing are on the page when the next node reads it (a DOM-quiet wait alone would read it empty)."""
    async with mcp_client(home, args=("--tools", "all")) as client:
        typed = {"target": "#fruit", "value": "Ap", "snapshot": "none"}
        recorded = await record_one(client, f"{site}/autocomplete.html", "browser_fill", typed)
        await call(client, "browser_open", {"url": f"{site}/autocomplete.html", "snapshot": "none"})
        nodes = [step_of(recorded, 0, "type"), node("read", "extract")]
        flow_id = await save(client, "settle", nodes, edges("type>read"), variables=recorded["flow"]["variables"])
        answer = (await call(client, "flow_run", {"flowId": flow_id, "args": {"fruit": "Ap"}})).structured_content
        assert answer["status"] == "succeeded", json.dumps(answer)[:2000]
        assert "Apricot" in answer["outputs"]["read"]["text"], answer["outputs"]


async def test_a_subflows_dataset_write_goes_to_the_subflows_own_dataset(home: BrowserdHome) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        inner = await save(client, "inner", [node("keep", "datasetWrite", fields={"who": "inner"})], [])
        nodes = [node("call", "subflow", flowId=inner), node("mine", "datasetWrite", fields={"who": "outer"})]
        outer = await save(client, "outer", nodes, edges("call>mine"))
        answer = (await call(client, "flow_run", {"flowId": outer})).structured_content
        assert answer["status"] == "succeeded", json.dumps(answer)[:2000]
        assert [row["who"] for row in await rows_of(client, inner)] == ["inner"]
        assert [row["who"] for row in await rows_of(client, outer)] == ["outer"]


async def failed_run(client: Any, flow_id: str, code: str, **run: Any) -> dict[str, Any]:
    """A run that fails with `code`: its failed step (with its message and recoverHint); the daemon serves on."""
    answer = (await call(client, "flow_run", {"flowId": flow_id, **run})).structured_content
    assert answer["status"] == "failed" and answer["error"]["details"]["stepErrorCode"] == code, answer
    assert answer["error"]["recoverHint"]
    step = next(s for s in answer["steps"] if s["status"] == "failed")
    assert step["errorCode"] == code and step["recoverHint"], step
    await call(client, "flow_list", {})
    return dict(step)


async def test_a_subflow_that_calls_itself_stops_at_the_depth_limit(home: BrowserdHome) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = f"flow_self_{secrets.token_hex(3)}"
        flow = {"id": flow_id, "name": "self", "nodes": [node("again", "subflow", flowId=flow_id)], "edges": []}
        await call(client, "flow_save", {"flow": flow})
        step = await failed_run(client, flow_id, "LIMIT_EXCEEDED")
        assert "deeper than 5" in step["message"] and "break the chain" in step["recoverHint"]


async def test_a_while_that_keeps_holding_stops_at_max_iterations(home: BrowserdHome) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        nodes = [node("spin", "while", condition="true", maxIterations=3), node("nap", "delay", ms=0)]
        flow_id = await save(client, "spin", nodes, edges("spin>nap:body", "nap>spin"))
        step = await failed_run(client, flow_id, "LIMIT_EXCEEDED")
        assert "after 3 iterations" in step["message"] and "maxIterations" in step["recoverHint"]


async def test_foreach_concurrency_above_ten_is_refused_at_save_time(home: BrowserdHome) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        nodes = [node("fan", "foreach", items="[1, 2]", concurrency=11), node("nap", "delay", ms=0)]
        flow = {"id": f"flow_fan_{secrets.token_hex(3)}", "name": "fan", "nodes": nodes, "edges": edges("fan>nap:body")}
        error = failed(await client.call_tool("flow_save", {"flow": flow}), "INVALID_PARAMETER")
        assert "concurrency" in error["error"] and "10" in error["error"], error
        flow["nodes"][0]["concurrency"] = 10
        await call(client, "flow_save", {"flow": flow})


async def test_a_dataset_cell_over_32_kb_is_refused(home: BrowserdHome) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        nodes = [node("keep", "datasetWrite", fields={"text": "{text}"})]
        flow_id = await save(client, "cell", nodes, [], variables=[{"key": "text"}])
        step = await failed_run(client, flow_id, "LIMIT_EXCEEDED", args={"text": "x" * 32_769})
        assert "more than 32768 characters" in step["message"]
        assert await rows_of(client, flow_id) == []
        ok(await client.call_tool("flow_run", {"flowId": flow_id, "args": {"text": "x" * 32_768}}))


async def test_a_dataset_holding_5000_rows_takes_no_more(home: BrowserdHome) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = await save(client, "full", [node("keep", "datasetWrite", fields={"n": "1"})], [])
        # 4,999 rows as earlier runs would have left them, written straight into the daemon's flows.db.
        database = next(home.root.rglob("flows.db"))
        with sqlite3.connect(database, timeout=30) as db:
            db.executemany(
                "INSERT INTO dataset (flow_id, n, run_id, row) VALUES (?, ?, 'seed', '{\"n\": \"0\"}')",
                [(flow_id, n) for n in range(4_999)],
            )
        ok(await client.call_tool("flow_run", {"flowId": flow_id}))  # the 5,000th
        step = await failed_run(client, flow_id, "LIMIT_EXCEEDED")
        assert "holds 5000 rows" in step["message"] and "dataset_export" in step["recoverHint"]
        exported = await call(client, "dataset_export", {"flowId": flow_id, "format": "json", "clear": True})
        assert len(json.loads(exported.structured_content["text"])) == 5_000
        ok(await client.call_tool("flow_run", {"flowId": flow_id}))
        assert len(await rows_of(client, flow_id)) == 1


def run_script(script: str, **env: str) -> dict[str, Any]:
    """An exported script run by real Python and Playwright on the system Chromium; what it printed last."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "flow.py"
        path.write_text(script)
        variables = {f"FLOW_{key.upper()}": value for key, value in env.items()}
        ran = subprocess.run(
            [sys.executable, str(path)],
            env={**os.environ, **variables, "FLOW_BROWSER": "/usr/bin/chromium"},
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return dict(json.loads(ran.stdout.strip().splitlines()[-1]))


async def test_exported_scripts_of_a_chain_and_of_a_graph_run_in_playwright(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        recorded = await record_form_flow(client, site)
        steps = [*recorded["flow"]["steps"], node("log", "extract", target=None)]
        variables = recorded["flow"]["variables"]
        chain = {"id": f"flow_chain_{secrets.token_hex(3)}", "name": "chain", "steps": steps, "variables": variables}
        chain["meta"] = recorded["flow"]["meta"]
        chain_id = (await call(client, "flow_save", {"flow": chain})).structured_content["flowId"]
        script = (await call(client, "flow_export", {"flowId": chain_id, "format": "playwright"})).structured_content
        printed = run_script(script["script"], **ARGS)
        assert "click:signin" in printed["outputs"]["log"]["text"]
        assert "click:delete-bob" in printed["outputs"]["log"]["text"]

        nodes = [
            node("open", "navigate", url=f"{site}/flow-form.html"),
            node("api", "http", url=f"{site}/api/redirect"),
            node("up", "if", condition='${outputs.api.status} == 200 && ${outputs.api.json.source} == "server"'),
            step_of(recorded, 0, "email"),
            step_of(recorded, 1, "pw"),
            step_of(recorded, 2, "signin"),
            node("each", "foreach", items="${outputs.api.json.items}", concurrency=2),
            node("row", "datasetWrite", fields={"name": "${vars.item.name}", "n": "{itemIndex}"}),
            node("twice", "while", condition="${outputs.twice.iteration} < 2"),
            node("nap", "delay", ms=1),
            node("closed", "http", url=f"http://127.0.0.1:{closed_port()}/"),
            node("note", "datasetWrite", fields={"name": "no answer"}),
            node("log", "extract"),
        ]
        links = edges(
            "open>api", "api>up", "up>email:true", "up>log:false", "email>pw", "pw>signin", "signin>each",
            "each>row:body", "each>twice", "twice>nap:body", "nap>twice", "twice>closed", "closed>log",
            "closed>note:onError", "note>log",
        )  # fmt: skip
        graph_id = await save(client, "graph", nodes, links, variables=variables)
        script = (await call(client, "flow_export", {"flowId": graph_id, "format": "playwright"})).structured_content
        assert "if outputs['up']['result']:" in script["script"] and "for index, item in" in script["script"]
        printed = run_script(script["script"], **ARGS)
        assert printed["rows"] == [{"name": "Teapot", "n": "0"}, {"name": "Mug", "n": "1"}, {"name": "no answer"}]
        assert printed["outputs"]["twice"] == {"iteration": 2}
        log = printed["outputs"]["log"]["text"]
        assert "click:signin" in log and "delete" not in log and "input:email" in log

        # A subflow lives in another flow: the export names it instead of leaving it out.
        calling = await save(client, "calls", [node("call", "subflow", flowId=chain_id)], [])
        error = failed(
            await client.call_tool("flow_export", {"flowId": calling, "format": "playwright"}), "NOT_SUPPORTED"
        )
        assert "subflow `call`" in error["error"], error
