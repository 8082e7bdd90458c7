"""Browser sessions: one per registered client, holding its windows (contexts) and tabs (pages).

This is the plain form the foundation needs (one window, tabs with stable ids); the full session
model of DESIGN.md §3 grows here.
"""

from __future__ import annotations

import itertools
import logging
import secrets
from dataclasses import dataclass, field

import anyio
from browserd.daemon.errors import PageCrashed
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.protocol.config import BrowserConfig
from browserd.protocol.messages import TrustLevel
from playwright.async_api import BrowserContext, Page

log = logging.getLogger(__name__)


def new_session_id() -> str:
    return f"sess_{secrets.token_hex(4)}"


@dataclass
class Tab:
    id: str
    page: Page
    # Calls on one tab run one at a time; calls on different tabs run in parallel.
    lock: anyio.Lock = field(default_factory=anyio.Lock)


@dataclass
class Session:
    id: str
    client_name: str
    trust_level: TrustLevel
    runtime: BrowserRuntime
    config: BrowserConfig
    tabs: dict[str, Tab] = field(default_factory=dict)
    active_tab_id: str | None = None
    # Set when the browser died under this session; the next call that needs a tab says so once.
    crashed: bool = False
    _context: BrowserContext | None = None
    _tab_numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _context_lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def _window(self) -> BrowserContext:
        async with self._context_lock:
            context = self._context
            if context is not None and context.browser is not None and context.browser.is_connected():
                return context
            # The browser was relaunched (or never used): tabs of the old one are gone with it.
            if context is not None:
                self.crashed = True
            self.tabs.clear()
            self.active_tab_id = None
            browser = await self.runtime.browser()
            context = await browser.new_context(
                viewport={"width": self.config.viewport_width, "height": self.config.viewport_height}
            )
            context.set_default_timeout(self.config.action_timeout_ms)
            context.set_default_navigation_timeout(self.config.navigation_timeout_ms)
            self._context = context
            return context

    async def active_tab(self, create: bool = True) -> Tab | None:
        """The tab calls act on; a new one when the session has none yet and `create` is set."""
        context = await self._window()
        tab = self.tabs.get(self.active_tab_id or "")
        if tab is not None and not tab.page.is_closed():
            return tab
        if not create:
            if self.crashed:
                self.crashed = False
                raise PageCrashed("the browser crashed and was restarted; this session's tabs are gone")
            return None
        self.crashed = False
        page = await context.new_page()
        tab = Tab(id=f"tab_{next(self._tab_numbers)}", page=page)
        self.tabs[tab.id] = tab
        self.active_tab_id = tab.id
        return tab

    def open_tab_count(self) -> int:
        return sum(1 for tab in self.tabs.values() if not tab.page.is_closed())

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            context, self._context = self._context, None
            self.tabs.clear()
            if context is not None:
                try:
                    await context.close()
                except Exception:  # the browser may already be gone; the context died with it
                    log.debug("closing session %s failed", self.id, exc_info=True)


class SessionManager:
    def __init__(self, runtime: BrowserRuntime, config: BrowserConfig) -> None:
        self._runtime = runtime
        self._config = config
        self.sessions: dict[str, Session] = {}

    def create(self, client_name: str, trust_level: TrustLevel) -> Session:
        session_id = new_session_id()
        while session_id in self.sessions:
            session_id = new_session_id()
        session = Session(session_id, client_name, trust_level, self._runtime, self._config)
        self.sessions[session_id] = session
        return session

    async def close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.aclose()

    async def close_all(self) -> None:
        for session_id in list(self.sessions):
            await self.close(session_id)
