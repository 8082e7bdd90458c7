"""browser_connect_cdp: attach a session to a Chromium someone else started (issue 4 item 7; S2-30, S2-31, D-14).

The test starts its own headless Chromium with --remote-debugging-port=0 (the port is read from the
DevToolsActivePort file of its profile folder), drives its tab through the session, and checks that
disconnecting (closing the window or the whole session) leaves that browser and its tab running.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client, pid_alive, short_temp_dir, terminate, wait_for
from tests.e2e.results import failed, ok, text_of

pytestmark = pytest.mark.anyio
# Besides the agent loop, this module drives the devtools group (off by default since issue 10).
DEVTOOLS = ("--tools", "pages,devtools")
CHROMIUM = shutil.which(os.environ.get("BROWSERD_CHROMIUM", "")) or "/usr/bin/chromium"
# The daemon's own launch flags (daemon/config.py [browser] args), for a machine without network.
FLAGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


@dataclass
class ExternalChromium:
    pid: int
    port: int

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_endpoint(self) -> str:
        with urllib.request.urlopen(f"{self.endpoint}/json/version", timeout=10) as reply:
            url: str = json.load(reply)["webSocketDebuggerUrl"]
        return url

    def page_urls(self) -> list[str]:
        with urllib.request.urlopen(f"{self.endpoint}/json/list", timeout=10) as reply:
            targets: list[dict[str, Any]] = json.load(reply)
        return [t["url"] for t in targets if t["type"] == "page"]


@pytest.fixture
def chromium(site: str) -> Iterator[ExternalChromium]:
    profile = short_temp_dir("bd-cdp-")
    args = [CHROMIUM, "--headless", "--remote-debugging-port=0", f"--user-data-dir={profile}", *FLAGS]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    process = subprocess.Popen(
        [*args, f"{site}/states.html"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    port_file = profile / "DevToolsActivePort"
    try:
        assert wait_for(lambda: _port(port_file) is not None, 30), "Chromium wrote no DevToolsActivePort"
        port = _port(port_file)
        assert port is not None
        browser = ExternalChromium(process.pid, port)
        assert wait_for(lambda: f"{site}/states.html" in browser.page_urls(), 30), "the tab did not open"
        yield browser
    finally:
        terminate(process)
        shutil.rmtree(profile, ignore_errors=True)


def _port(port_file: Path) -> int | None:
    try:
        first = port_file.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return int(first) if first.isdigit() else None


def ref(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'{role} "{re.escape(name)}"[^\n]*?\[ref=(\w+)\]', snapshot)
    assert found, f'no ref for {role} "{name}" in:\n{snapshot}'
    return found.group(1)


async def test_attached_tabs_are_driven_and_detaching_leaves_the_browser_running(
    home: BrowserdHome, site: str, chromium: ExternalChromium
) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        attached = ok(await client.call_tool("browser_connect_cdp", {"endpoint": chromium.endpoint}))
        data = attached.structured_content
        assert data["kind"] == "cdp" and data["windowId"] == "win_1"
        assert [t["url"] for t in data["tabs"]] == [f"{site}/states.html"]
        assert "Element states" in text_of(attached)

        snapshot = text_of(ok(await client.call_tool("browser_snapshot", {})))
        assert 'heading "Element states"' in snapshot
        clicked = ok(await client.call_tool("browser_click", {"target": ref(snapshot, "button", "Bold")}))
        assert "bold on" in text_of(clicked)

        # New tabs of the session open in the attached browser.
        ok(await client.call_tool("browser_tabs", {"action": "new", "url": f"{site}/help.html"}))
        assert f"{site}/help.html" in chromium.page_urls()
        windows = ok(await client.call_tool("browser_windows", {})).structured_content["windows"]
        assert [(w["windowId"], w["kind"]) for w in windows] == [("win_1", "cdp")]

        closed = ok(await client.call_tool("browser_windows", {"action": "close", "windowId": "win_1"}))
        assert "Disconnected win_1" in text_of(closed)
        assert pid_alive(chromium.pid), "disconnecting closed the attached browser"
        # The user's tab stays; the tab the session opened itself goes with it.
        assert chromium.page_urls() == [f"{site}/states.html"]

        # Attached again, by its ws:// endpoint this time; then the session ends with the client: only a
        # disconnect again.
        again = ok(await client.call_tool("browser_connect_cdp", {"endpoint": chromium.ws_endpoint()}))
        assert again.structured_content["windowId"] == "win_2"
        ok(await client.call_tool("browser_open", {"url": f"{site}/help.html", "snapshot": "none"}))
    assert wait_for(lambda: not home.browserd("status").stdout.count("sess_"), 15)
    assert pid_alive(chromium.pid), "ending the session closed the attached browser"
    assert chromium.page_urls() == [f"{site}/help.html"], "the user's tab was closed"


async def test_an_unreachable_endpoint_says_how_to_start_chrome(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        error = failed(
            await client.call_tool("browser_connect_cdp", {"endpoint": "http://127.0.0.1:9", "timeout": 5000}),
            "CDP_CONNECT_FAILED",
        )
        assert "--remote-debugging-port" in error["recoverHint"]
        assert error["details"]["endpoint"] == "http://127.0.0.1:9"
        # The daemon keeps serving.
        ok(await client.call_tool("browser_open", {"url": f"{site}/help.html", "snapshot": "none"}))


async def test_only_endpoints_on_this_machine_are_attached(home: BrowserdHome) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        error = failed(
            await client.call_tool("browser_connect_cdp", {"endpoint": "http://10.0.0.1:9222"}), "URL_NOT_ALLOWED"
        )
        assert error["details"]["rule"] == "cdp-not-loopback"
        bad = failed(
            await client.call_tool("browser_connect_cdp", {"endpoint": "ftp://127.0.0.1:9222"}), "INVALID_PARAMETER"
        )
        assert bad["details"]["field"] == "endpoint"
