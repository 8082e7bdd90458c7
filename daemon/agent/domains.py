"""The domains an agent run may visit (`allowedDomains`), held whatever a page or the model says.

Patterns are origin patterns (daemon/policy/origins.py): `example.com` (any port and scheme),
`*.example.com` (and its subdomains), `http://127.0.0.1:8080`. They narrow what the caller's trust
level allows, never widen it: the session's URL policy still checks every load. A URL outside them
is refused before it loads, and the agent's window aborts any page load outside them (a link, a
redirect, a script's location change; it answers 204, so the tab stays where it was), so no page leads
the agent elsewhere.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, Route
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Request as PageRequest

from browserd.daemon.errors import InvalidParameter, UrlNotAllowed
from browserd.daemon.policy.origins import DEFAULT_PORTS, BadPattern, OriginPattern, first_match

log = logging.getLogger(__name__)

# Pages that are no site: an empty tab, an error page.
NEUTRAL_SCHEMES = ("about", "data", "chrome-error")


class AllowedDomains:
    def __init__(self, patterns: list[str] | None) -> None:
        try:
            self.patterns = tuple(OriginPattern.parse(text) for text in patterns or [])
        except BadPattern as exc:
            raise InvalidParameter(
                f"allowedDomains: {exc}",
                hint="Give hosts such as example.com or *.example.com.",
                field="allowedDomains",
            ) from exc
        # Loads the window refused since the last action's report.
        self.refused: list[str] = []

    def take_refused(self) -> list[str]:
        refused, self.refused = self.refused, []
        return refused

    @property
    def any(self) -> bool:
        return not self.patterns

    def allows(self, url: str) -> bool:
        if self.any:
            return True
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme in NEUTRAL_SCHEMES:
            return True
        try:
            port = parts.port or DEFAULT_PORTS.get(scheme, 0)
        except ValueError:
            return False
        return first_match(self.patterns, scheme, parts.hostname or "", port) is not None

    def check(self, url: str) -> None:
        if not self.allows(url):
            raise UrlNotAllowed(
                f"{url} is outside this run's allowedDomains ({', '.join(p.text for p in self.patterns)})",
                hint="Stay on the allowed domains; the caller decides them.",
                url=url,
                rule="allowed-domains",
            )

    async def hold(self, context: BrowserContext) -> None:
        """Abort every page load of `context` outside the allowed domains (subresources are the page's own)."""
        if self.any:
            return

        async def handle(route: Route, request: PageRequest) -> None:
            try:
                if request.is_navigation_request() and not self.allows(request.url):
                    log.info("agent: a load of %s outside allowedDomains was refused", request.url)
                    self.refused.append(request.url)
                    # 204 No Content: the browser stays on the page it has, rather than showing an error page.
                    await route.fulfill(status=204)
                else:
                    await route.fallback()
            except PlaywrightError:  # the page closed while the request was paused
                pass

        await context.route("**/*", handle)
