"""Taking a snapshot from the page: Playwright's AI-mode ARIA snapshot, annotated with what it leaves out.

Playwright gives every node a ref (`[ref=e5]`, `f1e2` inside iframes) that the `aria-ref=` selector
resolves. What it leaves out, and an agent needs to pick an action without guessing, is added here:
the kind of an input (date, number, email, password, multi-line), the collapsed state of expandable
elements, and refs of ours (c1...) for clickables without a role. They are matched to snapshot lines by
their on-screen box.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import anyio
from playwright.async_api import CDPSession, Locator, Page

from browserd.daemon.errors import ExecutionError
from browserd.daemon.runtime.page_js import called, load_js
from browserd.daemon.snapshots.aria_parser import render_line, split_line
from browserd.daemon.snapshots.secret_fields import PASSWORD_MARK, hide_value
from browserd.daemon.snapshots.settle import evaluate_across_navigation

_REF_IN_LINE = re.compile(r"\[ref=(\w+)\]")
_BOX = re.compile(r" \[box=(-?\d+),(-?\d+),(\d+),(\d+)\]")
# For the script that annotates a snapshot, when the caller gives no timeout (Playwright's default).
DEFAULT_TIMEOUT_MS = 30_000

CLICK_TRACKER_JS = load_js("browserd.daemon.snapshots", "click_tracker.js")
IDENTITY_JS = load_js("browserd.daemon.snapshots", "identity.js")


@dataclass(frozen=True)
class Clickable:
    """A ref of ours (c1...) for a clickable Playwright gave none: the element's CSS selector, unique in
    the document, and what the element was when the snapshot saw it. The selector goes by position, so
    after the page changes it may reach another element: the rest tells that apart."""

    selector: str
    tag: str
    text: str
    width: int
    height: int

    def same(self, now: list[Any]) -> bool:
        """Whether an element read by IDENTITY_JS is this one (its box may move, not change size)."""
        tag, text, width, height = now
        return (tag, text) == (self.tag, self.text) and abs(width - self.width) <= 1 and abs(height - self.height) <= 1


@dataclass
class Capture:
    text: str
    clickables: dict[str, Clickable] = field(default_factory=dict)
    title: str | None = None  # the document's title when the annotations were read
    # Refs of lines holding an element that acts (a handler, draggable, tabindex): lean() keeps them shown.
    actionable: set[str] = field(default_factory=set)
    facts: PageFacts | None = None  # what the page facts read alongside (a later fill compares its fields')


PAGE_FACTS_JS = called(
    load_js("browserd.daemon.snapshots", "page_facts.js"), load_js("browserd.daemon.snapshots", "field_state.js")
)


@dataclass(frozen=True)
class FieldState:
    """What field_state.js read: the state of each form control, and the focused one's (a fill's field)."""

    controls: tuple[int, ...]  # a hash of each control's state, in document order
    focused: int  # the focused control's index in `controls`; -1 when none is
    value: str | None  # the focused field's value (None: no text field is focused)
    # Nothing but the DOM and the controls' states can change what a snapshot shows: no styles on the states a
    # fill changes (beyond colours and outlines), no animation, no shadow root, no label made of the field.
    steady: bool

    @classmethod
    def of(cls, found: Any) -> FieldState | None:
        if not isinstance(found, list) or len(found) != 4 or not isinstance(found[0], list):
            return None
        controls, focused, value, steady = found
        return cls(tuple(controls), int(focused), value if isinstance(value, str) else None, steady is True)


@dataclass(frozen=True)
class PageFacts:
    marks: list[list[Any]]
    title: str
    fields: FieldState | None = None

    @classmethod
    def of(cls, found: Any) -> PageFacts | None:
        """The facts from PAGE_FACTS_JS's answer (JSON text); None when it did not run (a navigation, a failing
        script)."""
        if not isinstance(found, str):
            return None
        try:
            found = json.loads(found)
        except ValueError:
            return None
        if not isinstance(found, list) or len(found) != 3 or not isinstance(found[0], list):
            return None
        return cls(found[0], str(found[1]), FieldState.of(found[2]))


async def capture(
    page: Page,
    scope: Locator | None = None,
    depth: int | None = None,
    timeout_ms: int | None = None,
    facts: PageFacts | None = None,
    cdp: CDPSession | None = None,
) -> Capture:
    """The AI-mode snapshot of the page (or of `scope`), with input kinds, states and clickables added;
    `facts` are the page's annotations and title when they were just read, else they are read here (over
    the page's `cdp` session when it has one)."""
    limit_ms = timeout_ms or DEFAULT_TIMEOUT_MS
    if facts is None:
        with anyio.move_on_after(limit_ms / 1000) as waiting:
            # A script's redirect may replace the document meanwhile: the facts are the new one's.
            facts = PageFacts.of(await evaluate_across_navigation(page.main_frame, PAGE_FACTS_JS, None, limit_ms, cdp))
        if waiting.cancelled_caught:
            raise ExecutionError(f"the page did not answer within {limit_ms} ms (a script keeps it busy?)")
    boxed = facts is not None and bool(facts.marks)
    target = scope if scope is not None else page
    text = await target.aria_snapshot(mode="ai", depth=depth, boxes=boxed, timeout=timeout_ms)
    return annotated(text, facts, boxed)


async def read_ahead(page: Page, timeout_ms: int | None) -> str:
    """Playwright's snapshot of the page before its facts are read, so with the boxes any mark may need
    (`annotated` makes a Capture of it once they are read)."""
    return await page.aria_snapshot(mode="ai", boxes=True, timeout=timeout_ms)


def annotated(text: str, facts: PageFacts | None, boxed: bool) -> Capture:
    """The Capture of Playwright's snapshot `text` (with boxes when `boxed`) and the page facts read beside it."""
    captured = _annotate(text, facts.marks if facts is not None else []) if boxed else Capture(text)
    captured.title = facts.title if facts is not None else None
    captured.facts = facts
    return captured


def _annotate(text: str, marks: list[list[Any]]) -> Capture:
    by_box: dict[str, list[Any]] = {}
    # A mark that only says "acts" never hides one with attributes or a selector in the same box.
    for mark in sorted(marks, key=lambda mark: bool(mark[4] or mark[5])):
        by_box[",".join(str(v) for v in mark[:4])] = mark
    matched: set[str] = set()
    secrets: list[int] = []  # the lines of password fields

    def replace(match: re.Match[str]) -> str:
        key = ",".join(match.groups())
        mark = by_box.get(key)
        if mark is None:
            return ""
        matched.add(key)
        if PASSWORD_MARK in mark[4]:
            secrets.append(len(lines))
        return "".join(f" [{item}]" for item in mark[4])

    lines: list[str] = []
    boxes: list[tuple[int, int, int, int, int]] = []  # line index, x, y, right, bottom of main-frame lines
    frame_indent: int | None = None  # set while inside an iframe's subtree
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if frame_indent is not None and indent <= frame_indent:
            frame_indent = None
        box = _BOX.search(line)
        if box and frame_indent is None:
            x, y, w, h = (int(v) for v in box.groups())
            boxes.append((len(lines), x, y, x + w, y + h))
        # Boxes inside a frame are relative to that frame: never match them to main-frame marks.
        lines.append(_BOX.sub(replace, line) if frame_indent is None else _BOX.sub("", line))
        if frame_indent is None and line.lstrip(" ").startswith("- iframe"):
            frame_indent = indent
    for at in secrets:
        hide_value(lines, at)
    captured = _add_clickables(lines, boxes, [m for k, m in by_box.items() if m[5] and k not in matched])
    captured.actionable = _actionable_refs(lines, boxes, [m for m in by_box.values() if m[8] and not m[5]])
    return captured


def _actionable_refs(lines: list[str], boxes: list[tuple[int, int, int, int, int]], marks: list[list[Any]]) -> set[str]:
    """The ref of the deepest line holding each actionable element (its own line, or the paragraph an inline
    one was folded into)."""
    refs: set[str] = set()
    for x, y, w, h, *_ in marks:
        cx, cy = x + w / 2, y + h / 2
        holder = next(
            (i for i, left, top, right, bottom in reversed(boxes) if left <= cx <= right and top <= cy <= bottom), None
        )
        if holder is not None and (found := _REF_IN_LINE.search(lines[holder])):
            refs.add(found[1])
    return refs


def _add_clickables(lines: list[str], boxes: list[tuple[int, int, int, int, int]], marks: list[list[Any]]) -> Capture:
    """Each clickable goes under the deepest line whose box holds its centre."""
    inserts: dict[int, list[str]] = {}
    clickables: dict[str, Clickable] = {}
    for number, (x, y, w, h, _extra, selector, label, tag, _actionable) in enumerate(marks, start=1):
        cx, cy = x + w / 2, y + h / 2
        holder = next(
            (i for i, left, top, right, bottom in reversed(boxes) if left <= cx <= right and top <= cy <= bottom), None
        )
        if holder is None:
            continue
        ref = f"c{number}"
        clickables[ref] = Clickable(selector, tag, label, w, h)
        indent = len(lines[holder]) - len(lines[holder].lstrip(" ")) + 2
        key = f"clickable {json.dumps(label, ensure_ascii=False)} [ref={ref}]"
        inserts.setdefault(holder, []).append(f"{' ' * indent}- {render_line(key)}")
    out: list[str] = []
    for index, line in enumerate(lines):
        extra = inserts.get(index)
        # `- paragraph [ref=e5]: its text` keeps its text; a bare `- main [ref=e2]` gains the colon of a parent.
        has_text = split_line(line.lstrip(" ")[2:])[1] is not None
        out.append(line if not extra or line.endswith(":") or has_text else line + ":")
        out.extend(extra or [])
    return Capture("\n".join(out), clickables)
