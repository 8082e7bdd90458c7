"""Who may open the console: the person at this machine who ran `browserd console` (issue 25, DESIGN.md §7).

`browserd console` asks the daemon over its Unix socket (same user only) for a one-time link. Opening it
trades the link's token for a cookie (console_guard.py sets it HttpOnly, SameSite=Strict, path /console). Both
live in memory only, so a daemon restart ends them. No starlette here: the daemon holds one ConsoleAuth
whether or not it serves HTTP.
"""

from __future__ import annotations

import hashlib
import secrets
import time

PREFIX = "/console"
OPEN_PATH = "/open"
# Long enough to open a link a terminal printed, short enough that one found in a scrollback is dead.
LINK_TTL_S = 120.0
# A console tab left open for a working day keeps working; the next day needs `browserd console` again.
COOKIE_TTL_S = 12 * 3600.0


def _digest(token: str) -> str:
    # Tokens are kept by digest: looking one up compares no secret byte by byte.
    return hashlib.sha256(token.encode()).hexdigest()


class ConsoleAuth:
    """The link tokens not yet used and the cookies they became."""

    def __init__(self) -> None:
        self._links: dict[str, float] = {}
        self._cookies: dict[str, float] = {}

    def new_link_token(self) -> str:
        token = secrets.token_urlsafe(32)
        now = time.monotonic()
        self._links = {d: t for d, t in self._links.items() if t > now}
        self._links[_digest(token)] = now + LINK_TTL_S
        return token

    def new_link(self, base_url: str) -> str:
        """The one-time link `browserd console` prints: `base_url` is the HTTP server's (http://127.0.0.1:PORT)."""
        return f"{base_url}{PREFIX}{OPEN_PATH}?token={self.new_link_token()}"

    def redeem(self, token: str) -> str | None:
        """A new cookie value for a live link token, which is used up; None for any other token."""
        expires = self._links.pop(_digest(token), None)
        if expires is None or expires < time.monotonic():
            return None
        cookie = secrets.token_urlsafe(32)
        self._cookies[_digest(cookie)] = time.monotonic() + COOKIE_TTL_S
        return cookie

    def admits(self, cookie: str | None) -> bool:
        if not cookie:
            return False
        expires = self._cookies.get(_digest(cookie))
        return expires is not None and expires > time.monotonic()
