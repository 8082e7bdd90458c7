"""Tree surgery before and after extraction: includeTags/excludeTags, whole-page cleaning, link fixing."""

from __future__ import annotations

import re
from collections.abc import Iterable

import lxml.etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]

from .links import absolute_http_url
from .selectors import css_to_xpath

# Elements that never carry readable content.
_NEVER_CONTENT = (
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "link", "meta",
    "button", "input", "select", "textarea", "dialog",
)  # fmt: skip
# Page chrome: navigation, and the banners and pop-ups laid over a page.
_NAVIGATION_XPATH = "//nav | //*[@role='navigation' or @role='banner' and not(.//h1) or @role='search']"
_HIDDEN_XPATH = (
    "//*[@hidden] | //*[@aria-hidden='true']"
    " | //*[contains(translate(@style, 'DISPLAYNOE: ', 'displaynoe'), 'display:none')]"
)
# A banner's id or class, not any mention of cookies: a page about cookies keeps its content.
_BANNER_WORDS = re.compile(
    r"cookie[-_]?(banner|bar|consent|notice|popup|law|message|wall|policy-banner)|consent|gdpr|\bcmp-|onetrust|didomi"
    r"|newsletter-popup|modal-backdrop",
    re.I,
)


def _drop(element: lxml.html.HtmlElement) -> None:
    """Remove an element but keep the text that follows it (its tail)."""
    parent = element.getparent()
    if parent is not None:
        element.drop_tree()


def apply_tag_filters(
    tree: lxml.html.HtmlElement, include_tags: Iterable[str] | None, exclude_tags: Iterable[str] | None
) -> lxml.html.HtmlElement:
    """excludeTags removes every match; includeTags then keeps only the matches (in document order)."""
    for selector in exclude_tags or ():
        for element in tree.xpath(css_to_xpath(selector)):
            if element is not tree:
                _drop(element)
    include = [s for s in include_tags or () if s.strip()]
    if not include:
        return tree
    matches: list[lxml.html.HtmlElement] = tree.xpath(" | ".join(css_to_xpath(s) for s in include))
    kept = [m for m in matches if not any(a in matches for a in m.iterancestors())]
    root = lxml.html.document_fromstring("<html><head></head><body></body></html>")
    head, body = tree.find("head"), root.find("body")
    if head is not None:
        root.replace(root.find("head"), head)
    for element in kept:
        element.tail = None
        body.append(element)
    return root


def remove_non_content(tree: lxml.html.HtmlElement) -> None:
    """Scripts, styles, forms controls, embedded frames and HTML comments: never text a reader sees."""
    lxml.etree.strip_elements(tree, lxml.etree.Comment, lxml.etree.ProcessingInstruction, with_tail=False)
    for element in list(tree.iter(*_NEVER_CONTENT)):
        _drop(element)


def remove_chrome(tree: lxml.html.HtmlElement, *, navigation: bool = True, hidden: bool = True) -> None:
    """Cookie/consent banners and modal overlays always; navigation and hidden elements when asked."""
    paths = ["//*[@aria-modal='true']"]
    if navigation:
        paths.append(_NAVIGATION_XPATH)
    if hidden:
        paths.append(_HIDDEN_XPATH)
    for element in tree.xpath(" | ".join(paths)):
        if element.tag not in ("html", "body") and element.getparent() is not None:
            _drop(element)
    for element in tree.xpath("//body//*[@id or @class]"):
        if element.getparent() is None:
            continue
        marker = f"{element.get('id', '')} {element.get('class', '')}"
        if _BANNER_WORDS.search(marker) and len(element.text_content()) < 2000:
            _drop(element)


# Elements that start a block of their own; everything else flows inline in the text around it.
_BLOCK_TAGS = frozenset(
    (
        "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "table", "blockquote", "pre", "hr",
        "form", "center", "section", "article", "aside", "header", "footer", "nav", "main", "figure",
        "address", "fieldset", "details", "menu", "dir", "li", "dd", "dt",
    )
)  # fmt: skip
# A run of loose text is a paragraph when it holds this many words outside links and microdata (a line
# of a few words, a label, a sign-off, a site notice, is more often chrome) ...
_LOOSE_MIN_WORDS = 15
# ... and less than this share of its words in links or microdata.
_LOOSE_LINKED_SHARE = 0.5
# Elements whose loose text stays as it is: lists and tables hold items and rows, not text; list items,
# definitions, headings and paragraphs render their text themselves (a paragraph would split an item's
# line). Any other element holding blocks is a container, whatever its name (custom elements too).
_NOT_LOOSE_TEXT_PARENTS = frozenset(
    ("html", "head", "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "ul", "ol", "dl", "li", "dd", "dt", "table",
     "thead", "tbody", "tfoot", "tr", "caption", "colgroup", "select", "menu", "dir")
)  # fmt: skip


def wrap_loose_text(tree: lxml.html.HtmlElement) -> None:
    """Text that sits beside blocks rather than in one (old pages write paragraphs as text between
    headings and `<br>`s) made the paragraph a browser shows it as: the extractor reads paragraphs and
    passes over loose text, even when it is most of the page."""
    for parent in list(tree.iter()):
        if parent.tag in _NOT_LOOSE_TEXT_PARENTS or not _holds_loose_text_beside_blocks(parent):
            continue
        children = list(parent)
        rebuilt: list[lxml.html.HtmlElement] = []
        text, run = parent.text, []  # the current run of loose text and inline elements
        parent.text = None
        for child in [*children, None]:
            if child is not None and child.tag not in _BLOCK_TAGS:
                run.append(child)
                continue
            if _reads_as_text(text, run):
                paragraph = lxml.html.Element("p")
                paragraph.text = text
                paragraph.extend(run)
                rebuilt.append(paragraph)
            else:  # left as it was: the run's leading text goes back after the block before it
                if rebuilt:
                    rebuilt[-1].tail = text
                else:
                    parent.text = text
                rebuilt.extend(run)
            if child is not None:
                text, run = child.tail, []
                child.tail = None
                rebuilt.append(child)
        for child in list(parent):  # what is left of the old children: the runs moved into paragraphs
            parent.remove(child)
        parent.extend(rebuilt)


# A table laid out like this is page layout, not data: its cells hold blocks (paragraphs, lists, other
# tables) and one cell holds at least this share of its words, the page's column of text.
_LAYOUT_CELL_SHARE = 0.5
_TABLE_PARTS = ("thead", "tbody", "tfoot", "tr", "td", "th")


def unwrap_layout_tables(tree: lxml.html.HtmlElement) -> None:
    """Tables that lay a page out (old pages put the whole page in one, navigation in one cell and the
    article in another) made the plain containers a reader sees them as: the extractor judges a table as
    one unit, dropping a layout table with a menu in it together with the article beside the menu, and a
    kept one renders as a pipe table around the article's text."""
    layout = [table for table in tree.iter("table") if _is_layout_table(table)]  # judged before any change
    for table in layout:
        for part in list(table.iter(*_TABLE_PARTS)):
            if _table_of(part) is not table:
                continue  # a part of a table nested inside, judged on its own
            if part.tag in ("thead", "tbody", "tfoot"):
                part.drop_tag()
            else:
                part.tag = "div"
        table.tag = "div"


def _table_of(part: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    return next(part.iterancestors("table"), None)


def _is_layout_table(table: lxml.html.HtmlElement) -> bool:
    if (table.get("role") or "").lower() in ("presentation", "none"):
        return True
    if table.find(".//caption") is not None or table.find(".//thead") is not None:
        return False  # a data table's own markup
    cells = [cell for cell in table.iter("td", "th") if _table_of(cell) is table]
    if any(cell.tag == "th" for cell in cells):
        return False
    if not any(element.tag in _BLOCK_TAGS for cell in cells for element in cell.iterdescendants()):
        return False  # cells of text and inline elements: rows of data, whatever their length
    words = len(table.text_content().split())
    return max((len(cell.text_content().split()) for cell in cells), default=0) >= _LAYOUT_CELL_SHARE * words


def _holds_loose_text_beside_blocks(parent: lxml.html.HtmlElement) -> bool:
    blocks = loose = False
    for child in parent:
        if child.tag in _BLOCK_TAGS:
            blocks = True
        else:
            loose = True
        if child.tail is not None and not loose and not child.tail.isspace():
            loose = True
    return blocks and (loose or not (parent.text is None or parent.text.isspace()))


def _reads_as_text(text: str | None, run: list[lxml.html.HtmlElement]) -> bool:
    """Whether a run of loose text and inline elements is prose: mostly words outside links (a row of
    loose links is a menu or teasers) and outside microdata (`itemprop` values a stylesheet hides)."""
    words = len((text or "").split())
    other = 0  # words in links and in microdata
    for element in run:
        words += len((element.tail or "").split())
        if not isinstance(element.tag, str):
            continue
        words += len(element.text_content().split())
        other += _linked_or_microdata_words(element)
    return words - other >= _LOOSE_MIN_WORDS and other < _LOOSE_LINKED_SHARE * words


def _linked_or_microdata_words(element: lxml.html.HtmlElement) -> int:
    """Words of `element` inside links (anchors with a target) or microdata."""
    linked = element.tag == "a" and bool((element.get("href") or "").strip())
    if linked or element.get("itemprop") is not None or element.get("itemscope") is not None:
        return len(element.text_content().split())
    return sum(_linked_or_microdata_words(child) for child in element if isinstance(child.tag, str))


def _is_tracking_pixel(img: lxml.html.HtmlElement) -> bool:
    def tiny(value: str | None) -> bool:
        return value is not None and value.strip().rstrip("px").strip() in ("0", "1")

    src = (img.get("src") or "").lower()
    return tiny(img.get("width")) or tiny(img.get("height")) or any(w in src for w in ("pixel", "beacon", "/track"))


def fix_links_and_images(root: lxml.html.HtmlElement, base: str) -> None:
    """Links and images absolute; tracking pixels, image-less empty links and non-web links dropped."""
    for img in list(root.iter("img")):
        src = absolute_http_url(img.get("src") or img.get("data-src") or "", base)
        if src is None or _is_tracking_pixel(img):
            _drop(img)
            continue
        alt = " ".join((img.get("alt") or "").split())
        img.attrib.clear()
        img.set("src", src)
        if alt:
            img.set("alt", alt)
    for anchor in list(root.iter("a")):
        href = anchor.get("href") or ""
        absolute = absolute_http_url(href, base)
        if href.strip().lower().startswith("mailto:"):
            absolute = href.strip()
        if absolute is None or (not anchor.text_content().strip() and anchor.find(".//img") is None):
            if anchor.text_content().strip():
                anchor.drop_tag()  # keep the words, lose a link that goes nowhere useful
            else:
                _drop(anchor)
            continue
        anchor.attrib.clear()
        anchor.set("href", absolute)
