"""A small CSS selector subset compiled to XPath, for includeTags / excludeTags.

Supported: type (`div`, `*`), `.class`, `#id`, `[attr]`, `[attr=value]` (also `~=`, `^=`, `$=`, `*=`), compound
forms of those (`div.note#x[data-a]`), descendant (` `) and child (`>`) combinators, and comma lists.
Anything else raises ValueError naming the selector, so a caller can turn it into a parameter error.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(
    r"""\s*(?P<comb>>)\s*
    | (?P<space>\s+)
    | (?P<tag>[A-Za-z][A-Za-z0-9-]*|\*)
    | \.(?P<cls>[A-Za-z0-9_-]+)
    | \#(?P<id>[A-Za-z0-9_:.-]+)
    | \[\s*(?P<attr>[A-Za-z_:][A-Za-z0-9_:.-]*)\s*
        (?:(?P<op>[~^$*]?=)\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\]\s]+))\s*)?\]
    """,
    re.VERBOSE,
)


def _literal(value: str) -> str:
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    return "concat(" + ', "\'", '.join(f"'{p}'" for p in parts) + ")"


def _condition(attr: str, op: str | None, value: str) -> str:
    name = f"@{attr}"
    if op is None:
        return name
    lit = _literal(value)
    if op == "=":
        return f"{name}={lit}"
    if op == "~=":
        return f"contains(concat(' ', normalize-space({name}), ' '), {_literal(' ' + value + ' ')})"
    if op == "^=":
        return f"starts-with({name}, {lit})"
    if op == "$=":
        return f"substring({name}, string-length({name}) - string-length({lit}) + 1) = {lit}"
    return f"contains({name}, {lit})"


def _compile_one(selector: str) -> str:
    steps: list[str] = []
    axis = "descendant-or-self::"
    tag = ""
    conds: list[str] = []

    def flush() -> None:
        nonlocal tag, conds
        if tag or conds:
            steps.append(axis + (tag or "*") + "".join(f"[{c}]" for c in conds))
        tag, conds = "", []

    pos = 0
    text = selector.strip()
    if not text:
        raise ValueError("empty CSS selector")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"unsupported CSS selector: {selector!r}")
        pos = m.end()
        if m.group("comb") or m.group("space"):
            if not (tag or conds):
                raise ValueError(f"unsupported CSS selector: {selector!r}")
            flush()
            axis = "/" if m.group("comb") else "//"
        elif m.group("tag"):
            if tag or conds:
                raise ValueError(f"unsupported CSS selector: {selector!r}")
            tag = m.group("tag").lower()
        elif m.group("cls"):
            conds.append(_condition("class", "~=", m.group("cls")))
        elif m.group("id"):
            conds.append(_condition("id", "=", m.group("id")))
        else:
            value = m.group("dq") if m.group("dq") is not None else m.group("sq") or m.group("bare") or ""
            conds.append(_condition(m.group("attr").lower(), m.group("op"), value))
    if not (tag or conds):
        raise ValueError(f"unsupported CSS selector: {selector!r}")
    flush()
    return "".join(steps)


@lru_cache(maxsize=256)
def css_to_xpath(selectors: str) -> str:
    """`div.a, #b > p` -> an XPath selecting the same elements (relative to the document root)."""
    return " | ".join(_compile_one(part) for part in selectors.split(","))
