"""The one place a window's backend is chosen and opened (issue 21): `Session.open_window` asks here."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from browserd.daemon.bridge.bridge_server import BridgeServer
from browserd.daemon.errors import InvalidParameter
from browserd.daemon.policy.proxy import Guards
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.runtime.pool import BrowserPool
from browserd.daemon.sessions.backends.backend import Backend, SpareWindow, WindowRequest
from browserd.daemon.sessions.backends.cdp import CdpAttach
from browserd.daemon.sessions.backends.extension import ExtensionTabs
from browserd.daemon.sessions.backends.own import OwnChromium
from browserd.daemon.sessions.backends.pooled import PooledWindow


@dataclass
class Backends:
    runtime: BrowserRuntime
    guards: Guards
    bridge: BridgeServer
    pool: BrowserPool

    async def open(
        self, request: WindowRequest, trust: TrustPolicy, take_spare: Callable[[], SpareWindow | None]
    ) -> Backend:
        """The backend of a new window; first, whether the session's trust level may have one of this kind (a remote
        session's window needs the URL guard; the user's own Chrome takes one only when [bridge] allow_remote)."""
        kinds: dict[str, type[Backend]] = {"cdp": CdpAttach, "extension": ExtensionTabs, "playwright": OwnChromium}
        kind = kinds[request.kind]
        trust.check_backend(kind.kind, kind.capabilities, remote_extension=self.bridge.config.allow_remote)
        if request.kind == "cdp":
            if request.endpoint is None:
                raise InvalidParameter("a cdp window needs the browser's debugging endpoint", field="endpoint")
            return self._preloaded(await CdpAttach.connect(self.runtime, request.endpoint, request.timeout_ms))
        if request.kind == "extension":
            # Each extension window is a tab group of its own, named after the client.
            bridge_session = f"{request.session_id}-{secrets.token_hex(3)}"
            return self._preloaded(
                await ExtensionTabs.open(self.runtime, self.bridge, bridge_session, request.client_name)
            )
        # A window of a browser browserd runs: on the pool member with the most free capacity (or the pinned one).
        slot = await self.pool.acquire(request.endpoint)
        backend: Backend
        try:
            if slot.member.local:
                backend = self._preloaded(
                    await OwnChromium.open(request, slot.browser, self.guards, take_spare, self.runtime.shows_pdfs)
                )
            else:
                backend = await PooledWindow.open(request, slot, self.guards.policy)
        except BaseException:
            await slot.release()
            raise
        backend.slot = slot
        return backend

    def _preloaded(self, backend: Backend) -> Backend:
        """`backend`, whose pages this daemon's own driver drives."""
        backend.preloaded_driver = self.runtime.driver_preloaded
        return backend
