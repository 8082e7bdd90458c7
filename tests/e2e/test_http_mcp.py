"""MCP over streamable HTTP (issue 22) with the official SDK's client, in each era it speaks: legacy
sessions (initialize, Mcp-Session-Id) and the stateless 2026-07-28 exchange with session handles.

Every request needs a bearer token (`browserd tokens create`); its trust level and tool groups are its
sessions'. Two clients never see each other's pages; a tab survives stateless calls through its handle;
a remote token cannot reach loopback or profiles; bad tokens and foreign Origins are refused before
anything runs; long calls made as MCP tasks are polled or cancelled; a daemon restart is a clean error.
"""

from __future__ import annotations

import json
import secrets
import shutil
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import BrowserdHome, make_home, mcp_client, wait_for
from tests.e2e.bridge_chrome import free_port
from tests.e2e.http_clients import (
    ERAS,
    CreatedTask,
    HttpDaemon,
    TasksExtension,
    cancel_task,
    get_task,
    handle_of,
    http_client,
    http_session,
    poll_task,
)
from tests.e2e.results import failed, ok, text_of

pytestmark = pytest.mark.anyio
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
JSON_POST = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def served() -> Iterator[HttpDaemon]:
    home = make_home(idle_exit_s=0)
    daemon = HttpDaemon(home, free_port())
    try:
        daemon.start()
        yield daemon
    finally:
        home.stop_daemon()
        shutil.rmtree(home.root, ignore_errors=True)


@pytest.fixture
def http(served: HttpDaemon) -> HttpDaemon:
    served.start()  # a test that stopped it (restart) leaves the next one a running daemon
    return served


@pytest.mark.parametrize("mode", ERAS)
async def test_two_clients_never_see_each_others_pages(http: HttpDaemon, site: str, mode: str) -> None:
    alice, bob = http.token(f"alice-{mode}"), http.token(f"bob-{mode}")
    async with http_client(http.url, alice, mode) as a, http_client(http.url, bob, mode) as b:
        opened_a = ok(await a.call_tool("browser_open", {"url": f"{site}/index.html"}))
        opened_b = ok(await b.call_tool("browser_open", {"url": f"{site}/help.html"}))
        handle_a, handle_b = handle_of(opened_a), handle_of(opened_b)
        assert handle_a != handle_b
        tabs_a = text_of(ok(await a.call_tool("browser_tabs", {"action": "list", "session": handle_a})))
        tabs_b = text_of(ok(await b.call_tool("browser_tabs", {"action": "list", "session": handle_b})))
        assert "index.html" in tabs_a and "help.html" not in tabs_a
        assert "help.html" in tabs_b and "index.html" not in tabs_b
        # Another token's handle is as unknown as a made-up one.
        stolen = failed(await b.call_tool("browser_snapshot", {"session": handle_a}), "SESSION_NOT_FOUND")
        assert "without `session`" in stolen["recoverHint"]
        failed(await a.call_tool("browser_snapshot", {"session": "bs_made_up"}), "SESSION_NOT_FOUND")


async def test_two_legacy_sessions_of_one_token_are_two_browser_sessions_and_new_makes_a_third(
    http: HttpDaemon, site: str
) -> None:
    token = http.token("twins")
    async with http_client(http.url, token) as one, http_client(http.url, token) as two:
        ok(await one.call_tool("browser_open", {"url": f"{site}/index.html"}))
        # The second MCP session's own browser session never opened the page.
        assert "Welcome to the browserd test site" not in text_of(await two.call_tool("browser_snapshot", {}))
        snapshot = text_of(ok(await one.call_tool("browser_snapshot", {})))
        assert "Welcome to the browserd test site" in snapshot
        # session "new" gives a legacy client another isolated session, named in the answer.
        other = ok(await one.call_tool("browser_open", {"url": f"{site}/help.html", "session": "new"}))
        assert 'session="bs_' in text_of(other)
        assert "Welcome to the browserd test site" in text_of(ok(await one.call_tool("browser_snapshot", {})))
        tabs = text_of(ok(await one.call_tool("browser_tabs", {"session": handle_of(other)})))
        assert "help.html" in tabs and "index.html" not in tabs


async def test_a_tab_survives_stateless_calls_through_its_handle(http: HttpDaemon, site: str) -> None:
    token = http.token("stateless")
    async with http_client(http.url, token, "2026-07-28") as client:
        opened = ok(await client.call_tool("browser_open", {"url": f"{site}/form.html"}))
        handle = handle_of(opened)
        assert f'session="{handle}"' in text_of(opened), "a new session's answer tells the model its handle"
        snapshot = text_of(ok(await client.call_tool("browser_snapshot", {"session": handle})))
        assert "Form with every input kind" in snapshot
        later = ok(await client.call_tool("browser_open", {"url": f"{site}/help.html", "session": handle}))
        assert handle_of(later) == handle and "session=" not in text_of(later), "a known handle is not news"
        tabs = text_of(ok(await client.call_tool("browser_tabs", {"action": "list", "session": handle})))
        assert "help.html" in tabs
        # Without the handle each stateless call starts afresh: a new session (with at most a blank tab).
        fresh = await client.call_tool("browser_snapshot", {})
        assert handle_of(fresh) != handle and "help.html" not in text_of(fresh)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_remote_token_cannot_reach_loopback_or_profiles(http: HttpDaemon, site: str, mode: str) -> None:
    token = http.token(f"remote-{mode}", trust="remote", tools="pages,devtools,scrape")
    async with http_client(http.url, token, mode) as client:
        refused = failed(await client.call_tool("browser_open", {"url": f"{site}/index.html"}), "URL_NOT_ALLOWED")
        assert refused["details"]["rule"] == "loopback"
        handle = handle_of(ok(await client.call_tool("browser_open", {"url": "data:text/html,<h1>Inline</h1>"})))
        failed(
            await client.call_tool("browser_evaluate", {"expression": "1 + 1", "session": handle}),
            "TRUST_LEVEL_NOT_ALLOWED",
        )
        profile = {"url": "data:text/html,<p>x</p>", "profileId": "master", "session": handle}
        failed(await client.call_tool("browser_open", profile), "TRUST_LEVEL_NOT_ALLOWED")
        failed(
            await client.call_tool("scrape", {"url": f"{site}/index.html", "profileId": "master"}),
            "TRUST_LEVEL_NOT_ALLOWED",
        )
        refused = failed(
            await client.call_tool("scrape", {"url": f"http://localhost:{http.port}/health"}), "URL_NOT_ALLOWED"
        )
        assert refused["details"]["rule"] == "loopback"
        # Its sessions are remote whatever a call says, and status names the token.
        status = http.home.status_json()
        mine = [s for s in status["http"]["sessions"] if s["token"] == f"remote-{mode}"]
        assert mine and all(s["trustLevel"] == "remote" for s in mine)


async def test_a_token_without_a_group_does_not_see_its_tools(http: HttpDaemon) -> None:
    token = http.token("pages-only", tools="pages")
    async with http_client(http.url, token) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "browser_open" in names and "crawl" not in names and "browser_evaluate" not in names
        listed = next(t for t in (await client.list_tools()).tools if t.name == "browser_open")
        assert "session" in listed.input_schema["properties"], "every tool takes a session handle over HTTP"
        failed(await client.call_tool("crawl", {"url": "https://example.com/"}), "INVALID_PARAMETER")


async def post(http: HttpDaemon, token: str | None, headers: dict[str, str] | None = None) -> httpx2.Response:
    async with http_session(token, {**JSON_POST, **(headers or {})}) as session:
        return await session.post(http.url, content=json.dumps(INIT))


async def test_missing_wrong_revoked_and_expired_tokens_and_a_foreign_origin_are_refused(http: HttpDaemon) -> None:
    before = len(http.home.status_json()["http"]["sessions"])
    missing = await post(http, None)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    assert "missing bearer token" in missing.json()["error_description"]
    wrong = await post(http, "bd_0123456789ab_" + "A" * 43)
    assert wrong.status_code == 401 and "unknown token" in wrong.json()["error_description"]
    assert (await post(http, "not-a-token")).status_code == 401

    revoked = http.token("soon-revoked")
    assert (await post(http, revoked)).status_code == 200
    http.revoke("soon-revoked")
    answer = await post(http, revoked)
    assert answer.status_code == 401 and "'soon-revoked' is revoked" in answer.json()["error_description"]

    expiring = http.token("brief", expires="1s")
    await anyio.sleep(1.2)
    answer = await post(http, expiring)
    assert answer.status_code == 401 and "'brief' is expired" in answer.json()["error_description"]

    good = http.token("origin-check")
    foreign = await post(http, good, {"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    rebound = await post(http, good, {"Host": "evil.example"})
    assert rebound.status_code == 421
    own = await post(http, good, {"Origin": f"http://127.0.0.1:{http.port}"})
    assert own.status_code == 200

    # The SDK client gets the refusal too, and nothing ran: no session was made for any of them.
    with pytest.raises(BaseException) as caught:
        async with http_client(http.url, "bd_0123456789ab_" + "B" * 43) as client:
            await client.list_tools()
    assert "Server returned an error response" in leaves(caught.value)
    assert len(http.home.status_json()["http"]["sessions"]) == before


def leaves(error: BaseException) -> list[str]:
    """The messages of an exception and, for a group, of every exception inside it."""
    if isinstance(error, BaseExceptionGroup):
        return [message for inner in error.exceptions for message in leaves(inner)]
    return [str(error)]


async def test_progress_reaches_http_clients(http: HttpDaemon, site: str) -> None:
    token = http.token("progress", tools="scrape,runs")
    for mode in ERAS:
        seen: list[tuple[float, str | None]] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            seen.append((done, message))  # noqa: B023 - consumed before the next era starts

        async with http_client(http.url, token, mode) as client:
            crawl = {"url": f"{site}/gen/6/0.html", "limit": 4, "mode": "sync"}
            run = ok(await client.call_tool("crawl", crawl, progress_callback=progress)).structured_content
        assert run["status"] == "succeeded", run
        assert seen and seen[0][1] == run["runId"], f"{mode}: the first notification names the run: {seen}"


async def crawl_as_tasks(client: Any, site: str) -> CreatedTask:
    """One crawl made as a task polled to its result, another cancelled; the cancelled one's task."""
    # The claim polls tasks/get until the task ends; the caller gets the crawl's own (sync) answer.
    done = ok(await client.call_tool("crawl", {"url": f"{site}/gen/6/0.html", "limit": 4}))
    run = done.structured_content
    assert run["status"] == "succeeded" and run["result"]["summary"]["succeeded"] == 4

    slow = {"url": f"{site}/gen/200/0.html", "concurrency": 1, "render": "always"}
    created = await client.session.call_tool("crawl", slow, allow_claimed=True)
    assert isinstance(created, CreatedTask) and created.status == "working"
    await poll_until_progress(client, created.task_id)
    await cancel_task(client.session, created.task_id)
    ended = await poll_task(client.session, created.task_id)
    assert ended.status == "cancelled", ended
    # The run ends canceled once its page in flight is done.
    listed = {"templateId": "crawl", "status": "canceled"}
    with anyio.fail_after(60):
        while not ok(await client.call_tool("list_task_runs", listed)).structured_content["runs"]:
            await anyio.sleep(0.2)
    with pytest.raises(MCPError, match="Failed to retrieve task"):
        await get_task(client.session, "task_nope")
    return created


async def test_a_crawl_made_as_a_task_is_polled_to_its_result_and_another_is_cancelled(
    http: HttpDaemon, site: str
) -> None:
    token = http.token("tasks", tools="scrape,runs")
    async with http_client(http.url, token, "2026-07-28", extensions=[TasksExtension()]) as client:
        created = await crawl_as_tasks(client, site)
    # Another token cannot see the task.
    other = http.token("other-tasks", tools="scrape,runs")
    async with http_client(http.url, other, "2026-07-28", extensions=[TasksExtension()]) as stranger:
        with pytest.raises(MCPError, match="Failed to retrieve task"):
            await get_task(stranger.session, created.task_id)


async def test_the_stdio_shim_runs_the_same_tasks(home: BrowserdHome, site: str) -> None:
    args = ("--tools", "scrape,runs")
    async with mcp_client(home, "2026-07-28", args, extensions=[TasksExtension()], cache=None) as client:
        await crawl_as_tasks(client, site)
    async with mcp_client(home, "2026-07-28", args, cache=None) as plain:
        with pytest.raises(MCPError, match="Missing required client capability"):
            await get_task(plain.session, "task_x")


async def poll_until_progress(client: Any, task_id: str) -> None:
    with anyio.fail_after(120):
        while not (await get_task(client.session, task_id)).status_message:
            await anyio.sleep(0.1)


async def test_a_client_without_the_tasks_extension_gets_the_plain_answer(http: HttpDaemon, site: str) -> None:
    token = http.token("no-tasks", tools="scrape,runs")
    async with http_client(http.url, token, "2026-07-28") as client:
        answer = ok(await client.call_tool("crawl", {"url": f"{site}/gen/6/0.html", "limit": 2}))
        assert answer.structured_content["status"] in ("queued", "running", "succeeded"), "crawl's default: async"
        with pytest.raises(MCPError, match="Missing required client capability"):
            await get_task(client.session, "task_x")


async def test_status_lists_http_sessions_with_their_token_names(http: HttpDaemon, site: str) -> None:
    token = http.token("status-shown")
    async with http_client(http.url, token) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html"}))
        shown = http.home.browserd("status").stdout
        assert "token status-shown" in shown and f"http://127.0.0.1:{http.port}/mcp" in shown
        entry = next(s for s in http.home.status_json()["http"]["sessions"] if s["token"] == "status-shown")
        assert entry["mcpSession"] and entry["handle"].endswith("…")
    # DELETE at the end of the MCP session closes its browser session.
    assert wait_for(lambda: all(s["token"] != "status-shown" for s in http.home.status_json()["http"]["sessions"]), 15)


async def test_a_daemon_restart_gives_a_clean_error_and_a_new_session_works(site: str) -> None:
    home = make_home(idle_exit_s=0)
    daemon = HttpDaemon(home, free_port())
    try:
        daemon.start()
        token = daemon.token("restarts")
        async with http_client(daemon.url, token, "2026-07-28") as stateless:
            handle = handle_of(ok(await stateless.call_tool("browser_open", {"url": f"{site}/index.html"})))
            async with http_client(daemon.url, token) as legacy:
                ok(await legacy.call_tool("browser_open", {"url": f"{site}/help.html"}))
                home.stop_daemon()
                daemon.start()
                # The legacy MCP session died with the daemon: the server answers 404, the SDK raises.
                with pytest.raises(MCPError, match="Session not found"):
                    await legacy.call_tool("browser_snapshot", {})
            lost = failed(await stateless.call_tool("browser_snapshot", {"session": handle}), "SESSION_NOT_FOUND")
            assert "daemon restarts" in lost["recoverHint"]
            # The same client carries on with a fresh session; so does a new client.
            ok(await stateless.call_tool("browser_open", {"url": f"{site}/index.html"}))
        async with http_client(daemon.url, token) as fresh:
            ok(await fresh.call_tool("browser_open", {"url": f"{site}/index.html"}))
    finally:
        home.stop_daemon()
        shutil.rmtree(home.root, ignore_errors=True)


async def test_a_token_over_its_rate_gets_429_with_retry_after(site: str) -> None:
    home = make_home(idle_exit_s=0)
    home.env["BROWSERD_HTTP_RATE_PER_MINUTE"] = "3"
    daemon = HttpDaemon(home, free_port())
    try:
        daemon.start()
        token = daemon.token("hasty")
        answers = [await post(daemon, token) for _ in range(4)]
        assert [a.status_code for a in answers[:3]] == [200, 200, 200]
        assert answers[3].status_code == 429 and int(answers[3].headers["retry-after"]) >= 1
        # Another token has its own budget.
        assert (await post(daemon, daemon.token("patient"))).status_code == 200
    finally:
        home.stop_daemon()
        shutil.rmtree(home.root, ignore_errors=True)


async def test_a_token_over_its_session_limit_loses_its_least_recently_used_idle_session(site: str) -> None:
    home = make_home(idle_exit_s=0)
    home.env["BROWSERD_HTTP_MAX_SESSIONS_PER_TOKEN"] = "2"
    daemon = HttpDaemon(home, free_port())
    try:
        daemon.start()
        token = daemon.token("forgetful")
        async with http_client(daemon.url, token, "2026-07-28") as client:
            page = {"url": f"{site}/index.html"}
            first, second = [handle_of(ok(await client.call_tool("browser_open", page))) for _ in range(2)]
            ok(await client.call_tool("browser_snapshot", {"session": first}))  # first is now the more recent
            third = handle_of(ok(await client.call_tool("browser_open", page)))
            lost = failed(await client.call_tool("browser_snapshot", {"session": second}), "SESSION_NOT_FOUND")
            assert "max_sessions_per_token" in lost["recoverHint"]
            for kept in (first, third):
                ok(await client.call_tool("browser_snapshot", {"session": kept}))
        assert len(home.status_json()["http"]["sessions"]) == 2
    finally:
        home.stop_daemon()
        shutil.rmtree(home.root, ignore_errors=True)


async def test_a_flow_published_meanwhile_is_callable_from_an_open_http_session(http: HttpDaemon, site: str) -> None:
    token = http.token("publisher", tools="pages,flows")
    slug = f"http_{secrets.token_hex(3)}"
    steps = [{"id": "go", "type": "navigate", "url": f"{site}/help.html"}, {"id": "read", "type": "extract"}]
    async with http_client(http.url, token) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html"}))  # the session exists already
        body = {"id": f"flow_http_{secrets.token_hex(3)}", "name": "help reader", "steps": steps}
        flow_id = ok(await client.call_tool("flow_save", {"flow": body})).structured_content["flowId"]
        ok(await client.call_tool("flow_publish", {"flowId": flow_id, "slug": slug}))
        assert f"flow_{slug}" in {t.name for t in (await client.list_tools()).tools}
        answer = ok(await client.call_tool(f"flow_{slug}", {})).structured_content
        assert answer["status"] == "succeeded", answer
        ok(await client.call_tool("flow_delete", {"flowId": flow_id}))
