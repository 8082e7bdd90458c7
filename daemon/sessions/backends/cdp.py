"""A Chromium someone else started, attached over its debugging endpoint: detaching leaves it running."""

from __future__ import annotations

from typing import ClassVar

from playwright.async_api import Browser, BrowserContext, Page

from browserd.daemon.errors import BrowserdError
from browserd.daemon.runtime.browser import BrowserRuntime
from browserd.daemon.sessions.backends.backend import Backend, BackendKind


class CdpAttach(Backend):
    kind: ClassVar[BackendKind] = "cdp"
    label: str = "attached over CDP"
    shared: ClassVar[bool] = True
    # Its cookies are the user's own browser's, which never leave it for a profile (D-14); its traffic
    # cannot be routed through a per-context guard.
    lacks_because: ClassVar[str] = "the user's own Chrome attached over CDP"

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self._context = browser.contexts[0]

    @classmethod
    async def connect(cls, runtime: BrowserRuntime, endpoint: str, timeout_ms: int) -> CdpAttach:
        browser = await runtime.connect_over_cdp(endpoint, timeout_ms)
        if not browser.contexts:
            await browser.close()
            raise BrowserdError(f"the browser at {endpoint} has no default context to attach to")
        return cls(browser)

    @property
    def context(self) -> BrowserContext:
        return self._context

    def existing_pages(self) -> list[Page]:
        return list(self._context.pages)

    async def close(self, own_pages: list[Page]) -> None:
        for page in own_pages:
            await page.close()
        await self.browser.close()  # over CDP this only disconnects: the user's browser stays

    def closed_note(self, window_id: str) -> str:
        return f"Disconnected {window_id} from the attached browser; it and its own tabs stay open"
