"""`map`: a site's URLs from robots.txt sitemaps, sitemap indexes and the page's own links.

`map_site` is the map service the tool calls: a MapTask in a fresh context, under the caller's URL policy."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import lxml.etree  # type: ignore[import-untyped]
from playwright.async_api import APIRequestContext, BrowserContext
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.errors import BrowserdError, UrlNotAllowed
from browserd.daemon.policy.proxy import GuardProxy
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.scrape.extract import extract_links
from browserd.daemon.scrape.robots import Robots, fetch_bytes, read_robots
from browserd.daemon.scrape.scrape_service import in_guarded_context
from browserd.daemon.scrape.smartwait import smart_wait
from browserd.daemon.sessions.navigation import navigate

if TYPE_CHECKING:
    # Only a type here: services.py builds on scrape (through runs), so scrape must not import it back.
    from browserd.daemon.services import Services

SitemapMode = Literal["include", "only", "skip"]
MAX_SITEMAPS = 20  # sitemap files fetched per map call, indexes included
MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # the sitemaps protocol's limit, uncompressed; a gzip bomb stops here
_GZIP_MAGIC = b"\x1f\x8b"
# No entities, no DTD, no network: a sitemap needs none, and a hostile one cannot use them.
_XML_PARSER = lxml.etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=False)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class MapRequest:
    url: str
    search: str | None = None
    limit: int = 100
    sitemap: SitemapMode = "include"
    same_site: bool = True


@dataclass
class FoundUrl:
    url: str
    text: str = ""
    source: str = "page"  # sitemap or page
    score: float = 0.0


@dataclass
class MapResult:
    urls: list[FoundUrl]
    sitemaps: list[str] = field(default_factory=list)
    total_found: int = 0


def site_of(host: str) -> str:
    return host.lower().removeprefix("www.")


def same_site(url: str, site: str) -> bool:
    host = site_of(urlsplit(url).hostname or "")
    return host == site or host.endswith("." + site)


def _gunzip(body: bytes) -> bytes | None:
    """A gzip body (`.xml.gz`, or any name: the magic bytes decide) unpacked up to MAX_SITEMAP_BYTES."""
    try:
        return zlib.decompressobj(wbits=31).decompress(body, MAX_SITEMAP_BYTES)
    except zlib.error:
        return None


def parse_sitemap(body: bytes) -> tuple[list[str], list[str]]:
    """(page URLs, nested sitemap URLs) of a urlset or a sitemapindex; nothing for what does not parse.

    `body` is the file as sent: the XML parser reads its encoding declaration (or byte order mark)."""
    if body.startswith(_GZIP_MAGIC):
        unpacked = _gunzip(body)
        if unpacked is None:
            return [], []
        body = unpacked
    try:
        root = lxml.etree.fromstring(body, _XML_PARSER)
    except (lxml.etree.XMLSyntaxError, ValueError):
        return [], []
    if root is None or not isinstance(root.tag, str):
        return [], []
    locs = [el.text.strip() for el in root.iter() if isinstance(el.tag, str) and el.tag.endswith("loc") and el.text]
    return ([], locs) if root.tag.endswith("sitemapindex") else (locs, [])


async def read_sitemaps(
    request: APIRequestContext, start_url: str, robots: Robots | None = None
) -> tuple[list[str], list[str]]:
    """Every page URL the site's sitemaps list, and the sitemap files read; `robots`: the site's robots.txt
    if the caller has read it already."""
    parts = urlsplit(start_url)
    if robots is None:
        robots = await read_robots(request, start_url)
    pending = robots.sitemaps or [f"{parts.scheme}://{parts.netloc}/sitemap.xml"]
    seen: list[str] = []
    pages: list[str] = []
    while pending and len(seen) < MAX_SITEMAPS:
        sitemap = pending.pop(0)
        if sitemap in seen:
            continue
        seen.append(sitemap)
        body = await fetch_bytes(request, sitemap, MAX_SITEMAP_BYTES)
        if body is None:
            continue
        found, nested = parse_sitemap(body)
        pages.extend(found)
        pending.extend(nested)
    return pages, [s for s in seen]


def rank(urls: list[FoundUrl], search: str | None) -> list[FoundUrl]:
    """Only URLs that share a word with `search`, best first; all of them, in found order, without one."""
    if not search:
        return urls
    terms = set(_WORD.findall(search.lower()))
    for found in urls:
        words = _WORD.findall(f"{urlsplit(found.url).path} {found.text}".lower())
        hits = sum(1 for word in words if word in terms)
        found.score = len(terms & set(words)) + hits / (len(words) + 1)
    matching = [found for found in urls if found.score > 0]
    return sorted(matching, key=lambda found: found.score, reverse=True)


@dataclass
class MapTask:
    """A BrowserTask (runtime/executor.py): sitemaps through the context's HTTP client, links through a page."""

    request: MapRequest
    # The caller's URL policy, and the guard the context's traffic goes through (None: unguarded local session).
    trust: TrustPolicy
    guard: GuardProxy | None
    # How long the page may take to settle before its links are read ([scrape] smart_wait_*).
    smart_wait_max_ms: int
    smart_wait_quiet_ms: int

    async def run(self, context: BrowserContext) -> MapResult:
        req = self.request
        site = site_of(urlsplit(req.url).hostname or "")
        found: dict[str, FoundUrl] = {}
        sitemaps: list[str] = []
        if req.sitemap != "skip":
            pages, sitemaps = await read_sitemaps(context.request, req.url)
            for url in pages:
                found.setdefault(url, FoundUrl(url, source="sitemap"))
        if req.sitemap != "only":
            page = await context.new_page()
            try:
                await navigate(page, req.url, self.guard, self.trust, wait_until="domcontentloaded")
                await smart_wait(page, self.smart_wait_max_ms, self.smart_wait_quiet_ms)
                html, base = await page.content(), page.url
            except UrlNotAllowed:
                raise
            except (PlaywrightError, BrowserdError):  # the sitemaps may still have found the site's pages
                html, base = "", req.url
            for link in extract_links(html, base):
                entry = found.setdefault(link.url, FoundUrl(link.url, source="page"))
                entry.text = entry.text or link.text
        urls = [f for f in found.values() if not req.same_site or same_site(f.url, site)]
        ranked = rank(urls, req.search)
        return MapResult(ranked[: req.limit], sitemaps, len(ranked))


async def map_site(services: Services, request: MapRequest, trust: TrustPolicy) -> MapResult:
    """The site of `request.url` mapped in a fresh context, its sitemaps read through the context's HTTP
    client (whose proxy is the context's: the URL guard too)."""
    await trust.check_url(request.url)  # before a browser context is taken for it
    config = services.config.scrape

    def task(guard: GuardProxy | None) -> MapTask:
        return MapTask(request, trust, guard, config.smart_wait_max_ms, config.smart_wait_quiet_ms)

    return await in_guarded_context(services, trust.level, task)
