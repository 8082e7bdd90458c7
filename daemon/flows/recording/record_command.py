"""`browserd record`: a person records a flow in a browser window of its own, on a login profile (D-47).

Like `browserd login`, this runs in the command line's own process (D-02: a daemon under systemd has
no display). The window is the profile's browser, headed, so the person is logged in as there. What
the person does is recorded exactly as in a session's tab (person_input.py, tool_recorder.py); it ends on Enter,
on the window closing or on Ctrl-C, and the command hands the flow to the daemon.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from playwright.async_api import BrowserContext

from browserd.daemon.config import Config
from browserd.daemon.errors import NotSupported
from browserd.daemon.flows.flow_model import Flow
from browserd.daemon.flows.recording.person_input import PersonInput
from browserd.daemon.flows.recording.tool_recorder import Recorder
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.profiles.locks import login_lock
from browserd.daemon.profiles.login import launch, wait_for_enter, wait_for_signal
from browserd.daemon.profiles.profile_registry import Profiles
from browserd.daemon.sessions.navigation import navigate


@dataclass(frozen=True)
class RecordRequest:
    profile_id: str
    url: str
    name: str


def check_display() -> None:
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise NotSupported(
            "`browserd record` opens a browser window for you to record in, and there is no display here "
            "(DISPLAY and WAYLAND_DISPLAY are unset)",
            hint="Run it in a desktop session, or record in your own Chrome instead: pair it once "
            "(`browserd bridge pair`), open an extension window, and call flow_record_start there.",
            display=None,
        )


async def run_record(config: Config, request: RecordRequest, say: Callable[[str], None]) -> Flow:
    """The flow the person recorded in the profile's window."""
    check_display()
    profiles = Profiles(config.profiles, component="record")
    store = profiles.store(request.profile_id)
    await anyio.to_thread.run_sync(store.ensure_initialized)
    # The profile's browser folder takes one window at a time: a login in progress holds it too.
    with login_lock(store.login_lock_path, store.profile_id, component="record"):
        user_data = profiles.user_data_dir(store.profile_id)
        user_data.mkdir(mode=0o700, parents=True, exist_ok=True)
        playwright, context = await launch(config, str(user_data), headless=False)
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            # The user's own window, on their command line: a local load, still under [security]'s origin lists.
            await navigate(page, request.url, None, TrustPolicy("local", UrlPolicy(config.security)))
            recorder = Recorder(request.name, None, config.flows.keep_non_sensitive_values)
            listener = PersonInput(page, recorder, f"the window of profile {store.profile_id}", lambda: False)
            done = anyio.Event()

            def window_closed(_context: BrowserContext) -> None:
                done.set()

            context.on("close", window_closed)
            async with anyio.create_task_group() as tasks:
                await listener.attach(tasks.start_soon)
                say("Recording: do the task in the browser window, then press Enter here or close the window.")
                tasks.start_soon(wait_for_enter, done)
                tasks.start_soon(wait_for_signal, done)
                await done.wait()
                await listener.detach()
                tasks.cancel_scope.cancel()
            return recorder.flow()
        finally:
            with anyio.CancelScope(shield=True):
                await context.close()
                await playwright.stop()
