"""`crawl`: the pages of a site, breadth first from a start URL, each as markdown.

    Crawler(services, CrawlRequest(url, limit, max_depth, ...), on_page).run()  ->  CrawlSummary

One scheduler loop owns all the state (frontier, seen URLs, counts) and has at most `concurrency`
page loads running at a time, and as many pages again being extracted: extraction runs in worker
threads (bounded by the daemon's extraction limiter) while the next pages load. Each load goes
through the scrape service (fast path or browser, daemon/scrape/scrape_service.py) and the shared
TaskExecutor, so a crawl obeys the daemon's worker limit like any scrape. Finished pages come back
to the loop over a stream, are de-duplicated, handed to `on_page` in the order they finish, and
their links join the frontier.

Sitemaps: unless `sitemap` is "skip", the URLs the site's sitemaps list (robots.txt `Sitemap:` lines,
else /sitemap.xml; indexes followed) join the frontier at depth 1 after the start page, under the
same scope and robots.txt rules as links; "only" follows no links, so the crawl is the start page plus
its sitemaps' pages.

Which links are followed: http(s) only; the start URL's site (its host, `www.` ignored) unless
`allow_subdomains` (also hosts under it) or `allow_external` (anything); no links from pages deeper
than `max_depth` (the start page is depth 0); include/exclude patterns are Python regular
expressions searched in the URL's path plus `?query` (exclude wins; they do not apply to the start
URL); robots.txt of each origin is obeyed unless `ignore_robots`, and a Crawl-delay there makes the
crawl sequential with that pause between pages (clamped).

De-duplication: URLs are compared by a key with the fragment removed, scheme and host lower-cased,
default ports dropped, the trailing slash of a non-root path dropped and, if asked, the query's
parameters sorted. A page whose final URL (after redirects) or `<link rel=canonical>` is a page
already delivered is counted as a duplicate, not delivered, and its links are not followed; the
canonical URL of a delivered page is not loaded again.

Stopping: `limit` pages delivered (failed ones count, duplicates do not), nothing left to load,
`should_stop()` true (checked before each page starts; pages already loading finish and are
delivered), or `timeout_s` passed (pages still loading are abandoned). A page that fails is
delivered with its error and does not stop the crawl.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio
from anyio.abc import ObjectSendStream
from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import BrowserdError, Busy, ExecutionError, InvalidParameter, RobotsDisallowed
from browserd.daemon.scrape.extract import extract, extract_links
from browserd.daemon.scrape.links import absolute_http_url
from browserd.daemon.scrape.mapping import SitemapMode, read_sitemaps, site_of
from browserd.daemon.scrape.robots import Robots, read_robots
from browserd.daemon.scrape.scrape_service import ScrapeRequest, in_guarded_context, load_page
from browserd.daemon.scrape.task import Render, Via
from browserd.protocol.messages import TrustLevel

if TYPE_CHECKING:
    # Only a type here: services.py builds on scrape (through runs), so scrape must not import it back.
    from browserd.daemon.services import Services

log = logging.getLogger(__name__)
StopReason = Literal["running", "done", "limit", "stopped", "timeout"]
DEFAULT_PORTS = {"http": 80, "https": 443}
# Links to files a browser would download or show as media rather than render as a page.
SKIPPED_EXTENSIONS = frozenset({
    "7z", "apk", "avi", "bmp", "css", "dmg", "doc", "docx", "exe", "gif", "gz", "ico", "iso", "jpeg", "jpg", "js",
    "json", "m4a", "mov", "mp3", "mp4", "mpeg", "ogg", "otf", "pdf", "png", "ppt", "pptx", "rar", "svg", "tar", "tgz",
    "tif", "tiff", "ttf", "wav", "webm", "webp", "woff", "woff2", "xls", "xlsx", "xml", "zip",
})  # fmt: skip
BUSY_RETRIES = 5
BUSY_PAUSE_S = 0.5
T = TypeVar("T")


@dataclass(frozen=True)
class CrawlRequest:
    url: str
    limit: int = 100
    max_depth: int = 10
    include_paths: Sequence[str] = ()
    exclude_paths: Sequence[str] = ()
    allow_subdomains: bool = False
    allow_external: bool = False
    ignore_robots: bool = False
    sitemap: SitemapMode = "include"
    sort_query: bool = False
    concurrency: int = 3
    only_main_content: bool = True
    page_timeout_ms: int | None = None
    render: Render = "auto"
    block_resources: bool | None = None
    max_crawl_delay_s: float = 10.0
    # The URL policy pages and robots.txt load under: a remote run reaches no private address (S1-80).
    trust_level: TrustLevel = "local"


@dataclass
class CrawlPage:
    url: str
    depth: int
    final_url: str = ""
    status: int | None = None
    title: str = ""
    markdown: str = ""
    links_count: int = 0
    canonical_url: str | None = None
    via: Via | None = None
    failure: BrowserdError | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def error(self) -> str | None:
        return None if self.failure is None else self.failure.message

    @property
    def error_code(self) -> str | None:
        return None if self.failure is None else self.failure.code


@dataclass
class CrawlSummary:
    pages: int = 0
    succeeded: int = 0
    failed: int = 0
    duplicates: int = 0
    skipped_by_robots: int = 0
    discovered: int = 1  # URLs queued, the start URL included
    from_sitemap: int = 0  # of those, URLs the sitemaps listed
    stop_reason: StopReason = "running"
    crawl_delay_s: float | None = None


def url_key(url: str, sort_query: bool = False) -> str:
    """What two URLs of the same page have in common (see the module docstring)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port in (None, DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True))) if sort_query else parts.query
    return urlunsplit((scheme, netloc, path, query, ""))


def compile_patterns(patterns: Sequence[str], field_name: str) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise InvalidParameter(
                f"`{pattern}` is not a valid regular expression: {exc}",
                hint=f"Fix {field_name}: Python regular expressions searched in the URL path, e.g. '^/blog/'.",
                field=field_name,
            ) from exc
    return compiled


@dataclass
class Scope:
    """Which discovered URLs the crawl follows, apart from depth and robots.txt."""

    request: CrawlRequest
    site: str = ""
    include: list[re.Pattern[str]] = field(default_factory=list)
    exclude: list[re.Pattern[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.site = site_of(urlsplit(self.request.url).hostname or "")
        self.include = compile_patterns(self.request.include_paths, "includePaths")
        self.exclude = compile_patterns(self.request.exclude_paths, "excludePaths")

    def follows(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return False
        if not self.request.allow_external:
            host = site_of(parts.hostname or "")
            if host != self.site and not (self.request.allow_subdomains and host.endswith("." + self.site)):
                return False
        extension = parts.path.rsplit("/", 1)[-1].rpartition(".")[2].lower() if "." in parts.path else ""
        if extension in SKIPPED_EXTENSIONS:
            return False
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        if any(pattern.search(target) for pattern in self.exclude):
            return False
        return not self.include or any(pattern.search(target) for pattern in self.include)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@dataclass
class _RobotsTask:
    """A BrowserTask: robots.txt through the context's HTTP client (the browser's proxy and policy)."""

    url: str

    async def run(self, context: BrowserContext) -> Robots:
        return await read_robots(context.request, self.url)


@dataclass
class _SitemapTask:
    """A BrowserTask: the page URLs of the site's sitemaps, through the context's HTTP client."""

    url: str
    robots: Robots | None

    async def run(self, context: BrowserContext) -> list[str]:
        pages, _files = await read_sitemaps(context.request, self.url, self.robots)
        return pages


@dataclass
class _Loaded:
    page: CrawlPage
    links: list[str]


class Crawler:
    def __init__(
        self,
        services: Services,
        request: CrawlRequest,
        on_page: Callable[[CrawlPage], Awaitable[None]],
        *,
        should_stop: Callable[[], bool] = lambda: False,
        timeout_s: float | None = None,
    ) -> None:
        self.services = services
        self.request = request
        self.on_page = on_page
        self.should_stop = should_stop
        self.timeout_s = timeout_s
        self.scope = Scope(request)
        self.summary = CrawlSummary()
        self._robots: dict[str, Robots] = {}
        self._loading: anyio.Semaphore  # page loads running at once, set by each crawl (_crawl)

    def _key(self, url: str) -> str:
        return url_key(url, self.request.sort_query)

    async def robots_for(self, url: str) -> Robots:
        origin = _origin(url)
        if origin not in self._robots:
            self._robots[origin] = await self._fetch(_RobotsTask(url))
        return self._robots[origin]

    async def _fetch(self, task: _RobotsTask | _SitemapTask) -> Any:
        """A plain HTTP read in a context of the executor, under the crawl's URL policy."""
        return await self._busy_retry(
            lambda: in_guarded_context(self.services, self.request.trust_level, lambda guard: task)
        )

    async def run(self) -> CrawlSummary:
        """Crawl until a stop condition; the summary says which one ended it."""
        start = self.request.url
        delay_s = 0.0
        if not self.request.ignore_robots:
            robots = await self.robots_for(start)
            if not robots.allows(start):
                why = f" (it answered HTTP {robots.server_error}: everything is off limits until it answers)"
                raise RobotsDisallowed(
                    f"robots.txt of {urlsplit(start).netloc} disallows {urlsplit(start).path or '/'}"
                    + (why if robots.server_error else ""),
                    url=start,
                )
            if robots.crawl_delay_s:
                self.summary.crawl_delay_s = robots.crawl_delay_s
                delay_s = min(robots.crawl_delay_s, self.request.max_crawl_delay_s)
        timed_out = True
        with anyio.move_on_after(self.timeout_s):
            seeds = await self._sitemap_pages(start)
            await self._crawl(start, delay_s, seeds)
            timed_out = False
        if timed_out:
            self.summary.stop_reason = "timeout"
        return self.summary

    async def _sitemap_pages(self, start: str) -> list[str]:
        if self.request.sitemap == "skip" or self.request.max_depth < 1:
            return []
        try:
            # robots.txt was read for the start page unless the crawl ignores it; its Sitemap: lines are reused.
            robots = self._robots.get(_origin(start))
            listed: list[str] = await self._fetch(_SitemapTask(start, robots))
        except (BrowserdError, PlaywrightError) as exc:  # a crawl without its sitemap still crawls
            log.info("crawl: no sitemap pages for %s: %s", start, exc)
            return []
        return listed

    async def _crawl(self, start: str, delay_s: float, seeds: list[str]) -> None:
        request, summary = self.request, self.summary
        concurrency = 1 if delay_s else max(1, request.concurrency)
        frontier: deque[tuple[str, int]] = deque([(start, 0)])
        seen = {self._key(start)}
        for url in seeds:
            key = self._key(url)
            if key not in seen and self.scope.follows(url):
                seen.add(key)
                frontier.append((url, 1))
                summary.discovered += 1
                summary.from_sitemap += 1
        delivered: set[str] = set()
        self._loading = anyio.Semaphore(concurrency)
        # Pages loading plus pages being extracted: extraction of one never holds back the next load.
        pipeline = 2 * concurrency
        in_flight = 0
        send, receive = anyio.create_memory_object_stream[_Loaded](max_buffer_size=concurrency)
        async with anyio.create_task_group() as group, send, receive:
            while True:
                if self.should_stop():
                    summary.stop_reason = "stopped"
                    frontier.clear()
                if frontier and in_flight < pipeline and summary.pages + in_flight < request.limit:
                    url, depth = frontier.popleft()
                    if not request.ignore_robots and not (await self.robots_for(url)).allows(url):
                        summary.skipped_by_robots += 1
                        continue
                    in_flight += 1
                    group.start_soon(self._visit, url, depth, send.clone())
                    if delay_s:
                        await anyio.sleep(delay_s)
                    continue
                if in_flight == 0:
                    if summary.stop_reason != "stopped":
                        # Only the limit leaves URLs unvisited.
                        summary.stop_reason = "limit" if frontier else "done"
                    return
                loaded = await receive.receive()
                in_flight -= 1
                await self._deliver(loaded, frontier, seen, delivered)

    async def _deliver(
        self, loaded: _Loaded, frontier: deque[tuple[str, int]], seen: set[str], delivered: set[str]
    ) -> None:
        page, summary = loaded.page, self.summary
        keys = {self._key(page.url), self._key(page.final_url or page.url)}
        if page.canonical_url and urlsplit(page.canonical_url).scheme in ("http", "https"):
            keys.add(self._key(page.canonical_url))
        if page.ok and keys & delivered:
            summary.duplicates += 1
            return
        delivered.update(keys)
        seen.update(keys)
        summary.pages += 1
        if page.ok:
            summary.succeeded += 1
        else:
            summary.failed += 1
        await self.on_page(page)
        if page.depth >= self.request.max_depth or self.request.sitemap == "only":
            return
        for link in loaded.links:
            key = self._key(link)
            if key not in seen and self.scope.follows(link):
                seen.add(key)
                frontier.append((link, page.depth + 1))
                summary.discovered += 1

    async def _visit(self, url: str, depth: int, send: ObjectSendStream[_Loaded]) -> None:
        page = CrawlPage(url=url, depth=depth, final_url=url)
        links: list[str] = []
        async with send:
            try:
                links = await self._load(page)
            except BrowserdError as exc:
                page.failure = exc
            except PlaywrightError as exc:  # the browser went away under this page, or refused it
                page.failure = ExecutionError(str(exc).splitlines()[0], url=url)
            except Exception as exc:  # one odd page (say, HTML the extractor chokes on) must not end the crawl
                log.warning("crawl: %s failed", url, exc_info=True)
                page.failure = ExecutionError(f"reading {url} failed: {exc!r}", url=url)
            await send.send(_Loaded(page, links))

    async def _load(self, page: CrawlPage) -> list[str]:
        """Load and extract one page into `page`; the page's links to follow."""
        request = ScrapeRequest(
            url=page.url,
            only_main_content=self.request.only_main_content,
            timeout_ms=self.request.page_timeout_ms,
            trust_level=self.request.trust_level,
            render=self.request.render,
            block_resources=self.request.block_resources,
        )
        async with self._loading:
            loaded = await self._busy_retry(lambda: load_page(self.services, request, None, export_state=False))
        page.final_url, page.status, page.title, page.via = loaded.final_url, loaded.status, loaded.title, loaded.via
        if loaded.status is not None and loaded.status >= 400:
            page.failure = ExecutionError(
                f"{page.url} answered HTTP {loaded.status}", hint="Check the URL.", status=loaded.status
            )
        html, final_url, only_main = loaded.html, loaded.final_url, self.request.only_main_content

        def work() -> tuple[str, str | None, list[str]]:
            # The fast path extracted already to judge the page.
            extraction = loaded.extraction or extract(html, final_url, only_main_content=only_main)
            links = [link.url for link in extract_links(html, final_url)]
            return extraction.markdown, extraction.metadata.canonical_url, links

        limiter = self.services.scrape.extraction
        page.markdown, canonical, links = await anyio.to_thread.run_sync(work, limiter=limiter)
        page.links_count = len(links)
        page.canonical_url = absolute_http_url(canonical, final_url) if canonical else None
        return [] if page.failure else links

    async def _busy_retry(self, start: Callable[[], Awaitable[T]]) -> T:
        """The executor's queue is full now and then when several crawls and scrapes share it: wait a little."""
        for _ in range(BUSY_RETRIES):
            try:
                return await start()
            except Busy:
                await anyio.sleep(BUSY_PAUSE_S)
        return await start()
