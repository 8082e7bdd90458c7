"""The links of a page (D-23): absolute http(s), fragment removed, de-duplicated in first-seen order."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urldefrag, urljoin, urlsplit

import lxml.html  # type: ignore[import-untyped]

from browserd.daemon.errors import InvalidParameter

from .document import base_url, parse, text_of


def check_http_url(url: str, field: str = "url") -> None:
    """INVALID_PARAMETER naming `field` unless `url` is an absolute http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidParameter(
            f"`{url}` is not an http(s) URL", hint="Pass an absolute URL such as https://example.com/.", field=field
        )


@dataclass(frozen=True)
class Link:
    url: str
    text: str


def absolute_http_url(href: str, base: str) -> str | None:
    """`href` resolved against `base` without its fragment, or None unless it is an http(s) URL."""
    href = href.strip()
    if not href:
        return None
    try:
        absolute = urldefrag(urljoin(base, href)).url
        parts = urlsplit(absolute)
    except ValueError:  # e.g. an invalid IPv6 host
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    if "@" not in parts.netloc and parts.netloc != parts.netloc.lower():  # host names are case-insensitive
        absolute = parts._replace(netloc=parts.netloc.lower()).geturl()
    return absolute


def _link_text(anchor: lxml.html.HtmlElement) -> str:
    text = text_of(anchor)
    if text:
        return text
    for candidate in [anchor.get("aria-label"), anchor.get("title"), *anchor.xpath(".//img/@alt")]:
        if candidate and candidate.strip():
            return " ".join(str(candidate).split())
    return ""


def links_of(tree: lxml.html.HtmlElement, url: str) -> list[Link]:
    base = base_url(tree, url)
    seen: dict[str, int] = {}
    out: list[Link] = []
    for anchor in tree.iter("a", "area"):
        absolute = absolute_http_url(anchor.get("href") or "", base)
        if absolute is None:
            continue
        text = _link_text(anchor)
        if absolute in seen:
            index = seen[absolute]
            if not out[index].text and text:  # an icon link first, the same link with words later
                out[index] = Link(absolute, text)
            continue
        seen[absolute] = len(out)
        out.append(Link(absolute, text))
    return out


def extract_links(html: str, base_url: str) -> list[Link]:
    """Every `<a href>`/`<area href>` of the page as an absolute http(s) URL with its text (D-23)."""
    return links_of(parse(html), base_url)
