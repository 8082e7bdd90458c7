"""Blocks that survive main-content extraction but are not the article: calls to subscribe or follow,
share and "read more" teasers, tag and category lines, and "related" sections.

The rules look at one block (paragraph, heading, list) at a time: a short block whose words are a
call to action or a site notice goes; a heading that announces a related/comments/newsletter section
goes with the blocks under it. Long blocks are never dropped, so an article that merely talks about
newsletters keeps its text. Whatever the language, the blocks ending the article that are nothing but
links (teasers for other stories, tag lists) go too.
"""

from __future__ import annotations

import re

import lxml.html  # type: ignore[import-untyped]

_BLOCKS = ("p", "div", "ul", "ol", "blockquote", "table", "pre", "h1", "h2", "h3", "h4", "h5", "h6")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")

# A short block saying one of these is a call to action or a site notice, not article text.
_NOTICE = re.compile(
    r"""
    \b(?:subscribe|sign[ -]?up|register)\s+(?:to|for|now|today|here)\b | \b(?:our|the|free)\s+(?:\w+\s+)?newsletters?\b
    | \b(?:delivered|straight)\s+to\s+your\s+inbox\b
    | \bfollow\s+(?:us|him|her|them|me)\s+(?:on|at|@)|\bfollow\s+@
    | ^(?:tags?|filed\s+under|categor(?:y|ies)|topics?|share(?:\s+this)?(?:\s+(?:article|story|post))?)\s*[:|]
    | ^(?:read|see|watch|listen)\s+(?:more|also|next|now)\s*:
    | ^(?:related|recommended|don'?t\s+miss|more\s+from|also\s+read)\s*:
    | ^(?:click|tap)\s+here\b
    | ^comments?$
    """,
    re.I | re.X,
)
# A heading announcing one of these starts a section that is not the article.
_SECTION = re.compile(
    r"""^(?:
        related(?:\s+\w+)? | recommended(?:\s+\w+)? | more\s+(?:from|on|in|stories|news|articles)\b.*
        | (?:you|we\s+think\s+you)\s+(?:may|might)\s+(?:also\s+)?(?:like|enjoy).* | read\s+(?:more|next|also)\b.*
        | (?:most\s+)?(?:popular|trending|read)(?:\s+\w+)? | comments?(?:\s+\(\d+\))? | leave\s+a\s+(?:comment|reply)
        | share(?:\s+this)?(?:\s+\w+)? | tags? | newsletters? | subscribe.* | sign\s+up.* | about\s+the\s+author
        | don'?t\s+miss.* | see\s+also | further\s+reading
    )[\s:.!]*$""",
    re.I | re.X,
)
_SHORT_WORDS = 30


def _text(element: lxml.html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def _drop(element: lxml.html.HtmlElement) -> None:
    if element.getparent() is not None:
        element.drop_tree()


# A block with at least this share of its text inside links is a link block (a teaser, a menu).
_LINK_BLOCK_DENSITY = 0.8
# Short link-free lines at the end of an article do not stop the search for trailing link blocks.
_SHORT_LINE_CHARS = 80


def link_density(element: lxml.html.HtmlElement, text: str) -> float:
    """The share of `text` (the element's text, whitespace collapsed) inside links. An anchor without a
    target is no link: `<a name>` anchors wrap whole paragraphs, and trafilatura turns them into `href=""`."""
    linked = sum(len(_text(a)) for a in element.iter("a") if (a.get("href") or "").strip())
    return linked / max(len(text), 1)


def _is_link_block(block: lxml.html.HtmlElement, text: str) -> bool:
    return bool(text) and link_density(block, text) >= _LINK_BLOCK_DENSITY


def _drop_trailing_links(body: lxml.html.HtmlElement) -> None:
    """The blocks that end the article but are only links (other stories, tag lists, promotions), in any
    language, and headings left with nothing under them. Short link-free lines among them (a copyright
    line, a sign-off) stay but do not stop the search; the first real block of text does."""
    blocks = [b for b in body if isinstance(b.tag, str)]
    kept_below = False  # a short line below stays, so a heading above it is not left empty
    for block in reversed(blocks[1:]):
        text = _text(block)
        if not text:
            continue
        if not _is_link_block(block, text):
            if block.tag in _HEADINGS and not kept_below and len(text.split()) <= _SHORT_WORDS:
                _drop(block)  # a heading with nothing left under it (a long one is text set in a heading tag)
                continue
            if len(text) <= _SHORT_LINE_CHARS and block.find(".//a") is None:
                kept_below = True
                continue
            break
        _drop(block)


def drop_boilerplate(root: lxml.html.HtmlElement) -> None:
    body = root.find("body")
    if body is None:
        return
    _drop_trailing_links(body)
    section_level = 0  # > 0 while inside a section opened by a boilerplate heading of that level
    for block in list(body):
        tag = block.tag if isinstance(block.tag, str) else ""
        text = _text(block)
        if tag in _HEADINGS:
            level = int(tag[1])
            if section_level and level > section_level:
                _drop(block)
                continue
            section_level = 0
            if _SECTION.match(text):
                section_level = level
                _drop(block)
            elif _NOTICE.search(text) and len(text.split()) <= 12:
                _drop(block)
            continue
        if section_level:
            _drop(block)
            continue
        if tag in _BLOCKS and text and len(text.split()) <= _SHORT_WORDS and _NOTICE.search(text):
            _drop(block)


def is_notice(text: str) -> bool:
    """A heading or short line that opens a non-article section or is a call to action."""
    return bool(_SECTION.match(text)) or (len(text.split()) <= _SHORT_WORDS and bool(_NOTICE.search(text)))
