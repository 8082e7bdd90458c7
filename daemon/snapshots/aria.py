"""Page snapshots: Playwright's AI-mode ARIA snapshot, annotated, filtered and rendered for a model.

Playwright gives every node a ref (`[ref=e5]`, `f1e2` inside iframes) that the `aria-ref=` selector
resolves. What it leaves out, and an agent needs to pick an action without guessing, is added here:
the kind of an input (date, number, email, password, multi-line) and the collapsed state of
expandable elements. Both are matched to snapshot lines by their on-screen box.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
from playwright.async_api import Locator, Page

from browserd.daemon.errors import ExecutionError
from browserd.daemon.runtime.page_js import load_js
from browserd.daemon.snapshots.link_urls import shown_url

INTERACTIVE_ROLES = frozenset({
    "clickable", "button", "link", "textbox", "checkbox", "radio", "combobox", "listbox", "menuitem",
    "menuitemcheckbox", "menuitemradio", "option", "searchbox", "slider", "spinbutton", "switch", "tab", "treeitem",
})  # fmt: skip
# Where an element is, for a reader that sees only the interactive lines.
LANDMARK_ROLES = frozenset({
    "main", "navigation", "banner", "contentinfo", "complementary", "region", "form", "search", "dialog",
    "alertdialog", "iframe", "tablist", "tree", "menu", "menubar", "listbox", "grid", "table",
})  # fmt: skip
WRAPPER_ROLES = frozenset({"generic", "none", "presentation", "group"})
ACTIONABLE_CONTAINERS = frozenset({"region", "dialog", "alertdialog"})
# Lines of prose: no tool needs their ref (what can be acted on inside a paragraph has its own). A list
# item with lines under it keeps its ref (a scope); headings keep theirs (an element to screenshot or
# read), and so do generic lines (a draggable, a click handler on an ancestor...).
PROSE_ROLES = frozenset({
    "paragraph", "listitem", "status", "log", "note", "term", "definition", "blockquote", "caption", "code",
    "emphasis", "strong", "time", "subscript", "superscript", "insertion", "deletion", "mark", "text",
})  # fmt: skip
# Containers whose label tells apart the same control repeated in each of them.
ITEM_ROLES = frozenset({"listitem", "row", "article"})
ITEM_LABEL_CHARS = 40
# Roles whose text after ": " is their value, worth keeping in a short listing.
_VALUE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider", "option"})

_LINE = re.compile(r"^(?P<indent> *)- (?P<body>.*)$")
# A line's key once YAML's quoting is undone: a role, the name as a JSON string, then [attributes].
_KEY = re.compile(r'^(?P<role>[a-z]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<attrs>(?: \[[^\]]*\])*)$')
_ATTR = re.compile(r"\[([a-z-]+)(?:=([^\]]*))?\]")
_REF_ATTR = re.compile(r" \[ref=[^\]]*\]")
# Escapes of YAML's double-quoted scalars that Playwright writes (yamlEscapeValueIfNeeded).
_YAML_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)")
_YAML_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
                 "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
                 "P": "\u2029"}  # fmt: skip
_SPECIAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|[\n:](\s|$)|\s#|[\n\r{}`]|^[-+]?\.(inf|nan)$", re.I)
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~"})
_VALUE_ESCAPES = re.compile(r'[\\"\x00-\x1f\x7f-\x9f]')
_ESCAPED = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_REF_IN_LINE = re.compile(r"\[ref=(\w+)\]")
_BOX = re.compile(r" \[box=(-?\d+),(-?\d+),(\d+),(\d+)\]")
# For the script that annotates a snapshot, when the caller gives no timeout (Playwright's default).
DEFAULT_TIMEOUT_MS = 30_000

CLICK_TRACKER_JS = load_js("browserd.daemon.snapshots", "click_tracker.js")


@dataclass
class Node:
    text: str  # the line as shown, without its indentation and leading "- "
    role: str = ""  # "" for text and property lines
    name: str = ""
    ref: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    # The line with YAML's quoting undone: `role "name" [attrs]` (or `text`, `/url`) and what follows ": ".
    key: str = ""
    value: str | None = None

    @property
    def interactive(self) -> bool:
        return self.role in INTERACTIVE_ROLES or self.attrs.get("cursor") == "pointer"

    @property
    def plain(self) -> str:
        """The line as a person reads it: no YAML quoting."""
        return self.key if self.value is None else f"{self.key}: {self.value}"


def parse(snapshot: str) -> list[Node]:
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    for raw in snapshot.splitlines():
        match = _LINE.match(raw)
        if match is None:
            # A continuation of a multi-line text value: it belongs to the line above.
            if stack:
                stack[-1][1].text += "\n" + raw
            continue
        depth = len(match["indent"])
        node = parse_line(match["body"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((depth, node))
    return roots


def parse_line(body: str) -> Node:
    """One snapshot line (without indentation and "- "), whatever quoting Playwright chose for it.

    Playwright writes `key` or `key: value`; the key is single-quoted when it holds what YAML would
    misread (`: `, ` #`, a leading quote...), the value double-quoted, and the name inside the key is
    a JSON string.
    """
    key_scalar, value_scalar = _split(body)
    key = unquote(key_scalar)
    value = None if value_scalar is None else unquote(value_scalar)
    match = _KEY.match(key)
    if match is None or match["role"] == "text":
        return Node(body, key=key, value=value)
    quoted_name = match["name"] or '""'
    try:
        # Most names hold no escape: slicing them is much cheaper than decoding, on 25,000-line pages.
        name = quoted_name[1:-1] if "\\" not in quoted_name else json.loads(quoted_name)
    except json.JSONDecodeError:  # not a name Playwright wrote: keep the line as text
        return Node(body, key=key, value=value)
    attrs = {attr: setting or "true" for attr, setting in _ATTR.findall(match["attrs"] or "")}
    return Node(body, match["role"], name, attrs.get("ref"), attrs, key=key, value=value)


def _split(body: str) -> tuple[str, str | None]:
    """The key and value scalars of a line; the value is None when there is none (`key` or `key:`)."""
    if body.startswith("'"):
        end = 1
        while True:
            end = body.find("'", end)
            if end < 0:
                return body, None  # not a quoted key after all
            if body.startswith("''", end):
                end += 2
                continue
            break
        key, rest = body[: end + 1], body[end + 1 :]
    else:
        # An unquoted key never holds ": " nor ends with ":" (Playwright quotes those).
        cut = body.find(": ")
        key, rest = (body, "") if cut < 0 else (body[:cut], body[cut:])
        if cut < 0 and body.endswith(":"):
            key, rest = body[:-1], ":"
    return key, rest[2:] if rest.startswith(": ") else None


def unquote(scalar: str) -> str:
    """A YAML scalar as Playwright writes it: plain, 'single-quoted' or "double-quoted"."""
    if len(scalar) >= 2 and scalar[0] == scalar[-1] == "'":
        return scalar[1:-1].replace("''", "'")
    if len(scalar) >= 2 and scalar[0] == scalar[-1] == '"':
        return _YAML_ESCAPE.sub(_unescape, scalar[1:-1])
    return scalar


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return _YAML_ESCAPES.get(code, match.group(0))


def _needs_quotes(text: str) -> bool:
    """Playwright's rule (yamlStringNeedsQuotes): what a YAML reader would take for something else."""
    lowered = text.lower()
    return (
        not text
        or text != text.strip()
        or _SPECIAL.search(text) is not None
        or text[0] in "&*],?!>|@\"'#%[-"
        or lowered in _YAML_WORDS
        or _is_number(text)
    )


def _is_number(text: str) -> bool:
    # JavaScript's !isNaN(Number(text)), which the rule uses, for the forms a snapshot line can hold.
    try:
        float(text.replace("_", "!"))
    except ValueError:
        return text.lower().startswith(("0x", "0o", "0b")) and text[2:].isalnum()
    return True


def quote_key(key: str) -> str:
    return "'" + key.replace("'", "''") + "'" if _needs_quotes(key) else key


def quote_value(value: str) -> str:
    if not _needs_quotes(value):
        return value
    return '"' + _VALUE_ESCAPES.sub(lambda m: _ESCAPED.get(m.group(0), f"\\x{ord(m.group(0)):02x}"), value) + '"'


def render_line(key: str, value: str | None = None) -> str:
    """A snapshot line (without indentation) quoted as Playwright quotes it, so parse_line reads it back."""
    return quote_key(key) if value is None else f"{quote_key(key)}: {quote_value(value)}"


def render(nodes: list[Node], depth: int = 0) -> list[str]:
    lines: list[str] = []
    for node in nodes:
        lines.append(f"{'  ' * depth}- {node.text}")
        lines.extend(render(node.children, depth + 1))
    return lines


def walk(nodes: list[Node]) -> list[Node]:
    found: list[Node] = []
    for node in nodes:
        found.append(node)
        found.extend(walk(node.children))
    return found


def interactive_only(nodes: list[Node]) -> list[Node]:
    """What can be acted on, under the landmarks and headings that say where it is.

    Elements that share a role and name ("Add to cart" in every row) also say which item they are in.
    """
    names = Counter((node.role, node.name) for node in walk(nodes) if node.interactive and node.name)
    return _interactive(nodes, {key for key, count in names.items() if count > 1}, "")


def _interactive(nodes: list[Node], repeated: set[tuple[str, str]], item: str) -> list[Node]:
    kept: list[Node] = []
    for node in nodes:
        inner_item = _label(node) or item if node.role in ITEM_ROLES else item
        children = _interactive(node.children, repeated, inner_item)
        if node.interactive:
            # Only what can be acted on: link targets (/url) and plain text below it cost tokens for
            # nothing here; the full snapshot and browser_get have them.
            key = node.key
            if node.role in INTERACTIVE_ROLES:
                # A pointer cursor says "clickable"; for a link or button that goes without saying.
                key = key.replace(" [cursor=pointer]", "")
            if item and (node.role, node.name) in repeated:
                key += f" [in={json.dumps(item, ensure_ascii=False)}]"
            text = _parent(render_line(key, _kept_value(node)), children)
            kept.append(replace(node, text=text, children=children))
        elif node.role == "heading":
            kept.append(replace(node, text=_context_line(node), ref=None, children=[]))
        elif children and node.role in LANDMARK_ROLES:
            kept.append(replace(node, text=_parent(_context_line(node), children), ref=None, children=children))
        else:
            kept.extend(children)
    return kept


def _parent(text: str, children: list[Node]) -> str:
    # A line with lines under it ends in ":", so the listing stays a YAML document a reader can load.
    return f"{text}:" if children and not text.endswith(":") and _split(text)[1] is None else text


def _label(node: Node) -> str:
    """What an item is called: its name, its own text, or the first text inside it."""
    if node.name:
        return node.name[:ITEM_LABEL_CHARS]
    if node.value and node.value.strip():
        return node.value.strip()[:ITEM_LABEL_CHARS]
    for child in node.children:
        if child.role == "" and child.key == "text" and child.value:
            return child.value.strip()[:ITEM_LABEL_CHARS]
    return ""


def lean(nodes: list[Node], origin: str = "", actionable: frozenset[str] | set[str] = frozenset()) -> list[Node]:
    """The snapshot as a model reads it: Playwright's, less what costs tokens and tells nothing.

    - `[cursor=pointer]` on a role that is clickable anyway (link, button...): the role says it;
    - refs on lines of prose (a paragraph, a list item, a status text): no tool acts on them,
      while anything interactive, any container (a scope, a screenshot), heading or generic keeps its ref,
      and so does a prose line holding something that acts (`actionable`: a handler, draggable, tabindex);
    - a text line repeating the name of its parent or of a sibling (a label next to its field);
    - an unnamed wrapper around a single line: the line takes its place;
    - an unnamed control hidden from assistive tech that the widget right after it mirrors (Select2 hides
      the <select> it stands for that way): two lines for one field, the widget's is the one to act on;
    - the page's own origin at the start of a link's /url, its tracking parameters, and what is past
      MAX_URL_CHARS of it (snapshots/link_urls.py).
    Refs stay those of Playwright's snapshot, so every ref shown resolves as before; a prose line keeps
    its ref on the node (not in its text) for browser_find. The nodes are
    rewritten in place (they come fresh from `parse`): on a page of 25,000 lines, copies cost as much
    as the parse.
    """
    kept: list[Node] = []
    names = {node.name for node in nodes if node.name}
    for node in nodes:
        children = lean(node.children, origin, actionable)
        if node.name:
            children = [child for child in children if not _repeats(child, node.name)]
        if node.role == "" and node.key == "text" and node.value is not None and node.value.strip() in names:
            continue
        if len(children) == 1 and _wrapper(node):
            kept.append(children[0])
            continue
        _make_lean(node, children, origin, node.ref in actionable)
        kept.append(node)
    return [node for at, node in enumerate(kept) if not _mirrored(node, kept[at + 1] if at + 1 < len(kept) else None)]


def unwrapped(nodes: list[Node], actionable: frozenset[str] | set[str] = frozenset()) -> list[Node]:
    """A whole page held by one unnamed wrapper (the div around the body's content): a wrapper of everything
    groups nothing, so its lines stand alone, each two spaces less indented."""
    if len(nodes) == 1 and _wrapper(nodes[0]) and nodes[0].ref not in actionable:
        return nodes[0].children
    return nodes


def _mirrored(node: Node, after: Node | None) -> bool:
    if after is None or node.name or node.role not in INTERACTIVE_ROLES or " [aria-hidden]" not in node.key:
        return False
    while _wrapper(after) and after.children:
        after = after.children[0]
    return after.role == node.role


def _repeats(node: Node, name: str) -> bool:
    return node.role == "" and node.key == "text" and node.value is not None and node.value.strip() == name


def _wrapper(node: Node) -> bool:
    return node.role in WRAPPER_ROLES and not node.name and not node.value and not node.interactive


def _make_lean(node: Node, children: list[Node], origin: str, acts: bool) -> None:
    had_children, node.children = bool(node.children), children
    drop = ""
    if node.role in INTERACTIVE_ROLES:
        drop = " [cursor=pointer]" if "[cursor=pointer]" in node.key else ""
    elif node.ref is not None and node.role in PROSE_ROLES and not acts and (not children or node.role != "listitem"):
        # The ref still works (browser_find names it): the line just does not spend characters on it.
        drop = f" [ref={node.ref}]"
    elif node.key == "/url" and node.value is not None:
        shown = shown_url(node.value, origin)
        if shown != node.value:
            node.value = shown
            node.text = render_line(node.key, node.value)
        return
    if drop or (had_children and not children):
        # Taking an attribute out of the key leaves its quoting valid: edit the line, do not re-quote it.
        key_scalar = _split(node.text)[0]
        rest = node.text[len(key_scalar) :]
        node.key = _without_last(node.key, drop)
        node.text = _without_last(key_scalar, drop) + ("" if rest == ":" and not children else rest)


def without_ref(node: Node) -> str:
    """The node's line without its ref (a name that reads like one keeps it)."""
    return _without_last(node.text, f" [ref={node.ref}]") if node.ref is not None else node.text


def _without_last(text: str, part: str) -> str:
    # Attributes follow the name, which may hold the same characters: the last occurrence is the attribute.
    at = text.rfind(part) if part else -1
    return text if at < 0 else text[:at] + text[at + len(part) :]


def prune(nodes: list[Node], depth: int) -> list[Node]:
    """At most `depth` levels, the way Playwright's own depth limit cuts."""
    if depth <= 0:
        return []
    return [replace(n, children=prune(n.children, depth - 1)) for n in nodes]


def compact(nodes: list[Node]) -> list[Node]:
    """Drop unnamed wrappers: their children take their place."""
    kept: list[Node] = []
    for node in nodes:
        children = compact(node.children)
        if node.role in WRAPPER_ROLES and not node.name and not node.interactive and not node.value:
            kept.extend(children)
        else:
            kept.append(replace(node, children=children))
    return kept


def _context_line(node: Node) -> str:
    # Headings and landmarks only say where things are, so their refs would cost tokens for nothing;
    # regions and dialogs keep theirs, since one scrolls a region and closes a dialog.
    key = node.key if node.role in ACTIONABLE_CONTAINERS else _REF_ATTR.sub("", node.key)
    return render_line(key, _kept_value(node))


def _kept_value(node: Node) -> str | None:
    # `paragraph [ref=e4]: long text` -> `paragraph [ref=e4]`; an input's value, and the text that is
    # the only name of an element, are kept.
    return node.value if not node.name or node.role in _VALUE_ROLES else None


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


PAGE_FACTS_JS = load_js("browserd.daemon.snapshots", "page_facts.js")


@dataclass(frozen=True)
class PageFacts:
    marks: list[list[Any]]
    title: str

    @classmethod
    def of(cls, found: Any) -> PageFacts | None:
        """The facts from PAGE_FACTS_JS's answer; None when it did not run (a navigation, a failing script)."""
        if not isinstance(found, list) or len(found) != 2 or not isinstance(found[0], list):
            return None
        return cls(found[0], str(found[1]))


async def capture(
    page: Page,
    scope: Locator | None = None,
    depth: int | None = None,
    timeout_ms: int | None = None,
    facts: PageFacts | None = None,
) -> Capture:
    """The AI-mode snapshot of the page (or of `scope`), with input kinds, states and clickables added;
    `facts` are the page's annotations and title when they were just read, else they are read here."""
    limit_ms = timeout_ms or DEFAULT_TIMEOUT_MS
    if facts is None:
        with anyio.move_on_after(limit_ms / 1000) as waiting:
            facts = PageFacts.of(await page.main_frame.evaluate(PAGE_FACTS_JS))
        if waiting.cancelled_caught:
            raise ExecutionError(f"the page did not answer within {limit_ms} ms (a script keeps it busy?)")
    marks = facts.marks if facts is not None else []
    target = scope if scope is not None else page
    text = await target.aria_snapshot(mode="ai", depth=depth, boxes=bool(marks), timeout=timeout_ms)
    captured = _annotate(text, marks) if marks else Capture(text)
    captured.title = facts.title if facts is not None else None
    return captured


def _annotate(text: str, marks: list[list[Any]]) -> Capture:
    by_box: dict[str, list[Any]] = {}
    # A mark that only says "acts" never hides one with attributes or a selector in the same box.
    for mark in sorted(marks, key=lambda mark: bool(mark[4] or mark[5])):
        by_box[",".join(str(v) for v in mark[:4])] = mark
    matched: set[str] = set()

    def replace(match: re.Match[str]) -> str:
        key = ",".join(match.groups())
        mark = by_box.get(key)
        if mark is None:
            return ""
        matched.add(key)
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
        has_text = _split(line.lstrip(" ")[2:])[1] is not None
        out.append(line if not extra or line.endswith(":") or has_text else line + ":")
        out.extend(extra or [])
    return Capture("\n".join(out), clickables)
