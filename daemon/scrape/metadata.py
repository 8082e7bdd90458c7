"""Title, description, language and canonical URL of a page (D-23: every scrape result carries them)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin

import lxml.html  # type: ignore[import-untyped]

from .document import base_url, parse, text_of


@dataclass(frozen=True)
class PageMetadata:
    title: str
    description: str
    language: str
    canonical_url: str | None


def _meta(tree: lxml.html.HtmlElement, *keys: str) -> str:
    """Content of the first `<meta name|property|http-equiv=key>` that has one, in the order of `keys`."""
    found: dict[str, str] = {}
    for meta in tree.iter("meta"):
        key = (meta.get("name") or meta.get("property") or meta.get("http-equiv") or "").strip().lower()
        content = " ".join((meta.get("content") or "").split())
        if key in keys and content and key not in found:
            found[key] = content
    return next((found[k] for k in keys if k in found), "")


def metadata_of(tree: lxml.html.HtmlElement, url: str) -> PageMetadata:
    title_el = tree.find(".//title")
    title = text_of(title_el) if title_el is not None else ""
    title = title or _meta(tree, "og:title", "twitter:title")
    description = _meta(tree, "description", "og:description", "twitter:description")
    language = (tree.get("lang") or tree.get("xml:lang") or "").strip()
    if not language:
        language = _meta(tree, "content-language", "og:locale").split(",")[0].strip().replace("_", "-")
    canonical: str | None = None
    for link in tree.iter("link"):
        rels = (link.get("rel") or "").lower().split()
        href = (link.get("href") or "").strip()
        if "canonical" in rels and href:
            canonical = urljoin(base_url(tree, url), href)
            break
    return PageMetadata(title=title, description=description, language=language, canonical_url=canonical)


def page_metadata(html: str, url: str) -> PageMetadata:
    """Title (`<title>`, else og:title), description, language (`<html lang>`, else meta) and canonical URL."""
    return metadata_of(parse(html), url)
