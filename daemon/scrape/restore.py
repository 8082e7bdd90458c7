"""Put back the inline structure that main-content extraction loses, from the page's own DOM.

trafilatura rebuilds the article from its own element vocabulary and along the way drops some links
(those wrapping formatting, for instance) and turns some headings into paragraphs. For every block of
the extracted article whose text is exactly the text of a block of the original page, that original
block is the faithful version: its links and emphasis are copied back, and a paragraph that was a
heading becomes that heading again. Blocks whose text differs are left as extracted, so nothing that
the extraction removed can come back this way.
"""

from __future__ import annotations

import re
from copy import deepcopy

import lxml.html  # type: ignore[import-untyped]

_SOURCE_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "td", "th", "figcaption", "blockquote")
_TARGET_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "blockquote")
_NOT_WORD = re.compile(r"[\W_]+")
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_INLINE_KEPT = frozenset(("a", "strong", "b", "em", "i", "code", "br", "sub", "sup"))


def _key(element: lxml.html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def _squash(text: str) -> str:
    """Letters and digits only: the same words whatever the spacing and punctuation between them."""
    return _NOT_WORD.sub("", text.lower())


def block_index(tree: lxml.html.HtmlElement) -> dict[str, lxml.html.HtmlElement]:
    """The page's text blocks by their text (the first block with a given text)."""
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


def restore_structure(
    extracted: lxml.html.HtmlElement, page: lxml.html.HtmlElement, index: dict[str, lxml.html.HtmlElement]
) -> None:
    """Links, emphasis and heading levels of `extracted` blocks taken from the same blocks of `page`
    (`index` is `block_index(page)`)."""
    for block in list(extracted.iter(_TARGET_BLOCKS)):
        if _has_block_children(block):
            continue
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


# Recovering the rest of an article split over several containers ----------------------------------------

# A recovered paragraph needs this many words, and at most this share of its text inside links.
_MIN_RECOVER_WORDS = 8
_MAX_LINK_DENSITY = 0.5
# The other containers must sit within this many levels above the article's own container.
_CHUNK_SPAN = 4


def _signature(element: lxml.html.HtmlElement) -> tuple[str, str]:
    return element.tag, " ".join(sorted((element.get("class") or "").split()))


def _link_density(element: lxml.html.HtmlElement, text: str) -> float:
    linked = sum(len(" ".join(a.text_content().split())) for a in element.iter("a"))
    return linked / max(len(text), 1)


def recover_chunks(
    extracted: lxml.html.HtmlElement, page: lxml.html.HtmlElement, index: dict[str, lxml.html.HtmlElement]
) -> None:
    """Paragraphs of the article's sibling containers, which the extraction stopped short of.

    Many sites cut an article body into several identical containers with ads or widgets between them,
    and the extraction keeps only the first. The paragraphs the extraction kept are found in the page
    (`index` is `block_index(page)`); the container holding most of their words is the article body.
    Paragraphs of the page's other containers of that same kind (same tag and classes, near it) come
    back in document order, unless short or mostly links. Gaps inside the article's own container are
    left alone: there the extraction's precision mode dropped blocks for a reason more often than not.
    """
    body = extracted.find("body")
    if body is None:
        return
    anchors: dict[lxml.html.HtmlElement, lxml.html.HtmlElement] = {}  # page paragraph -> extracted block
    weight: dict[tuple[str, str], int] = {}
    for block in body:
        if block.tag != "p":
            continue
        key = _key(block)
        source = index.get(key)
        if source is None or source.tag != "p" or source in anchors:
            continue
        anchors[source] = block
        parent = source.getparent()
        if parent is not None:
            sig = _signature(parent)
            weight[sig] = weight.get(sig, 0) + len(key.split())
    if not weight:
        return
    container = max(weight, key=lambda s: weight[s])
    if not container[1]:
        return  # a container without classes says nothing about which other elements are of its kind
    own_parents = {source.getparent() for source in anchors}
    scope: lxml.html.HtmlElement | None = None  # the highest ancestor, within reach, of the article's containers
    for parent in own_parents:
        if parent is not None and _signature(parent) == container:
            reach = list(parent.iterancestors())[:_CHUNK_SPAN]
            if reach and (scope is None or reach[-1] in scope.iterancestors()):
                scope = reach[-1]
    if scope is None:
        return
    extracted_text = " ".join(body.text_content().split())
    order = {element: position for position, element in enumerate(page.iter("p"))}
    anchor_positions = sorted((order[source], block) for source, block in anchors.items())
    last_inserted: dict[int, lxml.html.HtmlElement] = {}  # anchor position -> last block put after it
    for element in scope.iter("p"):
        parent = element.getparent()
        if element in anchors or parent is None or parent in own_parents or _signature(parent) != container:
            continue
        text = _key(element)
        if (
            len(text.split()) < _MIN_RECOVER_WORDS
            or text in extracted_text
            or _link_density(element, text) > _MAX_LINK_DENSITY
        ):
            continue
        copy = _inline_copy(element)
        if _has_block_children(copy):
            continue
        copy.tag = "p"
        copy.attrib.clear()
        position = order[element]
        before = [(p, block) for p, block in anchor_positions if p < position]
        if before:
            anchor, block = before[-1]
            last_inserted.get(anchor, block).addnext(copy)
            last_inserted[anchor] = copy
        else:
            anchor_positions[0][1].addprevious(copy)


# Embedded posts are the platforms' standard embed markup: a blockquote the extraction drops.
_EMBED_XPATH = (
    "//blockquote[contains(concat(' ', normalize-space(@class), ' '), ' twitter-tweet ')"
    " or contains(concat(' ', normalize-space(@class), ' '), ' instagram-media ')]"
)


def recover_embeds(
    extracted: lxml.html.HtmlElement, page: lxml.html.HtmlElement, index: dict[str, lxml.html.HtmlElement]
) -> None:
    """Embedded social posts (tweets, Instagram posts) quoted inside the article, put back in place.

    Only posts that sit between two paragraphs the extraction kept come back, so embeds in sidebars and
    below the article stay out.
    """
    body = extracted.find("body")
    embeds = page.xpath(_EMBED_XPATH)
    if body is None or not embeds:
        return
    order = {element: position for position, element in enumerate(page.iter("p", "blockquote"))}
    anchors: list[tuple[int, lxml.html.HtmlElement]] = []
    for block in body:
        source = index.get(_key(block)) if block.tag == "p" else None
        if source is not None and source in order:
            anchors.append((order[source], block))
    anchors.sort(key=lambda pair: pair[0])
    if len(anchors) < 2:
        return
    extracted_text = _squash(body.text_content())
    for embed in embeds:
        text = _squash(embed.text_content())
        position = order.get(embed, -1)
        if not text or text in extracted_text or not anchors[0][0] < position < anchors[-1][0]:
            continue
        copy = _inline_copy(embed)
        copy.tag = "blockquote"
        copy.attrib.clear()
        before = [block for p, block in anchors if p < position]
        before[-1].addnext(copy)
