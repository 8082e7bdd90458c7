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
