"""HTML -> markdown: html2text with fixed settings, then a tidy pass over its output."""

from __future__ import annotations

import re

import html2text
import lxml.html  # type: ignore[import-untyped]

_EMPTY_LINK = re.compile(r"(?<!!)\[\s*\]\([^()\s]*(?:\([^()]*\))?[^()\s]*\)")
_EMPTY_IMAGE_LINK = re.compile(r"\[\s*\]\(\s*\)")
_BLANK_RUNS = re.compile(r"\n{3,}")
_EMPTY_HEADING = re.compile(r"^#{1,6}\s*$")
_EMPTY_EMPHASIS = re.compile(r"(?<![*_\w])(\*\*|__|\*|_)\s*\1(?![*_\w])")


def _converter() -> html2text.HTML2Text:
    converter = html2text.HTML2Text(bodywidth=0)
    converter.unicode_snob = True  # keep “quotes”, é... as they are
    converter.use_automatic_links = False  # [https://x](https://x), not <https://x>
    converter.ignore_images = False
    converter.ignore_links = False
    converter.ignore_tables = False
    converter.bypass_tables = False  # tables as pipe tables
    converter.skip_internal_links = True
    converter.ul_item_mark = "-"
    converter.emphasis_mark = "*"
    converter.single_line_break = False
    converter.images_with_size = False
    converter.backquote_code_style = True  # ``` fences, so indentation only ever means list nesting
    return converter


def prepare(root: lxml.html.HtmlElement) -> None:
    """Shape the tree the way html2text renders well: one-line headings, no nested tables."""
    for heading in root.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        for br in list(heading.iter("br")):
            br.tail = " " + (br.tail or "")
            br.drop_tag()
        for block in list(heading.iter("p", "div", "li", "ul", "ol")):
            block.drop_tag()
    for cell in root.iter("td", "th"):
        for block in list(cell.iter("p", "div", "br", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6")):
            block.tail = " " + (block.tail or "")
            block.text = " " + (block.text or "")
            block.drop_tag()


def tidy(markdown: str) -> str:
    """No trailing spaces, no runs of blank lines, no empty links, headings or emphasis, lists flush left."""
    markdown = _EMPTY_LINK.sub("", markdown)
    markdown = _EMPTY_IMAGE_LINK.sub("", markdown)
    lines = []
    in_fence = False
    for line in markdown.split("\n"):
        line = line.rstrip()
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and line.startswith("  "):
            line = line[2:]  # html2text indents even top-level list items by two spaces
        stripped = _EMPTY_EMPHASIS.sub("", line).strip()
        if _EMPTY_HEADING.match(stripped) or (stripped == "" and line.strip()):
            line = ""
        lines.append(line)
    markdown = "\n".join(lines)
    return _BLANK_RUNS.sub("\n\n", markdown).strip() + "\n" if markdown.strip() else ""


def to_markdown(root: lxml.html.HtmlElement) -> str:
    prepare(root)
    html = lxml.html.tostring(root, encoding="unicode")
    return tidy(_converter().handle(html))
