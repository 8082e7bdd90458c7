"""The members of the browser pool: where a window or a scrape page can get a browser (docs/pool.md).

Each member lends browsers for leases: the daemon's own Chromium and connected servers (Playwright's
run-server, a CDP endpoint) share one connection between all their leases; a WebDriver endpoint starts
one Chromium session per lease and ends it when the lease does. A member knows how to reach its server,
how to check it answers (`probe`) and how to show itself without its secrets.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import ClassVar, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio
import httpx
from playwright.async_api import Browser

from browserd.daemon.config import EndpointConfig
from browserd.daemon.errors import ExecutionError
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.webdriver import WebDriverSession, delete_session, new_session

MemberKind = Literal["local", "playwright", "cdp", "webdriver"]
CONNECT_TIMEOUT_MS = 30_000
PROBE_TIMEOUT_S = 3.0
LOCAL = "local"


class Member(ABC):
    kind: ClassVar[MemberKind]
    # Whether all leases share one browser (its contexts can be pooled between scrape pages).
    shares_browser: ClassVar[bool] = True

    def __init__(self, name: str, capacity: int, labels: list[str]) -> None:
        self.name = name
        self.capacity = capacity
        self.labels = frozenset(labels)
        self.used = 0
        self.peak = 0  # the most contexts it held at once
        self.served = 0  # leases it served: windows and scrape pages
        self.up = True
        self.down_reason = ""
        self.failures = 0
        self.retry_at = 0.0  # anyio time of the next re-admission try, while down
        # Told (synchronously) when a browser of this member went away by itself; set by the pool.
        self.on_lost: Callable[[Member, Browser], None] = lambda member, browser: None

    @property
    def local(self) -> bool:
        return self.kind == "local"

    @property
    def url(self) -> str:
        """Where it is, for listings: never a token or a password."""
        return ""

    def matches(self, pin: str) -> bool:
        return pin == self.name or pin in self.labels

    @abstractmethod
    async def open(self) -> Browser:
        """A connected browser for one lease."""

    async def close(self, browser: Browser) -> None:
        """The lease of `browser` is over (its contexts are closed)."""
        return None

    async def probe(self) -> None:
        """Raise when the server does not answer."""
        return None

    async def aclose(self) -> None:
        """The daemon stops: let go of every connection."""
        return None


class LocalMember(Member):
    """The daemon's own Chromium, relaunched by the runtime after a crash: never down for long."""

    kind: ClassVar[MemberKind] = "local"

    def __init__(self, runtime: BrowserRuntime, capacity: int) -> None:
        super().__init__(LOCAL, capacity, [LOCAL])
        self.runtime = runtime

    @property
    def url(self) -> str:
        return "the daemon's own Chromium"

    async def open(self) -> Browser:
        return await self.runtime.browser()


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    query = urlencode([(k, "***") for k, _ in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


class RemoteMember(Member):
    def __init__(self, config: EndpointConfig, runtime: BrowserRuntime) -> None:
        super().__init__(config.name, config.capacity, config.labels)
        self.config = config
        self.runtime = runtime
        self._closing: set[Browser] = set()

    @property
    def url(self) -> str:
        return _redacted(self.config.url)

    def _token(self) -> str | None:
        if not self.config.token_env:
            return None
        token = os.environ.get(self.config.token_env)
        if not token:
            raise ExecutionError(
                f"pool member {self.name}: the environment variable {self.config.token_env} holding its token is unset",
                hint="Set it in the daemon's environment, or remove token_env from the endpoint.",
                endpoint=self.name,
            )
        return token

    def address(self) -> tuple[str, dict[str, str]]:
        """The URL and headers to connect with, the token added where the endpoint wants it."""
        url, headers = self.config.url, dict(self.config.headers)
        token = self._token()
        if token is not None and self.config.token_param:
            parts = urlsplit(url)
            query = [*parse_qsl(parts.query, keep_blank_values=True), (self.config.token_param, token)]
            url = urlunsplit(parts._replace(query=urlencode(query)))
        elif token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return url, headers

    def _watch(self, browser: Browser) -> Browser:
        def disconnected(gone: Browser) -> None:
            if gone in self._closing:
                self._closing.discard(gone)
            else:
                self.on_lost(self, gone)

        browser.on("disconnected", disconnected)
        return browser

    async def _close_browser(self, browser: Browser) -> None:
        self._closing.add(browser)
        try:
            await browser.close()
        except Exception:  # gone already
            self._closing.discard(browser)

    async def probe(self) -> None:
        parts = urlsplit(self.config.url)
        port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
        with anyio.fail_after(PROBE_TIMEOUT_S):
            stream = await anyio.connect_tcp(parts.hostname or "127.0.0.1", port)
        await stream.aclose()


class SharedConnection(RemoteMember):
    """A server all leases share one connection to; the connection is made again after the member comes back."""

    def __init__(self, config: EndpointConfig, runtime: BrowserRuntime) -> None:
        super().__init__(config, runtime)
        self._browser: Browser | None = None
        self._lock = anyio.Lock()

    async def open(self) -> Browser:
        async with self._lock:
            if self._browser is None or not self._browser.is_connected():
                self._browser = self._watch(await self._connect())
            return self._browser

    @abstractmethod
    async def _connect(self) -> Browser: ...

    async def aclose(self) -> None:
        if self._browser is not None:
            await self._close_browser(self._browser)
            self._browser = None


class PlaywrightServer(SharedConnection):
    """`playwright run-server` (or BrowserType.launchServer): BrowserType.connect over its WebSocket."""

    kind: ClassVar[MemberKind] = "playwright"

    async def _connect(self) -> Browser:
        url, headers = self.address()
        if self.config.launch_options:
            headers["x-playwright-launch-options"] = json.dumps(self.config.launch_options)
        return await self.runtime.connect(url, CONNECT_TIMEOUT_MS, headers)


class CdpServer(SharedConnection):
    """A Chromium with --remote-debugging-port, or a CDP service such as browserless: connect_over_cdp."""

    kind: ClassVar[MemberKind] = "cdp"

    async def _connect(self) -> Browser:
        url, headers = self.address()
        return await self.runtime.connect_over_cdp(url, CONNECT_TIMEOUT_MS, headers)


class WebDriverEndpoint(RemoteMember):
    """chromedriver or a Selenium Grid 4 router: a WebDriver session, hence a Chromium, per lease."""

    kind: ClassVar[MemberKind] = "webdriver"
    shares_browser: ClassVar[bool] = False

    def __init__(self, config: EndpointConfig, runtime: BrowserRuntime) -> None:
        super().__init__(config, runtime)
        self._sessions: dict[Browser, WebDriverSession] = {}

    def _client(self) -> httpx.AsyncClient:
        _url, headers = self.address()
        # A Grid queues a new session until a node is free: the lease's own wait bounds it.
        return httpx.AsyncClient(headers=headers, timeout=CONNECT_TIMEOUT_MS / 1000)

    async def open(self) -> Browser:
        async with self._client() as client:
            session = await new_session(client, self.address()[0], self.config.capabilities)
            try:
                browser = await self.runtime.connect_over_cdp(session.cdp_url, CONNECT_TIMEOUT_MS)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await delete_session(client, session)
                raise
        self._sessions[browser] = session
        return self._watch(browser)

    async def close(self, browser: Browser) -> None:
        session = self._sessions.pop(browser, None)
        await self._close_browser(browser)
        if session is not None:
            try:
                async with self._client() as client:
                    await delete_session(client, session)
            except httpx.HTTPError:  # the endpoint went away; its browsers with it
                pass

    async def probe(self) -> None:
        async with self._client() as client:
            with anyio.fail_after(PROBE_TIMEOUT_S):
                reply = await client.get(f"{self.address()[0].rstrip('/')}/status")
        if reply.status_code >= 500:
            raise ExecutionError(f"WebDriver /status answered HTTP {reply.status_code}")

    async def aclose(self) -> None:
        for browser in list(self._sessions):
            await self.close(browser)


def remote_member(config: EndpointConfig, runtime: BrowserRuntime) -> RemoteMember:
    kinds: dict[str, type[RemoteMember]] = {
        "playwright": PlaywrightServer,
        "cdp": CdpServer,
        "webdriver": WebDriverEndpoint,
    }
    return kinds[config.kind](config, runtime)
