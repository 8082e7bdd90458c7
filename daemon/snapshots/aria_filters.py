"""Filters of a parsed snapshot (aria_parser.Node trees): the lean form a model reads, the interactive
listing, depth pruning and unwrapping, each a new tree."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace

from browserd.daemon.snapshots.aria_parser import INTERACTIVE_ROLES, Node, render_line, split_line, walk, without_last
from browserd.daemon.snapshots.link_urls import shown_url

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
_REF_ATTR = re.compile(r" \[ref=[^\]]*\]")


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
    return f"{text}:" if children and not text.endswith(":") and split_line(text)[1] is None else text


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
        key_scalar = split_line(node.text)[0]
        rest = node.text[len(key_scalar) :]
        node.key = without_last(node.key, drop)
        node.text = without_last(key_scalar, drop) + ("" if rest == ":" and not children else rest)


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
