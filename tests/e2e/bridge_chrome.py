"""The user's own Chrome for bridge tests and benchmarks: Chromium with extension-bridge/ loaded, paired."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from playwright.async_api import Browser, Page, Playwright, async_playwright

from tests.conftest import BrowserdHome, short_temp_dir, terminate, wait_for
from tests.e2e.test_cdp_attach import CHROMIUM, FLAGS

EXTENSION = Path(__file__).resolve().parents[2] / "extension-bridge"
CONNECTED = '#status[data-status="connected"]'
# Extension windows are opened with browser_windows, which is in the devtools group.
DEVTOOLS = ("--tools", "pages,devtools")


@dataclass
class UserChrome:
    """The user's Chrome as the test sees it: its debugging port, and the extension loaded in it."""

    pid: int
    debug_port: int
    extension_id: str

    def targets(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.debug_port}/json/list", timeout=10) as reply:
            found: list[dict[str, Any]] = json.load(reply)
        return found

    def page_urls(self) -> list[str]:
        return [t["url"] for t in self.targets() if t["type"] == "page"]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.debug_port}"

    @property
    def side_panel(self) -> str:
        return f"chrome-extension://{self.extension_id}/sidepanel.html"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _extension_id(debug_port: int) -> str | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{debug_port}/json/list", timeout=10) as reply:
        targets = json.load(reply)
    workers = [t["url"] for t in targets if t["type"] == "service_worker" and t["url"].startswith("chrome-extension")]
    return workers[0].split("/")[2] if workers else None


def _debug_port(profile: Path) -> int | None:
    try:
        first = (profile / "DevToolsActivePort").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return int(first) if first.isdigit() else None


@contextmanager
def user_chrome() -> Iterator[UserChrome]:
    """A headless Chromium (new headless mode loads extensions) with the unpacked extension, like a user's."""
    profile = short_temp_dir("bd-ext-")
    args = [
        CHROMIUM,
        "--headless=new",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        f"--load-extension={EXTENSION}",
        f"--disable-extensions-except={EXTENSION}",
        # Branded Chrome builds ignore --load-extension unless this feature is off; Chromium honours it.
        "--disable-features=DisableLoadExtensionCommandLineSwitch",
        *FLAGS,
    ]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    process = subprocess.Popen(
        [*args, "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        assert wait_for(lambda: _debug_port(profile) is not None, 30), "Chromium wrote no DevToolsActivePort"
        debug_port = _debug_port(profile)
        assert debug_port is not None
        assert wait_for(lambda: _extension_id(debug_port) is not None, 30), "the extension did not load"
        yield UserChrome(process.pid, debug_port, str(_extension_id(debug_port)))
    finally:
        terminate(process)
        shutil.rmtree(profile, ignore_errors=True)


def pair(home: BrowserdHome, chrome: UserChrome) -> None:
    """What a person does once: open the side panel, enter the code `browserd bridge pair` printed."""

    def new_code() -> str:
        paired = home.browserd("bridge", "pair")
        assert paired.returncode == 0, paired.stderr
        return paired.stdout.split("Pairing code: ")[1].split()[0]

    anyio.run(enter_pairing_code, chrome, int(home.env["BROWSERD_BRIDGE_PORT"]), new_code)


async def enter_pairing_code(chrome: UserChrome, port: int, new_code: Callable[[], str]) -> None:
    """The side panel's pairing form: the daemon's port, then a fresh code from `new_code`."""
    async with async_playwright() as playwright:
        browser, panel = await open_side_panel(playwright, chrome)
        await panel.fill("#port", str(port))
        await panel.click("#port-form button")
        await panel.fill("#code", new_code())
        await panel.click("#pair")
        await panel.locator(CONNECTED).wait_for(timeout=15_000)
        await panel.close()
        await browser.close()


async def stop_service_worker(browser: Browser) -> None:
    """What Chrome does to an idle MV3 service worker: stop it (its WebSocket closes with it)."""
    cdp = await browser.new_browser_cdp_session()
    targets = (await cdp.send("Target.getTargets"))["targetInfos"]
    [worker] = [t for t in targets if t["type"] == "service_worker" and t["url"].startswith("chrome-extension://")]
    await cdp.send("Target.closeTarget", {"targetId": worker["targetId"]})
    await cdp.detach()


async def open_side_panel(playwright: Playwright, chrome: UserChrome) -> tuple[Browser, Page]:
    """The side panel page, opened in a tab of the user's Chrome (what the panel shows is the same)."""
    browser = await playwright.chromium.connect_over_cdp(chrome.endpoint)
    panel = await browser.contexts[0].new_page()
    await panel.goto(chrome.side_panel)
    return browser, panel


async def chrome_tabs(panel: Any) -> list[dict[str, Any]]:
    """Every tab of the user's Chrome as the extension sees it (id, url, tab group)."""
    tabs: list[dict[str, Any]] = await panel.evaluate(
        "async () => (await chrome.tabs.query({})).map(t => ({id: t.id, url: t.url, groupId: t.groupId}))"
    )
    return tabs
