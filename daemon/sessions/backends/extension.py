"""The user's own Chrome through extension-bridge/: Playwright drives the session's tab group over the relay."""

from __future__ import annotations

from typing import ClassVar

from playwright.async_api import Browser, Page

from browserd.daemon.bridge.bridge_server import BridgeServer
from browserd.daemon.bridge.relay import CdpRelay
from browserd.daemon.errors import BrowserdError
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.sessions.backends.backend import BackendKind
from browserd.daemon.sessions.backends.cdp import CdpAttach

CONNECT_TIMEOUT_MS = 15_000


class ExtensionTabs(CdpAttach):
    kind: ClassVar[BackendKind] = "extension"
    label: str = "the user's Chrome, through the extension"
    lacks_because: ClassVar[str] = "the user's own Chrome, driven through the extension"

    def __init__(self, browser: Browser, relay: CdpRelay) -> None:
        super().__init__(browser)
        self.relay = relay

    @classmethod
    async def open(
        cls, runtime: BrowserRuntime, bridge: BridgeServer, session_id: str, client_name: str
    ) -> ExtensionTabs:
        relay = await bridge.open_relay(session_id, client_name)
        try:
            browser = await runtime.connect_over_cdp(relay.endpoint, CONNECT_TIMEOUT_MS)
        except BaseException:
            await relay.close()
            raise
        return cls(browser, relay)

    async def close(self, own_pages: list[Page]) -> None:
        try:
            await super().close(own_pages)
        finally:
            await self.relay.close()

    def departure(self, since: float) -> BrowserdError | None:
        return self.relay.departure(since)

    def closed_note(self, window_id: str) -> str:
        return f"Closed {window_id}: its tabs are closed and the extension's debugger has left the user's Chrome"
