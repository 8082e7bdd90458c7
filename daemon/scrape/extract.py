"""The scrape page pipeline as pure functions of strings (DESIGN.md §3 scrape/, D-22, D-23).

    extract(html, url)  ->  Extraction(markdown, html, metadata, main_content_found)

parse -> includeTags/excludeTags -> layout tables made plain containers and loose text paragraphs
(cleaner.py) -> main content (trafilatura, maincontent.py) or the whole cleaned page
(cleaner.py) -> the rest of an article split over identical containers and embedded posts put back
(restore.py) -> boilerplate blocks dropped (boilerplate.py) -> links and headings restored, and headings and
lists dropped from between kept blocks put back (restore.py) -> links and images absolute -> html2text and a
tidy pass (markdown.py). No network, no browser: the caller hands over the rendered page.
"""

from __future__ import annotations

from dataclasses import dataclass

import lxml.html  # type: ignore[import-untyped]

from . import boilerplate, cleaner, maincontent
from .document import base_url, body_of, parse
from .links import Link, extract_links
from .markdown import to_markdown
from .metadata import PageMetadata, metadata_of, page_metadata
from .restore import block_index, recover_chunks, recover_embeds, recover_posts, restore_dropped, restore_structure

__all__ = ["Extraction", "Link", "PageMetadata", "extract", "extract_links", "page_metadata"]


# Below this many words a page is short enough that the whole of it, less its chrome, beats an article
# extractor tuned for long text (which flattens headings and lists on short pages).
SMALL_PAGE_WORDS = 150
SMALL_PAGE_SHARE = 0.6


@dataclass(frozen=True)
class Extraction:
    markdown: str
    html: str  # the cleaned main-content HTML when only_main_content, else the page's HTML
    metadata: PageMetadata
    main_content_found: bool  # False when only_main_content fell back to the whole page (TC-04)


def _whole_page(tree: lxml.html.HtmlElement, *, navigation: bool, hidden: bool) -> lxml.html.HtmlElement:
    """The page's body less its chrome: banners always, navigation and hidden parts as asked."""
    cleaner.remove_chrome(tree, navigation=navigation, hidden=hidden)
    root = lxml.html.document_fromstring("<html><body></body></html>")
    root.replace(root.find("body"), body_of(tree))
    return root


def _render(root: lxml.html.HtmlElement, base: str) -> tuple[str, str]:
    cleaner.fix_links_and_images(root, base)
    html = lxml.html.tostring(root, encoding="unicode")
    return to_markdown(root), html


def extract(
    html: str,
    url: str,
    *,
    only_main_content: bool = True,
    include_tags: list[str] | None = None,
    exclude_tags: list[str] | None = None,
) -> Extraction:
    """Markdown and HTML of a page; `url` is the page's final URL (links and images resolve against it).

    include_tags / exclude_tags are CSS selectors (selectors.py: type, .class, #id, [attr], descendant and
    child combinators); an unsupported selector raises ValueError.
    """
    tree = parse(html)
    metadata = metadata_of(tree, url)
    base = base_url(tree, url)
    tree = cleaner.apply_tag_filters(tree, include_tags, exclude_tags)
    cleaner.remove_non_content(tree)
    if not only_main_content or include_tags:
        # The whole page, or the parts the caller picked: nothing more is for the extractor to judge.
        markdown, out_html = _render(_whole_page(tree, navigation=False, hidden=False), base)
        return Extraction(markdown, out_html, metadata, main_content_found=False)
    cleaner.unwrap_layout_tables(tree)
    cleaner.wrap_loose_text(tree)
    page_words = len(body_of(tree).text_content().split())
    root = maincontent.main_content(tree, page_words)
    if root is not None and _small_page(page_words, root):
        # Hidden parts stay, as the extractor would keep them: a collapsed tree's files are content.
        markdown, out_html = _render(_whole_page(tree, navigation=True, hidden=False), base)
        return Extraction(markdown, out_html, metadata, main_content_found=True)
    if root is not None:
        index = block_index(tree)
        recover_chunks(root, tree, index)
        recover_posts(root, tree, index)
        recover_embeds(root, tree, index)
        boilerplate.drop_boilerplate(root)
        restore_structure(root, tree, index)
        restore_dropped(root, tree, index)
        markdown, out_html = _render(root, base)
        if markdown.strip():
            return Extraction(markdown, out_html, metadata, main_content_found=True)
    markdown, out_html = _render(_whole_page(tree, navigation=True, hidden=True), base)
    return Extraction(markdown, out_html, metadata, main_content_found=False)


def _small_page(page_words: int, root: lxml.html.HtmlElement) -> bool:
    """A short page that is nearly all main content reads best whole, with its headings and lists kept."""
    main_words = len(root.text_content().split())
    return page_words <= SMALL_PAGE_WORDS and main_words >= SMALL_PAGE_SHARE * page_words
