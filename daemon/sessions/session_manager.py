"""The daemon's sessions and how long each lives (DESIGN.md §2, D-10).

A connection's own session lives while its connection does. A run holds the session it works in, so
a session whose client went away closes when its last run ends, not under the run. A session that
login_keep_session logged in is kept: once no connection or run uses it, it lives on for
`[runs] kept_session_idle_s` after its last use (a run in it starting or ending, or its client
leaving, starts that count again), then closes. Kept sessions hold the daemon's idle exit while they live (D-06).

While any session lives and the browser runs, one warm window (a context of default options with its
blank page) waits for the next session's first call, so that call does not create one (issue 10). Each
spare goes to exactly one session; the next is prepared in the background by `keep_spare`, which the
daemon's task group owns. With no session left (the daemon is counting down to its idle exit) no spare
is kept, and the last one is closed when the daemon stops.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections import Counter
from collections.abc import Callable

import anyio
from playwright.async_api import Browser

from browserd.daemon.config import BrowserConfig
from browserd.daemon.policy.proxy import Guards
from browserd.daemon.profiles.profile_registry import Profiles
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.idle_hold import IdleHold, NoIdleHold
from browserd.daemon.sessions.backends.backend import SpareWindow
from browserd.daemon.sessions.backends.factory import Backends
from browserd.daemon.sessions.session import Session
from browserd.daemon.sessions.tab import Tab, attach_cdp
from browserd.daemon.sessions.window import Viewport, WindowOptions
from browserd.daemon.snapshots.page_scripts import WINDOW_SCRIPT
from browserd.protocol.messages import TrustLevel

log = logging.getLogger(__name__)

KEPT = "keptSession"
# The next spare is built once the call that took the last one is over (see keep_spare): that call
# holds its tab's lock within this long of the hand-over, and it is not waited for longer than the cap.
SPARE_CALL_STARTS_S = 0.05
SPARE_CALL_WAIT_MAX_S = 5.0
_SPARE_CALL_POLL_S = 0.02


def new_session_id() -> str:
    return f"sess_{secrets.token_hex(4)}"


class SessionManager:
    def __init__(
        self,
        runtime: BrowserRuntime,
        config: BrowserConfig,
        profiles: Profiles,
        guards: Guards,
        backends: Backends,
        kept_idle_s: float = 300.0,
    ) -> None:
        self._guards = guards
        self._backends = backends
        self._runtime = runtime
        self._config = config
        self._profiles = profiles
        self.kept_idle_s = kept_idle_s
        self.sessions: dict[str, Session] = {}
        # The daemon's idle monitor, set once it exists (the services are built before it).
        self.idle: IdleHold = NoIdleHold()
        self._connected: set[str] = set()
        self._runs: Counter[str] = Counter()
        # Kept session id -> when it closes (anyio clock), counted once nothing uses it.
        self._kept: dict[str, float] = {}
        self._changed = anyio.Event()
        self._spare: SpareWindow | None = None
        self._spare_taker: Session | None = None  # the session that took the last spare
        self._spare_wanted = anyio.Event()
        # Every page load in every session (set by the daemon: flows' onPage triggers).
        self.on_page_load: Callable[[Session, Tab], None] = lambda session, tab: None
        # A session came or went, loaded a page or ended a call (set by Services: the daemon's push channel).
        self.on_change: Callable[[str], None] = lambda session_id: None
        runtime.on_browser_gone(self._browser_gone)
        backends.pool.on_browser_gone(self._browser_gone)

    def _browser_gone(self, browser: Browser, why: str = "the browser crashed and was restarted") -> None:
        for session in self.sessions.values():
            session.browser_gone(browser, why)

    def create(
        self, client_name: str, trust_level: TrustLevel, connected: bool = False, transport: str = "stdio"
    ) -> Session:
        """A new session; `connected` ties it to the connection that asked, until `disconnect`."""
        session_id = new_session_id()
        while session_id in self.sessions:
            session_id = new_session_id()
        session = Session(
            session_id,
            client_name,
            trust_level,
            self._runtime,
            self._config,
            self._profiles,
            self._guards,
            self._backends,
        )
        session.transport = transport
        session.take_spare = lambda: self.take_spare(session)
        session.on_page_load = lambda loaded, tab: self._page_loaded(loaded, tab)
        session.calls.on_add = lambda: self.on_change(session_id)
        self.sessions[session_id] = session
        self.on_change(session_id)
        self._spare_changed()
        if connected:
            self._connected.add(session_id)
        return session

    def _page_loaded(self, session: Session, tab: Tab) -> None:
        self.on_change(session.id)
        self.on_page_load(session, tab)

    # -- who uses a session ----------------------------------------------------------------------

    def hold(self, session_id: str) -> None:
        """A run works in the session: it stays open until the matching `release`."""
        self._runs[session_id] += 1
        self.touch(session_id)

    async def release(self, session_id: str) -> None:
        self._runs[session_id] -= 1
        if self._runs[session_id] <= 0:
            del self._runs[session_id]
        self.touch(session_id)
        await self._close_if_unused(session_id)

    async def disconnect(self, session_id: str) -> None:
        """The session's connection closed: it closes now unless a run holds it or it is kept."""
        self._connected.discard(session_id)
        self.touch(session_id)
        await self._close_if_unused(session_id)

    def keep(self, session_id: str) -> None:
        if session_id in self.sessions and session_id not in self._kept:
            self.idle.acquire(KEPT)
            self._kept[session_id] = 0.0
            self.touch(session_id)

    def touch(self, session_id: str) -> None:
        """A use of the session: a kept one's idle deadline starts again from now."""
        if session_id in self._kept:
            self._kept[session_id] = anyio.current_time() + self.kept_idle_s
            self._notify()

    def _in_use(self, session_id: str) -> bool:
        return session_id in self._connected or session_id in self._runs

    async def _close_if_unused(self, session_id: str) -> None:
        if not self._in_use(session_id) and session_id not in self._kept:
            await self.close(session_id)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def describe(self, session_id: str) -> dict[str, object]:
        """What `browserd status` shows of a session's lifetime; expiresAt (epoch ms) only once it can expire."""
        deadline = self._kept.get(session_id)
        expires = None
        if deadline is not None and not self._in_use(session_id):
            expires = round((time.time() + deadline - anyio.current_time()) * 1000)
        return {
            "connected": session_id in self._connected,
            "activeRuns": self._runs.get(session_id, 0),
            "kept": deadline is not None,
            "expiresAt": expires,
        }

    async def expire_kept(self) -> None:
        """Close kept sessions once their idle deadline passes; runs until the daemon stops."""
        while True:
            changed = self._changed
            now = anyio.current_time()
            for session_id, deadline in list(self._kept.items()):
                if deadline <= now and not self._in_use(session_id):
                    log.info("kept session %s was idle for %s s; closing it", session_id, self.kept_idle_s)
                    await self.close(session_id)
            deadlines = [d for s, d in self._kept.items() if not self._in_use(s)]
            with anyio.move_on_after(min(deadlines) - anyio.current_time() if deadlines else math.inf):
                await changed.wait()

    # -- the spare window --------------------------------------------------------------------------

    def take_spare(self, taker: Session) -> SpareWindow | None:
        """The warm window, for one session only; the keeper prepares the next."""
        spare, self._spare = self._spare, None
        if spare is not None:
            self._spare_taker = taker
        self._runtime.spare_context = None
        self._spare_changed()
        if (
            spare is None
            or spare.page.is_closed()
            or not (browser := spare.context.browser)
            or not browser.is_connected()
        ):
            return None  # the browser it lived in was relaunched
        return spare

    async def keep_spare(self) -> None:
        """Keep one spare window while sessions live and the browser runs; runs until the daemon stops."""
        try:
            while True:
                changed = self._spare_wanted
                if self._spare is None and self.sessions and self._runtime.is_running():
                    await self._taker_call_done()
                    try:
                        self._spare = await self._new_spare()
                        self._runtime.spare_context = self._spare.context
                    except Exception:  # the next session just opens its own window
                        log.debug("could not prepare a spare window", exc_info=True)
                elif self._spare is not None and not self.sessions:
                    await self._drop_spare()
                await changed.wait()
        finally:
            await self._drop_spare()

    def _spare_changed(self) -> None:
        """A session came or went, or took the spare: the keeper looks again."""
        self._spare_wanted.set()
        self._spare_wanted = anyio.Event()

    async def _taker_call_done(self) -> None:
        """Until the call that took the last spare is over: building the next one meanwhile would take the
        CPU that call needs (Chromium starts a renderer for the new context), which is what the spare saves."""
        taker, self._spare_taker = self._spare_taker, None
        if taker is None:
            return
        with anyio.move_on_after(SPARE_CALL_WAIT_MAX_S):
            await anyio.sleep(SPARE_CALL_STARTS_S)
            while taker.busy:
                await anyio.sleep(_SPARE_CALL_POLL_S)

    async def _new_spare(self) -> SpareWindow:
        browser = await self._runtime.browser()
        default = Viewport(self._config.viewport_width, self._config.viewport_height)
        context = await browser.new_context(**WindowOptions().context_options(default, None))
        try:
            await context.add_init_script(WINDOW_SCRIPT)
            page = await context.new_page()
            return SpareWindow(context, page, await attach_cdp(page))
        except BaseException:
            with anyio.CancelScope(shield=True):
                await context.close()
            raise

    async def _drop_spare(self) -> None:
        spare, self._spare = self._spare, None
        self._runtime.spare_context = None
        if spare is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await spare.context.close()
                except Exception:  # the browser may already be gone, and the context with it
                    log.debug("closing the spare window failed", exc_info=True)

    # -- closing -----------------------------------------------------------------------------------

    async def close(self, session_id: str) -> None:
        self._connected.discard(session_id)
        self._runs.pop(session_id, None)
        if self._kept.pop(session_id, None) is not None:
            self.idle.release(KEPT)
        session = self.sessions.pop(session_id, None)
        self._spare_changed()
        if session is not None:
            await session.aclose()
            self.on_change(session_id)

    async def close_all(self) -> None:
        for session_id in list(self.sessions):
            await self.close(session_id)
