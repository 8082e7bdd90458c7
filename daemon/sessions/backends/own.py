"""The daemon's own Chromium: each window is a fresh, isolated context of the shared browser."""

from __future__ import annotations

from typing import Any, ClassVar

from playwright.async_api import Browser, BrowserContext, Page

from browserd.daemon.policy.proxy import GuardProxy
from browserd.daemon.sessions.backends.base import Backend, BackendKind, Capability


class OwnChromium(Backend):
    kind: ClassVar[BackendKind] = "playwright"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({"storage_export", "profile_publish", "guard_proxy"})

    def __init__(self, context: BrowserContext, guard: GuardProxy | None, shows_pdfs: bool) -> None:
        self._context = context
        self.guard = guard
        self.shows_pdfs = shows_pdfs  # a headless shell has no PDF viewer: it downloads them

    @classmethod
    async def open(
        cls, browser: Browser, guard: GuardProxy | None, context_options: dict[str, Any], shows_pdfs: bool
    ) -> OwnChromium:
        """A new context of `browser`; its traffic goes through `guard` when there is one (closed on failure)."""
        try:
            context = await browser.new_context(**context_options, **(guard.context_options if guard else {}))
        except BaseException:
            if guard is not None:
                guard.close()
            raise
        return cls(context, guard, shows_pdfs)

    @property
    def context(self) -> BrowserContext:
        return self._context

    async def close(self, own_pages: list[Page]) -> None:
        try:
            await self._context.close()
        finally:
            self._close_guard()
