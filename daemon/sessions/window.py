"""A window: one isolated BrowserContext (own cookies and storage) holding some of a session's tabs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import anyio
import msgspec
from playwright.async_api import BrowserContext, Page

from browserd.daemon.policy.refusals import UrlGuard
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.policy.urls import Refusal
from browserd.daemon.profiles.publisher import ProfilePublisher, StateSource
from browserd.daemon.runtime.tasks import TaskOwner
from browserd.daemon.sessions.backends.backend import Backend
from browserd.daemon.sessions.downloads import Downloads
from browserd.daemon.sessions.page_records import Dialogs
from browserd.daemon.sessions.routes import Routes, numbered
from browserd.daemon.sessions.tab import Tab

log = logging.getLogger(__name__)


CLOSE_PUBLISH_TIMEOUT_S = 10
REFUSED_EVENT = "the URL policy refused a request to"


class Viewport(msgspec.Struct, forbid_unknown_fields=True):
    width: Annotated[int, msgspec.Meta(ge=100, le=8000)]
    height: Annotated[int, msgspec.Meta(ge=100, le=8000)]


class Geolocation(msgspec.Struct, forbid_unknown_fields=True):
    latitude: Annotated[float, msgspec.Meta(ge=-90, le=90)]
    longitude: Annotated[float, msgspec.Meta(ge=-180, le=180)]


class WindowOptions(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True):
    """How a new window's browser context is set up; every field is optional."""

    viewport: Viewport | None = None
    user_agent: str | None = None
    locale: Annotated[str, msgspec.Meta(description="e.g. fr-FR")] | None = None
    timezone: Annotated[str, msgspec.Meta(description="IANA zone, e.g. Europe/Paris")] | None = None
    color_scheme: Literal["light", "dark", "no-preference"] | None = None
    mobile: Annotated[bool, msgspec.Meta(description="Emulate a phone: touch, mobile viewport.")] | None = None
    geolocation: Geolocation | None = None
    permissions: list[str] | None = None
    extra_headers: dict[str, str] | None = None
    profile_id: (
        Annotated[
            str, msgspec.Meta(pattern=r"^[a-zA-Z0-9._-]{1,64}$", description="Start from this login profile's cookies.")
        ]
        | None
    ) = None
    publish: Annotated[bool, msgspec.Meta(description="Write the profile's cookies back (default true).")] = True

    def context_options(self, default_viewport: Viewport, mobile: dict[str, Any] | None) -> dict[str, Any]:
        """`mobile`: the runtime's phone descriptor (BrowserRuntime.mobile_options) when `mobile` is set; an
        explicit viewport or user agent still wins over the phone's."""
        options: dict[str, Any] = dict(mobile or {})
        viewport = self.viewport or (None if mobile else default_viewport)
        if viewport is not None:
            options["viewport"] = {"width": viewport.width, "height": viewport.height}
        if self.user_agent:
            options["user_agent"] = self.user_agent
        if self.locale:
            options["locale"] = self.locale
        if self.timezone:
            options["timezone_id"] = self.timezone
        if self.color_scheme:
            options["color_scheme"] = self.color_scheme
        if self.geolocation:
            options["geolocation"] = {"latitude": self.geolocation.latitude, "longitude": self.geolocation.longitude}
        if self.permissions:
            options["permissions"] = self.permissions
        if self.extra_headers:
            options["extra_http_headers"] = self.extra_headers
        return options


@dataclass
class ProfileLink:
    """A window started from a login profile, and how it writes the profile back (D-16)."""

    profile_id: str
    version: int  # the profile version the window started from
    publisher: ProfilePublisher | None = None  # None: opened with publish=false
    source: StateSource | None = None
    periodic: anyio.CancelScope | None = None  # the every-30-s publish, stopped when the window closes

    stale_reported: bool = False

    def take_stale_notice(self) -> bool:
        """True once, after a publish of this window was refused because a newer version exists (TC-14)."""
        if self.source is not None and self.source.stale and not self.stale_reported:
            self.stale_reported = True
            return True
        return False

    def request_publish(self) -> None:
        if self.publisher is not None and self.source is not None and not self.source.stale:
            self.publisher.request(self.source)

    def status(self) -> dict[str, Any]:
        source = self.source
        result = source.last_result if source is not None else None
        return {
            "profileId": self.profile_id,
            "publish": self.publisher is not None,
            "baseVersion": source.base_version if source is not None else self.version,
            # A newer login was published elsewhere: this window keeps its state but stops writing (TC-14).
            "stale": bool(source is not None and source.stale),
            "lastPublish": result.status if result is not None else None,
        }


@dataclass
class Window:
    id: str
    context: BrowserContext
    options: WindowOptions
    # Gives each tab a session-wide id (tab_N), never reused.
    next_tab_id: Callable[[], str]
    # The session's downloads, saved to its download folder whichever window started them.
    downloads: Downloads
    # Where the context comes from and what it may do: the daemon's own Chromium, CDP attach, the extension.
    backend: Backend
    # The session's trust policy: what a load the window makes itself (a hung page's replacement) may reach.
    trust: TrustPolicy
    # The session's dialog policy and history, shared by all its windows.
    dialogs: Dialogs = field(default_factory=Dialogs)
    profile: ProfileLink | None = None
    tabs: dict[str, Tab] = field(default_factory=dict)
    active_tab_id: str | None = None
    # Tabs the page opened itself (target=_blank, window.open) wait here for the next action's report.
    opened: list[Tab] = field(default_factory=list)
    # Network: the size of each tab's request log (0: none), and the window's routes (browser_route),
    # numbered per window unless the session gives them its own session-wide ids.
    network_log_size: int = 0
    routes: Routes = field(init=False)
    # Tabs this session opened itself (new_tab): in a window on a shared browser, the only ones it closes.
    own_tabs: set[str] = field(default_factory=set)
    # Raises LIMIT_EXCEEDED when the session or the browser has no room for one more tab (Session.check_tab_room).
    check_room: Callable[[], None] = lambda: None
    # Told of every finished load of a main frame (a flow's onPage trigger listens through the session).
    on_load: Callable[[Tab], None] = lambda tab: None
    # Work the window's page events start (answering a dialog): stopped when the window closes.
    tasks: TaskOwner = field(init=False)

    def __post_init__(self) -> None:
        self.routes = Routes(self.context, numbered("route_"))
        self.tasks = TaskOwner(f"window {self.id}")

    @property
    def kind(self) -> str:
        return self.backend.kind

    @property
    def guard(self) -> UrlGuard | None:
        """The URL guard all of this window's traffic goes through, if its session needs one (daemon/policy)."""
        return self.backend.guard

    def session_tabs(self) -> list[Tab]:
        """The open tabs that count against the session's limits: on a shared browser, only those it opened."""
        tabs = self.open_tabs()
        return [tab for tab in tabs if tab.id in self.own_tabs] if self.backend.shared else tabs

    def watch(self) -> None:
        self.context.on("page", self._page_opened)
        if self.guard is not None:
            self.guard.on_refused = self._refused

    def _refused(self, refusal: Refusal) -> None:
        # The guard cannot tell which tab asked; the active one is the best guess, and the one being acted on.
        tab = self.tabs.get(self.active_tab_id or "")
        if tab is not None:
            tab.events.append(f"{REFUSED_EVENT} {refusal.url} ({refusal.rule})")

    def open_tabs(self) -> list[Tab]:
        return [tab for tab in self.tabs.values() if not tab.page.is_closed()]

    def adopt(self, page: Page) -> Tab:
        tab = Tab(id=self.next_tab_id(), page=page, window=self)
        tab.watch()
        page.on("close", lambda _page: self._closed(tab))
        page.on("load", lambda _page: self.on_load(tab))
        self.tabs[tab.id] = tab
        return tab

    def _page_opened(self, page: Page) -> None:
        if any(tab.page is page for tab in self.tabs.values()):
            return  # one we opened ourselves through new_tab
        tab = self.adopt(page)
        self.opened.append(tab)
        log.debug("page opened a new tab %s", tab.id)

    def _closed(self, tab: Tab) -> None:
        self.tabs.pop(tab.id, None)
        if self.active_tab_id == tab.id:
            remaining = self.open_tabs()
            self.active_tab_id = remaining[-1].id if remaining else None

    def put_in_place(self, stuck: Tab, page: Page) -> Tab:
        """`page` becomes the tab `stuck` was, under its id (a page that no longer answers is replaced)."""
        # The context's page event may already have made it a tab of its own: that tab takes the id and place.
        fresh = next((tab for tab in self.tabs.values() if tab.page is page), None) or self.adopt(page)
        if fresh in self.opened:
            self.opened.remove(fresh)
        self.tabs.pop(fresh.id, None)
        fresh.id, stuck.id = stuck.id, f"{stuck.id} (replaced)"
        fresh.refs.issued = stuck.refs.issued  # refs of the stuck page are stale, not unknown
        self.tabs[fresh.id] = fresh
        return fresh

    async def new_tab(self, activate: bool = True) -> Tab:
        """A new blank tab, the active one unless `activate` is false and the window has an active tab already.

        Runs open theirs without activating (D-13: runs never change the caller's active tab).
        """
        self.check_room()
        page = await self.context.new_page()
        # The context's "page" event may already have adopted it; find or adopt exactly once.
        tab = next((t for t in self.tabs.values() if t.page is page), None) or self.adopt(page)
        if tab in self.opened:
            self.opened.remove(tab)
        self.own_tabs.add(tab.id)
        if activate or self.active_tab_id not in self.tabs:
            self.active_tab_id = tab.id
        return tab

    def abandon(self) -> None:
        """Its browser is gone: stop all that would outlive it (the periodic publish, the guard's listener, the
        event tasks). Nothing is published: a dead context has no state to export."""
        if self.profile is not None and self.profile.periodic is not None:
            self.profile.periodic.cancel()
        self.backend.abandon()
        self.tasks.cancel()

    async def close(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.tasks.aclose()
            profile = self.profile
            if profile is not None and profile.periodic is not None:
                profile.periodic.cancel()
            if profile is not None and profile.publisher is not None and profile.source is not None:
                # Publish on close while the context can still export its state.
                with anyio.move_on_after(CLOSE_PUBLISH_TIMEOUT_S):
                    await profile.publisher.publish(profile.source, debounce=False)
            try:
                await self.backend.close([tab.page for tab in self.open_tabs() if tab.id in self.own_tabs])
            except Exception:  # the browser may already be gone; the context died with it
                log.debug("closing window %s failed", self.id, exc_info=True)
