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
from dataclasses import dataclass, field
from typing import Any

import anyio
from playwright.async_api import Locator, Page

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
# Containers whose label tells apart the same control repeated in each of them.
ITEM_ROLES = frozenset({"listitem", "row", "article"})
ITEM_LABEL_CHARS = 40

_LINE = re.compile(r"^(?P<indent> *)- (?P<body>.*)$")
_NODE = re.compile(r'^(?P<role>[a-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?(?P<attrs>(?: \[[^\]]*\])*)(?P<rest>:.*)?$')
_ATTR = re.compile(r"\[([a-z]+)(?:=([^\]]*))?\]")
_REF_ATTR = re.compile(r" \[ref=[^\]]*\]")
_BOX = re.compile(r" \[box=(-?\d+),(-?\d+),(\d+),(\d+)\]")

# Runs in every document before its scripts: remembers elements that get a click listener, since a
# listener is invisible to the accessibility tree and to CSS.
CLICK_TRACKER_JS = """(() => {
  if (window.__browserdClickables) return;
  const marked = new WeakSet();
  Object.defineProperty(window, '__browserdClickables', { value: marked });
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if ((type === 'click' || type === 'mousedown' || type === 'pointerdown') && this instanceof Element) {
      marked.add(this);
    }
    return add.call(this, type, listener, options);
  };
})();"""

# Elements whose kind or state the ARIA snapshot does not show, with their rounded client boxes:
# [x, y, w, h, [attributes to add], selector, label]. The last two are set for elements that act on
# a click without a role; Playwright folds those into their parent's text when they are inline, so
# they get a ref of ours (c1, c2...) resolved through a CSS selector unique in the document.
_ANNOTATIONS_JS = """() => {
  const found = [];
  const clickables = window.__browserdClickables;
  const native = new Set(['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'SUMMARY', 'LABEL', 'OPTION', 'HTML', 'BODY',
                          'MAIN', 'FORM']);
  const isClickable = (e) => !native.has(e.tagName) && !e.hasAttribute('role')
    && !!(e.onclick || e.hasAttribute('onclick') || (clickables && clickables.has(e)));
  const selectorOf = (e) => {
    const parts = [];
    for (let node = e; node && node.nodeType === 1 && node.tagName !== 'HTML'; node = node.parentElement) {
      if (node.id && document.querySelectorAll('#' + CSS.escape(node.id)).length === 1) {
        parts.unshift('#' + CSS.escape(node.id));
        return parts.join(' > ');
      }
      let index = 1;
      for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
        if (sibling.tagName === node.tagName) index++;
      }
      parts.unshift(node.tagName.toLowerCase() + ':nth-of-type(' + index + ')');
    }
    return 'html > ' + parts.join(' > ');
  };
  const kindOf = (e) => {
    if (e.tagName === 'TEXTAREA') return 'multiline';
    if (e.isContentEditable && e.getAttribute('contenteditable') !== null) return 'rich-text';
    if (e.tagName !== 'INPUT') return null;
    const t = (e.getAttribute('type') || 'text').toLowerCase();
    return ['text', 'checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'hidden'].includes(t) ? null : t;
  };
  const visit = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.shadowRoot) visit(e.shadowRoot);
      const kind = kindOf(e);
      const formish = e.tagName === 'INPUT' || e.tagName === 'TEXTAREA' || e.tagName === 'SELECT';
      const flagged = formish && (e.readOnly || e.required);
      const collapsed = e.getAttribute('aria-expanded') === 'false'
        || (e.tagName === 'SUMMARY' && e.parentElement && e.parentElement.tagName === 'DETAILS'
            && !e.parentElement.open);
      // Selectors cannot reach into a shadow root from the document: only light-DOM clickables.
      const clickable = root === document && isClickable(e);
      if (!kind && !flagged && !collapsed && !clickable) continue;
      const r = e.getBoundingClientRect();
      if (!r.width && !r.height) continue;
      const extra = [];
      if (kind) extra.push('type=' + kind);
      if (formish && e.readOnly) extra.push('readonly');
      if (formish && e.required) extra.push('required');
      if (collapsed) extra.push('collapsed');
      const label = clickable ? (e.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 80) : null;
      found.push([Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height), extra,
                  clickable ? selectorOf(e) : null, label]);
    }
  };
  visit(document);
  return found;
}"""


@dataclass
class Node:
    text: str  # the line without its indentation and leading "- "
    role: str = ""  # "" for text and property lines
    name: str = ""
    ref: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)

    @property
    def interactive(self) -> bool:
        return self.role in INTERACTIVE_ROLES or self.attrs.get("cursor") == "pointer"


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
        node = _node(match["body"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((depth, node))
    return roots


def _node(body: str) -> Node:
    match = _NODE.match(body)
    if match is None or match["role"] == "text":
        return Node(body)
    attrs = {key: value or "true" for key, value in _ATTR.findall(match["attrs"] or "")}
    name = (match["name"] or "").replace('\\"', '"')
    return Node(body, match["role"], name, attrs.get("ref"), attrs)


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
            text = _without_text(node)
            if node.role in INTERACTIVE_ROLES:
                # A pointer cursor says "clickable"; for a link or button that goes without saying.
                text = text.replace(" [cursor=pointer]", "")
            if item and (node.role, node.name) in repeated:
                text += f" [in={json.dumps(item)}]"
            kept.append(Node(text, node.role, node.name, node.ref, node.attrs, children))
        elif node.role == "heading":
            kept.append(Node(_context_line(node), node.role, node.name, None, node.attrs))
        elif children and node.role in LANDMARK_ROLES:
            kept.append(Node(_context_line(node), node.role, node.name, None, node.attrs, children))
        else:
            kept.extend(children)
    return kept


def _label(node: Node) -> str:
    """What an item is called: its name, its own text, or the first text inside it."""
    if node.name:
        return node.name[:ITEM_LABEL_CHARS]
    _head, sep, value = node.text.partition(": ")
    if sep and value.strip():
        return value.strip()[:ITEM_LABEL_CHARS]
    for child in node.children:
        if child.role == "" and child.text.startswith("text: "):
            return child.text.removeprefix("text: ").strip()[:ITEM_LABEL_CHARS]
    return ""


def prune(nodes: list[Node], depth: int) -> list[Node]:
    """At most `depth` levels, the way Playwright's own depth limit cuts."""
    if depth <= 0:
        return []
    return [Node(n.text, n.role, n.name, n.ref, n.attrs, prune(n.children, depth - 1)) for n in nodes]


def compact(nodes: list[Node]) -> list[Node]:
    """Drop unnamed wrappers: their children take their place."""
    kept: list[Node] = []
    for node in nodes:
        children = compact(node.children)
        if node.role in WRAPPER_ROLES and not node.name and not node.interactive and not _has_text(node):
            kept.extend(children)
        else:
            kept.append(Node(node.text, node.role, node.name, node.ref, node.attrs, children))
    return kept


def _has_text(node: Node) -> bool:
    return ": " in node.text and node.text.rstrip().endswith(":") is False


def _context_line(node: Node) -> str:
    # Headings and landmarks only say where things are, so their refs would cost tokens for nothing;
    # regions and dialogs keep theirs, since one scrolls a region and closes a dialog.
    text = _without_text(node)
    return text if node.role in ACTIONABLE_CONTAINERS else _REF_ATTR.sub("", text)


def _without_text(node: Node) -> str:
    # `paragraph [ref=e4]: long text` -> `paragraph [ref=e4]`; the value stays for inputs.
    if not node.name or node.role in ("textbox", "searchbox", "combobox", "spinbutton", "slider", "option"):
        # An input's value, and the text that is the only name of a clickable element, are kept.
        return node.text.rstrip(":")
    head, sep, _rest = node.text.partition(": ")
    return head if sep else node.text.rstrip(":")


@dataclass
class Capture:
    text: str
    # Refs of ours (c1...) for clickables Playwright gave none, and the CSS selector of each.
    selectors: dict[str, str] = field(default_factory=dict)


ANNOTATION_TIMEOUT_MS = 30_000


async def capture(
    page: Page, scope: Locator | None = None, depth: int | None = None, timeout_ms: int | None = None
) -> Capture:
    """The AI-mode snapshot of the page (or of `scope`), with input kinds, states and clickables added."""
    marks: list[list[Any]] = []
    # A page whose script never yields would hold the annotation forever (evaluate has no timeout of its
    # own): past the deadline the snapshot goes on without annotations, and aria_snapshot's own timeout
    # then reports the stuck page.
    with anyio.move_on_after((timeout_ms or ANNOTATION_TIMEOUT_MS) / 1000):
        marks = await page.main_frame.evaluate(_ANNOTATIONS_JS)
    target = scope if scope is not None else page
    text = await target.aria_snapshot(mode="ai", depth=depth, boxes=bool(marks), timeout=timeout_ms)
    return _annotate(text, marks) if marks else Capture(text)


def _annotate(text: str, marks: list[list[Any]]) -> Capture:
    by_box = {f"{x},{y},{w},{h}": mark for mark in marks for x, y, w, h in [mark[:4]]}
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
    return _add_clickables(lines, boxes, [m for k, m in by_box.items() if m[5] and k not in matched])


def _add_clickables(lines: list[str], boxes: list[tuple[int, int, int, int, int]], marks: list[list[Any]]) -> Capture:
    """Each clickable goes under the deepest line whose box holds its centre."""
    inserts: dict[int, list[str]] = {}
    selectors: dict[str, str] = {}
    for number, (x, y, w, h, _extra, selector, label) in enumerate(marks, start=1):
        cx, cy = x + w / 2, y + h / 2
        holder = next(
            (i for i, left, top, right, bottom in reversed(boxes) if left <= cx <= right and top <= cy <= bottom), None
        )
        if holder is None:
            continue
        ref = f"c{number}"
        selectors[ref] = selector
        indent = len(lines[holder]) - len(lines[holder].lstrip(" ")) + 2
        inserts.setdefault(holder, []).append(f"{' ' * indent}- clickable {json.dumps(label)} [ref={ref}]")
    out: list[str] = []
    for index, line in enumerate(lines):
        extra = inserts.get(index)
        # `- paragraph [ref=e5]: its text` keeps its text; a bare `- main [ref=e2]` gains the colon of a parent.
        out.append(line if not extra or line.endswith(":") or ": " in line.lstrip(" -") else line + ":")
        out.extend(extra or [])
    return Capture("\n".join(out), selectors)
