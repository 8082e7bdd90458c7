"""Loading a URL in a page: the only code that does (tests/unit/test_trust_paths.py holds every other module to
it), for the tools, the runs, the scrapes, map, flows (every node that loads, a start URL), templates, triggers
and the login and record windows. Each load asks the caller's TrustPolicy first (URL_NOT_ALLOWED before
anything loads); the window's URL guard then checks every request the page makes.

Playwright's failures become errors a model can act on; a load the URL guard refused (a redirect hop
or the page itself) is its URL_NOT_ALLOWED naming the rule, not the guard page's HTTP 403 or a
connection error; a tab's timeout says what did load.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api import Response as PageResponse

from browserd.daemon.errors import BrowserdError, InvalidParameter, NavigationTimeout
from browserd.daemon.policy.refusals import UrlGuard
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.sessions.page_errors import navigation_errors
from browserd.daemon.sessions.tab import Tab

WaitUntil = Literal["load", "domcontentloaded", "networkidle", "commit"]
HistoryMove = Literal["back", "forward", "reload"]
DOWNLOAD_STARTING = "Download is starting"  # Playwright's goto error for a URL that downloads
_STEPS = {"back": -1, "forward": 1, "reload": 0}


@dataclass(frozen=True)
class Navigation:
    reply: PageResponse | None
    # The URL was a file, not a page: it downloads and the page stays where it was.
    downloaded: bool = False


async def navigate(
    page: Page,
    url: str,
    guard: UrlGuard | None,
    trust: TrustPolicy,
    *,
    wait_until: WaitUntil = "load",
    timeout: float | None = None,
    downloads: bool = False,
) -> Navigation:
    """page.goto once `trust` allows the URL, under the URL guard; `downloads`: a URL that downloads is an
    answer, not an error."""
    await trust.check_url(url)
    mark = guard.mark() if guard is not None else 0
    try:
        with navigation_errors(url, page.url):
            try:
                reply = await page.goto(url, wait_until=wait_until, timeout=timeout)
            except PlaywrightError as exc:
                if not downloads or DOWNLOAD_STARTING not in str(exc):
                    raise
                return Navigation(None, downloaded=True)
    except NavigationTimeout:
        raise  # a guard refuses at once; a load that outlasts its timeout was not refused
    except BrowserdError as exc:
        refusal = guard.navigation_refusal(mark, page.url, None) if guard is not None else None
        if refusal is not None:
            raise refusal.error() from exc
        raise
    if guard is not None and reply is not None:
        refusal = guard.navigation_refusal(mark, page.url, reply.headers)
        if refusal is not None:
            raise refusal.error()
    return Navigation(reply)


async def history_target(page: Page, move: HistoryMove) -> str | None:
    """The URL a history move would load: the history entry it reaches (reload: the current one, whose URL is
    the one that failed when the tab shows an error page). None: there is no such entry, or the backend gives
    no CDP session, when reload falls back to the page's URL."""
    try:
        cdp = await page.context.new_cdp_session(page)
    except PlaywrightError:
        return page.url if move == "reload" else None
    try:
        history = await cdp.send("Page.getNavigationHistory")
    finally:
        with contextlib.suppress(PlaywrightError):
            await cdp.detach()
    index = int(history["currentIndex"]) + _STEPS[move]
    entries = history["entries"]
    return str(entries[index]["url"]) if 0 <= index < len(entries) else None


async def move_in_history(
    page: Page, move: HistoryMove, trust: TrustPolicy, wait_until: WaitUntil = "load", timeout: float | None = None
) -> PageResponse | None:
    """Back, forward or reload, once `trust` allows the URL of the entry it reaches: an entry the URL guard
    refused (a link the page followed) or one the policy forbids answers as a navigate to it would.

    Waits for `wait_until`. A page restored from the back-forward cache (the user's Chrome keeps one; the
    daemon's Chromium runs without) fires no second load, so a history move waits for the commit and then for
    the load state only while the document it reached still loads."""
    # A level the policy refuses nothing at (a local session without origin lists) needs no look at the history.
    target = await history_target(page, move) if trust.urls.guarded(trust.level) else None
    if target is not None:
        await trust.check_url(target)
    if move == "reload" or wait_until == "commit":
        moves = {"back": page.go_back, "forward": page.go_forward, "reload": page.reload}
        return await moves[move](wait_until=wait_until, timeout=timeout)
    started = time.monotonic()
    history = page.go_back if move == "back" else page.go_forward
    reply = await history(wait_until="commit", timeout=timeout)
    if await page.evaluate("document.readyState") != "complete":
        left = None if not timeout else max(1.0, timeout - (time.monotonic() - started) * 1000)
        await page.wait_for_load_state(wait_until, timeout=left)
    return reply


async def timed_out(tab: Tab, url: str, exc: NavigationTimeout) -> NavigationTimeout:
    """The timeout, saying what did load: a page that never finishes is often usable already."""
    try:
        title = await tab.page.title()
    except PlaywrightError:
        title = ""
    return NavigationTimeout(
        f"{exc.message}; so far {tab.page.url} is loaded (title {title!r})",
        hint="Call browser_snapshot to read what loaded, or retry with waitUntil='domcontentloaded' or a larger "
        "timeout.",
        url=url,
        loadedUrl=tab.page.url,
        loadedTitle=title,
    )


async def goto(
    tab: Tab, url: str, trust: TrustPolicy, wait_until: WaitUntil = "load", timeout: float | None = None
) -> Navigation:
    """Load `url` in `tab` as `trust` allows, through its window's guard; a download is reported, a timeout says
    what loaded."""
    try:
        return await navigate(
            tab.page, url, tab.window.guard, trust, wait_until=wait_until, timeout=timeout, downloads=True
        )
    except NavigationTimeout as exc:
        raise await timed_out(tab, url, exc) from exc


_SCHEMES = {"http", "https", "about", "file", "data"}


async def check_url(url: str, trust: TrustPolicy) -> None:
    """Refuse a URL before anything loads: an unsupported scheme, or one the session's URL policy forbids."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in _SCHEMES:
        raise InvalidParameter(
            f"unsupported URL `{url}`: expected http(s), file:, data: or about:blank",
            hint="Pass an absolute URL such as https://example.com/.",
            field="url",
        )
    await trust.check_url(url)
