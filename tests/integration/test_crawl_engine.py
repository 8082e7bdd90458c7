"""The crawl engine (daemon/scrape/crawl.py) in-process, with real Chromium, on tests/site/crawl/.

Issue 6 item 4 (`crawl`): depth, limit, include/exclude patterns, robots.txt, canonical and URL
de-duplication, same-site scope, failed pages that do not stop the crawl, a cooperative stop and a
timeout. The site's pages and links are described in tests/site/README.md.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from browserd.daemon.config import Config, ProfilesConfig
from browserd.daemon.errors import InvalidParameter, RobotsDisallowed
from browserd.daemon.scrape.crawl import Crawler, CrawlPage, CrawlRequest, CrawlSummary
from browserd.daemon.services import Services
from tests.conftest import SiteHandler, _Server

pytestmark = pytest.mark.anyio

# Every page of tests/site/crawl/ that a default crawl from its index delivers (a.html or dupe.html,
# whichever finishes first, stands for both), by path.
ALL_PAGES = {
    "/crawl/index.html", "/crawl/b.html", "/crawl/blog/", "/crawl/private/open.html", "/crawl/missing.html",
    "/crawl/c.html", "/crawl/blog/post-1.html", "/crawl/blog/post-2.html", "/crawl/d.html",
}  # fmt: skip
PAGE_A = {"/crawl/a.html", "/crawl/dupe.html"}


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Services]:
    config = Config(profiles=ProfilesConfig(snapshot_root=str(tmp_path / "p"), user_data_root=str(tmp_path / "u")))
    built = Services.build(config)
    try:
        yield built
    finally:
        await built.runtime.aclose()


async def crawl(services: Services, site: str, **options: Any) -> tuple[list[CrawlPage], CrawlSummary]:
    pages: list[CrawlPage] = []

    async def on_page(page: CrawlPage) -> None:
        pages.append(page)

    stop_after = options.pop("stop_after", None)
    timeout_s = options.pop("timeout_s", None)
    url = options.pop("url", f"{site}/crawl/index.html")
    crawler = Crawler(
        services,
        CrawlRequest(url, **options),
        on_page,
        should_stop=lambda: stop_after is not None and len(pages) >= stop_after,
        timeout_s=timeout_s,
    )
    return pages, await crawler.run()


@contextmanager
def serving(handler: type[SiteHandler]) -> Iterator[str]:
    """tests/site served on 127.0.0.1 by a handler that changes some of its answers."""
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def paths(pages: list[CrawlPage], site: str) -> set[str]:
    return {page.url.removeprefix(site) for page in pages}


def split_page_a(found: set[str]) -> set[str]:
    """The paths without page A, after checking that exactly one of its two names was delivered."""
    assert len(found & PAGE_A) == 1, f"a.html and dupe.html are one page (canonical): {sorted(found)}"
    return found - PAGE_A


async def test_crawl_follows_same_site_links_once_and_skips_what_it_should(services: Services, site: str) -> None:
    """Fragments, the trailing slash, the canonical duplicate, robots.txt, a PDF, mailto: and another host:
    each page is delivered once, the 404 is delivered as a failure and the crawl goes on past it."""
    pages, summary = await crawl(services, site)
    found = paths(pages, site)
    assert split_page_a(found) == ALL_PAGES
    assert len(pages) == len(found), "no page is delivered twice"
    assert summary.pages == 10 and summary.succeeded == 9 and summary.failed == 1
    assert summary.duplicates == 1 and summary.skipped_by_robots == 1 and summary.stop_reason == "done"
    missing = next(page for page in pages if page.url.endswith("/missing.html"))
    assert missing.status == 404 and missing.error_code == "EXECUTION_ERROR"
    home = next(page for page in pages if page.url.endswith("/crawl/index.html"))
    assert home.depth == 0 and home.title == "Crawl home" and home.links_count >= 10
    assert "# Crawl home" in home.markdown
    depths = {page.url.removeprefix(site): page.depth for page in pages}
    assert depths["/crawl/c.html"] == 2 and depths["/crawl/d.html"] == 3
    assert all(page.ok for page in pages if not page.url.endswith("/missing.html")), [p.error for p in pages]


async def test_max_depth_stops_following_links(services: Services, site: str) -> None:
    pages, _ = await crawl(services, site, max_depth=1)
    assert split_page_a(paths(pages, site)) == {
        "/crawl/index.html", "/crawl/b.html", "/crawl/blog/", "/crawl/private/open.html", "/crawl/missing.html",
    }  # fmt: skip
    only_start, _ = await crawl(services, site, max_depth=0)
    assert paths(only_start, site) == {"/crawl/index.html"}


async def test_limit_caps_the_pages_delivered(services: Services, site: str) -> None:
    pages, summary = await crawl(services, site, limit=3, concurrency=2)
    assert len(pages) == 3 and summary.pages == 3 and summary.stop_reason == "limit"


async def test_include_and_exclude_paths_are_regexes_on_the_path(services: Services, site: str) -> None:
    pages, _ = await crawl(services, site, include_paths=["^/crawl/blog/"])
    assert paths(pages, site) == {
        "/crawl/index.html",
        "/crawl/blog/",
        "/crawl/blog/post-1.html",
        "/crawl/blog/post-2.html",
    }
    pages, _ = await crawl(services, site, exclude_paths=["^/crawl/blog", r"missing\.html$"])
    assert split_page_a(paths(pages, site)) == {
        "/crawl/index.html", "/crawl/b.html", "/crawl/private/open.html", "/crawl/c.html", "/crawl/d.html",
    }  # fmt: skip
    with pytest.raises(InvalidParameter) as caught:
        await crawl(services, site, include_paths=["("])
    assert caught.value.details["field"] == "includePaths"


async def test_robots_txt_can_be_ignored_and_a_disallowed_start_is_refused(services: Services, site: str) -> None:
    pages, summary = await crawl(services, site, ignore_robots=True, max_depth=1)
    assert "/crawl/private/secret.html" in paths(pages, site) and summary.skipped_by_robots == 0
    with pytest.raises(RobotsDisallowed) as caught:
        await crawl(services, site, url=f"{site}/crawl/private/secret.html")
    assert caught.value.code == "URL_NOT_ALLOWED" and caught.value.details["rule"] == "robots-txt"


class _RobotsFailing(SiteHandler):
    def do_GET(self) -> None:
        if self.path == "/robots.txt":
            self._send(503, b"busy", "text/plain")
            return
        super().do_GET()


async def test_a_robots_txt_the_server_fails_to_give_disallows_everything(services: Services) -> None:
    """RFC 9309 §2.3.1.4: a 5xx robots.txt leaves the rules unknown, so nothing is crawled, and the error says why."""
    with serving(_RobotsFailing) as base:
        with pytest.raises(RobotsDisallowed) as caught:
            await crawl(services, base)
        assert "HTTP 503" in caught.value.message
        pages, _ = await crawl(services, base, ignore_robots=True, max_depth=0)
        assert [page.ok for page in pages] == [True]


async def test_external_hosts_only_when_allowed(services: Services, site: str) -> None:
    """localhost is another host than 127.0.0.1: followed only with allowExternal (it fails to load: port 80)."""
    pages, _ = await crawl(services, site, allow_external=True, max_depth=1)
    external = [page for page in pages if page.url == "http://localhost/crawl/external.html"]
    assert len(external) == 1 and not external[0].ok


async def test_should_stop_ends_the_crawl_between_pages(services: Services, site: str) -> None:
    pages, summary = await crawl(services, site, stop_after=2, concurrency=1)
    # The page that loaded while the second one was extracted (the pipeline) is finished and delivered too.
    assert summary.stop_reason == "stopped" and len(pages) in (2, 3)


async def test_timeout_abandons_pages_still_loading(services: Services, site: str) -> None:
    pages, summary = await crawl(services, site, url=f"{site}/slow?ms=5000", timeout_s=1.0)
    assert summary.stop_reason == "timeout" and pages == []


async def test_generated_site_is_crawled_whole(services: Services, site: str) -> None:
    pages, summary = await crawl(services, site, url=f"{site}/gen/15/0.html", concurrency=3)
    assert paths(pages, site) == {f"/gen/15/{i}.html" for i in range(15)}
    assert summary.failed == 0 and summary.duplicates == 0


class _SlowRobotsHandler(SiteHandler):
    """tests/site, but with a robots.txt that asks for a pause between pages."""

    def do_GET(self) -> None:
        if self.path == "/robots.txt":
            self._send(200, b"User-agent: *\nCrawl-delay: 0.2\n", "text/plain")
            return
        super().do_GET()


@pytest.fixture
def slow_robots_site() -> Iterator[str]:
    with serving(_SlowRobotsHandler) as base:
        yield base


async def test_crawl_delay_is_read_and_the_crawl_still_completes(services: Services, slow_robots_site: str) -> None:
    pages, summary = await crawl(services, slow_robots_site, url=f"{slow_robots_site}/gen/4/0.html", concurrency=5)
    assert summary.crawl_delay_s == 0.2 and len(pages) == 4 and summary.failed == 0


class _SitemapHandler(SiteHandler):
    """tests/site with a /sitemap.xml listing two pages no crawl link leads to, one robots.txt disallows,
    one on another host, and the start page itself."""

    def do_GET(self) -> None:
        if self.path == "/sitemap.xml":
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            listed = [f"{base}/help.html", f"{base}/states.html", f"{base}/crawl/private/secret.html"]
            listed += ["http://localhost/elsewhere.html", f"{base}/crawl/index.html"]
            body = "".join(f"<url><loc>{url}</loc></url>" for url in listed)
            xml = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'
            self._send(200, xml.encode(), "application/xml")
            return
        super().do_GET()


@pytest.fixture
def sitemap_site() -> Iterator[str]:
    with serving(_SitemapHandler) as base:
        yield base


async def test_sitemap_pages_join_the_crawl_under_its_rules(services: Services, sitemap_site: str) -> None:
    """A site's sitemap pages are crawled at depth 1 (same site, robots.txt obeyed); `only` follows no
    links, `skip` reads no sitemap."""
    pages, summary = await crawl(services, sitemap_site, max_depth=1)
    depths = {page.url.removeprefix(sitemap_site): page.depth for page in pages}
    assert depths["/help.html"] == depths["/states.html"] == 1
    assert "/crawl/private/secret.html" not in depths and "/crawl/b.html" in depths
    assert summary.from_sitemap == 3 and summary.skipped_by_robots >= 1  # help, states and the disallowed one

    only, _ = await crawl(services, sitemap_site, sitemap="only")
    assert paths(only, sitemap_site) == {"/crawl/index.html", "/help.html", "/states.html"}

    skipped, summary = await crawl(services, sitemap_site, max_depth=1, sitemap="skip")
    assert "/help.html" not in paths(skipped, sitemap_site) and summary.from_sitemap == 0
