"""The Playwright instance and the shared Chromium process: launched once, relaunched after a crash."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
from playwright.async_api import Browser, BrowserContext, Playwright

from browserd.daemon.config import BrowserConfig
from browserd.daemon.errors import ExecutionError
from browserd.daemon.runtime.chromium import ChromiumFound, chromium_version, find_chromium, launch_args
from browserd.daemon.runtime.driver import start_driver
from browserd.daemon.runtime.procinfo import find_descendant

log = logging.getLogger(__name__)

# Starting Playwright's driver (a node process) takes about a second; one that has not answered in this
# time will not, and every caller waits on the runtime lock behind it.
DRIVER_START_TIMEOUT_S = 60.0
# The phone `mobile: true` emulates (windows and scrape alike), from Playwright's device descriptors.
MOBILE_DEVICE = "Pixel 8"

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


def proxy_option(url: str, bypass: str = "") -> dict[str, str]:
    """Playwright's proxy setting for a proxy URL, its credentials (which Playwright takes apart) split off."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    option = {"server": f"{parts.scheme or 'http'}://{netloc}"}
    if parts.username:
        option.update(username=unquote(parts.username), password=unquote(parts.password or ""))
    if bypass:
        option["bypass"] = bypass
    return option


class BrowserRuntime:
    """Owns Playwright and one Chromium; `browser()` always answers a connected browser."""

    def __init__(self, config: BrowserConfig) -> None:
        self._config = config
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = anyio.Lock()
        self._found: ChromiumFound | None = None
        self._version: str | None = None  # asked once; '' if the executable could not say
        # Called (synchronously) with the Browser that went away when Chromium dies under us (not on aclose).
        self._on_gone: list[Callable[[Browser], None]] = []
        self._closing = False
        self.launches = 0
        # The warm window kept for the next session (SessionManager.keep_spare): its page is nobody's tab yet.
        self.spare_context: BrowserContext | None = None

    @property
    def executable(self) -> ChromiumFound | None:
        if self._found is None:
            self._found = find_chromium(
                self._config.executable, headless=self._config.headless and self._config.headless_shell
            )
        return self._found

    @property
    def driver_preloaded(self) -> bool:
        """Whether this daemon's Playwright driver runs browserd's preload (runtime/driver.py)."""
        return self._config.driver_preload

    @property
    def shows_pdfs(self) -> bool:
        """Whether the browser shows PDFs in a viewer; a headless shell downloads them instead."""
        return self.executable is None or not self.executable.headless_shell

    async def executable_version(self) -> str:
        if self._version is None:
            found = self.executable
            self._version = await chromium_version(found.path) if found else ""
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
        return sum(len(context.pages) for context in self._browser.contexts if context is not self.spare_context)

    async def browser(self) -> Browser:
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if self._browser is not None:
                log.warning("chromium went away; launching a new one")
            self._browser = await self._launch()
            return self._browser

    def on_browser_gone(self, callback: Callable[[Browser], None]) -> None:
        """`callback(browser)` when the daemon's Chromium disconnects by itself (a crash, a kill -9): the owners
        of its windows drop what the dead browser leaves behind at once, not at their next call."""
        self._on_gone.append(callback)

    def _disconnected(self, browser: Browser) -> None:
        if self._closing:
            return
        log.warning("chromium disconnected (launch %d)", self.launches)
        for callback in self._on_gone:
            try:
                callback(browser)
            except Exception:  # one owner's cleanup failing must not keep the others from theirs
                log.exception("cleanup after the browser went away failed")

    async def mobile_options(self) -> dict[str, Any]:
        """Context options of MOBILE_DEVICE: viewport, screen, scale, touch, is_mobile and its user agent, which
        names the Chromium version here (a server picks its mobile pages by it, and a stale version looks odd).
        Launches nothing: a window on a pool member needs no local browser for it."""
        async with self._lock:
            playwright = await self._driver()
        named = self._browser.version if self.is_running() and self._browser else await self.executable_version()
        version = re.search(r"\d+(?:\.\d+)+", named)
        device = {k: v for k, v in playwright.devices[MOBILE_DEVICE].items() if k != "default_browser_type"}
        if version:
            device["user_agent"] = re.sub(r"Chrome/[\d.]+", f"Chrome/{version[0]}", device["user_agent"])
        return device

    async def connect_over_cdp(self, endpoint: str, timeout_ms: int, headers: dict[str, str] | None = None) -> Browser:
        """Attach to a Chromium someone else started (D-14 backend `cdp`); closing the result only disconnects."""
        async with self._lock:
            playwright = await self._driver()
        return await playwright.chromium.connect_over_cdp(endpoint, timeout=timeout_ms, headers=headers)

    async def connect(self, ws_endpoint: str, timeout_ms: int, headers: dict[str, str]) -> Browser:
        """A browser of a Playwright browser server (`playwright run-server`); it lives while we stay connected."""
        async with self._lock:
            playwright = await self._driver()
        return await playwright.chromium.connect(ws_endpoint, timeout=timeout_ms, headers=headers)

    async def _driver(self) -> Playwright:
        """Playwright, started on first use within DRIVER_START_TIMEOUT_S; the caller holds the runtime lock."""
        if self._playwright is None:
            try:
                with anyio.fail_after(DRIVER_START_TIMEOUT_S):
                    self._playwright = await start_driver(self._config.driver_preload)
            except TimeoutError as exc:
                raise ExecutionError(
                    f"Playwright's driver did not start within {DRIVER_START_TIMEOUT_S:g} s",
                    hint="Retry; if it persists, run `browserd doctor` and check the daemon log.",
                ) from exc
        return self._playwright

    async def _launch(self) -> Browser:
        found = self.executable
        if found is None:
            raise ExecutionError(
                "no Chromium executable found",
                hint="Install Chromium (Debian: apt-get install chromium) or set BROWSERD_CHROMIUM; "
                "`browserd doctor` checks the set-up.",
            )
        playwright = await self._driver()
        options: dict[str, Any] = {
            "executable_path": found.path,
            "headless": self._config.headless,
            "args": launch_args(self._config.args, found),
            "timeout": self._config.launch_timeout_ms,
        }
        if self._config.proxy:
            options["proxy"] = proxy_option(self._config.proxy, self._config.proxy_bypass)
        browser = await playwright.chromium.launch(**options)
        browser.on("disconnected", self._disconnected)
        self.launches += 1
        log.info("chromium launched: %s (launch %d)", found.path, self.launches)
        return browser

    async def aclose(self) -> None:
        self._closing = True
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
