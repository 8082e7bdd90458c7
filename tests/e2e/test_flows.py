"""Flows end to end (issue 14): record through the browser tools, replay on changed pages, publish as tools.

Replays run on tests/site/flow-form.html and its mutation variants (?v=...). The page logs which element
received each event (data-who), so every test checks WHO was acted on, not merely that no error came.
Requirements: S4-05..S4-21, S4-36, S4-43, S4-46..S4-61, S4-83, S4-102..S4-120, D-42, D-48, D-50.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import signal
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import BROWSERD, BrowserdHome, mcp_client, own_home, pid_alive, wait_for
from tests.e2e.results import failed, ok, text_of

pytestmark = [pytest.mark.anyio]

QUICK_MS = 1500  # a stopping step's limit; never an asserted duration
ARGS = {"email": "ann@example.test", "password": "pw-not-secret"}
ALL_DONE = ["input:email", "input:password", "click:signin", "click:delete-bob"]


async def call(client: Any, tool: str, args: dict[str, Any], answers: list[str] | None = None) -> Any:
    result = ok(await client.call_tool(tool, args))
    if answers is not None:
        answers.append(text_of(result) + json.dumps(result.structured_content or {}))
    return result


async def log_of(client: Any) -> list[str]:
    result = await call(client, "browser_get", {"what": "text", "target": "#log"})
    return [line for line in text_of(result).splitlines() if ":" in line and not line.startswith(("Error", "Next"))]


async def record_form_flow(
    client: Any, site: str, password: str = ARGS["password"], answers: list[str] | None = None
) -> dict[str, Any]:
    """Record: fill Email and Password, click Sign in, delete Bob's row; the page was open before recording."""
    await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})
    await call(client, "flow_record_start", {"name": "Sign in and delete Bob"})
    await call(client, "browser_fill", {"target": "#email-field", "value": ARGS["email"], "snapshot": "none"})
    await call(client, "browser_fill", {"target": "#pw-field", "value": password, "snapshot": "delta"}, answers)
    await call(client, "browser_click", {"target": "#signin", "snapshot": "none"})
    await call(client, "browser_click", {"target": "#people tr:nth-child(2) button", "snapshot": "none"})
    stopped = await call(client, "flow_record_stop", {}, answers)
    return dict(stopped.structured_content)


async def record_one(client: Any, url: str | None, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Record one action (after opening `url`, unless None); the flow_record_stop answer."""
    if url is not None:
        await call(client, "browser_open", {"url": url, "snapshot": "none"})
    await call(client, "flow_record_start", {"name": tool})
    await call(client, tool, args)
    return dict((await call(client, "flow_record_stop", {})).structured_content)


async def replay(client: Any, flow_id: str, url: str, **extra: Any) -> Any:
    args = {"flowId": flow_id, "args": ARGS, "startUrl": url, "stepTimeoutMs": QUICK_MS, **extra}
    return await client.call_tool("flow_run", args)


@pytest.mark.shared_daemon
async def test_recording_keeps_targets_and_variables_but_no_typed_value(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        recorded = await record_form_flow(client, site)
        flow = recorded["flow"]
        assert [s["type"] for s in flow["steps"]] == ["fill", "fill", "click", "click"]
        keys = {v["key"]: v for v in flow["variables"]}
        assert keys["password"]["sensitive"] is True and "default" not in keys["password"]
        assert keys["email"].get("sensitive") is not True
        assert flow["meta"]["startUrl"] == f"{site}/flow-form.html"
        signin = flow["steps"][2]["target"]
        types = [c["type"] for c in signin["candidates"]]
        assert types[0] == "css" and "role" in types and "xpath" in types, types
        assert signin["fingerprint"]["name"] == "Sign in" and signin["fingerprint"]["container"] == "Sign in"
        assert flow["steps"][3]["target"]["fingerprint"]["container"] == "Bob"
        stored = json.dumps(flow)
        assert ARGS["email"] not in stored and ARGS["password"] not in stored


@pytest.mark.shared_daemon
@pytest.mark.parametrize("variant", ["", "ids", "classes", "wrappers", "reorder", "text", "decoy"])
async def test_replay_acts_on_the_recorded_element_after_the_page_changed(
    home: BrowserdHome, site: str, variant: str
) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = (await record_form_flow(client, site))["flowId"]
        result = ok(await replay(client, flow_id, f"{site}/flow-form.html?v={variant}"))
        answer = result.structured_content
        assert answer["status"] == "succeeded", text_of(result)
        assert [s["status"] for s in answer["steps"]] == ["success"] * 4
        assert all(s["score"] >= 0.8 for s in answer["steps"]), answer["steps"]
        assert await log_of(client) == ALL_DONE, f"variant {variant!r} acted on the wrong element"


@pytest.mark.shared_daemon
@pytest.mark.parametrize(
    ("variant", "code"), [("removed", "TARGET_NOT_VERIFIED"), ("disabled", "ELEMENT_NOT_INTERACTABLE")]
)
async def test_replay_stops_and_names_the_scores_when_the_target_is_not_clearly_there(
    home: BrowserdHome, site: str, variant: str, code: str
) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = (await record_form_flow(client, site))["flowId"]
        result = ok(await replay(client, flow_id, f"{site}/flow-form.html?v={variant}"))
        answer = result.structured_content
        assert answer["status"] == "failed" and answer["error"]["errorCode"] == "STEP_EXECUTION_FAILED"
        assert answer["error"]["details"]["stepErrorCode"] == code, text_of(result)
        steps = answer["steps"]
        assert [s["status"] for s in steps] == ["success", "success", "failed", "skipped"]
        stop = steps[2]["details"]
        assert stop["candidates"] and all("count" in c for c in stop["candidates"])
        assert all("score" in e for e in stop["elements"])
        assert steps[2]["screenshotArtifactId"]
        # The look-alike and the disabled button got nothing; neither did the step after.
        assert await log_of(client) == ["input:email", "input:password"]


@pytest.mark.shared_daemon
async def test_a_still_page_stops_a_step_long_before_its_time_limit(home: BrowserdHome, site: str) -> None:
    """A page that shows only a look-alike and does nothing more: waiting out the step's limit (a minute here)
    would change nothing, so the step stops once the page has been still for [flows] still_page_ms."""
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = (await record_form_flow(client, site))["flowId"]
        result = ok(await replay(client, flow_id, f"{site}/flow-form.html?v=removed", stepTimeoutMs=60_000))
        stopped = result.structured_content["steps"][2]
        assert stopped["status"] == "failed" and stopped["errorCode"] == "TARGET_NOT_VERIFIED", text_of(result)
        assert stopped["details"]["pageStillMs"] >= 1000
        assert "the page had been still for" in stopped["message"]
        assert stopped["tookMs"] < 60_000
        assert await log_of(client) == ["input:email", "input:password"]


@pytest.mark.shared_daemon
@pytest.mark.parametrize("variant", ["late-fetch", "late-timer", "late-push"])
async def test_a_page_still_loading_its_target_is_waited_for(home: BrowserdHome, site: str, variant: str) -> None:
    """A page whose button comes with a slow fetch, after a timer or with a message its server pushes looks
    still meanwhile, but is not: the step waits for the button instead of stopping."""
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = (await record_form_flow(client, site))["flowId"]
        result = ok(await replay(client, flow_id, f"{site}/flow-form.html?v={variant}", stepTimeoutMs=60_000))
        answer = result.structured_content
        assert answer["status"] == "succeeded", text_of(result)
        assert await log_of(client) == ALL_DONE


@pytest.mark.shared_daemon
async def test_a_fallback_is_reported_and_applied_only_by_flow_update_targets(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = (await record_form_flow(client, site))["flowId"]
        answer = ok(await replay(client, flow_id, f"{site}/flow-form.html?v=ids")).structured_content
        signin = answer["steps"][2]
        assert signin["fallback"] is True and not signin["matchedBy"].startswith("css: #signin")
        before = (await call(client, "flow_get", {"flowId": flow_id})).structured_content
        assert before["version"] == 1 and before["steps"][2]["target"]["candidates"][0]["value"] == "#signin"
        updated = (await call(client, "flow_update_targets", {"flowId": flow_id})).structured_content
        assert updated["version"] == 2 and updated["stepsUpdated"] >= 1
        after = (await call(client, "flow_get", {"flowId": flow_id})).structured_content
        assert after["steps"][2]["target"]["candidates"][0]["value"] != "#signin"


@pytest.mark.shared_daemon
async def test_a_flow_bound_to_a_page_refuses_another_page_without_start_url(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = (await record_form_flow(client, site))["flowId"]
        await call(client, "browser_open", {"url": f"{site}/form.html", "snapshot": "none"})
        answer = (await call(client, "flow_run", {"flowId": flow_id, "args": ARGS})).structured_content
        assert answer["status"] == "failed" and answer["error"]["details"]["stepErrorCode"] == "SITE_MISMATCH"
        missing = await client.call_tool("flow_run", {"flowId": flow_id, "args": {"email": "x@y.z"}})
        assert failed(missing, "INVALID_PARAMETER")["details"]["field"] == "args"


@pytest.mark.shared_daemon
async def test_publish_reaches_two_clients_as_a_tool_that_runs_the_flow(home: BrowserdHome, site: str) -> None:
    changed = [anyio.Event(), anyio.Event()]
    async with (
        mcp_client(home, args=("--tools", "all"), message_handler=_on_list_changed(changed[0])) as first,
        mcp_client(home, message_handler=_on_list_changed(changed[1])) as second,
    ):
        flow_id = (await record_form_flow(first, site))["flowId"]
        slug = f"signin_{secrets.token_hex(3)}"
        await call(first, "flow_publish", {"flowId": flow_id, "slug": slug, "description": "Sign in, delete Bob."})
        with anyio.fail_after(10):
            for event in changed:
                await event.wait()
        tools = {t.name: t for t in (await second.list_tools()).tools}
        tool = tools[f"flow_{slug}"]
        assert tool.input_schema == {"type": "object", "required": ["email", "password"]}
        await call(second, "browser_open", {"url": f"{site}/flow-form.html?v=wrappers", "snapshot": "none"})
        # The terse schema is not the check: the call still is, with the field named.
        option = failed(await second.call_tool(f"flow_{slug}", {**ARGS, "tabTarget": "new"}), "INVALID_PARAMETER")
        assert option["details"]["field"] == "tabTarget"
        assert failed(await second.call_tool(f"flow_{slug}", {"email": 3, "password": "x"}), "INVALID_PARAMETER")
        result = ok(await second.call_tool(f"flow_{slug}", ARGS))
        assert result.structured_content["status"] == "succeeded"
        assert await log_of(second) == ALL_DONE
        await call(first, "flow_unpublish", {"flowId": flow_id})
        assert f"flow_{slug}" not in {t.name for t in (await second.list_tools()).tools}


def _tools_chars(tools: list[Any]) -> int:
    """tools/list as the client received it: each tool's JSON, as the SDK holds it."""
    return sum(len(t.model_dump_json(by_alias=True, exclude_none=True)) + 1 for t in tools)


@pytest.mark.shared_daemon
async def test_fifty_published_flows_cost_tools_list_at_most_6000_characters(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow = (await record_form_flow(client, site))["flow"]
        before = _tools_chars((await client.list_tools()).tools)
        tag = secrets.token_hex(2)
        for n in range(50):
            copy = (await call(client, "flow_import", {"flow": flow})).structured_content["flowId"]
            await call(client, "flow_publish", {"flowId": copy, "slug": f"signin_{tag}_{n}", "description": "Sign in."})
        tools = (await client.list_tools()).tools
        added = _tools_chars(tools) - before
        assert added <= 6000, added
        names = {t.name for t in tools}
        assert all(f"flow_signin_{tag}_{n}" in names for n in range(50))
        for n in range(50):
            await call(client, "flow_unpublish", {"flowId": f"signin_{tag}_{n}"})


@pytest.mark.shared_daemon
async def test_a_changed_published_flow_keeps_its_earlier_version_as_a_tool(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        stopped = await record_form_flow(client, site)
        flow_id, slug = stopped["flowId"], f"signin_{secrets.token_hex(3)}"
        published = (await call(client, "flow_publish", {"flowId": flow_id, "slug": slug})).structured_content
        flow = (await call(client, "flow_get", {"flowId": flow_id})).structured_content
        flow["steps"] = flow["steps"][:3]  # no longer deletes Bob
        saved = (await call(client, "flow_save", {"flow": flow})).structured_content
        names = {t.name for t in (await client.list_tools()).tools}
        assert {f"flow_{slug}", f"flow_{slug}_v{published['version']}"} <= names
        await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})
        latest = ok(await client.call_tool(f"flow_{slug}", ARGS)).structured_content
        assert len(latest["steps"]) == 3 and await log_of(client) == ALL_DONE[:3]
        await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})
        pinned = ok(await client.call_tool(f"flow_{slug}_v{published['version']}", ARGS)).structured_content
        assert len(pinned["steps"]) == 4 and await log_of(client) == ALL_DONE
        assert saved["version"] > published["version"]
        await call(client, "flow_unpublish", {"flowId": flow_id})
        names = {t.name for t in (await client.list_tools()).tools}
        assert not any(name.startswith(f"flow_{slug}") for name in names)


def _on_list_changed(event: anyio.Event) -> Any:
    async def handle(message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/tools/list_changed":
            event.set()

    return handle


@pytest.mark.shared_daemon
async def test_export_import_and_playwright_script(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = (await record_form_flow(client, site))["flowId"]
        exported = (await call(client, "flow_export", {"flowId": flow_id})).structured_content["flow"]
        copy = (await call(client, "flow_import", {"flow": exported})).structured_content
        assert copy["flowId"] != flow_id
        script = (await call(client, "flow_export", {"flowId": flow_id, "format": "playwright"})).structured_content
        assert "page.locator('#signin')" in script["script"] and "env('password')" in script["script"]
        compile(script["script"], "flow.py", "exec")
        listed = (await call(client, "flow_list", {})).structured_content["flows"]
        assert {flow_id, copy["flowId"]} <= {f["flowId"] for f in listed}
        await call(client, "flow_delete", {"flowId": copy["flowId"]})
        failed(await client.call_tool("flow_get", {"flowId": copy["flowId"]}), "FLOW_NOT_FOUND")


def leaks_of(secret: str, root: Path, answers: list[str]) -> list[tuple[str, bytes]]:
    """Every copy of `secret`, in any of its encodings, in a file under `root` or in one of the answers."""
    forms = encodings_of(secret)
    files = [p for p in root.rglob("*") if p.is_file()]
    leaks = [(str(p.relative_to(root)), form) for p in files for form in forms if form in read_bytes(p)]
    return leaks + [("answer", form) for text in answers for form in forms if form.decode() in text]


def encodings_of(value: str) -> list[bytes]:
    raw = value.encode()
    return [
        raw,
        base64.b64encode(raw),
        base64.urlsafe_b64encode(raw),
        urllib.parse.quote(value, safe="").encode(),
        json.dumps(value).encode()[1:-1],
    ]


async def test_a_sensitive_value_never_reaches_disk_logs_or_answers(site: str) -> None:
    """The canary: 48 random bytes typed into a password field, recorded, replayed 10 times (half fail), exported."""
    canary = base64.urlsafe_b64encode(secrets.token_bytes(48)).decode()
    answers: list[str] = []

    async def keep(client: Any, tool: str, args: dict[str, Any]) -> Any:
        result = await client.call_tool(tool, args)
        answers.append(text_of(result) + json.dumps(result.structured_content or {}))
        return result

    with own_home() as home:
        async with mcp_client(home, args=("--tools", "all")) as client:
            flow_id = (await record_form_flow(client, site, canary, answers))["flowId"]
            for n in range(10):
                variant = "removed" if n % 2 else "classes"
                args = {**ARGS, "password": canary}
                run = {"flowId": flow_id, "args": args, "startUrl": f"{site}/flow-form.html?v={variant}"}
                await keep(client, "flow_run", {**run, "stepTimeoutMs": 800})
            for fmt in ("json", "playwright"):
                await keep(client, "flow_export", {"flowId": flow_id, "format": fmt})
            await _run_graph_with(client, keep, site, flow_id, canary)
            await keep(client, "list_task_runs", {"limit": 20})
        home.stop_daemon()
        files = [p for p in home.root.rglob("*") if p.is_file()]
        assert any(p.name == "flows.db" for p in files) and any(p.name == "runs.db" for p in files)
        leaks = leaks_of(canary, home.root, answers)
        assert not leaks, f"the sensitive value leaked: {leaks}"


async def _run_graph_with(client: Any, keep: Any, site: str, form_flow_id: str, canary: str) -> None:
    """The V2 node kinds with the sensitive value: a subflow types it, a page and a server echo it back."""
    form = (await call(client, "flow_get", {"flowId": form_flow_id})).structured_content
    typed = {**form["steps"][1], "id": "read", "type": "extract", "value": "value"}  # the password field
    nodes = [
        {"id": "sub", "type": "subflow", "flowId": form_flow_id, "args": {"email": "{email}"}},
        typed,
        {"id": "post", "type": "http", "url": f"{site}/api/items", "method": "POST", "body": '{"p": "{password}"}'},
        {"id": "ok", "type": "if", "condition": "${outputs.post.text} contains {password}"},
        {"id": "row", "type": "datasetWrite", "fields": {"echo": "${outputs.post.text}", "typed": "{password}"}},
    ]
    edges = [
        {"from": "sub", "to": "read"},
        {"from": "read", "to": "post"},
        {"from": "post", "to": "ok"},
        {"from": "ok", "to": "row", "on": "true"},
        {"from": "ok", "to": "row", "on": "false"},
    ]
    variables = [{"key": "email"}, {"key": "password", "sensitive": True}]
    flow = {"id": f"flow_canary_{secrets.token_hex(3)}", "name": "canary graph", "nodes": nodes, "edges": edges}
    graph_id = (await call(client, "flow_save", {"flow": {**flow, "variables": variables}})).structured_content
    args = {"flowId": graph_id["flowId"], "args": {**ARGS, "password": canary}, "startUrl": f"{site}/flow-form.html"}
    answer = (await keep(client, "flow_run", args)).structured_content
    assert answer["status"] == "succeeded", (answer["steps"], answer.get("error"))
    assert answer["outputs"]["read"] == {"value": "***"} and "***" in answer["outputs"]["post"]["text"]
    await keep(client, "dataset_export", {"flowId": graph_id["flowId"], "format": "json"})


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


@pytest.mark.shared_daemon
async def test_a_recorded_read_becomes_an_output_of_each_run(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        cell = {"what": "text", "target": "#people tr:nth-child(2) td:first-child"}
        flow_id = (await record_one(client, f"{site}/flow-form.html", "browser_get", cell))["flowId"]
        # Re-ordered rows: the recorded cell is found by what it is, not by where it was.
        answer = (
            await call(client, "flow_run", {"flowId": flow_id, "startUrl": f"{site}/flow-form.html?v=reorder"})
        ).structured_content
        assert answer["status"] == "succeeded", answer
        assert answer["outputs"] == {"s1": {"text": "Bob"}}


@pytest.mark.shared_daemon
async def test_the_command_line_lists_runs_and_exports_flows(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        flow_id = (await record_form_flow(client, site))["flowId"]
    listed = home.browserd("flows", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert flow_id in {f["flowId"] for f in json.loads(listed.stdout)["flows"]}
    # The sensitive password comes from FLOW_PASSWORD, never from the command line.
    env = {**home.env, "FLOW_PASSWORD": ARGS["password"]}
    ran = subprocess.run(
        [BROWSERD, "flows", "run", flow_id, "--arg", f"email={ARGS['email']}", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [s["status"] for s in json.loads(ran.stdout)["steps"]] == ["success"] * 4
    script = home.browserd("flows", "export", flow_id, "--format", "playwright")
    assert script.returncode == 0 and "sync_playwright" in script.stdout


async def test_a_data_set_run_resumes_after_kill_9_with_the_remaining_rows_only(site: str) -> None:
    rows = [{"email": f"user{n}@example.test"} for n in range(12)]
    with own_home() as home:
        async with mcp_client(home, args=("--tools", "all")) as client:
            flow_id = (await record_form_flow(client, site))["flowId"]
            started = (
                await call(
                    client,
                    "flow_run",
                    {"flowId": flow_id, "args": {"password": "pw"}, "rows": rows, "mode": "async"},
                )
            ).structured_content
            first_run = started["runId"]
            # Wait until some rows (4 steps each) are done, then kill the daemon mid-run.
            with anyio.fail_after(120):
                while True:
                    run = (await call(client, "get_task_run", {"runId": first_run})).structured_content
                    if run["progress"]["doneSteps"] >= 9:
                        break
                    await anyio.sleep(0.05)
            pid = home.daemon_pid()
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            assert wait_for(lambda: not pid_alive(pid), 10)
        async with mcp_client(home, args=("--tools", "all")) as client:
            interrupted = (await call(client, "get_task_run", {"runId": first_run})).structured_content
            assert interrupted["status"] == "failed"
            before = {item["row"] for item in interrupted["result"]["items"] if item["success"]}
            assert 2 <= len(before) < len(rows), before
            resumed = (
                await call(
                    client,
                    "flow_run",
                    {"flowId": flow_id, "args": {"password": "pw"}, "rows": rows, "resumeRunId": first_run},
                )
            ).structured_content
            assert resumed["status"] == "succeeded", resumed
            after = {item["row"] for item in resumed["items"]}
            assert after == set(range(len(rows))) - before, "the resumed run ran exactly the remaining rows"
            exported = (
                await call(client, "dataset_export", {"runId": resumed["runId"], "format": "csv"})
            ).structured_content
            assert exported["rows"] == len(after) and exported["text"].startswith("row,success")


@pytest.mark.shared_daemon
async def test_a_flow_that_cannot_be_stored_safely_is_refused(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        climbing = {"id": "../../escape", "name": "x", "steps": []}
        assert failed(await client.call_tool("flow_save", {"flow": climbing}), "INVALID_PARAMETER")
        pin = {"key": "pin", "sensitive": True, "default": "1"}
        secret_default = {"id": "flow_x1", "name": "x", "variables": [pin]}
        assert failed(await client.call_tool("flow_import", {"flow": secret_default}), "INVALID_PARAMETER")
        failed(await client.call_tool("flow_run", {"flowId": "no_such_flow"}), "FLOW_NOT_FOUND")
        await call(client, "get_runtime_profile", {})  # the daemon keeps serving


@pytest.mark.shared_daemon
async def test_targets_inside_a_shadow_root_and_an_iframe_are_found_again(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        click = {"target": "shadow-widget button", "snapshot": "none"}
        shadow = await record_one(client, f"{site}/shadow.html", "browser_click", click)
        assert shadow["flow"]["steps"][0]["target"]["shadow"] == ["shadow-widget"]
        await call(client, "browser_open", {"url": f"{site}/iframe.html", "snapshot": "none"})
        snapshot = text_of(await call(client, "browser_snapshot", {}))
        button = re.search(r'button "Frame button" \[ref=(f\w+)\]', snapshot)
        assert button, snapshot
        framed = await record_one(client, None, "browser_click", {"target": button.group(1), "snapshot": "none"})
        assert framed["flow"]["steps"][0]["target"]["frame"], framed["flow"]["steps"][0]["target"]

        for flow, page, status in ((shadow, "shadow.html", "#status"), (framed, "iframe.html", None)):
            answer = (
                await call(client, "flow_run", {"flowId": flow["flowId"], "startUrl": f"{site}/{page}"})
            ).structured_content
            assert answer["status"] == "succeeded", answer
            if status is not None:
                said = await call(client, "browser_get", {"what": "text", "target": status})
                assert "shadow clicked" in text_of(said)
        inner = "document.querySelector('iframe').contentDocument.body.innerText"
        framed_status = await call(client, "browser_evaluate", {"expression": inner})
        assert "frame clicked" in text_of(framed_status)


def _recorder_file(url: str) -> dict[str, Any]:
    """What Chrome DevTools Recorder exports for: open, type an email and a password, click Sign in."""
    signin = [["aria/Sign in"], ["#signin"], ['xpath///*[@id="signin"]'], ["pierce/#signin"], ["text/Sign in"]]
    return {
        "title": "Recorder sign in",
        "steps": [
            {"type": "setViewport", "width": 800, "height": 600, "deviceScaleFactor": 1, "isMobile": False},
            {"type": "navigate", "url": url},
            {"type": "change", "value": ARGS["email"], "selectors": [["aria/Email"], ["#email-field"]]},
            {"type": "change", "value": "typed-secret-1", "selectors": [["aria/Password"], ["#pw-field"]]},
            {"type": "click", "target": "main", "selectors": signin, "offsetX": 5, "offsetY": 5},
        ],
    }


@pytest.mark.shared_daemon
async def test_a_chrome_recorder_file_imports_without_its_values_and_replays_verified(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home, args=("--tools", "all")) as client:
        source = _recorder_file(f"{site}/flow-form.html?v=decoy")
        imported = (await call(client, "flow_import", {"flow": source, "format": "chrome_recorder"})).structured_content
        flow = (await call(client, "flow_get", {"flowId": imported["flowId"]})).structured_content
        stored = json.dumps(flow)
        assert ARGS["email"] not in stored and "typed-secret-1" not in stored
        assert {v["key"]: v.get("sensitive", False) for v in flow["variables"]} == {"email": False, "password": True}
        answer = (
            await call(client, "flow_run", {"flowId": imported["flowId"], "args": ARGS, "stepTimeoutMs": QUICK_MS})
        ).structured_content
        assert answer["status"] == "succeeded", answer
        # The decoy "Sign in" button before the form got nothing: the selectors agreed on the real one.
        assert await log_of(client) == ["input:email", "input:password", "click:signin"]


async def test_stopping_a_recording_warns_that_frames_of_another_origin_were_not_recorded(
    home: BrowserdHome, site: str, other_origin: str
) -> None:
    """D-47: a person's input inside a frame of another origin is not recorded; the recording says so."""
    async with mcp_client(home, args=("--tools", "all")) as client:
        await call(client, "browser_open", {"url": f"{site}/w-components.html?frame={other_origin}"})
        await call(client, "flow_record_start", {"name": "pay"})
        await call(client, "browser_click", {"target": "#span-button", "snapshot": "none"})
        stopped = await call(client, "flow_record_stop", {"save": False})
        [warning] = stopped.structured_content["warnings"]
        assert other_origin in warning and "not recorded" in warning, warning
        assert f"Warning: {warning}" in text_of(stopped)
        assert [s["type"] for s in stopped.structured_content["flow"]["steps"]] == ["click"]
