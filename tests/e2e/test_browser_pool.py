"""The browser pool end to end (issue 24): sessions, scrapes and crawls placed on remote browser servers.

Members run on loopback as real servers: two `playwright run-server` processes, one Chromium with a
debugging port (kind cdp) and Debian's chromedriver (kind webdriver). The daemon's own Chromium is off in
these daemons, so every page a test sees was served by a remote member. Each server runs in a process
group of its own, so "kill -9 of a member" ends the server and its browser at once, as a host dying would.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import anyio
import pytest

from tests.conftest import BrowserdHome, mcp_client, own_home
from tests.e2e.pool_servers import CAPACITY, Server, cdp_chromium, chromedriver, configure, run_server
from tests.e2e.results import failed, ok, text_of
from tests.e2e.test_crawl import follow
from tests.e2e.test_login_profiles import cookies_of
from tests.e2e.test_scrape_paths import AD_SLOT_LOADS, blocked_then_loaded, logged_site  # noqa: F401

pytestmark = pytest.mark.anyio

TOOLS = ("--tools", "pages,devtools,scrape,runs")
CRAWL_PAGES = 200


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Server]]:
    started: list[Server] = []
    with tempfile.TemporaryDirectory() as profile_dir:
        try:
            started += [run_server("pw1"), run_server("pw2"), cdp_chromium("cdp", profile_dir)]
            yield {server.name: server for server in started}
        finally:
            for server in started:
                server.kill()


@pytest.fixture(scope="module")
def pool_home(servers: dict[str, Server]) -> Iterator[BrowserdHome]:
    with own_home() as home:
        configure(home, list(servers.values()))
        yield home


async def pool_members(client: Any) -> dict[str, dict[str, Any]]:
    profile = ok(await client.call_tool("get_runtime_profile", {})).structured_content
    return {member["name"]: member for member in profile["pool"]}


async def window_endpoints(client: Any) -> list[str]:
    rows = ok(await client.call_tool("browser_windows", {})).structured_content["windows"]
    return [row["endpoint"] for row in rows]


async def test_sessions_and_a_crawl_spread_over_every_member_within_capacity(
    pool_home: BrowserdHome, site: str
) -> None:
    """Three sessions land on three members; a 200-page crawl beside them is served by all three, each
    page once, and no member ever holds more than its capacity of contexts."""
    async with (
        mcp_client(pool_home, args=TOOLS) as first,
        mcp_client(pool_home, args=TOOLS) as second,
        mcp_client(pool_home, args=TOOLS) as third,
    ):
        placed = []
        for client in (first, second, third):
            ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
            placed += await window_endpoints(client)
        assert sorted(placed) == ["cdp", "pw1", "pw2"], "each new window goes to the member with most room"

        run = ok(
            await first.call_tool(
                "crawl",
                {
                    "url": f"{site}/gen/{CRAWL_PAGES}/0.html",
                    "limit": CRAWL_PAGES,
                    "render": "always",
                    "sitemap": "skip",
                    "concurrency": 5,
                    "mode": "sync",
                },
            )
        ).structured_content
        assert run["status"] == "succeeded", run.get("error")
        urls = [item["url"] for item in run["result"]["items"]]
        assert len(urls) == CRAWL_PAGES and len(set(urls)) == CRAWL_PAGES, "every page exactly once"

        members = await pool_members(first)
        for name in ("pw1", "pw2", "cdp"):
            member = members[name]
            assert member["up"] and member["kind"] in ("playwright", "cdp")
            assert member["pagesServed"] > 10, f"{name} served a share: {members}"
            assert member["peakContexts"] <= CAPACITY, f"{name} held more than its capacity: {member}"
            assert member["contextsUsed"] == 1, "the session's window is all it holds once the crawl is done"


async def test_a_profile_login_made_on_one_member_is_visible_on_another(pool_home: BrowserdHome, site: str) -> None:
    """The login travels as storage state: published from the daemon (nothing written on a browser host)
    after a window on pw1 logs in, then applied to a window on pw2."""
    async with mcp_client(pool_home, args=TOOLS) as client:
        for endpoint, path in (("pw1", "/set-cookie?session=alice"), ("pw2", "/members")):
            window = ok(
                await client.call_tool(
                    "browser_windows",
                    {"action": "new", "endpoint": endpoint, "options": {"profileId": "acct"}},
                )
            ).structured_content["windows"]
            active = next(row for row in window if row["active"])
            assert active["endpoint"] == endpoint
            opened = ok(await client.call_tool("browser_open", {"url": f"{site}{path}"}))
            # Closing publishes the window's cookies to the profile now.
            ok(await client.call_tool("browser_windows", {"action": "close", "windowId": active["windowId"]}))
        assert "Welcome back, alice." in text_of(opened), text_of(opened)
        # A window still open when the daemon stops publishes too: the pool's connections close after it.
        ok(
            await client.call_tool(
                "browser_windows", {"action": "new", "endpoint": "cdp", "options": {"profileId": "bob"}}
            )
        )
        ok(await client.call_tool("browser_open", {"url": f"{site}/set-cookie?session=bob", "snapshot": "none"}))
        pool_home.stop_daemon()
    assert cookies_of(pool_home, "acct") == {"session": "alice"}
    assert cookies_of(pool_home, "bob") == {"session": "bob"}


async def test_scrape_resource_blocking_holds_on_a_remote_member(
    pool_home: BrowserdHome,
    logged_site: tuple[str, list[str]],  # noqa: F811 - the fixture imported above
) -> None:
    """The resource policy is installed over the connection: an ad slot framed from another site loads none of
    its documents, images or beacons on a remote member either (they load once blocking is off)."""
    base, paths = logged_site
    async with mcp_client(pool_home, args=TOOLS) as client:
        served = sum(member["pagesServed"] for member in (await pool_members(client)).values())
        blocked = await blocked_then_loaded(client, paths, f"{base}/ad-article.html", AD_SLOT_LOADS)
        assert blocked.structured_content["via"] == "browser"
        assert sum(member["pagesServed"] for member in (await pool_members(client)).values()) == served + 2


async def test_a_remote_trust_session_on_a_remote_member_cannot_reach_loopback(
    pool_home: BrowserdHome, site: str
) -> None:
    """No guard proxy a browser host could reach: route interception checks each request and each redirect
    hop of a remote session's window on a remote member."""
    other_loopback = f"http://127.0.0.2:{urlsplit(site).port}/help.html"
    pool_home.stop_daemon()  # the module's daemon reads the exemption at its start
    pool_home.env["BROWSERD_SECURITY_REMOTE_EXEMPT_ORIGINS"] = site
    try:
        async with mcp_client(pool_home, args=("--trust", "remote", *TOOLS)) as client:
            new = {"action": "new", "endpoint": "pw2"}
            ok(await client.call_tool("browser_windows", new))
            opened = ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
            assert "Opened" in text_of(opened)
            assert await window_endpoints(client) == ["pw2"]
            hop = f"{site}/redirect?to={quote(other_loopback)}"
            error = failed(await client.call_tool("browser_open", {"url": hop}), "URL_NOT_ALLOWED")
            assert error["details"]["rule"] == "loopback" and error["details"]["url"] == other_loopback
            # An allowed chain still arrives.
            # A scrape of a remote session on a remote member is held to the same policy.
            scraped = failed(await client.call_tool("scrape", {"url": hop, "render": "always"}), "URL_NOT_ALLOWED")
            assert scraped["details"]["rule"] == "loopback", scraped
            page = ok(await client.call_tool("scrape", {"url": f"{site}/help.html", "render": "always"}))
            assert "Help page" in text_of(page) and page.structured_content["via"] == "browser"
            chain = f"{site}/redirect?to={quote('/help.html')}"
            ok(await client.call_tool("browser_open", {"url": chain, "snapshot": "none"}))
            assert "Help" in text_of(ok(await client.call_tool("browser_snapshot", {})))
    finally:
        pool_home.env.pop("BROWSERD_SECURITY_REMOTE_EXEMPT_ORIGINS")
        pool_home.stop_daemon()


async def _crawled(client: Any, run_id: str) -> int:
    run = ok(await client.call_tool("get_task_run", {"runId": run_id})).structured_content
    return int(run.get("progress", {}).get("done", 0) or 0)


async def test_kill_9_of_a_member_mid_crawl_and_under_a_session(site: str, tmp_path: Any) -> None:
    """The crawl loads the pages it had in flight there again elsewhere (every page once); the session's next
    call names what happened, the one after works on a member that answers; the dead member shows down, and
    takes work again once a server answers at its address."""
    victim = run_server("victim")
    with tempfile.TemporaryDirectory() as profile_dir:
        survivor = cdp_chromium("survivor", profile_dir)
        try:
            with own_home() as home:
                configure(home, [victim, survivor], capacity=3)
                home.env["BROWSERD_BROWSER_POOL_RETRY_MAX_S"] = "2"  # re-admission is tried every 2 s at most
                async with mcp_client(home, args=TOOLS) as client:
                    new = {"action": "new", "endpoint": "victim"}
                    ok(await client.call_tool("browser_windows", new))
                    ok(await client.call_tool("browser_open", {"url": f"{site}/index.html"}))
                    pages = 120
                    crawl = {
                        "url": f"{site}/gen/{pages}/0.html",
                        "limit": pages,
                        "render": "always",
                        "sitemap": "skip",
                        "concurrency": 4,
                    }
                    run_id = ok(await client.call_tool("crawl", crawl)).structured_content["runId"]
                    with anyio.fail_after(60):
                        while (await pool_members(client))["victim"]["pagesServed"] < 10:
                            await anyio.sleep(0.1)
                    victim.kill()

                    run = await follow(client, run_id)
                    assert run["status"] == "succeeded", run.get("error")
                    urls = [item["url"] for item in run["result"]["items"]]
                    assert len(urls) == pages and len(set(urls)) == pages, "every page exactly once"
                    assert all(item["success"] for item in run["result"]["items"])

                    lost = failed(await client.call_tool("browser_snapshot", {}), "PAGE_CRASHED")
                    assert "victim" in lost["error"], lost
                    again = ok(await client.call_tool("browser_open", {"url": f"{site}/help.html"}))
                    assert "Help" in text_of(again)
                    assert await window_endpoints(client) == ["survivor"]
                    members = await pool_members(client)
                    assert not members["victim"]["up"] and members["victim"]["downReason"]
                    assert members["survivor"]["up"]
                    shown = home.browserd("status", timeout=30).stdout
                    assert "victim  playwright" in shown and "down (" in shown and "survivor  cdp" in shown, shown

                    victim = run_server("victim", port=urlsplit(victim.url).port)
                    with anyio.fail_after(30):
                        while not (await pool_members(client))["victim"]["up"]:
                            await anyio.sleep(0.2)
                    back = {"action": "new", "endpoint": "victim"}
                    ok(await client.call_tool("browser_windows", back))
                    ok(await client.call_tool("browser_open", {"url": f"{site}/help.html", "snapshot": "none"}))
                    assert sorted(await window_endpoints(client)) == ["survivor", "victim"]
        finally:
            victim.kill()
            survivor.kill()


@pytest.mark.skipif(shutil.which("chromedriver") is None, reason="chromedriver missing: run scripts/setup.sh")
async def test_a_webdriver_member_serves_a_session_and_a_crawl(site: str) -> None:
    """chromedriver stands for a Selenium Grid: a WebDriver session (a Chromium) per window and per page,
    reached over its debuggerAddress, and deleted when the window or page is done."""
    driver = chromedriver("grid")
    try:
        with own_home() as home:
            configure(home, [driver])
            async with mcp_client(home, args=TOOLS) as client:
                opened = ok(await client.call_tool("browser_open", {"url": f"{site}/help.html"}))
                assert "Help" in text_of(opened)
                assert await window_endpoints(client) == ["grid"]
                run = ok(
                    await client.call_tool(
                        "crawl",
                        {"url": f"{site}/gen/12/0.html", "limit": 12, "render": "always", "mode": "sync"},
                    )
                ).structured_content
                assert run["status"] == "succeeded", run.get("error")
                assert len({item["url"] for item in run["result"]["items"]}) == 12
                member = (await pool_members(client))["grid"]
                assert member["kind"] == "webdriver" and member["peakContexts"] <= CAPACITY
                assert member["pagesServed"] >= 13 and member["contextsUsed"] == 1
    finally:
        driver.kill()


async def test_a_full_pool_queues_then_answers_busy_with_a_hint(servers: dict[str, Server], site: str) -> None:
    """Capacity is never exceeded: a window beyond it waits [browser] pool_wait_s for room, then BUSY."""
    with own_home() as home:
        configure(home, [servers["pw1"]], capacity=1)
        home.env["BROWSERD_BROWSER_POOL_WAIT_S"] = "1"
        async with mcp_client(home, args=TOOLS) as holder, mcp_client(home, args=TOOLS) as latecomer:
            ok(await holder.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
            error = failed(await latecomer.call_tool("browser_open", {"url": f"{site}/help.html"}), "BUSY")
            assert "pw1 1/1" in error["error"] and "add capacity" in error["recoverHint"], error
            assert (await pool_members(latecomer))["pw1"]["peakContexts"] == 1
