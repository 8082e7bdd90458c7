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

from .boilerplate import is_notice, link_density

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
            or link_density(element, text) > _MAX_LINK_DENSITY
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


# Recovering the other posts of a page that shows several in full --------------------------------------------

# The post element is searched this many levels above the article's container (entry body, entry, ...).
_POST_SPAN = 3
# A sibling of the post element is another post when it holds this many words outside links ...
_MIN_POST_WORDS = 20
# ... and a listing has at least this many other posts: one look-alike box is no listing.
_MIN_OTHER_POSTS = 2
# The article's container holds at least this share of the extracted words found in the page.
_CONTAINER_SHARE = 0.7


def _runs(element: lxml.html.HtmlElement) -> list[tuple[str, lxml.html.HtmlElement]]:
    """The runs of text inside `element` (whitespace collapsed), each with the element holding it."""
    found = []
    for text in element.xpath(".//text()"):  # lxml's text results know the element they belong to
        key = " ".join(text.split())
        node = text.getparent()
        holder = node.getparent() if text.is_tail else node
        if key and holder is not None:
            found.append((key, holder))
    return found


def _article_container(
    body: lxml.html.HtmlElement, page: lxml.html.HtmlElement, index: dict[str, lxml.html.HtmlElement]
) -> lxml.html.HtmlElement | None:
    """The innermost page element holding most of the words of the extracted blocks found in the page.

    A block is found by its text (`index`); when most are not (the page writes its text between `<br>`s
    and the extraction cut or joined it differently), by the runs of text inside them."""
    words: dict[lxml.html.HtmlElement, int] = {}

    def count(source: lxml.html.HtmlElement, text: str) -> int:
        n = len(text.split())
        for element in (source, *source.iterancestors()):
            words[element] = words.get(element, 0) + n
        return n

    total = found = 0
    missing = []
    for block in body.iter(_TARGET_BLOCKS):
        if _has_block_children(block):
            continue
        key = _key(block)
        total += len(key.split())
        source = index.get(key)
        if source is None:
            missing.append(block)
        else:
            found += count(source, key)
    if missing and found < _CONTAINER_SHARE * total:
        page_runs = dict(reversed(_runs(page)))  # the first holder of a text wins
        for block in missing:
            for text, _ in _runs(block):
                if (source := page_runs.get(text)) is not None:
                    found += count(source, text)
    holding = [element for element, n in words.items() if n >= _CONTAINER_SHARE * found]
    return max(holding, key=lambda element: len(list(element.iterancestors())), default=None)


def _is_other_post(element: lxml.html.HtmlElement, extracted_text: str) -> bool:
    text = _key(element)
    density = link_density(element, text)
    unlinked_words = len(text.split()) * (1 - density)
    return unlinked_words >= _MIN_POST_WORDS and density <= _MAX_LINK_DENSITY and _squash(text) not in extracted_text


def recover_posts(
    extracted: lxml.html.HtmlElement, page: lxml.html.HtmlElement, index: dict[str, lxml.html.HtmlElement]
) -> None:
    """The other posts of a page that lists several in full (a blog's front page, an archive, a thread).

    Article extraction keeps the one post it scores best. When the element holding that post (the
    article's container or one of its few nearest ancestors, with classes) has siblings of the same tag
    and classes, and at least `_MIN_OTHER_POSTS` of them and most of them read as text, not links, the
    page is a listing and those siblings are its other posts: they come back whole, before or after the
    extracted post as on the page. Teaser boxes stay out (mostly links or a few words), and so do a
    single box that merely looks like the article's and tab panes beside it, which are mostly a few
    words (`index` is `block_index(page)`).
    """
    body = extracted.find("body")
    container = _article_container(body, page, index) if body is not None else None
    if body is None or container is None:
        return
    extracted_text = ""  # squashed only once look-alikes turn up: most pages have none
    for post in [container, *container.iterancestors()][: _POST_SPAN + 1]:
        parent = post.getparent()
        if parent is None or not (post.get("class") or "").strip():
            continue
        kind = _signature(post)
        alike = [s for s in parent if s is not post and _signature(s) == kind]
        if len(alike) < _MIN_OTHER_POSTS:
            continue
        extracted_text = extracted_text or _squash(body.text_content())
        others = [s for s in alike if _is_other_post(s, extracted_text)]
        # most look-alikes of a listing are posts; tab panes and widget boxes are mostly a few words
        if len(others) >= max(_MIN_OTHER_POSTS, len(alike) / 2):
            break
    else:
        return
    first = next((block for block in body), None)
    own_place = parent.index(post)
    for other in others:
        copy = deepcopy(other)
        copy.tail = None
        if parent.index(other) < own_place and first is not None:
            first.addprevious(copy)
        else:
            body.append(copy)


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


# Headings and lists the extraction dropped from inside the article ----------------------------------------

_LISTS = frozenset(("ul", "ol"))
_CONTAINERS = frozenset(("ul", "ol", "li", "blockquote", "table", "thead", "tbody", "tr", "td", "th", "dl"))
# A put-back heading has at most this many words.
_MAX_HEADING_WORDS = 25
# ... into a gap between extracted blocks at most this many places apart.
_MAX_GAP = 4


def _outermost_block(block: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """The extracted block itself or the list, quote or table it sits in: where a sibling can go."""
    while (parent := block.getparent()) is not None and parent.tag in _CONTAINERS:
        block = parent
    return block


def restore_dropped(
    extracted: lxml.html.HtmlElement, page: lxml.html.HtmlElement, index: dict[str, lxml.html.HtmlElement]
) -> None:
    """Headings and lists of the page that the extraction dropped from between the blocks it kept.

    The page's text blocks are walked in document order; a block is kept when the extraction has a block
    with the same text (its next copy there, when a text comes more than once). Only gaps between two
    kept blocks that are at most `_MAX_GAP` blocks apart in the extraction are filled, so nothing comes
    back before the article, after it, or from far off (a form or a sidebar). In such a gap, a heading
    missing from the extraction that comes right before a kept block of its own section introduces that
    block and comes back just before it (precision mode drops headings that are all link, or that
    hold a stray block). A list none of whose items is in the extraction, right after a kept block,
    comes back too unless it is a gallery or links away from the article (see `_dropped_list`).
    `index` is `block_index(page)`: only the part of the page around the kept blocks is walked.
    """
    body = extracted.find("body")
    if body is None:
        return
    kept: dict[str, list[lxml.html.HtmlElement]] = {}
    rank: dict[lxml.html.HtmlElement, int] = {}  # extracted block -> its place among the extracted blocks
    for block in body.iter(_TARGET_BLOCKS):
        if not _has_block_children(block):
            key = _key(block)
            if key:
                kept.setdefault(key, []).append(block)
                rank[block] = len(rank)
    if not kept:
        return
    extracted_text = _squash(body.text_content())
    kept_hrefs = {str(h) for h in body.xpath(".//a/@href")}
    cursor = -1
    sequence: list[tuple[lxml.html.HtmlElement, lxml.html.HtmlElement | None]] = []  # page block, kept twin
    region = _article_region(page, [index[key] for key in kept if key in index])  # skips the rest of the page
    for element in region.iter(*_SOURCE_BLOCKS, "ul", "ol"):
        if element.tag in _LISTS:
            sequence.append((element, None))
            continue
        key = _key(element)
        if not key:
            continue
        # the same text can come more than once: the twin is its next copy in the extraction
        twin = next((t for t in kept.get(key, ()) if rank[t] > cursor), None)
        if twin is not None:
            cursor = rank[twin]
        sequence.append((element, twin))
    kept_positions = [i for i, (_, twin) in enumerate(sequence) if twin is not None]
    if len(kept_positions) < 2:
        return
    first, last = kept_positions[0], kept_positions[-1]
    inserts: list[tuple[lxml.html.HtmlElement, lxml.html.HtmlElement]] = []  # (new block, before this one)
    restored: lxml.html.HtmlElement | None = None  # the last page element put back, whose inside is done
    previous_kept = sequence[first][1]
    for position in range(first + 1, last):
        element, twin = sequence[position]
        if twin is not None:
            previous_kept = twin
            continue
        if element.tag not in _HEADINGS and element.tag not in _LISTS:
            continue
        if restored is not None and _inside(element, restored):
            continue
        source, following = next(
            (pair for pair in sequence[position + 1 : last + 1] if not _inside(pair[0], element)), (element, None)
        )
        if following is None or previous_kept is None or not 0 < rank[following] - rank[previous_kept] <= _MAX_GAP:
            continue  # not a gap between two blocks that follow each other in the extraction
        if element.tag in _HEADINGS:
            new = _dropped_heading(element, source, extracted_text)
        else:  # a list, right after a kept block
            new = _dropped_list(element, extracted_text, kept_hrefs) if sequence[position - 1][1] is not None else None
        if new is not None:
            inserts.append((new, following))
            restored = element
    for new, before in inserts:
        _outermost_block(before).addprevious(new)


def _article_region(page: lxml.html.HtmlElement, sources: list[lxml.html.HtmlElement]) -> lxml.html.HtmlElement:
    """The innermost page element holding all of `sources` (the page itself when there are none)."""
    if not sources:
        return page
    common = [sources[0], *sources[0].iterancestors()]
    for source in sources[1:]:
        ancestors = {source, *source.iterancestors()}
        while common and common[0] not in ancestors:
            common.pop(0)
    return common[0] if common else page


def _inside(element: lxml.html.HtmlElement, ancestor: lxml.html.HtmlElement) -> bool:
    return any(a is ancestor for a in element.iterancestors())


def _dropped_heading(
    heading: lxml.html.HtmlElement, introduced: lxml.html.HtmlElement, extracted_text: str
) -> lxml.html.HtmlElement | None:
    """A copy of a page heading missing from the extraction, if it heads the kept block `introduced`: a
    short heading, not a call to action, in the same section as that block (not in a box of its own)."""
    text = _key(heading)
    squashed = _squash(text)
    parent = heading.getparent()
    if not squashed or squashed in extracted_text or len(text.split()) > _MAX_HEADING_WORDS or is_notice(text):
        return None
    if parent is None or not _inside(introduced, parent):
        return None
    copy = _inline_copy(heading)
    copy.tag = heading.tag
    copy.attrib.clear()
    return copy


def _dropped_list(
    page_list: lxml.html.HtmlElement, extracted_text: str, kept_hrefs: set[str]
) -> lxml.html.HtmlElement | None:
    """A copy of a page list none of whose items is in the extraction, unless it is a gallery or a list of
    links that lead away from the article (other stories): a list mostly of links stays out unless one of
    them goes where the article's own text links."""
    items = list(page_list.iterchildren("li"))
    texts = [_squash(item.text_content()) for item in items]
    if not items or not all(texts) or any(t in extracted_text for t in texts):
        return None
    if page_list.find(".//img") is not None or page_list.find(".//figure") is not None:
        return None
    hrefs = {str(h) for h in page_list.xpath(".//a/@href")}
    if link_density(page_list, _key(page_list)) > _MAX_LINK_DENSITY and not hrefs & kept_hrefs:
        return None
    new_list = lxml.html.Element(page_list.tag)
    for item in items:
        copy = _inline_copy(item)
        copy.tag = "li"
        copy.attrib.clear()
        new_list.append(copy)
    return new_list
