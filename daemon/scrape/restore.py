"""Put back the inline structure that main-content extraction loses, from the page's own DOM.

trafilatura rebuilds the article from its own element vocabulary and along the way drops some links
(those wrapping formatting, for instance) and turns some headings into paragraphs. For every block of
the extracted article whose text is exactly the text of a block of the original page, that original
block is the faithful version: its links and emphasis are copied back, and a paragraph that was a
heading becomes that heading again. Blocks whose text differs are left as extracted, so nothing that
the extraction removed can come back this way.
"""

from __future__ import annotations

from copy import deepcopy

import lxml.html  # type: ignore[import-untyped]

_SOURCE_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "td", "th", "figcaption", "blockquote")
_TARGET_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "blockquote")
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_INLINE_KEPT = frozenset(("a", "strong", "b", "em", "i", "code", "br", "sub", "sup"))


def _key(element: lxml.html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def _index(tree: lxml.html.HtmlElement) -> dict[str, lxml.html.HtmlElement]:
    index: dict[str, lxml.html.HtmlElement] = {}
    for element in tree.iter(_SOURCE_BLOCKS):
        key = _key(element)
        if key and key not in index:
            index[key] = element
    return index


def _inline_copy(source: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """A copy of `source` holding only its text, links and emphasis."""
    copy = deepcopy(source)
    copy.tail = None
    for element in list(copy.iterdescendants()):
        if not isinstance(element.tag, str):
            element.drop_tree()
        elif element.tag not in _INLINE_KEPT:
            element.drop_tag()
        else:
            href = element.get("href") if element.tag == "a" else None
            element.attrib.clear()
            if href is not None:
                element.set("href", href)
    return copy


def _has_block_children(element: lxml.html.HtmlElement) -> bool:
    return any(isinstance(child.tag, str) and child.tag not in _INLINE_KEPT for child in element)


def restore_structure(extracted: lxml.html.HtmlElement, page: lxml.html.HtmlElement) -> None:
    """Links, emphasis and heading levels of `extracted` blocks taken from the same blocks of `page`."""
    index: dict[str, lxml.html.HtmlElement] | None = None
    for block in list(extracted.iter(_TARGET_BLOCKS)):
        if _has_block_children(block):
            continue
        if index is None:
            index = _index(page)
        source = index.get(_key(block))
        if source is None or _has_block_children(_inline_copy(source)):
            continue
        if source.tag in _HEADINGS and block.tag == "p":
            block.tag = source.tag
        source_links = len(source.xpath(".//a[@href]"))
        if source_links > len(block.xpath(".//a[@href]")):
            copy = _inline_copy(source)
            for child in list(block):
                block.remove(child)
            block.text = copy.text
            for child in list(copy):
                block.append(child)
