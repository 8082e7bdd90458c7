"""A fill that changed one text field's value and nothing else: its snapshot is the last one with that field's
line rewritten, so the answer does not wait for the page to be read again (a third of a fill's time).

Only when every other way the page could read differently is ruled out: the DOM is as it was when the last
settle answered, no animation or popover came or went since, and the last snapshot was read after that settle
(settle_action.js, Tab.last_capture_settles); every other form control holds what it held then (a handler that
copies a title into a slug field shows there); the page styles none of the states a fill changes beyond
colours and outlines, animates nothing, holds no shadow root and no label made of the field (field_state.js);
the page has no child frame; the field holds the value it was given, which Playwright writes on one line as
this module does. Anything else reads the page (docs/answers.md).
"""

from __future__ import annotations

from browserd.daemon.sessions.tab import Tab
from browserd.daemon.snapshots.aria_capture import Capture, PageFacts
from browserd.daemon.snapshots.aria_parser import marked, render_line, split_line, unquote, value_line, without_last
from browserd.daemon.snapshots.secret_fields import PASSWORD_MARK, hidden
from browserd.daemon.snapshots.settle import Settled

_ACTIVE = " [active]"  # Playwright's mark of the focused element, which moves to the filled field
_PROPERTY = "- /"  # a child line holding a property (`- /placeholder: Your name`), not content


def edited(tab: Tab, ref: str, value: str, settled: Settled) -> Capture | None:
    """The capture the page would answer after a fill of `ref` with `value`, when only that field changed since
    the tab's last snapshot; None when that is not certain."""
    last = tab.last_capture
    facts = PageFacts.of(settled.after)
    if last is None or facts is None or last.facts is None or not settled.unchanged:
        return None
    if tab.last_capture_settles != tab.settles - 1 or tab.last_snapshot_document != tab.document:
        return None
    if tab.unseen_actions or len(tab.page.frames) != 1:
        return None
    before, now = last.facts.fields, facts.fields
    if before is None or now is None or not now.steady or now.value != value or now.focused < 0:
        return None
    if len(before.controls) != len(now.controls) or any(
        old != new
        for index, (old, new) in enumerate(zip(before.controls, now.controls, strict=True))
        if index != now.focused
    ):
        return None
    if _shows(last.text, ref, value):
        # The field held that value already: the control that changed (the focused one) is another.
        return None
    text = with_value(last.text, ref, value)
    if text is None:
        return None
    return Capture(text, last.clickables, facts.title, last.actionable, facts)


def with_value(text: str, ref: str, value: str) -> str | None:
    """Playwright's snapshot `text` with the text field `ref` holding `value` and focused, written as Playwright
    writes it: `key: value` on the line, or a `- text:` line under the field's properties. None when the line is
    not a plain text field's or the value is one Playwright would write otherwise (spaces it folds)."""
    if value != " ".join(value.split()):
        return None
    lines = text.split("\n")
    at = _line_of(lines, ref)
    if at is None:
        return None
    line = lines[at]
    indent = len(line) - len(line.lstrip(" "))
    if not line.startswith("- ", indent):
        return None
    end = at + 1
    while end < len(lines) and len(lines[end]) - len(lines[end].lstrip(" ")) > indent:
        end += 1
    children = [child.strip() for child in lines[at + 1 : end]]
    properties = [child for child in children if child.startswith(_PROPERTY)]
    if any(not (child.startswith(_PROPERTY) or child.startswith("- text:")) for child in children):
        return None
    key_scalar, _ = split_line(line[indent + 2 :])
    key = unquote(key_scalar)
    if _ACTIVE in text:
        # The focus is shown (the page has it): it moves from the element that had it to the field.
        lines = [_unfocused(other) if _ACTIVE in other else other for other in lines]
        key = marked(without_last(key, _ACTIVE), _ACTIVE)
    pad = " " * indent
    if f"[{PASSWORD_MARK}]" in key:
        value = hidden(value)
    if properties:
        shown = [f"{pad}- {render_line(key)}:", *(f"{pad}  {child}" for child in properties)]
        if value:
            shown.append(f"{pad}  - {render_line('text', value)}")
    else:
        shown = [f"{pad}- {render_line(key, value or None)}"]
    return "\n".join([*lines[:at], *shown, *lines[end:]])


def _line_of(lines: list[str], ref: str) -> int | None:
    """The one line that names `ref`; None when none does, or more than one (a name that holds the text)."""
    found = [index for index, line in enumerate(lines) if f"[ref={ref}]" in line]
    return found[0] if len(found) == 1 else None


def _shows(text: str, ref: str, value: str) -> bool:
    """Whether the snapshot `text` shows field `ref` holding `value` (in bullets for a password field)."""
    lines = text.split("\n")
    at = _line_of(lines, ref)
    if at is None:
        return False
    held = value_line(lines, at)
    shown = "" if held is None else unquote(split_line(lines[held].lstrip(" ")[2:])[1] or "")
    return shown == (hidden(value) if f"[{PASSWORD_MARK}]" in lines[at] else value)


def _unfocused(line: str) -> str:
    """The line without Playwright's focus mark in its key (a text that says " [active]" keeps it)."""
    body_at = len(line) - len(line.lstrip(" ")) + 2
    key_scalar, _ = split_line(line[body_at:])
    if _ACTIVE not in key_scalar:
        return line
    return line[:body_at] + without_last(key_scalar, _ACTIVE) + line[body_at + len(key_scalar) :]
