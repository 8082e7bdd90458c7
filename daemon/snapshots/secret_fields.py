"""Password fields show how much they hold, never what: the snapshot line of an `<input type=password>`
carries one bullet per character instead of its value, as the page draws it and as Chromium's own
accessibility tree reports it.

Playwright's snapshot holds the value itself, and snapshots go to a model, into run artifacts and to the
console: a password a person typed, or one filled from a run's secret argument, would otherwise leave the
page in every answer that followed. In the page's document and its open shadow roots the fields are the
ones page_facts.js marks `[type=password]` (aria_capture.py hides them as it annotates); page_facts.js does
not reach into child frames, so there each textbox that holds a value is asked (`hide_in_frames`).
"""

from __future__ import annotations

import asyncio
import re

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from browserd.daemon.snapshots.aria_parser import split_line, unquote, value_line

PASSWORD_MARK = "type=password"  # page_facts.js's annotation of a password input
_BULLET = "\u2022"
_REF = re.compile(r"\[ref=(\w+)\]")
_IS_PASSWORD_JS = "(e) => e.tagName === 'INPUT' && e.type === 'password'"
_ASK_TIMEOUT_MS = 2_000


def hidden(value: str) -> str:
    """What a password field shows of `value`."""
    return _BULLET * len(value)


def hide_value(lines: list[str], at: int) -> None:
    """Line `at` (a field's) with its value in bullets: `key: value` on the line, or the `- text:` line
    under the field's properties (`- /placeholder: ...`)."""
    found = value_line(lines, at)
    if found is None:
        return
    line = lines[found]
    indent = len(line) - len(line.lstrip(" "))
    key, value = split_line(line[indent + 2 :])
    lines[found] = f"{line[: indent + 2]}{key}: {hidden(unquote(value or ''))}"


async def hide_in_frames(page: Page, text: str) -> str:
    """`text` with the values of the password fields inside child frames in bullets. Each textbox there that
    holds a value is asked whether it is one, all at once; one that cannot be asked is hidden too, since
    showing a password is the worse mistake. Nothing is asked of a page whose frames hold no value."""
    if "- iframe" not in text:
        return text
    lines = text.split("\n")
    fields = _framed_fields(lines)
    if not fields:
        return text
    secret = await asyncio.gather(*(_is_password(page, ref) for _, ref in fields))
    for (at, _), hide in zip(fields, secret, strict=True):
        if hide:
            hide_value(lines, at)
    return "\n".join(lines)


def _framed_fields(lines: list[str]) -> list[tuple[int, str]]:
    """The textboxes inside child frames that hold a value: their line and ref."""
    found: list[tuple[int, str]] = []
    frame_indent: int | None = None  # set while inside an iframe's subtree
    for index, line in enumerate(lines):
        indent = len(line) - len(line.lstrip(" "))
        if frame_indent is not None and indent <= frame_indent:
            frame_indent = None
        body = line[indent + 2 :]
        if frame_indent is None:
            if body.startswith("iframe"):
                frame_indent = indent
        elif body.startswith("textbox") and (ref := _REF.search(body)) and value_line(lines, index) is not None:
            found.append((index, ref[1]))
    return found


async def _is_password(page: Page, ref: str) -> bool:
    try:
        return bool(await page.locator(f"aria-ref={ref}").evaluate(_IS_PASSWORD_JS, timeout=_ASK_TIMEOUT_MS))
    except PlaywrightError:
        return True
