"""The one interface every session backend offers; tools, runs and flows never ask which one they have.

A backend instance belongs to one window: it opens (or attaches to) that window's browser context,
names the tabs that were already there, and closes or detaches it. What it may do beyond that is a
capability; asking for one it lacks raises `CapabilityMissing`, never a silent no-op.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

from playwright.async_api import BrowserContext, CDPSession, Page

from browserd.daemon.errors import BrowserdError, CapabilityMissing
from browserd.daemon.policy.refusals import UrlGuard
from browserd.daemon.runtime.pool import Slot
from browserd.protocol.messages import TrustLevel

BackendKind = Literal["playwright", "cdp", "extension"]


class SpareWindow(NamedTuple):
    """A warm context of default options with its blank page and WINDOW_SCRIPT (SessionManager.keep_spare)."""

    context: BrowserContext
    page: Page
    # The page's CDP session (Tab.arm), attached ahead too: the first call then makes no round trip for it.
    cdp: CDPSession | None


@dataclass(frozen=True)
class WindowRequest:
    """What a new window asks its backend for; each backend takes the parts it can use (Backends.open)."""

    kind: BackendKind
    session_id: str
    client_name: str
    trust_level: TrustLevel
    # Options of a new context (viewport, locale, mobile...), already resolved against the defaults.
    context_options: Mapping[str, Any] = field(default_factory=dict)
    # The login profile's snapshot the context starts from (its cookies and storage).
    storage_state: Mapping[str, Any] | None = None
    # The options are the defaults, so the daemon's warm spare window would do; `warm`: take it if ready.
    is_default: bool = True
    warm: bool = False
    # cdp: the debugging endpoint to attach to; playwright: the browser pool member (a name or a label).
    endpoint: str | None = None
    timeout_ms: int = 15_000


# storage_export: write the window's cookies to a login profile; profile_publish: start from a profile
# and write it back as it changes; guard_proxy: send the traffic through the URL guard (remote sessions).
Capability = Literal["storage_export", "profile_publish", "guard_proxy"]

_CAPABILITY_NAMES: dict[Capability, str] = {
    "storage_export": "copy its cookies to a login profile",
    "profile_publish": "start from a login profile and write it back",
    "guard_proxy": "send its traffic through the URL guard a remote session needs",
}


class Backend(ABC):
    kind: ClassVar[BackendKind]
    # How listings describe a window on this backend ("" for the daemon's own browser).
    label: str = ""
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    # The browser is the user's: its other tabs are not this session's to count or close, and its going
    # away is the user's doing, not a crash of ours.
    shared: ClassVar[bool] = False
    # Why the backend lacks its capabilities, for the error a model reads.
    lacks_because: ClassVar[str] = ""

    guard: UrlGuard | None = None
    # Its lease of a browser pool member (daemon/runtime/pool.py), given back when the window closes.
    slot: Slot | None = None
    # The warm window it took instead of opening a context (own Chromium only): its page is the first tab.
    spare: SpareWindow | None = None
    # Its browser shows a PDF it navigates to in a viewer (whose page reads as empty) rather than
    # downloading it: the tab fetches the file again as a download (Tab._response).
    shows_pdfs: bool = True
    # Its pages are driven by this daemon's Playwright driver with browserd's preload, which builds no injected
    # script in a page's main world for an element handle's preview: a document's first click or hover may go
    # at rest (elements/at_rest.py). Not a remote Playwright server's pages (another driver).
    preloaded_driver: bool = False

    @property
    @abstractmethod
    def context(self) -> BrowserContext: ...

    @property
    def scripted(self) -> bool:
        """Whether the context has the window script already (a spare window was prepared with it)."""
        return False

    def existing_pages(self) -> list[Page]:
        """Tabs that were open before the window was, which become the session's on attach."""
        return []

    @abstractmethod
    async def close(self, own_pages: list[Page]) -> None:
        """Close the window, or only detach from it when the browser is the user's (closing `own_pages`)."""

    def abandon(self) -> None:
        """Its browser went away: the lease goes back to the pool now (nothing left to close)."""
        self._close_guard()
        if self.slot is not None:
            self.slot.release_soon()

    async def _release(self) -> None:
        if self.slot is not None:
            await self.slot.release()

    def closed_note(self, window_id: str) -> str:
        return f"Closed {window_id} and its tabs"

    def departure(self, since: float) -> BrowserdError | None:
        """Why a call that started at `since` (anyio time) lost its tab, when the tab went away by the
        user's doing rather than a crash: a failure it caused is reported as this instead. None: no such thing."""
        return None

    def require(self, capability: Capability, window_id: str, hint: str | None = None) -> None:
        if capability not in self.capabilities:
            raise CapabilityMissing(
                f"{window_id} is {self.lacks_because or 'on a backend that cannot do this'}; "
                f"it cannot {_CAPABILITY_NAMES[capability]}",
                hint=hint,
                windowId=window_id,
                backend=self.kind,
                capability=capability,
            )

    def _close_guard(self) -> None:
        if self.guard is not None:
            self.guard.close()
