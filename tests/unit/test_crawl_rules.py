"""The pure parts of the crawl (issue 6 item 4): robots.txt rules, URL keys for de-duplication, scope, limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from browserd.daemon.config import Config, CrawlConfig, load
from browserd.daemon.errors import InvalidParameter
from browserd.daemon.runs.templates.crawl import Crawl, CrawlInputs, crawl_request
from browserd.daemon.scrape.crawl import CrawlRequest, Scope, url_key
from browserd.daemon.scrape.robots import parse_robots

ROBOTS = """
# comment
User-agent: Googlebot
Disallow: /

User-agent: *
Disallow: /private/
Allow: /private/open
Disallow: /*.pdf$
Disallow: /tmp
Crawl-delay: 2
Sitemap: /sitemap.xml
"""


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/", True),
        ("/private/", False),
        ("/private/page.html", False),
        ("/private/open.html", True),  # the longer Allow wins
        ("/docs/file.pdf", False),
        ("/docs/file.pdf?x=1", True),  # `$` anchors the end
        ("/tmp", False),
        ("/tmpfile", False),  # a prefix, not a path segment
        ("/temp", True),
    ],
)
def test_robots_longest_match_wins_for_the_star_group(path: str, allowed: bool) -> None:
    robots = parse_robots(ROBOTS, "http://site.test")
    assert robots.allows(f"http://site.test{path}") is allowed
    assert robots.crawl_delay_s == 2.0 and robots.sitemaps == ["http://site.test/sitemap.xml"]


def test_robots_group_of_our_agent_replaces_the_star_group() -> None:
    robots = parse_robots("User-agent: *\nDisallow: /\n\nUser-agent: browserd\nDisallow: /no\n", "http://s")
    assert robots.allows("http://s/yes") and not robots.allows("http://s/no")


def test_robots_missing_or_empty_allows_everything() -> None:
    assert parse_robots("", "http://s").allows("http://s/anything")
    assert parse_robots("User-agent: *\nDisallow:\n", "http://s").allows("http://s/anything")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://Site.TEST:80/a#top", "http://site.test/a"),
        ("https://site.test:443/docs/", "https://site.test/docs"),
        ("http://site.test", "http://site.test/"),
    ],
)
def test_url_key_treats_these_as_one_page(a: str, b: str) -> None:
    assert url_key(a) == url_key(b)


def test_url_key_keeps_query_order_unless_sorting_is_asked() -> None:
    assert url_key("http://s/p?b=2&a=1") != url_key("http://s/p?a=1&b=2")
    assert url_key("http://s/p?b=2&a=1", sort_query=True) == url_key("http://s/p?a=1&b=2", sort_query=True)
    assert url_key("http://s:8080/p") != url_key("http://s/p")


def test_scope_same_site_subdomains_external_and_files() -> None:
    same = Scope(CrawlRequest("https://www.site.test/"))
    assert same.follows("https://site.test/a") and same.follows("http://www.site.test/b")
    assert not same.follows("https://blog.site.test/") and not same.follows("https://other.test/")
    assert not same.follows("https://site.test/file.PDF") and not same.follows("mailto:x@site.test")
    assert Scope(CrawlRequest("https://site.test/", allow_subdomains=True)).follows("https://blog.site.test/")
    assert Scope(CrawlRequest("https://site.test/", allow_external=True)).follows("https://other.test/")
    filtered = Scope(CrawlRequest("https://site.test/", include_paths=["^/blog/"], exclude_paths=["draft"]))
    assert filtered.follows("https://site.test/blog/post") and not filtered.follows("https://site.test/blog/draft-1")
    assert not filtered.follows("https://site.test/about")


def test_crawl_limits_come_from_the_config_section() -> None:
    config = load(Path("/nonexistent.toml"), {"BROWSERD_CRAWL_MAX_LIMIT": "50", "BROWSERD_CRAWL_DEFAULT_LIMIT": "7"})
    assert config.crawl.max_limit == 50 and config.crawl.default_limit == 7
    inputs = CrawlInputs(url="https://site.test/")
    assert crawl_request(inputs, config.crawl).limit == 7
    with pytest.raises(InvalidParameter) as caught:
        crawl_request(CrawlInputs(url="https://site.test/", limit=51), config.crawl)
    assert caught.value.details["field"] == "limit"


def test_list_task_templates_shows_the_configured_crawl_maxima() -> None:
    """S1-11: the limits a template lists are those the configuration enforces, not the defaults."""
    config = Config(crawl=CrawlConfig(max_limit=40, max_concurrency=2))
    assert Crawl().limits_under(config) == {"maxLimit": 40, "maxConcurrency": 2}


@pytest.mark.parametrize("other", ["b", "browser", "browserd-next", "bro*"])
def test_item6_robots_group_of_a_shorter_or_longer_agent_is_not_ours(other: str) -> None:
    """Issue 11 item 6: a group for `b` (or any token other than `browserd`) is another crawler's."""
    text = f"User-agent: {other}\nDisallow: /\n\nUser-agent: *\nDisallow: /star-only\n"
    robots = parse_robots(text, "http://s")
    assert robots.allows("http://s/page"), f"the group for {other!r} was applied to browserd"
    assert not robots.allows("http://s/star-only"), "the * group should apply when no group names browserd"


def test_item6_robots_group_names_our_token_in_any_case_and_with_a_version() -> None:
    for line in ("BrowserD", "browserd/1.0", "browserd"):
        robots = parse_robots(f"User-agent: {line}\nDisallow: /no\n\nUser-agent: *\nDisallow: /\n", "http://s")
        assert robots.allows("http://s/yes") and not robots.allows("http://s/no"), line
