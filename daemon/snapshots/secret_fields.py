"""Password fields show how much they hold, never what: the snapshot line of an `<input type=password>`
carries one bullet per character instead of its value, as the page draws it and as Chromium's own
accessibility tree reports it.

Playwright's snapshot holds the value itself, and snapshots go to a model, into run artifacts and to the
console: a password a person typed, or one filled from a run's secret argument, would otherwise leave the
page in every answer that followed. The fields are the ones page_facts.js marks `[type=password]` (the
page's document and its open shadow roots); a child frame's fields are not marked (docs/answers.md).
"""

from __future__ import annotations

from browserd.daemon.snapshots.aria_parser import split_line, unquote

PASSWORD_MARK = "type=password"  # page_facts.js's annotation of a password input
_BULLET = "\u2022"
_TEXT = "- text: "  # the line Playwright writes a field's value on when the field has properties


def hidden(value: str) -> str:
    """What a password field shows of `value`."""
    return _BULLET * len(value)


def hide_value(lines: list[str], at: int) -> None:
    """Line `at` (a field's) with its value in bullets: `key: value` on the line, or the `- text:` line
    under the field's properties (`- /placeholder: ...`)."""
    line = lines[at]
    indent = len(line) - len(line.lstrip(" "))
    key, value = split_line(line[indent + 2 :])
    if value is not None:
        lines[at] = f"{line[: indent + 2]}{key}: {hidden(unquote(value))}"
        return
    for index in range(at + 1, len(lines)):
        child = lines[index]
        child_indent = len(child) - len(child.lstrip(" "))
        if child_indent <= indent:
            return
        if child_indent == indent + 2 and child.startswith(_TEXT, child_indent):
            lines[index] = f"{child[:child_indent]}{_TEXT}{hidden(unquote(child[child_indent + len(_TEXT) :]))}"
