"""What every URL guard of a browser context shares: the refusals it made, for tools to name the rule.

Two guards implement it: the guard proxy (policy/proxy.py) for the daemon's own Chromium, and route
interception (policy/route_guard.py) for browsers on other hosts, which cannot reach the proxy.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from browserd.daemon.policy.urls import Refusal

log = logging.getLogger(__name__)

REFUSALS_KEPT = 50
# Marks the guard proxy's own refusal page, so a navigation that ends on it can be reported as a refusal.
REFUSED_HEADER = "x-browserd-refused"
OnRefused = Callable[[Refusal], None]


class UrlGuard:
    def __init__(self) -> None:
        self.refusals: deque[Refusal] = deque(maxlen=REFUSALS_KEPT)
        self.on_refused: OnRefused | None = None
        self._refused_total = 0

    @property
    def context_options(self) -> dict[str, Any]:
        """What browser.new_context needs for this guard (the proxy's address; nothing for route interception)."""
        return {}

    def close(self) -> None:
        """The context is gone: stop guarding."""
        return None

    def mark(self) -> int:
        """A bookmark in the refusals, for `refusal_since` after a navigation."""
        return self._refused_total

    def navigation_refusal(self, mark: int, page_url: str, reply_headers: dict[str, str] | None) -> Refusal | None:
        """After a navigation from `mark`: the refusal that ended it, if any (reply_headers None: it failed).

        A refused plain-http target ends on the guard's refusal page; a refused https target (a tunnel)
        fails the navigation, whose error names the first URL of the redirect chain, not the refused one.
        """
        if reply_headers is None:
            return self.refusal_since(mark, page_url)
        if reply_headers.get(REFUSED_HEADER):
            return self.refusal_since(mark, page_url, last=True)
        return None

    def refusal_since(self, mark: int, url: str, *, last: bool = False) -> Refusal | None:
        """The refusal of `url` since `mark` (a tunnel refusal names host:port only), else the first (last)."""
        recent = list(self.refusals)[max(0, len(self.refusals) - (self._refused_total - mark)) :]
        if not recent:
            return None
        netloc = urlsplit(url).netloc
        for refusal in recent:
            if refusal.url in (url, netloc):
                return refusal
        return recent[-1] if last else recent[0]

    def _refuse(self, refusal: Refusal) -> None:
        log.info("URL guard refused %s (%s)", refusal.url, refusal.rule)
        self.refusals.append(refusal)
        self._refused_total += 1
        if self.on_refused is not None:
            self.on_refused(refusal)
