"""CSS selectors of includeTags / excludeTags, compiled to XPath by cssselect (the parser lxml itself uses).

Every CSS3 selector that does not depend on a live page works (type, class, id, attributes with every
operator, combinators, comma lists with commas inside quoted values, `:nth-child()`, `:not()` ...); a
selector cssselect cannot parse or translate (`a:hover`, `p::text`, a broken bracket) raises ValueError
naming it, which the tools turn into INVALID_PARAMETER for the field that carried it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import lxml.etree  # type: ignore[import-untyped]
from cssselect import HTMLTranslator, SelectorError
from cssselect.xpath import ExpressionError, XPathExpr

from browserd.daemon.errors import InvalidParameter


class _PageTranslator(HTMLTranslator):
    """HTML rules (`:checked`, `:disabled` read the markup), but a state only a live page has (`:hover`) is
    refused: cssselect would let it match nothing, and an empty result would not say why."""

    def _live_state(self, xpath: XPathExpr) -> XPathExpr:
        raise ExpressionError("a pseudo-class of a live page's state (:hover, :focus, :visited ...)")

    xpath_hover_pseudo = xpath_active_pseudo = xpath_focus_pseudo = _live_state
    xpath_visited_pseudo = xpath_target_pseudo = _live_state


_TRANSLATOR = _PageTranslator()


@lru_cache(maxsize=256)
def css_to_xpath(selectors: str) -> str:
    """`div.a, #b > p` -> an XPath selecting the same elements (relative to the document root)."""
    if not selectors.strip():
        raise ValueError("empty CSS selector")
    try:
        xpath: str = _TRANSLATOR.css_to_xpath(selectors)
        lxml.etree.XPath(xpath)  # what lxml cannot evaluate fails here, not halfway through a page
    except (SelectorError, lxml.etree.XPathError) as exc:
        raise ValueError(f"unsupported CSS selector {selectors!r}: {exc}") from exc
    return xpath


def check_selectors(selectors: Iterable[str] | None, field: str) -> None:
    """Refuse a bad selector before any page is loaded for it."""
    for selector in selectors or ():
        try:
            css_to_xpath(selector)
        except ValueError as exc:
            raise InvalidParameter(
                str(exc),
                hint="Use a CSS selector such as 'article', '.note > p' or 'a[href*=\"x,y\"]'; "
                "state pseudo-classes (:hover) and pseudo-elements (::text) are not supported.",
                field=field,
                selector=selector,
            ) from exc
