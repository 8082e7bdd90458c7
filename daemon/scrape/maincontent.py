"""The main content of a page through trafilatura, as simplified HTML (`<html><body>` of p, h1-h6, ul/li,
a, table, blockquote, pre, b/i...).

trafilatura's precision mode drops more boilerplate than its default mode (0.965 vs 0.959 token F1 on
the dev set) but now and then throws most of the article away with it; when the default mode finds
several times more text, the default mode's result is taken instead. The default mode only runs when
the page holds that much more text outside links than the precision result, so most pages pay for one
run.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import lxml.etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]

from .document import body_of

if TYPE_CHECKING:
    from trafilatura.settings import Extractor

# The precision result is replaced when the default mode finds this many times more words.
_RECOVERY_RATIO = 4.0

# trafilatura is imported on the first extraction, not with the daemon: with the URL and date libraries it
# brings it took 170 ms of every daemon's start (python -X importtime), most of which never scrape.


@cache
def _options(precision: bool) -> Extractor:
    from trafilatura.settings import Extractor

    return Extractor(
        output_format="python",
        precision=precision,
        comments=False,  # comment threads are not the page's main content
        formatting=True,
        links=True,
        images=False,  # with images on, trafilatura keeps more caption and gallery boilerplate
        tables=True,
    )


def _run(tree: lxml.html.HtmlElement, precision: bool) -> tuple[lxml.html.HtmlElement | None, int]:
    from trafilatura.core import bare_extraction
    from trafilatura.htmlprocessing import convert_to_html
    from trafilatura.settings import Document

    document = bare_extraction(tree, options=_options(precision))  # works on its own copy of the tree
    if not isinstance(document, Document) or document.body is None:
        return None, 0
    words = len((document.raw_text or "").split())
    if not words:
        return None, 0
    # trafilatura builds plain etree elements; the rest of the pipeline works on lxml.html ones
    html = lxml.etree.tostring(convert_to_html(document.body), encoding="unicode")
    return lxml.html.document_fromstring(html), words


def _unlinked_words(tree: lxml.html.HtmlElement, page_words: int) -> int:
    """Words of the page's body outside links (anchors without a target are no links): the most article
    text the default mode could add."""
    links = (a for a in body_of(tree).iter("a") if (a.get("href") or "").strip())
    return page_words - sum(len(a.text_content().split()) for a in links)


def main_content(tree: lxml.html.HtmlElement, page_words: int) -> lxml.html.HtmlElement | None:
    """`<html><body>` holding the page's main content, or None when trafilatura finds none; `page_words`
    is the number of words in the page's body."""
    root, words = _run(tree, precision=True)
    if _RECOVERY_RATIO * words <= _unlinked_words(tree, page_words):
        other, other_words = _run(tree, precision=False)
        if other is not None and other_words >= _RECOVERY_RATIO * max(words, 1):
            root = other
    return root
