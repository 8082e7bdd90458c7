"""A call whose tab went back to its user is told as that, not as a crash (issue 13).

On the user's own Chrome (the extension bridge) a tab can leave a session mid-call: the user drags it out
of the session's tab group or closes it, or the extension's service worker stops. Playwright then sees a
page or browser that "has been closed", which the error mapping would call PAGE_CRASHED ("the browser was
restarted"). The window's backend knows better, and its account replaces that error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import BrowserdError
from browserd.daemon.sessions.session import Session

# What a page vanishing under a call turns into on its way up; input errors and refusals are never replaced.
_VANISHED_PAGE_CODES = frozenset(
    {"PAGE_CRASHED", "EXECUTION_ERROR", "ELEMENT_NOT_FOUND", "SESSION_NOT_FOUND", "NAVIGATION_TIMEOUT"}
)


@contextmanager
def departures_explained(session: Session) -> Iterator[None]:
    windows = list(session.windows.values())
    since = anyio.current_time()
    try:
        yield
    except (BrowserdError, PlaywrightError) as exc:
        if isinstance(exc, BrowserdError) and exc.code not in _VANISHED_PAGE_CODES:
            raise
        # Windows opened during the call count too (the window may also be gone from the session by now).
        known = {id(window) for window in windows}
        candidates = windows + [w for w in session.windows.values() if id(w) not in known]
        for window in candidates:
            explained = window.backend.departure(since)
            if explained is not None:
                raise explained from exc
        raise
