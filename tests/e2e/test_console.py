"""The console end to end (issue 25): a real Chromium (Playwright) drives the console page against a real
daemon serving HTTP, while MCP clients (the official SDK through `browserd mcp`) do the work it watches.

Each test checks what a person sees: the page opens only from its one-time link, a crawl's bar moves and
cancel stops it, a recorded flow is reordered, disabled, saved (version 2 in flow_get) and replayed from
step 2 with each step's status arriving, a failed replay shows its screenshot, a dry run outlines the right
element on a changed page, a dataset exported from the table equals dataset_export, and a sensitive value
is in no answer the page received.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.console_browser import (
    chromium,
    console_base,
    console_home,
    console_link,
    found_anywhere,
    opened_console,
)
from tests.e2e.results import failed, ok

pytestmark = pytest.mark.anyio

TOOLS = ("--tools", "all")
QUICK_MS = 1500  # a stopping step's limit; never an asserted duration
SEEN_MS = 30_000  # how long the page may take to show what the test waits for


@pytest.fixture(scope="module")
def home() -> Iterator[BrowserdHome]:
    with console_home() as made:
        yield made


async def call(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return dict(ok(await client.call_tool(tool, args)).structured_content or {})


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


async def record_sign_in(client: Any, site: str, password: str | None = None) -> dict[str, Any]:
    """On flow-form.html: fill Email (and Password when given), tick Remember me, click Sign in, delete Bob."""
    await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})
    await call(client, "flow_record_start", {"name": "Sign in"})
    await call(client, "browser_fill", {"target": "#email-field", "value": "ann@example.test", "snapshot": "none"})
    if password is not None:
        await call(client, "browser_fill", {"target": "#pw-field", "value": password, "snapshot": "none"})
    await call(client, "browser_check", {"target": "input[name=remember]", "snapshot": "none"})
    await call(client, "browser_click", {"target": "#signin", "snapshot": "none"})
    await call(client, "browser_click", {"target": "#people tr:nth-child(2) button", "snapshot": "none"})
    return (await call(client, "flow_record_stop", {}))["flow"]


async def test_the_console_opens_only_from_its_one_time_link(home: BrowserdHome) -> None:
    base = console_base(home)
    status, body = fetch(base)
    assert status == 401 and b"<nav" not in body, "without the link's cookie the console must show nothing"
    # An MCP client's bearer token is no key to the console.
    assert fetch(f"{base}api/overview", {"Authorization": "Bearer bd_whatever"})[0] == 401
    async with chromium() as browser, opened_console(browser, home) as console:
        link = console.link
        assert console.page.url.startswith(base) and "token=" not in console.page.url
        await console.page.get_by_role("heading", name="Sessions").wait_for()
        # Its routes answer errors in the daemon's one shape, and the daemon keeps serving.
        missing = await console.context.request.get(f"{base}api/runs/run_nope")
        error = await missing.json()
        assert missing.status == 404 and error["errorCode"] == "RUN_NOT_FOUND" and error["recoverHint"]
        bad = await console.context.request.get(f"{base}api/runs?offset=many")
        assert bad.status == 400 and (await bad.json())["details"]["field"] == "offset"
        # A link works once: the one the page opened gives another browser 401, and no page.
        other = await browser.new_context()
        used = await other.new_page()
        refused = await used.goto(link)
        assert refused is not None and refused.status == 401
        assert await used.locator("nav").count() == 0
        await other.close()
    # `browserd status` names the console's address, never a key to it.
    status = home.browserd("status", timeout=30).stdout
    assert f"console: {base}" in status and "token=" not in status
    # A page of another site (DNS rebinding names its own host) is refused even with a fresh link.
    assert fetch(console_link(home), {"Host": "evil.example"})[0] == 403


async def test_a_crawl_progress_bar_moves_and_cancel_stops_it(home: BrowserdHome, site: str) -> None:
    async with (
        mcp_client(home, args=TOOLS) as client,
        chromium() as browser,
        opened_console(browser, home) as console,
    ):
        page = console.page
        await console.goto("#/runs")
        await page.get_by_role("heading", name="Runs").wait_for()
        started = await call(client, "crawl", {"url": f"{site}/gen/200/0.html", "concurrency": 1, "render": "always"})
        run_id = started["runId"]
        bar = page.locator(f'tr[data-run-id="{run_id}"] progress')
        # The bar moves with the daemon's events: the page never asks again for the list.
        await page.wait_for_function(
            "(id) => (document.querySelector(`tr[data-run-id='${id}'] progress`) || {}).value >= 2",
            arg=run_id,
            timeout=SEEN_MS,
        )
        first = float(await bar.get_attribute("value") or 0)
        await page.wait_for_function(
            "([id, first]) => document.querySelector(`tr[data-run-id='${id}'] progress`).value > first",
            arg=[run_id, first],
            timeout=SEEN_MS,
        )
        assert await bar.get_attribute("max") == "100", "the bar runs against the page limit"
        await page.locator(f'tr[data-run-id="{run_id}"] a').click()
        await page.get_by_role("button", name="Cancel").click()
        await page.locator("h1 .badge.canceled").wait_for(timeout=SEEN_MS)
        run = await call(client, "get_task_run", {"runId": run_id})
        assert run["status"] == "canceled" and 2 <= len(run["result"]["items"]) < 200
        assert any(event.startswith("message:") and run_id in event for event in await console.events())


async def test_reorder_disable_save_then_replay_from_step_2(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=TOOLS) as client, chromium() as browser:
        flow = await record_sign_in(client, site)
        ids = [step["id"] for step in flow["steps"]]
        assert [s["type"] for s in flow["steps"]] == ["fill", "check", "click", "click"]
        async with opened_console(browser, home) as console:
            page = console.page
            await console.goto(f"#/flows/{flow['id']}")
            timeline = page.locator("ol.timeline > li")
            await timeline.first.wait_for()
            # Drag the check (step 2) below the Sign in click (step 3), and disable deleting Bob (step 4).
            await timeline.nth(1).drag_to(timeline.nth(2), target_position={"x": 20, "y": 30})
            order = [await item.get_attribute("data-step-id") for item in await timeline.all()]
            assert order == [ids[0], ids[2], ids[1], ids[3]]
            await page.get_by_label(f"Enable {ids[3]}").uncheck()
            await page.get_by_role("button", name="Save as new version").click()
            await page.locator(".tag", has_text="v2").wait_for(timeout=SEEN_MS)
            saved = await call(client, "flow_get", {"flowId": flow["id"]})
            assert saved["version"] == 2
            assert [s["id"] for s in saved["steps"]] == [ids[0], ids[2], ids[1], ids[3]]
            assert [s.get("disabled", False) for s in saved["steps"]] == [False, False, False, True]
            # The diff against version 1 shows the move and the disabled flag.
            await page.get_by_role("button", name="Diff").click()
            await page.locator("h3", has_text="Version 2 against version 1").wait_for()
            assert await page.locator("pre.diff div.add", has_text='"disabled": true').count() == 1
            # Replay from step 2 (the Sign in click) with the email argument; each step's status arrives.
            await page.locator(".args summary").click()
            await page.locator('.args input[data-key="email"]').fill("bo@example.test")
            await page.get_by_label(f"Replay from {ids[2]}").click()
            for step_id, status in ((ids[2], "success"), (ids[1], "success"), (ids[0], "skipped")):
                await page.locator(f'li[data-step-id="{step_id}"] .status .badge.{status}').wait_for(timeout=SEEN_MS)
            assert await page.locator(f'li[data-step-id="{ids[3]}"] .status .badge').count() == 0
            # The statuses came over the push channel, step by step, as the run went.
            steps_seen = [e for e in await console.events() if f"{ids[2]} click" in e]
            assert any('"status":"running"' in e for e in steps_seen)


async def test_a_failed_replay_shows_its_screenshot_and_candidates(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=TOOLS) as client, chromium() as browser:
        flow = await record_sign_in(client, site)
        answer = await call(
            client,
            "flow_run",
            {
                "flowId": flow["id"],
                "args": {"email": "x@example.test"},
                "startUrl": f"{site}/flow-form.html?v=removed",
                "stepTimeoutMs": QUICK_MS,
            },
        )
        assert answer["status"] == "failed"
        async with opened_console(browser, home) as console:
            page = console.page
            await console.goto(f"#/runs/{answer['runId']}")
            shot = page.locator(".report.failed img.shot")
            await shot.wait_for(timeout=SEEN_MS)
            await page.wait_for_function(
                "() => document.querySelector('.report.failed img.shot').naturalWidth > 0", timeout=SEEN_MS
            )
            assert await page.locator(".report.failed .weighed table").count() >= 1
            # Run again: the same stored inputs (the changed page), a new run that stops the same way.
            await page.get_by_role("button", name="Run again").click()
            await page.wait_for_url(lambda url: "#/runs/" in url and answer["runId"] not in url, timeout=SEEN_MS)
            await page.locator("h1 .badge.failed").wait_for(timeout=SEEN_MS)
            again = await call(client, "get_task_run", {"runId": page.url.rsplit("/", 1)[1]})
            assert again["result"]["flowRun"]["flowId"] == flow["id"]
            # The editor shows the same failure at the step that stopped.
            await console.goto(f"#/flows/{flow['id']}")
            failed_step = next(s["stepId"] for s in answer["steps"] if s["status"] == "failed")
            await page.locator(f'li[data-step-id="{failed_step}"]').click()
            await page.locator(".panel .report.failed img.shot").wait_for(timeout=SEEN_MS)


async def test_a_dry_run_outlines_the_right_element_on_a_changed_page(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=TOOLS) as client, chromium() as browser:
        flow = await record_sign_in(client, site)
        delete_bob = flow["steps"][-1]["id"]
        # The client's tab on a later release of the page: Bob's row is now the second from the bottom.
        await call(client, "browser_open", {"url": f"{site}/flow-form.html?v=reorder", "snapshot": "none"})
        async with opened_console(browser, home) as console:
            page = console.page
            await console.goto(f"#/flows/{flow['id']}")
            await page.locator("ol.timeline > li").first.wait_for()
            choice = page.locator("select.dry-tab option", has_text="flow-form.html?v=reorder")
            await choice.wait_for(state="attached", timeout=SEEN_MS)
            await page.locator("select.dry-tab").select_option(await choice.get_attribute("value"))
            await page.get_by_role("button", name="Dry run").click()
            await page.locator(f'li[data-step-id="{delete_bob}"] .dry.ok').wait_for(timeout=SEEN_MS)
            await page.locator(".dryshot img").wait_for()
        # In the client's page, the outline sits on Bob's Delete button and nothing was clicked.
        result = await call(
            client,
            "browser_evaluate",
            {
                "expression": "(() => { const boxes = [...document.querySelectorAll('[data-browserd-dry-run]')];"
                " const bob = document.querySelector('[data-who=delete-bob]').getBoundingClientRect();"
                " return JSON.stringify({ log: document.getElementById('log').textContent,"
                " onBob: boxes.some((b) => b.textContent.startsWith('" + delete_bob + " ')"
                " && Math.abs(b.getBoundingClientRect().top - bob.top) < 2) }); })()"
            },
        )
        seen = json.loads(result["result"])
        assert seen["onBob"] and seen["log"] == ""


async def test_a_dataset_exported_from_the_table_equals_dataset_export(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=TOOLS) as client, chromium() as browser:
        flow = await record_sign_in(client, site)
        rows = [{"email": f"row{i}@example.test"} for i in range(3)]
        answer = await call(
            client, "flow_run", {"flowId": flow["id"], "rows": rows, "startUrl": f"{site}/flow-form.html"}
        )
        expected = (await call(client, "dataset_export", {"runId": answer["runId"], "format": "csv"}))["text"]
        async with opened_console(browser, home) as console:
            page = console.page
            await console.goto("#/datasets")
            option = page.locator("option", has_text=answer["runId"])
            await option.wait_for(state="attached", timeout=SEEN_MS)
            await page.get_by_label("Dataset").select_option(await option.get_attribute("value"))
            await page.locator("table tbody tr").nth(2).wait_for(timeout=SEEN_MS)
            async with page.expect_download() as download:
                await page.get_by_role("link", name="Export CSV").click()
            path = await (await download.value).path()
            assert path is not None
            with open(path, encoding="utf-8", newline="") as exported:
                assert exported.read() == expected


async def test_a_sensitive_value_is_in_nothing_the_page_received(home: BrowserdHome, site: str) -> None:
    secret = "pw-canary-7Qx9"
    async with mcp_client(home, args=TOOLS) as client, chromium() as browser:
        flow = await record_sign_in(client, site, password=secret)
        assert any(v.get("sensitive") for v in flow["variables"])
        # Replayed with the secret, in the client's tab, which stays on the page with the password typed in.
        replayed = await call(
            client,
            "flow_run",
            {"flowId": flow["id"], "args": {"email": "a@example.test", "password": secret}, "tabTarget": "new"},
        )
        async with opened_console(browser, home) as console:
            page = console.page
            for route, shown in (
                ("#/sessions", "figure.tab img"),
                ("#/runs", "tr[data-run-id]"),
                (f"#/runs/{replayed['runId']}", ".reports"),
                (f"#/flows/{flow['id']}", "ol.timeline > li"),
                ("#/schedules", "h1"),
                ("#/datasets", "h1"),
            ):
                await console.goto(route)
                await page.locator(shown).first.wait_for(timeout=SEEN_MS)
                await anyio.sleep(0.3)  # the page's thumbnails and follow-up requests arrive
            # The password step's panel, and the variables table, on screen.
            await console.goto(f"#/flows/{flow['id']}")
            await page.locator("ol.timeline > li").nth(1).click()
            await page.locator(".panel h2", has_text=flow["steps"][1]["id"]).wait_for(timeout=SEEN_MS)
            dom = (await page.content()).encode()
            answers = [body for _, body in console.answers] + [e.encode() for e in await console.events()]
            assert found_anywhere(secret, [*answers, dom]) == [], "a sensitive value reached the console"
            assert len(console.answers) > 10


async def test_export_then_import_a_flow_from_the_page(home: BrowserdHome, site: str, scratch: Path) -> None:
    async with mcp_client(home, args=TOOLS) as client, chromium() as browser:
        flow = await record_sign_in(client, site)
        exported = await call(client, "flow_export", {"flowId": flow["id"]})
        async with opened_console(browser, home) as console:
            page = console.page
            await console.goto(f"#/flows/{flow['id']}")
            async with page.expect_download() as download:
                await page.get_by_role("link", name="Export JSON").click()
            saved = scratch / "flow.json"
            await (await download.value).save_as(saved)
            assert json.loads(saved.read_text()) == exported["flow"]
            await console.goto("#/flows")
            await page.get_by_label("Flow file").set_input_files(str(saved))
            await page.get_by_role("button", name="Import").click()
            await page.wait_for_url(lambda url: "#/flows/flow_" in url and flow["id"] not in url, timeout=SEEN_MS)
            copy = page.url.rsplit("/", 1)[1]
        listed = await call(client, "flow_list", {})
        assert {f["flowId"] for f in listed["flows"]} >= {flow["id"], copy}, "the import is a copy beside the original"


async def test_stop_closes_a_clients_windows_and_the_page_follows(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=TOOLS) as client, chromium() as browser:
        await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})
        mine = (await call(client, "get_runtime_profile", {}))["session"]["sessionId"]
        async with opened_console(browser, home) as console:
            page = console.page
            card = page.locator(f'section.session[data-session-id="{mine}"]')
            await card.locator("figure.tab", has_text="Flow form").wait_for(timeout=SEEN_MS)
            assert await card.locator(".tag", has_text="stdio").count() == 1
            assert await card.locator("td", has_text="browser_open").count() >= 1
            page.once("dialog", lambda dialog: dialog.accept())
            await card.get_by_role("button", name="Stop").click()
            await card.get_by_text("No open tabs.").wait_for(timeout=SEEN_MS)
        status = home.status_json()
        assert next(s for s in status["sessions"] if s["sessionId"] == mine)["tabs"] == []
        # The client is still connected: its next call opens a new window.
        await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})


async def test_flow_run_from_a_step_skips_the_steps_before_it(home: BrowserdHome, site: str) -> None:
    """The tool under the console's ▶: from a step on, on that step's page, the steps before it reported skipped."""
    async with mcp_client(home, args=TOOLS) as client:
        flow = await record_sign_in(client, site)
        ids = [step["id"] for step in flow["steps"]]
        await call(client, "browser_open", {"url": f"{site}/index.html", "snapshot": "none"})
        answer = await call(
            client, "flow_run", {"flowId": flow["id"], "args": {"email": "x@example.test"}, "fromStep": ids[2]}
        )
        assert answer["status"] == "succeeded", answer
        assert [(s["stepId"], s["status"]) for s in answer["steps"]][-2:] == [(ids[0], "skipped"), (ids[1], "skipped")]
        # The tab went to the page that step acts on, and only the steps from it acted there.
        log = await call(client, "browser_get", {"what": "text", "target": "#log"})
        assert log["value"].split() == ["click:signin", "click:delete-bob"]
        refused = await client.call_tool(
            "flow_run", {"flowId": flow["id"], "args": {"email": "x@example.test"}, "fromStep": "s99"}
        )
        assert failed(refused, "INVALID_PARAMETER")["details"]["field"] == "fromStep"


async def test_run_again_keeps_the_trust_level_of_a_remote_sessions_run(home: BrowserdHome, site: str) -> None:
    """A remote session's run refused on the policy (the user's own loopback service), run again from the
    console: it runs at remote trust again, so the person's click lends it no local rights."""
    page = f"{site}/help.html"
    batch = {"templateId": "batch_extract_pages", "inputs": {"urls": [page]}, "options": {"mode": "sync"}}
    async with mcp_client(home, args=("--trust", "remote", *TOOLS)) as attacker:
        planted = await call(attacker, "run_task_template", batch)
    assert planted["status"] == "failed" and "URL_NOT_ALLOWED" in json.dumps(planted), planted
    base = console_base(home)
    async with chromium() as browser, opened_console(browser, home) as console:
        origin = base.removesuffix("/console/")
        url = f"{base}api/runs/{planted['runId']}/again"
        again = await console.context.request.post(url, headers={"Origin": origin})
        assert again.status == 200, await again.text()
        run_id = (await again.json())["runId"]
    async with mcp_client(home, args=TOOLS) as client:
        with anyio.fail_after(60):
            while (run := await call(client, "get_task_run", {"runId": run_id}))["status"] in ("queued", "running"):
                await anyio.sleep(0.2)
        assert run["status"] == "failed" and "URL_NOT_ALLOWED" in json.dumps(run), json.dumps(run)[:2000]
        # The person's own run of the same inputs still works.
        mine = await call(client, "run_task_template", batch)
        assert mine["status"] == "succeeded", mine


async def test_a_dry_run_loads_a_remote_flows_start_page_only_at_remote_trust(home: BrowserdHome, site: str) -> None:
    """A remote session's flow that starts on the user's own loopback service: the console's dry run opens it
    in a session of the flow's level, which refuses the page, and never in a local session's tab."""
    start = f"{site}/help.html"
    steps = [{"id": "read", "type": "extract"}]
    planted_flow = {"id": "flow_planted_start", "name": "planted", "meta": {"startUrl": start}, "steps": steps}
    async with mcp_client(home, args=("--trust", "remote", *TOOLS)) as attacker:
        planted = (await call(attacker, "flow_save", {"flow": planted_flow}))["flowId"]
    base = console_base(home)
    origin = base.removesuffix("/console/")
    async with chromium() as browser, opened_console(browser, home) as console:
        dry = f"{base}api/flows/{planted}/dry-run"
        answer = await console.context.request.post(dry, headers={"Origin": origin}, data={})
        error = await answer.json()
        assert answer.status == 400 and error["errorCode"] == "URL_NOT_ALLOWED", error
        assert error["details"]["rule"] == "loopback", error
        # Pointed at the blank tab of a local client's session, it does not load there either.
        async with mcp_client(home, args=TOOLS) as client:
            await call(client, "browser_tabs", {"action": "new"})
            listing = (await (await console.context.request.get(f"{base}api/sessions")).json())["sessions"]
            local = next(
                row["sessionId"]
                for row in listing
                if row["trustLevel"] == "local" and row["transport"] != "console" and row["tabs"]
            )
            answer = await console.context.request.post(dry, headers={"Origin": origin}, data={"sessionId": local})
            error = await answer.json()
            assert answer.status == 400 and error["errorCode"] == "TRUST_LEVEL_NOT_ALLOWED", error
            assert error["details"]["rule"] == "owner-trust", error
