"""Parsing a page's HTML into an lxml tree, tolerant of whatever a browser hands over."""

from __future__ import annotations

from urllib.parse import urljoin

import lxml.etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]


def parse(html: str) -> lxml.html.HtmlElement:
    """The page as an `<html>` element; an empty or unparsable page gives an empty `<html><body>`."""
    if html.strip():
        try:
            return lxml.html.document_fromstring(html)
        except ValueError:  # a str that declares its own encoding (<?xml encoding=...?>)
            parser = lxml.html.HTMLParser(encoding="utf-8")
            try:
                return lxml.html.document_fromstring(html.encode("utf-8"), parser=parser)
            except (lxml.etree.ParserError, ValueError):
                pass
        except lxml.etree.ParserError:
            pass
    return lxml.html.document_fromstring("<html><body></body></html>")


def base_url(tree: lxml.html.HtmlElement, url: str) -> str:
    """The URL relative links resolve against: `<base href>` if the page has one, else the page URL."""
    for href in tree.xpath("//head/base/@href"):
        href = str(href).strip()
        if href:
            return urljoin(url, href)
    return url


def body_of(tree: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    body = tree.find("body")
    return body if body is not None else tree


def text_of(element: lxml.html.HtmlElement) -> str:
    """Visible text of an element with whitespace collapsed."""
    return " ".join(element.text_content().split())
