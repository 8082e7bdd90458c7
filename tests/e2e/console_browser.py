"""The console as a person sees it, for tests and the screenshot script: a daemon serving HTTP on a free loopback
port, and a real Chromium (Playwright) that opens the console from its one-time link and keeps every answer
the page received (bodies, and the events of its push channel) so a test can search them."""

from __future__ import annotations

import base64
import json
import os
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from playwright.async_api import Browser, BrowserContext, Page, Response, async_playwright

from browserd.daemon.runtime.chromium import find_chromium
from tests.conftest import BrowserdHome, own_home, wait_for
from tests.e2e.bridge_chrome import free_port

DAEMON_START_S = 90
# Kept by the page (before any script of the console runs): every message of its EventSource.
RECORD_EVENTS = """(() => {
  const Original = window.EventSource;
  window.__consoleEvents = [];
  window.EventSource = class extends Original {
    constructor(...args) {
      super(...args);
      const keep = (event) => window.__consoleEvents.push(`${event.type}:${event.data}`);
      this.addEventListener('message', keep);
      this.addEventListener('hello', keep);
      this.addEventListener('resync', keep);
    }
  };
})();"""


@contextmanager
def console_home(**env: str) -> Iterator[BrowserdHome]:
    """A home whose daemon serves HTTP (so the console) on a free loopback port and never exits idle; `env`
    adds settings of the test's own."""
    with own_home() as home:
        home.env.update(
            BROWSERD_HTTP_ENABLED="1",
            BROWSERD_HTTP_LISTEN=f"127.0.0.1:{free_port()}",
            BROWSERD_DAEMON_IDLE_EXIT_S="0",
            **env,
        )
        done = home.browserd("daemon", timeout=60)
        # On a busy machine the daemon may open its socket after the 10 s the command waits: it is still starting.
        started = wait_for(lambda: home.daemon_pid() is not None and home.socket.exists(), DAEMON_START_S)
        assert started, f"the daemon did not start: {done.stderr}"
        yield home


def console_link(home: BrowserdHome) -> str:
    done = home.browserd("console", "--no-open", timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def console_base(home: BrowserdHome) -> str:
    return f"http://{home.env['BROWSERD_HTTP_LISTEN']}/console/"


@dataclass
class ConsolePage:
    page: Page
    context: BrowserContext
    # The one-time link it was opened with (used up by now).
    link: str
    # (url, body) of every answer the page received, in order.
    answers: list[tuple[str, bytes]] = field(default_factory=list)
    # Uncaught errors of the page's scripts: a test ends by checking there were none.
    errors: list[str] = field(default_factory=list)

    async def events(self) -> list[str]:
        found: list[str] = await self.page.evaluate("window.__consoleEvents || []")
        return found

    async def goto(self, route: str) -> None:
        await self.page.evaluate("(route) => { location.hash = route; }", route)


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    found = find_chromium()
    assert found is not None, "no Chromium to drive the console with"
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=found.path, args=args)
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def opened_console(
    browser: Browser, home: BrowserdHome, viewport: dict[str, int] | None = None
) -> AsyncIterator[ConsolePage]:
    """A fresh browser context (no cookie yet) that opened the console from a new one-time link."""
    context = await browser.new_context(viewport=viewport or {"width": 1360, "height": 900}, accept_downloads=True)
    await context.add_init_script(RECORD_EVENTS)
    page = await context.new_page()
    console = ConsolePage(page, context, console_link(home))

    async def keep(response: Response) -> None:
        if "text/event-stream" in (response.headers.get("content-type") or ""):
            return  # never ends; its events are kept by RECORD_EVENTS
        try:
            console.answers.append((response.url, await response.body()))
        except Exception:  # a redirect or an aborted request has no body
            console.answers.append((response.url, b""))

    page.on("response", keep)
    page.on("pageerror", lambda error: console.errors.append(str(error)))
    try:
        await page.goto(console.link)
        await page.wait_for_selector("header nav a.active")
        yield console
        assert console.errors == [], f"the console's scripts failed: {console.errors}"
    finally:
        await context.close()


def found_anywhere(secret: str, texts: list[bytes]) -> list[str]:
    """Where `secret` appears in `texts`, in plain, base64, URL-escaped or JSON-escaped form."""
    forms = {secret, base64.b64encode(secret.encode()).decode(), urllib.parse.quote(secret), json.dumps(secret)[1:-1]}
    return [form for form in forms for text in texts if form.encode() in text]
