"""Parsing a page's HTML into an lxml tree, tolerant of whatever a browser hands over."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import lxml.etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]

# Characters XML cannot hold: lxml parses them into the tree (raw or as character references such as
# `&#26;`) but refuses them in any text or attribute set later (ValueError), and a lone surrogate ends
# the parse early, losing the rest of the page. Vertical tabs and form feeds of old pages separate
# words; the rest carries no text.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_SEPARATORS = frozenset("\x0b\x0c")
_CHAR_REF = re.compile(r"&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));?")
# A browser running scripts reads a <noscript> as raw text up to the first </noscript>; libxml2 parses its
# inside as markup, so a tag left open there (old pages open a layout <div> for readers without scripts)
# pulls the rest of the page into the noscript, where it is dropped as script fallback. A match never
# crosses a script boundary: "<noscript>" written inside a script's string is no element.
_NOSCRIPT = re.compile(r"<noscript\b[^>]*>(?:(?!</?script\b)[\s\S])*?</noscript\s*>", re.I)


def _replacement(char: str) -> str:
    return " " if char in _SEPARATORS else ""


def _char_ref(match: re.Match[str]) -> str:
    """A numeric character reference as the HTML standard reads it, when lxml would not: C1 code
    points are windows-1252 (`&#151;` is an em dash), and what XML cannot hold goes."""
    code = int(match[1], 16) if match[1] else int(match[2])
    if 0x80 <= code <= 0x9F:
        return bytes((code,)).decode("cp1252", errors="ignore")
    if code > 0x10FFFF:
        return ""
    return _replacement(chr(code)) if _NOT_XML.match(chr(code)) else match[0]


def xml_safe(html: str) -> str:
    """`html` without the characters, raw or referenced, that an XML tree cannot hold."""
    html = _NOT_XML.sub(lambda match: _replacement(match[0]), html)  # one pass: most pages have none
    return _CHAR_REF.sub(_char_ref, html) if "&#" in html else html


def parse(html: str) -> lxml.html.HtmlElement:
    """The page as an `<html>` element; an empty or unparsable page gives an empty `<html><body>`."""
    html = xml_safe(html)
    html = _NOSCRIPT.sub("", html)
    if html.strip():
        try:
            return _into_body(lxml.html.document_fromstring(html))
        except ValueError:  # a str that declares its own encoding (<?xml encoding=...?>)
            parser = lxml.html.HTMLParser(encoding="utf-8")
            try:
                return _into_body(lxml.html.document_fromstring(html.encode("utf-8"), parser=parser))
            except (lxml.etree.ParserError, ValueError):
                pass
        except lxml.etree.ParserError:
            pass
    return lxml.html.document_fromstring("<html><body></body></html>")


def _into_body(tree: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """Content after a stray early `</body>` moved into the body, where a browser puts it: libxml2 leaves
    it beside the body, out of reach of everything that reads the page's body."""
    body = tree.find("body")
    if body is not None:
        for stray in list(body.itersiblings()):
            body.append(stray)
    return tree


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
