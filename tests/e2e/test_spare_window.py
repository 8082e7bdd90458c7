"""Issue 10: a warm spare window, so a new client's first call on a running daemon does not create one.

The spare goes to exactly one session (nothing of one client's pages reaches the next), a new one is
prepared behind it, none is kept while the daemon counts down to its idle exit, and none outlives the
daemon.
"""

from __future__ import annotations

import re

import anyio
import pytest

from tests.conftest import BrowserdHome, mcp_client, pid_alive, wait_for
from tests.e2e.results import failed, ok, text_of

pytestmark = pytest.mark.anyio

SPARE_WAIT_S = 30


def browser_status(home: BrowserdHome) -> dict[str, object]:
    browser: dict[str, object] = home.status_json()["browser"]
    return browser


async def spare_becomes(home: BrowserdHome, ready: bool) -> bool:
    return await anyio.to_thread.run_sync(
        lambda: wait_for(lambda: browser_status(home)["spareWindow"] is ready, SPARE_WAIT_S, interval=0.2)
    )


async def test_each_new_client_gets_a_warm_window_of_its_own(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as first:
        opened = text_of(ok(await first.call_tool("browser_open", {"url": f"{site}/storage.html"})))
        remember = re.search(r'button "Remember" \[ref=([^\]]+)\]', opened)
        assert remember, opened
        stored = text_of(ok(await first.call_tool("browser_click", {"target": remember.group(1)})))
        assert "theme=dark" in stored
        assert await spare_becomes(home, True), "a spare window is prepared while a session lives"
        async with mcp_client(home) as second:
            theirs = text_of(ok(await second.call_tool("browser_open", {"url": f"{site}/storage.html"})))
            assert "theme=null" in theirs, f"the spare window shares nothing with the first client's\n{theirs}"
            tabs = ok(await second.call_tool("browser_tabs", {"action": "list"})).structured_content
            assert len(tabs["tabs"]) == 1, f"the spare's page is the new client's one tab: {tabs}"
            assert await spare_becomes(home, True), "the next spare is prepared behind the one handed out"


async def test_a_call_that_reads_a_tab_finds_none_before_any_page_whether_a_spare_is_ready_or_not(
    home: BrowserdHome, site: str
) -> None:
    """The spare's blank page is a new client's tab only once it opens one: a first call that reads a tab
    (the console) answers "no tab yet" with a spare ready as without one, and the spare still serves the open,
    a first open in a new tab too."""
    async with mcp_client(home) as first:
        ok(await first.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
        assert await spare_becomes(home, True)
        async with mcp_client(home, args=("--tools", "pages,devtools")) as second:
            failed(await second.call_tool("browser_console", {}), "SESSION_NOT_FOUND")
            ok(await second.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
            tabs = ok(await second.call_tool("browser_tabs", {"action": "list"})).structured_content
            assert len(tabs["tabs"]) == 1, tabs
        assert await spare_becomes(home, True)
        async with mcp_client(home) as third:
            # A first page asked for in a new tab is the session's one tab, the spare's, not a second beside it.
            opened = {"url": f"{site}/help.html", "newTab": True, "snapshot": "none"}
            ok(await third.call_tool("browser_open", opened))
            tabs = ok(await third.call_tool("browser_tabs", {"action": "list"})).structured_content
            assert [tab["url"] for tab in tabs["tabs"]] == [f"{site}/help.html"], tabs


async def test_no_spare_while_idle_and_none_after_the_daemon_stops(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
        assert await spare_becomes(home, True)
    assert await spare_becomes(home, False), "no session left: the daemon keeps no warm window for nobody"
    browser_pid = browser_status(home)["pid"]
    assert isinstance(browser_pid, int)
    await anyio.to_thread.run_sync(home.stop_daemon)
    assert await anyio.to_thread.run_sync(lambda: wait_for(lambda: not pid_alive(browser_pid), 15))
