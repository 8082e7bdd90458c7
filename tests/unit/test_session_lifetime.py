"""How long sessions live without a browser (D-06, D-10): connections and runs hold them, kept ones expire."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import anyio
import pytest

from browserd.daemon.bridge.bridge_server import BridgeServer
from browserd.daemon.config import BridgeConfig, BrowserConfig, ProfilesConfig, SecurityConfig
from browserd.daemon.policy.proxy import Guards
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.profiles.profile_registry import Profiles
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.pool import BrowserPool
from browserd.daemon.sessions.backends.factory import Backends
from browserd.daemon.sessions.session_manager import KEPT, SessionManager

pytestmark = pytest.mark.anyio


class Idle:
    def __init__(self) -> None:
        self.holders: Counter[str] = Counter()

    def acquire(self, reason: str) -> None:
        self.holders[reason] += 1

    def release(self, reason: str) -> None:
        self.holders[reason] -= 1


def manager(tmp_path: Path, kept_idle_s: float) -> SessionManager:
    # Sessions open no window here, so no browser is launched.
    profiles = Profiles(ProfilesConfig(snapshot_root=str(tmp_path / "s"), user_data_root=str(tmp_path / "u")))
    browser = BrowserConfig()
    runtime, guards = BrowserRuntime(browser), Guards(UrlPolicy(SecurityConfig()))
    backends = Backends(runtime, guards, BridgeServer(BridgeConfig()), BrowserPool(runtime, browser))
    sessions = SessionManager(runtime, browser, profiles, guards, backends, kept_idle_s)
    sessions.idle = Idle()
    return sessions


async def until_closed(sessions: SessionManager, session_id: str) -> None:
    with anyio.fail_after(10):
        while session_id in sessions.sessions:
            await anyio.sleep(0.02)


async def test_a_run_holds_a_disconnected_session_until_it_ends(tmp_path: Path) -> None:
    """DESIGN §2: a session closes with its connection, unless a run works in it; then with the run."""
    sessions = manager(tmp_path, 300)
    plain = sessions.create("a", "local", connected=True)
    await sessions.disconnect(plain.id)
    assert plain.id not in sessions.sessions
    held = sessions.create("b", "local", connected=True)
    sessions.hold(held.id)
    await sessions.disconnect(held.id)
    assert sessions.describe(held.id) == {"connected": False, "activeRuns": 1, "kept": False, "expiresAt": None}
    await sessions.release(held.id)
    assert held.id not in sessions.sessions


async def test_a_kept_session_holds_idle_exit_slides_with_use_and_expires(tmp_path: Path) -> None:
    """D-10, D-06: kept_session_idle_s after the last use, counted only once nothing uses it.

    Issue 11 item 13: no race against the clock. The slide is read off the deadline a use sets (a long idle
    time, so it cannot expire meanwhile); the expiry is watched with a short one and a generous deadline."""
    sessions = manager(tmp_path, 300)
    idle = sessions.idle
    assert isinstance(idle, Idle)
    kept = sessions.create("run:login_keep_session", "local")
    sessions.hold(kept.id)
    sessions.keep(kept.id)
    assert sessions.describe(kept.id)["expiresAt"] is None, "a session a run uses does not expire"
    await sessions.release(kept.id)
    assert idle.holders[KEPT] == 1
    first = sessions.describe(kept.id)["expiresAt"]
    assert isinstance(first, int)
    used_at = anyio.current_time()
    while anyio.current_time() < used_at + 1.0:  # let time pass, however slowly the machine runs
        await anyio.sleep(0.05)
    sessions.hold(kept.id)
    await sessions.release(kept.id)
    later = sessions.describe(kept.id)["expiresAt"]
    assert isinstance(later, int) and later - first >= 900, "a use restarts the idle deadline from now"

    short = manager(tmp_path, 0.05)
    brief = short.create("run:login_keep_session", "local")
    async with anyio.create_task_group() as tg:
        tg.start_soon(short.expire_kept)
        short.hold(brief.id)
        short.keep(brief.id)
        await short.release(brief.id)
        await until_closed(short, brief.id)
        assert isinstance(short.idle, Idle) and short.idle.holders[KEPT] == 0
        tg.cancel_scope.cancel()
