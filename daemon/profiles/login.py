"""`browserd login`: a person logs in through a real browser window; the profile publishes it (S0-36..S0-43).

Runs in the command line's own process, never in the daemon (D-02): a daemon under systemd has no
display. It holds the profile's login.lock for its whole life, publishes authoritatively (D-15)
every few seconds and on exit, and ends on Enter, on the window closing, on Ctrl-C or at the timeout.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from playwright.async_api import BrowserContext

from browserd.daemon.config import Config
from browserd.daemon.errors import ExecutionError
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.profiles.locks import login_lock
from browserd.daemon.profiles.profile_registry import Profiles
from browserd.daemon.profiles.publisher import ProfilePublisher, StateSource
from browserd.daemon.runtime.chromium import find_chromium, launch_args
from browserd.daemon.runtime.driver import start_driver
from browserd.daemon.sessions.navigation import navigate

EXIT_DONE = 0
EXIT_TIMED_OUT = 3


@dataclass(frozen=True)
class LoginRequest:
    profile_id: str
    url: str | None = None
    timeout_s: float = 0  # 0: as long as it takes
    headless: bool = False


async def launch(config: Config, user_data_dir: str, headless: bool) -> tuple[Any, BrowserContext]:
    found = find_chromium(config.browser.executable, headless=headless)
    if found is None:
        raise ExecutionError("no Chromium executable found", hint="Run `browserd doctor`.")
    playwright = await start_driver(config.browser.driver_preload)
    context = await playwright.chromium.launch_persistent_context(
        user_data_dir, executable_path=found.path, headless=headless, args=launch_args(config.browser.args, found)
    )
    return playwright, context


async def wait_for_enter(done: anyio.Event) -> None:
    # A closed or empty stdin (a service, a pipe at EOF) must not end the login: only a real line does.
    line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    if line:
        done.set()


async def wait_for_signal(done: anyio.Event) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _signum in signals:
            done.set()
            return


async def run_login(config: Config, request: LoginRequest, say: Callable[[str], None]) -> int:
    """The login's exit status: 0 when the person finished, 3 at the timeout; ProfileLocked when taken."""
    profiles = Profiles(config.profiles, component="login")
    store = profiles.store(request.profile_id)
    await anyio.to_thread.run_sync(store.ensure_initialized)
    with login_lock(store.login_lock_path, store.profile_id):
        user_data = profiles.user_data_dir(store.profile_id)
        user_data.mkdir(mode=0o700, parents=True, exist_ok=True)
        playwright, context = await launch(config, str(user_data), request.headless)
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            if request.url:
                # The user's own window, on their command line: a local load, still under [security]'s origin lists.
                await navigate(page, request.url, None, TrustPolicy("local", UrlPolicy(config.security)))
            include_indexed_db = config.profiles.include_indexed_db

            async def export() -> Any:
                return await context.storage_state(indexed_db=include_indexed_db)

            source = StateSource(export, 0, authoritative=True, name="login")
            done = anyio.Event()
            closed = anyio.Event()  # the person closed the window: nothing left to export

            def window_closed(_context: BrowserContext) -> None:
                closed.set()
                done.set()

            context.on("close", window_closed)
            say(
                f"Log in to the site in the browser window (profile {store.profile_id}), then press Enter here "
                "or close the window."
            )
            timed_out = False
            async with ProfilePublisher(store, lock_timeout_ms=config.profiles.publish_lock_timeout_ms) as publisher:
                # A login ends in a navigation: publish soon after each one, so closing the window right
                # after logging in loses nothing (the periodic publish may not have come round yet).
                def navigated(_frame: Any) -> None:
                    publisher.request(source)

                for open_page in context.pages:
                    open_page.on("framenavigated", navigated)
                context.on("page", lambda new_page: new_page.on("framenavigated", navigated))
                async with anyio.create_task_group() as waits:
                    waits.start_soon(publisher.publish_every, source, config.profiles.login_refresh_interval_ms)
                    waits.start_soon(wait_for_enter, done)
                    waits.start_soon(wait_for_signal, done)
                    with anyio.move_on_after(request.timeout_s or None) as deadline:
                        await done.wait()
                    timed_out = deadline.cancelled_caught
                    waits.cancel_scope.cancel()
                result = None if closed.is_set() else await publisher.publish(source, debounce=False)
            if result is not None and result.ok:
                say(f"Published the login of profile {store.profile_id} as version {result.version}.")
            elif source.last_result is not None and source.last_result.ok:
                say(f"Published the login of profile {store.profile_id} as version {source.last_result.version}.")
            else:
                say("The login could not be published; see the messages above.")
            if timed_out:
                say(f"The login timed out after {request.timeout_s:g} s.")
            return EXIT_TIMED_OUT if timed_out else EXIT_DONE
        finally:
            with anyio.CancelScope(shield=True):
                await context.close()
                await playwright.stop()
