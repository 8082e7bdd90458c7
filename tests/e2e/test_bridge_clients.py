"""Four MCP clients drive the user's Chrome through the extension bridge at once, each only its own tab group
(issue 13; D-45). A module of its own, apart from test_bridge.py: its thousand calls are the longest test of
the suite, and `make test` (--dist loadfile) runs it on one worker while test_bridge.py runs on another.
"""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest
from playwright.async_api import async_playwright

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e import bridge_chrome
from tests.e2e.bridge_chrome import DEVTOOLS, chrome_tabs
from tests.e2e.results import ok, text_of

pytestmark = pytest.mark.anyio


CLIENTS = 4
CALLS = 1_000  # in all, randomized, spread over the clients
DEADLINE_S = 900  # the whole run's bound: a call that hangs fails the test instead of stalling the suite
PAGES = ("states.html", "form.html", "help.html")


async def _drive_own_group(client: Any, site: str, marker: str, seed: int) -> list[str]:
    """Random calls by one client; every page it sees must be one of its own (the marker in the URL), and what
    it types into a page is what it reads back (no other session typed there)."""
    rng = random.Random(seed)
    ok(await client.call_tool("browser_windows", {"action": "new", "kind": "extension"}))
    seen: list[str] = []
    page = ""
    tabs_open = 1
    for call in range(CALLS // CLIENTS):
        choice = rng.choice(("open", "snapshot", "tabs", "url", "act", "act", "new")) if call else "open"
        text = ""
        if choice == "new" and tabs_open < 3:
            page = rng.choice(PAGES)
            url = f"{site}/{page}?{marker}-{call}"
            ok(await client.call_tool("browser_tabs", {"action": "new", "url": url}))
            tabs_open += 1
            text = f"- Page: {url}"
        elif choice in ("open", "new"):
            page = rng.choice(PAGES)
            url = f"{site}/{page}?{marker}-{call}"
            text = text_of(ok(await client.call_tool("browser_open", {"url": url, "snapshot": "none"})))
            text += f"\n- Page: {url}"
        elif choice == "snapshot":
            text = text_of(ok(await client.call_tool("browser_snapshot", {})))
        elif choice == "tabs":
            tabs = ok(await client.call_tool("browser_tabs", {})).structured_content["tabs"]
            text = " ".join(f"- Page: {t['url']}" for t in tabs)
        elif choice == "act" and page == "form.html":
            typed = f"{marker}-{call}"
            ok(await client.call_tool("browser_fill", {"target": "#fullname", "value": typed, "snapshot": "none"}))
            value = ok(await client.call_tool("browser_get", {"what": "value", "target": "#fullname"}))
            assert value.structured_content["value"] == typed, f"{marker} read back another value"
        elif choice == "act":
            clicked = ok(await client.call_tool("browser_click", {"target": "h1", "snapshot": "none"}))
            text = f"- Page: {clicked.structured_content['url']}"
        else:
            text = "- Page: " + ok(await client.call_tool("browser_get", {"what": "url"})).structured_content["value"]
        seen += [line.split("- Page: ", 1)[1].split()[0] for line in text.split("\n") if "- Page: " in line]
    return seen


async def test_four_clients_each_drive_only_their_own_tab_group(
    bridge_home: BrowserdHome, chrome: bridge_chrome.UserChrome, site: str
) -> None:
    seen: dict[str, list[str]] = {}

    async def one_client(index: int) -> None:
        async with mcp_client(bridge_home, args=DEVTOOLS) as client:
            seen[f"client{index}"] = await _drive_own_group(client, site, f"client{index}", seed=index)
            # Before the session ends: its tab group, as Chrome has it.
            browser, panel = await bridge_chrome.open_side_panel(playwright, chrome)
            groups[f"client{index}"] = {
                t["groupId"] for t in await chrome_tabs(panel) if f"client{index}-" in (t["url"] or "")
            }
            await panel.close()
            await browser.close()

    groups: dict[str, set[int]] = {}
    # One Playwright driver for the four clients' looks at the side panel.
    with anyio.fail_after(DEADLINE_S):
        async with async_playwright() as playwright, anyio.create_task_group() as group:
            for index in range(CLIENTS):
                group.start_soon(one_client, index)
    assert len(seen) == CLIENTS
    for marker, urls in seen.items():
        foreign = [url for url in urls if f"?{marker}-" not in url]
        assert urls and not foreign, f"{marker} saw pages of other sessions: {foreign}"
    # Each client's tabs sit in one tab group of their own.
    assert all(len(ids) == 1 and -1 not in ids for ids in groups.values()), groups
    assert len({next(iter(ids)) for ids in groups.values()}) == CLIENTS, groups
