"""A session: everything one client owns in the browser — windows, their tabs, which one is active."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
from playwright.async_api import Browser, BrowserContext

from browserd.daemon.config import BrowserConfig
from browserd.daemon.errors import BrowserdError, LimitExceeded, PageCrashed, SessionNotFound
from browserd.daemon.policy.proxy import Guards
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.profiles.profile_registry import Profiles
from browserd.daemon.profiles.publisher import StateSource
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.sessions.backends.backend import Backend, BackendKind, SpareWindow, WindowRequest
from browserd.daemon.sessions.backends.factory import Backends
from browserd.daemon.sessions.call_log import CallLog
from browserd.daemon.sessions.downloads import Downloads
from browserd.daemon.sessions.page_records import Dialogs
from browserd.daemon.sessions.routes import Routes, numbered
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.sessions.window import ProfileLink, Viewport, Window, WindowOptions
from browserd.daemon.snapshots.page_scripts import WINDOW_SCRIPT
from browserd.protocol import paths
from browserd.protocol.messages import TrustLevel

log = logging.getLogger(__name__)


class TabNotFound(BrowserdError):
    code = "SESSION_NOT_FOUND"
    hint = "Call browser_tabs with action 'list' for the open tabs."


class WindowNotFound(BrowserdError):
    code = "SESSION_NOT_FOUND"
    hint = "Call browser_windows with action 'list' for the open windows."


@dataclass
class Session:
    id: str
    client_name: str
    trust_level: TrustLevel
    runtime: BrowserRuntime
    config: BrowserConfig
    profiles: Profiles
    guards: Guards
    backends: Backends
    windows: dict[str, Window] = field(default_factory=dict)
    dialogs: Dialogs = field(default_factory=Dialogs)
    # Its recent tool calls, without values: what `browserd status` and the side panel show it did.
    calls: CallLog = field(default_factory=CallLog)
    downloads: Downloads = field(init=False)
    # What this session may do (scripts, profiles, URLs...): every tool and run asks it.
    trust: TrustPolicy = field(init=False)
    active_window_id: str | None = None
    # Set when the browser died under this session; the next call that needs a tab says so once.
    crashed: bool = False
    # What happened, when it is known (a pool member went away); the answer of that next call.
    crash_note: str = "the browser crashed and was restarted"
    _tab_numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _window_numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _next_route_id: Callable[[], str] = field(default_factory=lambda: numbered("route_"))  # session-wide ids
    _lock: anyio.Lock = field(default_factory=anyio.Lock)
    # Hands over a warm window, if one is ready, for the session's first window (SessionManager.take_spare).
    take_spare: Callable[[], SpareWindow | None] = lambda: None
    # Told of every page load in the session's tabs (SessionManager.on_page_load: flows' onPage triggers).
    on_page_load: Callable[[Session, Tab], None] = lambda session, tab: None
    # How its client reaches the daemon: stdio (an MCP shim or the command line), run or schedule (a task
    # run's own), console.
    transport: str = "stdio"

    def __post_init__(self) -> None:
        self.downloads = Downloads(self.output_dir / "downloads")
        self.trust = TrustPolicy(self.trust_level, self.guards.policy)
        self.dialogs.policy = self.config.dialog_policy

    @property
    def output_dir(self) -> Path:
        """Where this session's files go (snapshots saved, PDFs, downloads); kept after the session ends."""
        return paths.data_dir() / "output" / self.id

    def _next_tab_id(self) -> str:
        return f"tab_{next(self._tab_numbers)}"

    def _alive(self, window: Window) -> bool:
        browser = window.context.browser
        return browser is not None and browser.is_connected()

    async def _forget_dead_windows(self) -> None:
        dead = [w for w in self.windows.values() if not self._alive(w)]
        if dead:
            # An attached browser that went away was closed by its owner, which is no crash of ours.
            self.crashed = self.crashed or any(not window.backend.shared for window in dead)
            self._drop(dead)

    def browser_gone(self, browser: Browser, why: str = "the browser crashed and was restarted") -> None:
        """A browser died (the daemon's Chromium, a pool member's): its windows go now (publisher loops, guards,
        tasks), not at the next call, which answers PAGE_CRASHED saying `why`."""
        dead = [w for w in self.windows.values() if not w.backend.shared and w.context.browser is browser]
        if dead:
            self.crashed = True
            self.crash_note = why
            self._drop(dead)

    def _drop(self, dead: list[Window]) -> None:
        for window in dead:
            del self.windows[window.id]
            window.abandon()
        if self.active_window_id not in self.windows:
            self.active_window_id = None

    @property
    def busy(self) -> bool:
        """Whether a call is working on one of the session's tabs now."""
        return any(tab.lock.locked() for window in self.windows.values() for tab in window.tabs.values())

    async def live_windows(self) -> list[Window]:
        """The windows still open: one whose browser went away (a crash, the user's Chrome closed) is dropped."""
        async with self._lock:
            await self._forget_dead_windows()
        return list(self.windows.values())

    async def open_window(
        self,
        kind: BackendKind = "playwright",
        options: WindowOptions | None = None,
        *,
        endpoint: str | None = None,
        timeout_ms: int = 15_000,
        warm: bool = False,
    ) -> Window:
        """A new window on a backend of `kind`; the tabs a backend already holds (an attached browser's) become
        this session's. `warm` takes the daemon's spare window when the options are the defaults, with its tab."""
        options = options or WindowOptions()
        snapshot = None
        request = WindowRequest(
            kind, self.id, self.client_name, self.trust_level, endpoint=endpoint, timeout_ms=timeout_ms
        )
        if kind == "playwright":
            default = Viewport(self.config.viewport_width, self.config.viewport_height)
            mobile = await self.runtime.mobile_options() if options.mobile else None
            if options.profile_id is not None:
                # Here, not per tool: every way to a profile-bound window (open, windows, runs) passes this.
                self.trust.check_profile(options.profile_id, "open a window on")
                snapshot = await self.profiles.load(options.profile_id)
            request = replace(
                request,
                context_options=options.context_options(default, mobile),
                storage_state=snapshot.storage_state() if snapshot is not None else None,
                is_default=options == WindowOptions(),
                warm=warm,
            )
        backend = await self.backends.open(request, self.trust, self.take_spare)
        window = await self._window(backend, options)
        if snapshot is not None:
            window.profile = self._link(snapshot.meta.profile_id, snapshot.version, backend.context, options.publish)
        if backend.spare is not None:
            tab = window.adopt(backend.spare.page)
            tab.cdp, tab.armed = backend.spare.cdp, backend.spare.cdp is not None
            window.own_tabs.add(tab.id)
            window.active_tab_id = tab.id
        else:
            for page in backend.existing_pages():
                window.adopt(page)
            tabs = window.open_tabs()
            window.active_tab_id = tabs[-1].id if tabs else None
        self._add(window)
        return window

    async def _window(self, backend: Backend, options: WindowOptions) -> Window:
        context = backend.context
        if not backend.scripted:
            await context.add_init_script(WINDOW_SCRIPT)
        context.set_default_timeout(self.config.action_timeout_ms)
        context.set_default_navigation_timeout(self.config.navigation_timeout_ms)
        window = Window(
            f"win_{next(self._window_numbers)}",
            context,
            options,
            self._next_tab_id,
            self.downloads,
            backend,
            self.trust,
            self.dialogs,
        )
        window.network_log_size = self.config.network_log_size
        window.routes = Routes(context, self._next_route_id)
        window.check_room = self.check_tab_room
        window.on_load = lambda tab: self.on_page_load(self, tab)
        return window

    def _add(self, window: Window) -> None:
        window.watch()
        self.windows[window.id] = window
        self.active_window_id = window.id

    def _tabs_in_use(self) -> int:
        return sum(len(w.session_tabs()) for w in self.windows.values())

    def tab_room(self) -> int:
        """How many more tabs may open now: the session's cap and the browser's, whichever is nearer."""
        session_room = self.config.max_tabs_per_session - self._tabs_in_use()
        return max(0, min(session_room, self.config.max_total_tabs - self.runtime.open_pages()))

    def check_tab_room(self) -> None:
        """Before a tab opens: LIMIT_EXCEEDED past [browser] max_tabs_per_session or max_total_tabs (S1-74, S1-77)."""
        in_use = self._tabs_in_use()
        if in_use >= self.config.max_tabs_per_session:
            raise LimitExceeded(
                f"this session has {in_use} tabs open, the most allowed ([browser] max_tabs_per_session)",
                limit=self.config.max_tabs_per_session,
                tabsOpen=in_use,
            )
        total = self.runtime.open_pages()
        if total >= self.config.max_total_tabs:
            raise LimitExceeded(
                f"the browser has {total} tabs open across all sessions, the most allowed ([browser] max_total_tabs)",
                hint="Close tabs no longer needed (browser_tabs action 'close'), or retry when other sessions or "
                "runs have closed theirs.",
                limit=self.config.max_total_tabs,
                tabsOpen=total,
            )

    def _link(self, profile_id: str, version: int, context: BrowserContext, publish: bool) -> ProfileLink:
        if not publish:
            return ProfileLink(profile_id, version)
        include_indexed_db = self.profiles.config.include_indexed_db

        async def export() -> Any:
            return await context.storage_state(indexed_db=include_indexed_db)

        source = StateSource(export, version, name=f"{self.id}/{profile_id}")
        link = ProfileLink(profile_id, version, self.profiles.publisher(profile_id), source)
        # A window can stay open for hours: cookies a page refreshes on its own are published too.
        link.periodic = self.profiles.publish_periodically(profile_id, source)
        return link

    async def window_for_profile(self, profile_id: str, publish: bool) -> Window:
        """The session's window on this profile (the active one first), else a new one; it becomes active."""
        pid = self.profiles.profile_id(profile_id)
        await self._forget_dead_windows()
        candidates = [w for w in self.windows.values() if w.profile is not None and w.profile.profile_id == pid]
        active = next((w for w in candidates if w.id == self.active_window_id), None)
        if active is None and not candidates:
            active = await self.open_window(options=WindowOptions(profile_id=pid, publish=publish))
        window = active or candidates[-1]
        self.active_window_id = window.id
        return window

    async def window(self, window_id: str | None = None, warm: bool = True) -> Window:
        """The given window, or the active one (created on first use; `warm`: from the daemon's spare window,
        with its blank tab, when one is ready)."""
        async with self._lock:
            await self._forget_dead_windows()
            if window_id is not None:
                found = self.windows.get(window_id)
                if found is None:
                    raise WindowNotFound(f"no window {window_id} in this session", windowId=window_id)
                return found
            active = self.windows.get(self.active_window_id or "")
            return active if active is not None else await self.open_window(warm=warm)

    def ensure_active_tab(self) -> None:
        """After a close: when the active window has no tab left, the newest open tab elsewhere is active."""
        active = self.windows.get(self.active_window_id or "")
        if active is not None and active.open_tabs():
            return
        for window in reversed(self.windows.values()):
            tabs = window.open_tabs()
            if tabs:
                self.active_window_id = window.id
                window.active_tab_id = window.active_tab_id if window.active_tab_id in window.tabs else tabs[-1].id
                return

    def active_tab(self) -> Tab | None:
        """The active window's active tab, if one is open; unlike `tab`, never opens a window."""
        window = self.windows.get(self.active_window_id or "")
        tab = window.tabs.get(window.active_tab_id or "") if window is not None else None
        return tab if tab is not None and not tab.page.is_closed() else None

    def find_tab(self, tab_id: str) -> Tab:
        for window in self.windows.values():
            tab = window.tabs.get(tab_id)
            if tab is not None and not tab.page.is_closed():
                return tab
        raise TabNotFound(f"no open tab {tab_id} in this session", tabId=tab_id)

    async def tab(self, tab_id: str | None = None, create: bool = False) -> Tab:
        """The given tab, or the active tab of the active window; a new one if there is none and `create`."""
        if tab_id is not None:
            return self.find_tab(tab_id)
        self.ensure_active_tab()
        # Only a call that opens a tab takes the spare window: its blank tab would otherwise answer a call that
        # reads one (console, network) or not, as the spare happened to be ready or not.
        window = await self.window(warm=create)
        tab = window.tabs.get(window.active_tab_id or "")
        if tab is not None and not tab.page.is_closed():
            return tab
        if create:
            self.crashed = False
            return await window.new_tab()
        if self.crashed:
            self.crashed = False
            raise PageCrashed(
                f"{self.crash_note}; this session's tabs there are gone",
                hint="Call browser_open (or browser_navigate) again: a new tab opens on a browser that answers.",
            )
        raise SessionNotFound("this session has no open tab yet")

    async def select_tab(self, tab: Tab) -> None:
        """`tab` becomes the active tab of the session, its window the active window, and comes to the front."""
        tab.window.active_tab_id = tab.id
        self.active_window_id = tab.window.id
        await tab.page.bring_to_front()

    async def close_tab(self, tab: Tab) -> None:
        """Close `tab` once the call acting on it (if any) is done; another tab becomes active if need be."""
        async with tab.lock:
            await tab.page.close()
        self.ensure_active_tab()

    def all_tabs(self) -> list[Tab]:
        return [tab for window in self.windows.values() for tab in window.open_tabs()]

    async def close_window(self, window_id: str) -> None:
        window = self.windows.pop(window_id, None)
        if window is None:
            raise WindowNotFound(f"no window {window_id} in this session", windowId=window_id)
        await window.close()
        if self.active_window_id == window_id:
            self.active_window_id = next(reversed(self.windows), None) if self.windows else None

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            # Before the windows: a download cut short by the session's end is cancelled, not failed.
            await self.downloads.aclose()
            windows, self.windows = list(self.windows.values()), {}
            for window in windows:
                await window.close()
