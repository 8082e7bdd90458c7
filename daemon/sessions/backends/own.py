"""The daemon's own Chromium: each window is a fresh, isolated context of the shared browser.

Its set-up lives here: the URL guard a remote session's traffic goes through, the login profile's
storage state, and the warm spare window a session's first window takes (SessionManager.keep_spare).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from playwright.async_api import Browser, BrowserContext, Page

from browserd.daemon.policy.proxy import GuardProxy, Guards
from browserd.daemon.sessions.backends.backend import Backend, BackendKind, Capability, SpareWindow, WindowRequest


class OwnChromium(Backend):
    kind: ClassVar[BackendKind] = "playwright"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({"storage_export", "profile_publish", "guard_proxy"})

    def __init__(
        self, context: BrowserContext, guard: GuardProxy | None, shows_pdfs: bool, spare: SpareWindow | None = None
    ) -> None:
        self._context = context
        self.guard = guard
        self.shows_pdfs = shows_pdfs  # a headless shell has no PDF viewer: it downloads them
        self.spare = spare

    @classmethod
    async def open(
        cls,
        request: WindowRequest,
        browser: Browser,
        guards: Guards,
        take_spare: Callable[[], SpareWindow | None],
        shows_pdfs: bool,
    ) -> OwnChromium:
        """A new context of `browser` (or the spare one, for a `warm` request of default options); its traffic
        goes through a URL guard when the session needs one (closed again if the context cannot open)."""
        guard = await guards.open(request.trust_level)
        spare = take_spare() if request.warm and guard is None and request.is_default else None
        if spare is not None:
            return cls(spare.context, None, shows_pdfs, spare)
        options: dict[str, Any] = dict(request.context_options)
        if request.storage_state is not None:
            options["storage_state"] = request.storage_state
        try:
            context = await browser.new_context(**options, **(guard.context_options if guard else {}))
        except BaseException:
            if guard is not None:
                guard.close()
            raise
        return cls(context, guard, shows_pdfs)

    @property
    def context(self) -> BrowserContext:
        return self._context

    @property
    def scripted(self) -> bool:
        return self.spare is not None

    async def close(self, own_pages: list[Page]) -> None:
        try:
            await self._context.close()
        finally:
            self._close_guard()
            await self._release()
