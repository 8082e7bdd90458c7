"""The URL guard of a context on another host's browser: request interception, not the guard proxy.

The guard proxy listens on the daemon's loopback, which a browser on another host cannot reach (and
one that could would be trusting a proxy as its only barrier). So a guarded context of a pool member
routes every request through this handler: the target is checked with the UrlPolicy (resolved on the
daemon's side), then fetched by Playwright with redirects off (by the run-server on a `playwright`
member, by the daemon's own driver on `cdp` and `webdriver` members), and each redirect hop is checked
the same way before it is followed, since Playwright calls no route handler for the
follow-up request of a redirect. The page gets the final answer; a refused hop fails the request
(net::ERR_BLOCKED_BY_CLIENT), recorded like the proxy's refusals so tools name the rule. WebSockets are
checked before they connect.

Not covered, unlike the proxy: the page's URL after a redirect stays the first URL (the browser sees one
answer); names are resolved on the daemon's host, the browser's host may resolve them otherwise; WebRTC.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from urllib.parse import urljoin

from playwright.async_api import BrowserContext, Route, WebSocketRoute
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.policy.refusals import UrlGuard
from browserd.daemon.policy.urls import Refusal, UrlPolicy
from browserd.protocol.messages import TrustLevel

log = logging.getLogger(__name__)

MAX_REDIRECTS = 20
_REDIRECTS = {301, 302, 303, 307, 308}


class RouteGuard(UrlGuard):
    def __init__(self, policy: UrlPolicy, trust: TrustLevel) -> None:
        super().__init__()
        self.policy = policy
        self.trust: TrustLevel = trust
        self.requests = 0

    async def install(self, context: BrowserContext) -> None:
        await context.route("**/*", self._request)
        await context.route_web_socket("**/*", self._web_socket)

    async def _refused(self, url: str) -> Refusal | None:
        refusal = await self.policy.refusal(url, self.trust)
        if refusal is not None:
            self._refuse(refusal)
        return refusal

    async def _request(self, route: Route) -> None:
        self.requests += 1
        url = route.request.url
        try:
            if await self._refused(url):
                await route.abort("blockedbyclient")
                return
            response = await route.fetch(max_redirects=0)
            for _ in range(MAX_REDIRECTS):
                location = response.headers.get("location")
                if response.status not in _REDIRECTS or not location:
                    break
                url = urljoin(url, location)
                if await self._refused(url):
                    await route.abort("blockedbyclient")
                    return
                # 303 (and a POST's 301/302) turn into a GET, as a browser does.
                method = "GET" if response.status == 303 or route.request.method == "POST" else None
                response = await route.fetch(url=url, method=method, max_redirects=0)
            await route.fulfill(response=response)
        except PlaywrightError as exc:  # the page or its context went away, or the target did not answer
            log.debug("route guard: %s failed: %s", url, exc)
            with suppress(PlaywrightError):
                await route.abort("failed")

    async def _web_socket(self, socket: WebSocketRoute) -> None:
        if await self._refused(socket.url):
            await socket.close(code=1008, reason="URL not allowed")
            return
        socket.connect_to_server()
