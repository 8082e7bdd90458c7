"""web_search: results from a SearXNG instance's JSON API, or from a results page read through the browser.

SearXNG (`[search] searxng_url`) is the self-hosted metasearch engine; its JSON answer is the clean path.
A results-page template (`[search] results_url_template`) is loaded like a scrape, under the caller's
trust level, and its result links are read off the page: public engines often answer such a load with a
consent page or a captcha instead, which the error says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, urlsplit

import httpx

from browserd.daemon.config import SearchConfig
from browserd.daemon.errors import SearchFailed
from browserd.daemon.scrape.links import extract_links
from browserd.daemon.scrape.scrape_service import ScrapeRequest, load_page
from browserd.protocol.messages import TrustLevel

if TYPE_CHECKING:
    from browserd.daemon.services import Services

MIN_LINK_TEXT = 3  # shorter link texts on a results page are navigation ("1", "Next"), not results


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str
    snippet: str = ""

    def info(self) -> dict[str, str]:
        return {"url": self.url, "title": self.title, "snippet": self.snippet}


def configured(config: SearchConfig) -> bool:
    return bool(config.searxng_url or config.results_url_template)


async def web_search(services: Services, query: str, limit: int, trust_level: TrustLevel) -> list[SearchResult]:
    config = services.config.search
    if config.searxng_url:
        return await _searxng(config, query, limit)
    if config.results_url_template:
        return await _results_page(services, config.results_url_template, query, limit, trust_level)
    raise SearchFailed(
        "no search backend is configured ([search] searxng_url or results_url_template)",
        hint="Set [search] searxng_url to a SearXNG instance (docs/llm.md), or give the agent urls to start from.",
    )


async def _searxng(config: SearchConfig, query: str, limit: int) -> list[SearchResult]:
    url = config.searxng_url.rstrip("/") + "/search"
    try:
        async with httpx.AsyncClient(timeout=config.timeout_s, trust_env=False) as client:
            reply = await client.get(url, params={"q": query, "format": "json"})
        reply.raise_for_status()
        answer: dict[str, Any] = reply.json()
    except httpx.HTTPStatusError as exc:
        raise SearchFailed(
            f"SearXNG at {config.searxng_url} answered HTTP {exc.response.status_code}",
            hint="Enable the json format in the instance's settings.yml (search: formats: [html, json]); a 429 "
            "means its rate limiter refused this host.",
            status=exc.response.status_code,
        ) from exc
    except (httpx.HTTPError, ValueError) as exc:
        raise SearchFailed(f"SearXNG at {config.searxng_url} could not be read: {exc}") from exc
    results = [
        SearchResult(str(item["url"]), str(item.get("title") or ""), str(item.get("content") or ""))
        for item in answer.get("results") or []
        if isinstance(item, dict) and item.get("url")
    ]
    return results[:limit]


async def _results_page(
    services: Services, template: str, query: str, limit: int, trust_level: TrustLevel
) -> list[SearchResult]:
    url = template.replace("{query}", quote_plus(query))
    request = ScrapeRequest(url=url, format="links", profile_id="", trust_level=trust_level)
    page = await load_page(services, request, None, export_state=False)
    engine = urlsplit(page.final_url)
    links = [
        link
        for link in extract_links(page.html, page.final_url)
        if len(link.text.strip()) >= MIN_LINK_TEXT and urlsplit(link.url).path != engine.path
    ]
    # Results lead off the engine's site; a page whose links all stay on it (a local index) keeps those.
    elsewhere = [link for link in links if urlsplit(link.url).hostname != engine.hostname]
    chosen = elsewhere or links
    if not chosen:
        raise SearchFailed(
            f"the results page {page.final_url} (HTTP {page.status}) shows no result links: search engines often "
            "answer automated browsers with a consent page or a captcha",
            url=page.final_url,
            status=page.status,
        )
    return [SearchResult(link.url, link.text.strip()) for link in chosen[:limit]]
