"""A window on a browser pool member of another host: a context of its browser, set up from this side.

The login profile's snapshot travels as the context's storage state and is published back from here
(nothing is written on the browser's host); a guarded session's traffic is checked by route interception
(policy/route_guard.py), since the host cannot reach the daemon's guard proxy.
"""

from __future__ import annotations

from typing import Any, ClassVar

from playwright.async_api import BrowserContext, Page

from browserd.daemon.policy.route_guard import RouteGuard
from browserd.daemon.policy.urls import UrlPolicy
from browserd.daemon.runtime.pool import Slot
from browserd.daemon.sessions.backends.backend import Backend, BackendKind, Capability, WindowRequest


class PooledWindow(Backend):
    kind: ClassVar[BackendKind] = "playwright"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({"storage_export", "profile_publish", "guard_proxy"})

    def __init__(self, context: BrowserContext, slot: Slot, guard: RouteGuard | None) -> None:
        self._context = context
        self.slot = slot
        self.guard = guard
        self.label = f"on {slot.member.name} ({slot.member.kind}, {slot.member.url})"

    @classmethod
    async def open(cls, request: WindowRequest, slot: Slot, policy: UrlPolicy) -> PooledWindow:
        options: dict[str, Any] = dict(request.context_options)
        if request.storage_state is not None:
            options["storage_state"] = request.storage_state
        context = await slot.browser.new_context(**options)
        guard = None
        try:
            if policy.guarded(request.trust_level):
                guard = RouteGuard(policy, request.trust_level)
                await guard.install(context)
        except BaseException:
            await context.close()
            raise
        return cls(context, slot, guard)

    @property
    def context(self) -> BrowserContext:
        return self._context

    async def close(self, own_pages: list[Page]) -> None:
        try:
            await self._context.close()
        finally:
            await self._release()
