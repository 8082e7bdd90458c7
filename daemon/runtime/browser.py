"""The Playwright instance and the shared Chromium process: launched once, relaunched after a crash."""

from __future__ import annotations

import logging
import os
from typing import Any

import anyio
from playwright.async_api import Browser, Playwright, async_playwright

from browserd.daemon.config import BrowserConfig
from browserd.daemon.errors import ExecutionError
from browserd.daemon.runtime.chromium import ChromiumFound, chromium_version, find_chromium
from browserd.daemon.runtime.procinfo import find_descendant

log = logging.getLogger(__name__)

# Playwright's wording when the browser, context or page went away under a call.
_CRASH_MARKERS = (
    "Target page, context or browser has been closed",
    "Browser has been closed",
    "Target crashed",
    "browser has disconnected",
    "Page crashed",
)


def is_crash(exc: BaseException) -> bool:
    text = str(exc)
    return any(marker.lower() in text.lower() for marker in _CRASH_MARKERS)


class BrowserRuntime:
    """Owns Playwright and one Chromium; `browser()` always answers a connected browser."""

    def __init__(self, config: BrowserConfig) -> None:
        self._config = config
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = anyio.Lock()
        self._found: ChromiumFound | None = None
        self._version = ""
        self.launches = 0

    @property
    def executable(self) -> ChromiumFound | None:
        if self._found is None:
            self._found = find_chromium(self._config.executable)
        return self._found

    @property
    def executable_version(self) -> str:
        if not self._version and self.executable:
            self._version = chromium_version(self.executable.path)
        return self._version

    @property
    def browser_pid(self) -> int | None:
        """Chromium's main process; Playwright does not expose it, /proc does."""
        if not self.is_running():
            return None
        # Playwright talks to the browser over --remote-debugging-pipe; helper processes carry --type=.
        return find_descendant(os.getpid(), "--remote-debugging-pipe", without="--type=")

    def is_running(self) -> bool:
        return self._browser is not None and self._browser.is_connected()

    def open_pages(self) -> int:
        """Pages open in the daemon's own Chromium, in every context: sessions' tabs and scrapes' pages alike."""
        if self._browser is None or not self._browser.is_connected():
            return 0
        return sum(len(context.pages) for context in self._browser.contexts)

    async def browser(self) -> Browser:
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if self._browser is not None:
                log.warning("chromium went away; launching a new one")
            self._browser = await self._launch()
            return self._browser

    async def connect_over_cdp(self, endpoint: str, timeout_ms: int) -> Browser:
        """Attach to a Chromium someone else started (D-14 backend `cdp`); closing the result only disconnects."""
        async with self._lock:
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            playwright = self._playwright
        return await playwright.chromium.connect_over_cdp(endpoint, timeout=timeout_ms)

    async def _launch(self) -> Browser:
        found = self.executable
        if found is None:
            raise ExecutionError(
                "no Chromium executable found",
                hint="Install Chromium (Debian: apt-get install chromium) or set BROWSERD_CHROMIUM; "
                "`browserd doctor` checks the set-up.",
            )
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        args = list(self._config.args)
        if os.geteuid() == 0 and "--no-sandbox" not in args:
            args.append("--no-sandbox")  # Chromium refuses to start its sandbox as root.
        options: dict[str, Any] = {
            "executable_path": found.path,
            "headless": self._config.headless,
            "args": args,
            "timeout": self._config.launch_timeout_ms,
        }
        browser = await self._playwright.chromium.launch(**options)
        self.launches += 1
        log.info("chromium launched: %s (launch %d)", found.path, self.launches)
        return browser

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            if self._browser is not None:
                try:
                    await self._browser.close()
                except Exception:  # a crashed browser cannot be closed twice; nothing left to free
                    log.debug("browser close failed", exc_info=True)
                self._browser = None
            if self._playwright is not None:
                await self._playwright.stop()
                self._playwright = None
