"""The scrape service: one page, one format, through the fast path or a fresh headless context (reference/000).

`scrape_page` is one `scrape` call: the login profile it loads with (and publishes the page's cookies
back to), the page, its format's payload and the D-24 login hint.

`load_page` decides the path (issue 12): `render="always"` is the browser; `"never"` the HTTP fast path
(daemon/scrape/fetch.py) only; `"auto"` fetches first and keeps the fetched HTML when it holds the
content (fetch.browser_reason), else renders the page in the browser. Screenshots and mobile pages
always take the browser. Either way the page comes back as a LoadedPage saying which path served it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import anyio
from playwright.async_api import BrowserContext

from browserd.daemon.config import ScrapeConfig
from browserd.daemon.errors import BrowserdError, ExecutionError, NotSupported, UrlNotAllowed
from browserd.daemon.events import Progress
from browserd.daemon.policy.proxy import GuardProxy
from browserd.daemon.policy.route_guard import RouteGuard
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.runtime.browser import proxy_option
from browserd.daemon.runtime.contexts import poolable_state
from browserd.daemon.runtime.executor import BrowserTask, in_fresh_context
from browserd.daemon.runtime.pool import MemberLost
from browserd.daemon.scrape.extract import Extraction, Link, extract, extract_links, page_metadata
from browserd.daemon.scrape.fetch import (
    FetchFailed,
    FetchRequest,
    NotHtml,
    browser_reason,
    client_for_session,
    fetch_html,
)
from browserd.daemon.scrape.task import VISUAL_FORMATS, Format, LoadedPage, PageLoad, Render, ScrapePageTask
from browserd.protocol.messages import TrustLevel

if TYPE_CHECKING:
    # Only a type here: services.py builds on scrape (through runs), so scrape must not import it back.
    from browserd.daemon.services import Services

log = logging.getLogger(__name__)
T = TypeVar("T")
# A page is loaded again this often when the pool member it was on goes down under it.
LOST_MEMBER_RETRIES = 3


@dataclass(frozen=True)
class ScrapeRequest:
    url: str
    format: Format = "markdown"
    only_main_content: bool = True
    wait_for_ms: int = 0
    profile_id: str = "master"
    include_tags: list[str] | None = None
    exclude_tags: list[str] | None = None
    timeout_ms: int | None = None
    mobile: bool = False
    headers: dict[str, str] | None = None
    # The calling session's trust level: the URL policy it loads under (remote: no private addresses).
    trust_level: TrustLevel = "local"
    render: Render = "auto"
    # None: [scrape] block_resources decides.
    block_resources: bool | None = None
    # This page's own proxy server; None or empty: [browser] proxy (if any).
    proxy: str | None = None


@dataclass
class ScrapeResult:
    format: Format
    page: LoadedPage
    metadata: dict[str, Any]
    markdown: str = ""
    html: str = ""
    links: list[Link] = field(default_factory=list)


@dataclass
class Scraped:
    """One scrape: the page, its format's payload, the login profile it loaded with (None: a fresh anonymous
    context) as of the call's start, and what to tell a caller whose profile lacks the page's login."""

    page: LoadedPage
    result: ScrapeResult
    profile_id: str | None
    profile_version: int | None
    login_hint: str | None


async def _no_progress(done: float, total: float | None, message: str | None) -> None:
    return None


async def scrape_page(
    services: Services,
    request: ScrapeRequest,
    trust: TrustPolicy,
    named_profile: str | None,
    progress: Progress = _no_progress,
) -> Scraped:
    """The page of `request` with the cookies of `named_profile` (else the default profile, for a local
    session), rendered in its format. Cookies the page set go back to the profile after the call."""
    profiles = services.profiles
    named = profiles.profile_id(named_profile) if named_profile is not None else None
    # A remote session without profileId scrapes in a fresh anonymous context: never `master`'s cookies.
    profile_id = trust.default_profile(named, profiles.profile_id(None), "scrape with")
    request = dataclasses.replace(request, profile_id=profile_id or "", trust_level=trust.level)
    snapshot = await profiles.load(profile_id) if profile_id is not None else None
    await progress(0, 2, f"loading {request.url}")
    state = snapshot.storage_state() if snapshot is not None else None
    page = await load_page(services, request, state, export_state=snapshot is not None)
    if snapshot is not None and page.storage_state is not None and page.storage_state != state:
        # Cookies the page set (in the browser or on the fast path) go back to the profile after the answer.
        profiles.publish_later(snapshot.meta.profile_id, page.storage_state, snapshot.version, "scrape")
    await progress(1, 2, "extracting")
    result = await render(request, page, services.scrape.extraction)
    if snapshot is None:
        return Scraped(page, result, None, None, None)
    hint = login_hint(services.config.scrape, snapshot.meta.profile_id, snapshot.version, page)
    return Scraped(page, result, profile_id, snapshot.version, hint)


def login_hint(config: ScrapeConfig, profile_id: str, version: int, page: LoadedPage) -> str | None:
    """D-24: a profile that never logged in, refused (401/403) or sent to a login page."""
    if version != 0:
        return None
    path = urlsplit(page.final_url).path.lower()
    on_login_page = any(pattern in path for pattern in config.login_url_patterns)
    if page.status in (401, 403) or on_login_page:
        return f"run: browserd login --profile {profile_id}"
    return None


async def context_options(
    services: Services, request: ScrapeRequest, storage_state: Mapping[str, Any] | None
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if storage_state is not None:
        options["storage_state"] = storage_state
    if request.mobile:
        options.update(await services.runtime.mobile_options())
    if request.headers:
        options["extra_http_headers"] = request.headers
    if request.proxy:
        options["proxy"] = proxy_option(request.proxy)
    return options


async def load_page(
    services: Services, request: ScrapeRequest, storage_state: Mapping[str, Any] | None, export_state: bool
) -> LoadedPage:
    await services.guards.policy.check_url(request.url, request.trust_level)
    services.guards.refuse_proxy(request.trust_level, request.proxy)
    memory = services.scrape.http.memory
    # An explicit waitFor asks for the browser's wait; screenshots and mobile pages need the browser.
    fast = request.render == "never" or (
        request.render == "auto"
        and request.wait_for_ms == 0
        and request.format not in VISUAL_FORMATS
        and not request.mobile
    )
    if fast and (request.render == "never" or not memory.prefers_browser(request.url)):
        page = await fetch_page(services, request, storage_state)
        if page is not None:
            return page
    return await browser_page(services, request, storage_state, export_state)


async def fetch_page(
    services: Services, request: ScrapeRequest, storage_state: Mapping[str, Any] | None
) -> LoadedPage | None:
    """The fast path; None when the page needs the browser (render auto only: never raises instead)."""
    config = services.config.scrape
    never = request.render == "never"
    timeout_ms = request.timeout_ms or config.timeout_ms
    fetch = FetchRequest(
        url=request.url,
        trust_level=request.trust_level,
        # Under auto a slow fetch leaves the browser time of its own.
        timeout_ms=timeout_ms if never else max(1, timeout_ms // 2),
        max_bytes=config.fetch_max_bytes,
        storage_state=storage_state,
        headers=request.headers,
    )
    policy = services.guards.policy
    try:
        async with client_for_session(
            services.guards, services.scrape.http, request.trust_level, request.url, request.proxy
        ) as (client, guard):
            fetched = await fetch_html(client, policy, fetch, guard)
    except NotHtml as exc:
        if never:
            raise NotSupported(
                f"render=never reads HTML pages only: {request.url}: {exc}",
                hint="Use render auto (the default) or always: the browser shows PDFs and images.",
                url=request.url,
            ) from exc
        return None
    except UrlNotAllowed:
        raise  # the browser would be refused the same
    except BrowserdError:
        if never:
            raise
        return None  # a fetch too slow for its half of the time: the browser gets the rest
    except FetchFailed as exc:
        if never:
            raise ExecutionError(
                f"fetching {request.url} failed: {exc}", hint="Check the URL, or use render auto.", url=request.url
            ) from exc
        log.debug("fast path of %s failed, the browser tries: %r", request.url, exc)
        return None
    page = LoadedPage(
        final_url=fetched.final_url,
        status=fetched.status,
        html=fetched.html,
        storage_state=fetched.storage_state,
        via="fetch",
    )

    def judge() -> tuple[Extraction, str | None]:
        extraction = extract_for(request, page.html, page.final_url)
        return extraction, browser_reason(page.html, len(extraction.markdown.strip()), config.fetch_min_chars)

    extraction, reason = await anyio.to_thread.run_sync(judge, limiter=services.scrape.extraction)
    page.extraction, page.title = extraction, extraction.metadata.title or ""
    if not never:
        services.scrape.http.memory.record(request.url, needed_browser=reason is not None)
        if reason is not None:
            log.debug("%s needs the browser: %s", request.url, reason)
            return None
    return page


async def browser_page(
    services: Services, request: ScrapeRequest, storage_state: Mapping[str, Any] | None, export_state: bool
) -> LoadedPage:
    """The page loaded in a browser; one whose pool member went down under it is loaded again on another
    (a crawl or a batch gets every page once: the lost load delivered nothing)."""
    for _ in range(LOST_MEMBER_RETRIES):
        try:
            return await _browser_page(services, request, storage_state, export_state)
        except MemberLost as exc:
            log.info("%s: %s; loading it again elsewhere", request.url, exc.message)
    return await _browser_page(services, request, storage_state, export_state)


async def _browser_page(
    services: Services, request: ScrapeRequest, storage_state: Mapping[str, Any] | None, export_state: bool
) -> LoadedPage:
    config = services.config.scrape
    load = PageLoad(
        url=request.url,
        format=request.format,
        wait_for_ms=request.wait_for_ms,
        timeout_ms=request.timeout_ms or config.timeout_ms,
        smart_wait_max_ms=config.smart_wait_max_ms,
        smart_wait_quiet_ms=config.smart_wait_quiet_ms,
    )
    block = config.block_resources if request.block_resources is None else request.block_resources
    resources = services.scrape.resources if block else None
    # A service worker's requests pass no page's interception (daemon/scrape/resources.py).
    blocked_workers = {"service_workers": "block"} if block else {}
    trust = TrustPolicy(request.trust_level, services.guards.policy)
    if _poolable(services, request, storage_state):
        task = ScrapePageTask(load, trust, export_state=export_state, resources=resources, pooled=True)
        options = await context_options(services, request, None) | blocked_workers
        return await _in_warm_context(services, task, options, request.profile_id, storage_state)
    options = await context_options(services, request, storage_state) | blocked_workers
    if not services.guards.policy.guarded(request.trust_level):
        task = ScrapePageTask(load, trust, export_state=export_state, resources=resources)
        return await services.executor.run_in_context(task, **options)

    async def guarded() -> LoadedPage:
        async with services.pool.lease() as slot:
            if slot.member.local:
                async with services.guards.guarding(request.trust_level) as proxy:
                    task = ScrapePageTask(load, trust, export_state=export_state, guard=proxy, resources=resources)
                    return await in_fresh_context(
                        slot.browser, task, options | (proxy.context_options if proxy else {})
                    )
            # Another host cannot reach the guard proxy: route interception checks each request there.
            route_guard = RouteGuard(services.guards.policy, request.trust_level)
            task = ScrapePageTask(load, trust, export_state=export_state, guard=route_guard, resources=resources)
            return await in_fresh_context(slot.browser, _RouteGuarded(task, route_guard), options)

    return await services.executor.run(guarded)


@dataclass
class _RouteGuarded:
    """A BrowserTask: `task` in a context whose requests pass `guard` first."""

    task: ScrapePageTask
    guard: RouteGuard

    async def run(self, context: BrowserContext) -> LoadedPage:
        await self.guard.install(context)
        return await self.task.run(context)


async def in_guarded_context(
    services: Services, trust_level: TrustLevel, task_for: Callable[[GuardProxy | None], BrowserTask[T]]
) -> T:
    """`task_for(guard)` in a fresh context of the executor whose traffic, HTTP client's included, goes through
    the guard proxy of `trust_level` (None: an unguarded local session): a map, a crawl's robots.txt and sitemaps."""
    async with services.guards.guarding(trust_level) as guard:
        options = guard.context_options if guard else {}
        # Only the daemon's own Chromium reaches its guard proxy.
        return await services.executor.run_in_context(task_for(guard), local_only=guard is not None, **options)


def _poolable(services: Services, request: ScrapeRequest, storage_state: Mapping[str, Any] | None) -> bool:
    """A warm context serves pages whose login state is cookies only, with no own proxy and no URL guard."""
    return (
        poolable_state(storage_state) and not request.proxy and not services.guards.policy.guarded(request.trust_level)
    )


async def _in_warm_context(
    services: Services,
    task: ScrapePageTask,
    options: dict[str, Any],
    profile_id: str,
    storage_state: Mapping[str, Any] | None,
) -> LoadedPage:
    """`task` on the page of a pooled context (daemon/runtime/contexts.py), within the executor's limits.
    A profile's cookies get contexts of their own: a reset leaves the HTTP cache, which may hold pages
    those cookies opened."""
    pool = services.scrape.contexts
    owner = profile_id if storage_state and storage_state.get("cookies") else ""

    async def work() -> LoadedPage:
        async with services.pool.lease() as slot:
            if not slot.member.shares_browser:
                # A browser of its own for this lease (a WebDriver session): nothing to pool it with.
                fresh = options | ({"storage_state": storage_state} if storage_state else {})
                return await in_fresh_context(slot.browser, task, fresh)
            # Contexts are pooled per member: a lease on another member must not close this one's idle ones.
            visual = task.load.format in VISUAL_FORMATS
            key = (slot.member.name, owner, task.resources is not None, visual, repr(sorted(options.items())))
            warm = await pool.lease(slot.browser, key, options, storage_state)
            done = False
            try:
                if "blocking" not in warm.extras:
                    warm.extras["blocking"] = await task.prepare(warm.context, warm.page)
                blocking = warm.extras["blocking"]
                if blocking is not None:
                    blocking.page_url = task.load.url
                warm.visit(task.load.url)
                page = await task.load_in(warm.context, warm.page)
                done = True
                return page
            finally:
                pool.release(warm, reusable=done and not slot.lost)

    return await services.executor.run(work)


def extract_for(request: ScrapeRequest, html: str, url: str) -> Extraction:
    return extract(
        html,
        url,
        only_main_content=request.only_main_content,
        include_tags=request.include_tags,
        exclude_tags=request.exclude_tags,
    )


async def render(
    request: ScrapeRequest, page: LoadedPage, limiter: anyio.CapacityLimiter | None = None
) -> ScrapeResult:
    """The format's payload and the page's metadata, computed off the event loop (within `limiter`'s threads)."""

    def work() -> ScrapeResult:
        result = ScrapeResult(request.format, page, {"via": page.via})
        if request.format in VISUAL_FORMATS:
            return result
        if request.format == "links":
            result.links = extract_links(page.html, page.final_url)
            meta = page_metadata(page.html, page.final_url)
        else:
            extraction = page.extraction or extract_for(request, page.html, page.final_url)
            result.markdown = extraction.markdown
            result.html = extraction.html
            result.metadata["mainContentFound"] = extraction.main_content_found
            meta = extraction.metadata
        result.metadata.update(
            title=meta.title, description=meta.description, language=meta.language, canonicalUrl=meta.canonical_url
        )
        return result

    return await anyio.to_thread.run_sync(work, limiter=limiter)
