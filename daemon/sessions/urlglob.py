"""The one URL glob of browserd, with Playwright's semantics, for browser_network filters and browser_route.

`*` matches any run of characters except `/`; `**` any run including `/` (and `**/` also nothing, so
`**/api/*` matches `https://h/api/x`); `{a,b}` either alternative; a backslash makes the next character
literal; every other character, `?` included, is itself. A glob matches the whole URL. Routes hand the
compiled expression to Playwright, so both tools match exactly the same URLs.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def url_glob(glob: str) -> re.Pattern[str]:
    """The compiled whole-URL expression of `glob`; ValueError for an unbalanced `{` or `}`."""
    out: list[str] = []
    in_group = False
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        elif char == "*":
            stars = len(glob) - i - len(glob[i:].lstrip("*"))
            after = glob[i + stars] if i + stars < len(glob) else ""
            if stars == 1:
                out.append("[^/]*")
            elif after == "/":
                # `**/` is "any folders, or none": after a `/` it may vanish whole (`/**/x` matches `/x`).
                out.append("(?:.+/)?" if i > 0 and glob[i - 1] == "/" else ".*/")
                i += 1
            else:
                out.append(".*")
            i += stars - 1
        elif char == "{" and not in_group:
            in_group = True
            out.append("(?:")
        elif char == "}" and in_group:
            in_group = False
            out.append(")")
        elif char == "," and in_group:
            out.append("|")
        elif char in "{}":
            raise ValueError(f"glob {glob!r} has a nested or unmatched {char!r}")
        else:
            out.append(re.escape(char))
        i += 1
    if in_group:
        raise ValueError(f"glob {glob!r} has an unmatched '{{'")
    return re.compile("^" + "".join(out) + "$")


def is_glob(pattern: str) -> bool:
    return "*" in pattern or "{" in pattern
