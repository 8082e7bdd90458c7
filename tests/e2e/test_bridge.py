"""The extension bridge end to end (issue 13; DESIGN.md §3 "bridge/", S3-18..S3-26, D-45).

A real Chromium loads the unpacked extension-bridge/ (new headless mode loads extensions); the test
pairs it for real, through the side panel page and `browserd bridge pair`; then the official MCP SDK
client drives a tab group of that Chrome through `browser_windows {action: "new", kind: "extension"}`
with the same tools it uses on the daemon's own browser.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from playwright.async_api import async_playwright

from browserd.daemon.bridge.bridge_server import BridgeServer
from browserd.daemon.bridge.pairing import Pairing
from browserd.daemon.config import BridgeConfig
from browserd.daemon.errors import ExecutionError
from tests.conftest import BROWSERD, BrowserdHome, Gates, mcp_client, wait_for
from tests.e2e import bridge_chrome
from tests.e2e.bridge_chrome import DEVTOOLS, chrome_tabs
from tests.e2e.results import failed, ok, text_of

pytestmark = pytest.mark.anyio


async def _extension_page(client: Any, url: str) -> None:
    """A new extension window (a tab group in the user's Chrome) with `url` open in it."""
    ok(await client.call_tool("browser_windows", {"action": "new", "kind": "extension"}))
    ok(await client.call_tool("browser_open", {"url": url, "snapshot": "none"}))


async def _windows(client: Any) -> list[dict[str, Any]]:
    return ok(await client.call_tool("browser_windows", {})).structured_content["windows"]  # type: ignore[no-any-return]


async def test_the_side_panel_pairs_once_and_the_key_is_kept_on_both_sides(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome
) -> None:
    status = json.loads(bridge_home.browserd("bridge", "status", "--json").stdout)
    assert status["connected"] == [chrome.extension_id] and chrome.extension_id in status["paired"]
    keys = bridge_home.root / "data" / "browserd" / "bridge" / "keys.json"
    assert oct(keys.stat().st_mode & 0o777) == "0o600"


async def test_an_extension_window_opens_in_the_users_chrome_lacks_storage_export_and_closes_its_tabs(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    """What is the extension backend's own; snapshot, click, fill, screenshot and tabs are the shared tests
    run on both backends (the `driver` fixture in test_actions.py, test_pages.py, test_tabs_windows.py)."""
    async with mcp_client(bridge_home, args=DEVTOOLS) as client:
        opened = ok(await client.call_tool("browser_windows", {"action": "new", "kind": "extension"}))
        windows = opened.structured_content["windows"]
        assert [(w["kind"], w["capabilities"]) for w in windows] == [("extension", [])]
        ok(await client.call_tool("browser_open", {"url": f"{site}/states.html?users-chrome"}))
        assert f"{site}/states.html?users-chrome" in chrome.page_urls(), "the page did not open in the user's Chrome"

        # Storage export to a login profile would copy the user's own cookies: the backend lacks it.
        error = failed(
            await client.call_tool("browser_storage", {"action": "export", "profileId": "p1"}), "NOT_SUPPORTED"
        )
        assert "through the extension" in error["error"]

        window_id = windows[0]["windowId"]
        closed = ok(await client.call_tool("browser_windows", {"action": "close", "windowId": window_id}))
        assert "debugger has left" in text_of(closed)
    # The session's own tabs closed with it; the user's Chrome runs on.
    assert wait_for(lambda: not any("users-chrome" in url for url in chrome.page_urls()), 15), chrome.page_urls()


async def _panel_matches_status(
    home: BrowserdHome, panel: Any, until: Callable[[dict[str, Any]], bool] = lambda status: True
) -> dict[str, Any]:
    """Waits until the side panel shows each session and active run as `browserd status --json` does, with the
    status as `until` wants it; answers that status. Polled: the panel follows the daemon within a second."""

    def shown(status: dict[str, Any]) -> list[str]:
        sessions = [
            f"{s['sessionId']} · {s['client']} · {s['trustLevel']} · {len(s['tabs'])} tab(s)"
            for s in status["sessions"]
        ]
        runs = [
            f"{r['runId']} · {r['templateId']} · {r['status']} · {r['doneSteps']}/{r['totalSteps']} steps"
            for r in status["runs"]["runs"]
        ]
        return sorted(sessions + runs)

    async def panel_lines() -> list[str]:
        lines: list[str] = await panel.evaluate(
            """() => [...document.querySelectorAll('.daemon-session, .run')]
                 .map((e) => e.firstChild.textContent)"""
        )
        return sorted(lines)

    with anyio.fail_after(20):
        while True:
            status = await anyio.to_thread.run_sync(home.status_json)
            if until(status) and await panel_lines() == shown(status):
                return status
            await anyio.sleep(0.1)  # polling, with the deadline above


async def test_the_side_panel_shows_sessions_and_runs_as_browserd_status_does_and_its_stop_button_ends_it(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str, gates: Gates
) -> None:
    gate = f"panel-{random.getrandbits(64):x}"
    async with (
        mcp_client(bridge_home, args=DEVTOOLS) as client,
        mcp_client(bridge_home, args=("--trust", "remote")) as _remote,  # shown with its trust level, idle
        async_playwright() as playwright,
    ):
        await _extension_page(client, f"{site}/form.html?panel")
        browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
        status = await anyio.to_thread.run_sync(bridge_home.status_json)
        known = {s["sessionId"] for s in status["sessions"]}
        assert {s["trustLevel"] for s in status["sessions"]} >= {"local", "remote"}
        async with mcp_client(bridge_home, args=("--tools", "runs,pages")) as runner:
            ok(await runner.call_tool("browser_open", {"url": f"{site}/help.html", "snapshot": "none"}))
            status = await anyio.to_thread.run_sync(bridge_home.status_json)
            [runner_session] = [s["sessionId"] for s in status["sessions"] if s["sessionId"] not in known]
            # A run of the other session, held at its second page: it shows with its progress, and goes when done.
            urls = [f"{site}/help.html", f"{site}/gate?key={gate}&parties=2&wait_s=120"]
            try:
                started = ok(
                    await runner.call_tool(
                        "run_task_template",
                        {
                            "templateId": "batch_extract_pages",
                            "sessionId": runner_session,
                            "inputs": {"urls": urls, "concurrency": 1},
                            "options": {"mode": "async"},
                        },
                    )
                ).structured_content
                assert await anyio.to_thread.run_sync(gates.wait_arrived, gate, 1, 60), "the run never reached the gate"
                status = await _panel_matches_status(bridge_home, panel, lambda status: status["runs"]["runs"])
                [run] = status["runs"]["runs"]
                assert run["runId"] == started["runId"] and run["doneSteps"] == 1 and run["totalSteps"] == 2
                owner = panel.locator(f'.daemon-session[data-session-id="{runner_session}"]')
                remote = panel.locator('.daemon-session[data-trust-level="remote"]')
                assert await owner.get_attribute("data-trust-level") == "local" and await remote.count() == 1
                assert await owner.locator(f'.run[data-run-id="{run["runId"]}"]').count() == 1
            finally:
                gates.release(gate)
        # The run ended and its session with its client.
        status = await _panel_matches_status(bridge_home, panel, lambda status: not status["runs"]["runs"])

        # What the session types into a password field never shows in the panel (nor does any typed value).
        ok(await client.call_tool("browser_fill", {"target": "#password", "value": "pw-never-shown-7731"}))
        ok(await client.call_tool("browser_fill", {"target": "#fullname", "value": "name-never-shown-7731"}))
        ok(await client.call_tool("browser_click", {"target": "h1"}))
        await panel.reload()
        session = panel.locator(".session")
        await session.wait_for(timeout=10_000)
        assert "never-shown" not in await panel.inner_text("body")
        # The log lists the session's tool calls with their targets (not the CDP commands they took).
        with anyio.fail_after(10):
            while "browser_click h1" not in (log := await panel.inner_text("#log")):
                await anyio.sleep(0.1)
        assert "browser_fill #password" in log and "browser_fill #fullname" in log, log
        assert "Runtime." not in log and "Input." not in log, log

        [mine] = [s for s in status["sessions"] if s["trustLevel"] == "local"]  # the runner's has gone
        mine_id = mine["sessionId"]
        mine_shown = panel.locator(f'.daemon-session[data-session-id="{mine_id}"]')
        assert "last: browser_click h1" in await mine_shown.inner_text(), "the session's last call"
        assert (await session.get_attribute("data-session-id") or "").startswith(f"{mine['sessionId']}-")
        assert "1 tab(s)" in await session.inner_text()
        await session.locator("button.stop").click()
        await panel.locator(".session").wait_for(state="detached", timeout=10_000)

        async def extension_windows() -> list[Any]:
            return [w for w in await _windows(client) if w["kind"] == "extension"]

        with anyio.move_on_after(15):
            while await extension_windows():
                await anyio.sleep(0.1)  # polling, with the deadline above
        assert not await extension_windows(), "stopping in the side panel left the window open"
        await browser.close()


async def test_revoking_a_session_in_the_side_panel_ends_its_windows_and_refuses_new_ones_until_allowed(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    async with mcp_client(bridge_home, args=DEVTOOLS) as client, async_playwright() as playwright:
        await _extension_page(client, f"{site}/help.html?revoke")
        browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
        revoke = panel.locator(".daemon-session button.revoke")
        await revoke.wait_for(timeout=10_000)
        await revoke.click()
        await panel.locator(".daemon-session button.allow").wait_for(timeout=10_000)
        assert await panel.locator(".session").count() == 0, "the session's window in this Chrome stayed"
        with anyio.fail_after(15):
            while any(w["kind"] == "extension" for w in await _windows(client)):
                await anyio.sleep(0.1)

        refused = failed(
            await client.call_tool("browser_windows", {"action": "new", "kind": "extension"}), "EXECUTION_ERROR"
        )
        assert "revoked" in refused["error"] and "side panel" in refused["recoverHint"], refused
        # The daemon and the session go on: its own browser still serves it.
        ok(await client.call_tool("browser_windows", {"action": "new", "kind": "playwright"}))
        ok(await client.call_tool("browser_open", {"url": f"{site}/help.html", "snapshot": "none"}))

        await panel.locator(".daemon-session button.allow").click()
        await revoke.wait_for(timeout=10_000)
        await _extension_page(client, f"{site}/help.html?allowed-again")
        assert f"{site}/help.html?allowed-again" in chrome.page_urls()
        await browser.close()


async def test_a_remote_session_may_not_drive_the_users_chrome(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome
) -> None:
    async with mcp_client(bridge_home, args=("--trust", "remote", *DEVTOOLS)) as client:
        error = failed(
            await client.call_tool("browser_windows", {"action": "new", "kind": "extension"}),
            "TRUST_LEVEL_NOT_ALLOWED",
        )
        assert "allow_remote" in error["recoverHint"] and error["details"]["rule"] == "remote-extension"


async def test_without_the_extension_an_extension_window_says_how_to_connect(home: BrowserdHome) -> None:
    home.env.update(BROWSERD_BRIDGE_ENABLED="1", BROWSERD_BRIDGE_PORT=str(bridge_chrome.free_port()))
    async with mcp_client(home, args=DEVTOOLS) as client:
        error = failed(
            await client.call_tool("browser_windows", {"action": "new", "kind": "extension"}),
            "EXTENSION_NOT_CONNECTED",
        )
        assert "side panel" in error["recoverHint"]


async def test_a_tab_taken_out_of_the_sessions_group_leaves_the_session(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    async with mcp_client(bridge_home, args=DEVTOOLS) as client, async_playwright() as playwright:
        await _extension_page(client, f"{site}/help.html?taken-out")
        browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
        [tab] = [t for t in await chrome_tabs(panel) if t["url"] == f"{site}/help.html?taken-out"]
        assert tab["groupId"] != -1, "the session's tab is in no tab group"

        await panel.evaluate("tabId => chrome.tabs.ungroup(tabId)", tab["id"])  # what dragging it out does
        # Until the session's own listing has dropped the tab, a call may still reach it or fail as it goes;
        # either way nothing says "crashed".
        with anyio.fail_after(15):
            while True:
                listing = await client.call_tool("browser_tabs", {})
                if listing.is_error:
                    failed(listing, "SESSION_NOT_FOUND")
                elif not any("taken-out" in t["url"] for t in listing.structured_content["tabs"]):
                    break
                await anyio.sleep(0.05)
        failed(await client.call_tool("browser_snapshot", {}), "SESSION_NOT_FOUND")
        # The tab is the user's now: it stays open, and no command reaches it.
        assert f"{site}/help.html?taken-out" in chrome.page_urls()
        await browser.close()


async def _share(client: Any, browser: Any, panel: Any, url: str) -> tuple[Any, str]:
    """What the user does: open `url` in a tab of their own, look at it beside the side panel and press the
    session's share button. Answers that tab (its page) and its id in the session, once browser_tabs lists it."""
    users_tab = await browser.contexts[0].new_page()
    await users_tab.goto(url)
    [mine] = [t for t in await chrome_tabs(panel) if t["url"] == url]
    assert mine["groupId"] == -1
    panel_window = await panel.evaluate("async () => (await chrome.windows.getCurrent()).id")
    # The user looks at that tab (the side panel sits beside it, in its window).
    await panel.evaluate("([id, windowId]) => chrome.tabs.move(id, {windowId, index: -1})", [mine["id"], panel_window])
    await panel.evaluate("id => chrome.tabs.update(id, {active: true})", mine["id"])
    session = panel.locator(".session")
    await session.wait_for(timeout=10_000)
    await session.locator("button.share").dispatch_event("click")  # the panel's tab is in the background now

    async def listed() -> dict[str, str]:
        tabs = ok(await client.call_tool("browser_tabs", {})).structured_content["tabs"]
        return {t["url"]: t["tabId"] for t in tabs}

    with anyio.fail_after(30):
        while url not in await listed():
            await anyio.sleep(0.05)  # polling, with the deadline above
    return users_tab, (await listed())[url]


async def test_the_side_panels_share_button_gives_the_tab_in_front_to_the_session(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    async with mcp_client(bridge_home, args=DEVTOOLS) as client, async_playwright() as playwright:
        await _extension_page(client, f"{site}/help.html?session-own")
        browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
        _, tab_id = await _share(client, browser, panel, f"{site}/states.html?shared")
        [shared] = [t for t in await chrome_tabs(panel) if t["url"] == f"{site}/states.html?shared"]
        [own] = [t for t in await chrome_tabs(panel) if t["url"] == f"{site}/help.html?session-own"]
        assert shared["groupId"] == own["groupId"] != -1, "the shared tab did not join the session's group"
        # The session drives it like its own tabs.
        heading = ok(await client.call_tool("browser_get", {"what": "text", "target": "h1", "tabId": tab_id}))
        assert heading.structured_content["value"] == "Element states"
        await browser.close()


async def _drive_form(client: Any, tab_id: str, url: str, marker: str) -> None:
    """Snapshot, fill, click and screenshot on the session's tab `tab_id`, showing a fresh form.html at `url`,
    each answering at once."""
    with anyio.fail_after(20):  # far under the 30 s a stalled snapshot took: it waits for nothing that never comes
        snapshot = ok(await client.call_tool("browser_snapshot", {"tabId": tab_id}))
        assert 'heading "Form with every input kind"' in text_of(snapshot), text_of(snapshot)
        assert snapshot.structured_content["url"] == url
        unchecked = {"tabId": tab_id, "target": "input[name=subscribe]", "state": "checked"}
        assert ok(await client.call_tool("browser_is", unchecked)).structured_content["value"] is False
        ok(await client.call_tool("browser_fill", {"tabId": tab_id, "target": "#fullname", "value": marker}))
        value = ok(await client.call_tool("browser_get", {"what": "value", "target": "#fullname", "tabId": tab_id}))
        assert value.structured_content["value"] == marker
        clicked = ok(await client.call_tool("browser_click", {"tabId": tab_id, "target": "input[name=subscribe]"}))
        assert clicked.structured_content["tabId"] == tab_id
        checked = ok(
            await client.call_tool(
                "browser_is", {"tabId": tab_id, "target": "input[name=subscribe]", "state": "checked"}
            )
        )
        assert checked.structured_content["value"] is True
        shot = ok(await client.call_tool("browser_screenshot", {"tabId": tab_id}))
        assert any(block.type == "image" for block in shot.content)


async def test_a_tab_shared_after_it_loaded_is_driven_at_once_and_after_it_navigates(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    """A tab loaded before it was shared has none of the scripts the daemon puts in each new document: snapshot,
    fill, click and screenshot still answer at once, and so they do after the tab loads a page anew."""
    async with mcp_client(bridge_home, args=DEVTOOLS) as client, async_playwright() as playwright:
        await _extension_page(client, f"{site}/help.html?before-share")
        browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
        users_tab, tab_id = await _share(client, browser, panel, f"{site}/form.html?loaded-before-sharing")
        await _drive_form(client, tab_id, f"{site}/form.html?loaded-before-sharing", "shared-loaded")

        # The user navigates the shared tab themselves; then the session does.
        await users_tab.goto(f"{site}/form.html?navigated-by-user")
        with anyio.fail_after(20):  # the user's navigation reaches the session as events, a little later
            while f"{site}/form.html?navigated-by-user" not in [
                t["url"] for t in ok(await client.call_tool("browser_tabs", {})).structured_content["tabs"]
            ]:
                await anyio.sleep(0.05)  # polling, with the deadline above
        await _drive_form(client, tab_id, f"{site}/form.html?navigated-by-user", "after-user-navigation")
        ok(await client.call_tool("browser_open", {"url": f"{site}/form.html?navigated-by-session", "tabId": tab_id}))
        await _drive_form(client, tab_id, f"{site}/form.html?navigated-by-session", "after-session-navigation")
        await browser.close()


async def test_an_action_on_a_tab_shared_after_it_loaded_waits_for_what_it_started(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    """The daemon's settle tracker reaches a document that loaded before sharing: typing answers with the
    suggestions the page shows 150 ms after the last key, as on a tab the session opened."""
    async with mcp_client(bridge_home, args=DEVTOOLS) as client, async_playwright() as playwright:
        await _extension_page(client, f"{site}/help.html?before-autocomplete")
        browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
        _, tab_id = await _share(client, browser, panel, f"{site}/autocomplete.html?loaded-before-sharing")
        ok(await client.call_tool("browser_snapshot", {"tabId": tab_id}))
        typed = ok(await client.call_tool("browser_type", {"tabId": tab_id, "target": "#fruit", "text": "ap"}))
        assert 'option "Apricot"' in text_of(typed), text_of(typed)
        await browser.close()


async def test_a_tab_a_session_page_opens_joins_its_group_and_a_users_new_tab_does_not(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    async with mcp_client(bridge_home, args=DEVTOOLS) as client, async_playwright() as playwright:
        await _extension_page(client, f"{site}/newtab.html?opener")
        clicked = ok(await client.call_tool("browser_click", {"target": "#popup"}))
        opened = clicked.structured_content["newTabs"]
        assert len(opened) == 1, f"one tab opened, the answer names {opened}:\n{text_of(clicked)}"
        new_tab = opened[0]
        browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
        [opener] = [t for t in await chrome_tabs(panel) if t["url"] == f"{site}/newtab.html?opener"]
        # Another test's help.html tab may still be closing in this Chrome: the popup is the one in the opener's group.
        opened_tabs = [t for t in await chrome_tabs(panel) if t["url"] == f"{site}/help.html"]
        in_group = [t for t in opened_tabs if t["groupId"] == opener["groupId"] != -1]
        assert len(in_group) == 1, f"the tab the page opened is not in the session's group: {opened_tabs}"
        # The user makes the session's tab the active one and opens a tab of their own: Chrome names the active
        # tab as its opener, but it is no page of the session's doing, and stays the user's.
        await panel.evaluate("id => chrome.tabs.update(id, {active: true})", opener["id"])
        users = await browser.contexts[0].new_page()
        await users.goto(f"{site}/states.html?users-own")
        ok(await client.call_tool("browser_click", {"target": "h1"}))  # a round trip: the extension had its say
        listed = [t["url"] for t in ok(await client.call_tool("browser_tabs", {})).structured_content["tabs"]]
        assert f"{site}/states.html?users-own" not in listed, listed
        [users_tab] = [t for t in await chrome_tabs(panel) if t["url"] == f"{site}/states.html?users-own"]
        assert users_tab["groupId"] == -1
        heading = ok(await client.call_tool("browser_get", {"what": "text", "target": "h1", "tabId": new_tab}))
        assert heading.structured_content["value"] == "Help page"
        await users.close()
        await browser.close()


async def test_a_command_for_a_tab_outside_the_sessions_group_is_refused_with_nothing_executed(
    tmp_path: Path, site: str
) -> None:
    """The extension's own check, met head-on: this test plays the daemon (its real bridge server, in process)
    and asks for what the relay never would, a command on a tab that is not the session's."""
    with bridge_chrome.user_chrome() as chrome:
        server = BridgeServer(BridgeConfig(enabled=True, port=bridge_chrome.free_port()), Pairing(tmp_path))
        async with anyio.create_task_group() as group, async_playwright() as playwright:
            await group.start(server.serve)
            await bridge_chrome.enter_pairing_code(chrome, server.port, lambda: str(server.new_code()["code"]))
            link = await server.wait_for_link(10)
            assert link is not None
            await link.call("session.start", {"sessionId": "s1", "client": "test"})
            inside = await link.call("tab.create", {"sessionId": "s1", "url": f"{site}/help.html?inside"})
            await link.call("tab.attach", {"sessionId": "s1", "tabId": inside["tabId"]})
            # Another session's tab, with the debugger attached for that session.
            await link.call("session.start", {"sessionId": "s2", "client": "other"})
            others = await link.call("tab.create", {"sessionId": "s2", "url": f"{site}/help.html?others"})
            await link.call("tab.attach", {"sessionId": "s2", "tabId": others["tabId"]})
            browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
            users_tab = await browser.contexts[0].new_page()
            await users_tab.goto(f"{site}/help.html?outside")
            [outside] = [t["id"] for t in await chrome_tabs(panel) if t["url"] == f"{site}/help.html?outside"]

            async def refused(tab_id: int) -> None:
                with pytest.raises(ExecutionError) as refusal:
                    await link.call(
                        "cdp.send",
                        {
                            "sessionId": "s1",
                            "tabId": tab_id,
                            "child": None,
                            "method": "Runtime.evaluate",
                            "params": {"expression": "document.title = 'executed'"},
                        },
                    )
                assert refusal.value.details["extensionCode"] == "TAB_NOT_IN_SESSION", refusal.value.details

            await refused(outside)
            assert await users_tab.title() != "executed"
            await refused(others["tabId"])
            # A session tab the user dragged out of the group is no longer the session's either.
            await panel.evaluate("tabId => chrome.tabs.ungroup(tabId)", inside["tabId"])
            await refused(inside["tabId"])
            titles = [await p.title() for p in browser.contexts[0].pages if "help.html?" in p.url]
            assert len(titles) == 3 and "executed" not in titles, titles
            await browser.close()
            group.cancel_scope.cancel()


async def _held_call(client: Any, site: str, gates: Gates, key: str, then: Any) -> Any:
    """A navigation that the site holds at its /gate while `then()` runs: the call is in flight for sure."""
    answer: list[Any] = []

    async def navigate() -> None:
        answer.append(await client.call_tool("browser_open", {"url": f"{site}/gate?key={key}&parties=2"}))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(navigate)
            assert await anyio.to_thread.run_sync(gates.wait_arrived, key, 1, 30), "the navigation never started"
            await then()
    finally:
        gates.release(key)
    return answer[0]


async def test_a_call_in_flight_when_its_tab_is_dragged_out_says_the_tab_left(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str, gates: Gates
) -> None:
    async with mcp_client(bridge_home, args=DEVTOOLS) as client, async_playwright() as playwright:
        await _extension_page(client, f"{site}/help.html?dragged")
        browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
        [tab] = [t for t in await chrome_tabs(panel) if t["url"] == f"{site}/help.html?dragged"]

        async def drag_out() -> None:
            await panel.evaluate("tabId => chrome.tabs.ungroup(tabId)", tab["id"])

        error = failed(await _held_call(client, site, gates, "dragged-mid-call", drag_out), "SESSION_NOT_FOUND")
        assert "taken out of the session's tab group" in error["error"], error
        assert "browser_tabs" in error["recoverHint"]
        # The session goes on: a new tab of its own works.
        ok(await client.call_tool("browser_tabs", {"action": "new", "url": f"{site}/help.html?after-drag"}))
        await browser.close()


async def _wait_connected(home: BrowserdHome, timeout_s: float) -> bool:
    with anyio.move_on_after(timeout_s):
        while not await _bridge_connected(home):
            await anyio.sleep(0.05)  # polling, with the deadline above
    return await _bridge_connected(home)


async def test_a_call_in_flight_when_the_extension_drops_says_so_and_the_worker_comes_back_alone(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str, gates: Gates
) -> None:
    """No side panel is open: the service worker wakes and reconnects by itself, with the key it kept."""
    async with mcp_client(bridge_home, args=DEVTOOLS) as client, async_playwright() as playwright:
        await _extension_page(client, f"{site}/help.html?dropped")
        browser = await playwright.chromium.connect_over_cdp(chrome.endpoint)
        for page in browser.contexts[0].pages:
            if page.url == chrome.side_panel:
                await page.close()  # side panels earlier tests opened: the user closes them
        disconnects = bridge_home.log.read_text().count("disconnected")

        async def stop_worker() -> None:
            await bridge_chrome.stop_service_worker(browser)

        answer = await _held_call(client, site, gates, "dropped-mid-call", stop_worker)
        error = failed(answer, "EXTENSION_NOT_CONNECTED")
        assert "disconnected during the call" in error["error"], error
        assert bridge_home.log.read_text().count("disconnected") > disconnects
        assert await _wait_connected(bridge_home, 15), "the service worker did not come back without the side panel"
        await browser.close()
        await _extension_page(client, f"{site}/help.html?after-resume")


async def _bridge_connected(home: BrowserdHome) -> bool:
    result = await anyio.run_process([BROWSERD, "bridge", "status", "--json"], env=home.env, check=False)
    return bool(result.returncode == 0 and json.loads(result.stdout)["connected"])
