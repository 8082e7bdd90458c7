"""What changed between two snapshots of one document, as a model reads it: the lines gone (-) and the
lines new or changed (+), without context, dedented together.

The two snapshots are compared as trees. A part of the page that a framework rendered anew with the same
content (React, Vue and the like replace nodes on every update, so their refs change) is no change: the
delta leaves it out and its old refs stand for the new ones (`Delta.aliases`). A part that went away shows
its top line only; a part that came shows whole. A line whose element stayed but reads differently shows
only as it is now, and what changed under it is compared the same way. An element stayed when it has the
same ref, or the same role and name; an unnamed one (a wrapper, a card) when it is the only one of its
kind on both sides and either holds no lines or still holds a part found nowhere else on the page: two
cards that only share an "Add to cart" button are two cards, so that button's ref never stands for the
other card's. Focus moving ([active]) and texts that tick on their own (clocks, counters:
snapshots/settle.py) are no change.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field

from browserd.daemon.snapshots import aria_parser
from browserd.daemon.snapshots.settle import ticks

Line = tuple[str, int, str]  # sign, depth, the line's text


@dataclass
class Delta:
    text: str  # empty when nothing changed
    # Refs of the earlier snapshot whose elements were rendered anew, identical and in the same place: the
    # ref each one now stands for.
    aliases: dict[str, str] = field(default_factory=dict)


def delta(before: list[aria_parser.Node], after: list[aria_parser.Node], ticking: tuple[str, ...] = ()) -> Delta:
    """What changed from one snapshot's lines to another's (each as `aria_parser.render` shows them)."""
    comparison = _Comparison(before, after, ticking)
    comparison.children(before, after, 0)
    lines = comparison.lines
    rendered = [f"{'  ' * depth}- {text}" for _, depth, text in lines]
    cut = min((len(line) - len(line.lstrip(" ")) for line in rendered), default=0)
    text = "\n".join(f"{sign} {line[cut:]}" for (sign, _, _), line in zip(lines, rendered, strict=True))
    return Delta(text, comparison.aliases)


class _Comparison:
    def __init__(self, before: list[aria_parser.Node], after: list[aria_parser.Node], ticking: tuple[str, ...]) -> None:
        self.ticking = ticking
        self.lines: list[Line] = []
        self.aliases: dict[str, str] = {}
        # A subtree's signature is a small number: equal numbers mean subtrees that read the same. Numbering
        # (line, children's numbers) keeps it one dict lookup a node, however deep the page.
        self._numbers: dict[tuple[str, tuple[int, ...]], int] = {}
        self._signatures: dict[int, int] = {}
        self._sides = (before, after)
        self._counts: list[Counter[int]] = []

    def signature(self, node: aria_parser.Node) -> int:
        """The node's whole subtree as it reads, refs and focus left out: equal means rendered the same."""
        found = self._signatures.get(id(node))
        if found is None:
            shape = (_bare(node), tuple(map(self.signature, node.children)))
            found = self._numbers.setdefault(shape, len(self._numbers))
            self._signatures[id(node)] = found
        return found

    def unique(self, signature: int) -> bool:
        """Whether a part reads so once on each side: then it is one element (counted when first asked)."""
        if not self._counts:
            self._counts = [Counter(map(self.signature, aria_parser.walk(side))) for side in self._sides]
        return self._counts[0][signature] == 1 and self._counts[1][signature] == 1

    def children(self, old: list[aria_parser.Node], new: list[aria_parser.Node], depth: int) -> None:
        matcher = difflib.SequenceMatcher(
            a=[self.signature(node) for node in old], b=[self.signature(node) for node in new], autojunk=False
        )
        for op, a1, a2, b1, b2 in matcher.get_opcodes():
            if op == "equal":
                for before, after in zip(old[a1:a2], new[b1:b2], strict=True):
                    self.alias(before, after)
            else:
                self.block(old[a1:a2], new[b1:b2], depth)

    def block(self, old: list[aria_parser.Node], new: list[aria_parser.Node], depth: int) -> None:
        """A run of lines that differ: pair the elements that stayed, then say what went and what came."""
        pairs = self.pairs(old, new)
        kept = {id(before) for before in pairs.values()}
        for node in old:
            if id(node) not in kept and not ticks(node.text, self.ticking):
                self.lines.append(("-", depth, node.text))
        for node in new:
            before = pairs.get(id(node))
            if before is None:
                self.added(node, depth)
                continue
            if _bare(before) != _bare(node) and not ticks(node.text, self.ticking):
                self.lines.append(("+", depth, _unfocused(node.text)))
            elif before.ref != node.ref:
                self.alias_ref(before, node)
            self.children(before.children, node.children, depth + 1)

    def pairs(self, old: list[aria_parser.Node], new: list[aria_parser.Node]) -> dict[int, aria_parser.Node]:
        """For each new node that is an old one changed (by id of the new node)."""
        pairs: dict[int, aria_parser.Node] = {}
        taken: set[int] = set()
        by_ref = {node.ref: node for node in old if node.ref is not None}
        for node in new:
            before = by_ref.get(node.ref) if node.ref is not None else None
            if before is not None:
                pairs[id(node)] = before
                taken.add(id(before))
        old_kinds = Counter(_kind(node) for node in old if id(node) not in taken)
        new_kinds = Counter(_kind(node) for node in new if id(node) not in pairs)
        for node in new:
            if id(node) in pairs:
                continue
            kind = _kind(node)
            before = next((b for b in old if id(b) not in taken and _kind(b) == kind), None)
            if before is None:
                continue
            if not kind[1] and not (old_kinds[kind] == new_kinds[kind] == 1 and self.same_place(before, node)):
                continue
            pairs[id(node)] = before
            taken.add(id(before))
        return pairs

    def same_place(self, before: aria_parser.Node, after: aria_parser.Node) -> bool:
        """Whether two unnamed nodes, the only ones of their kind here, are one element: both hold no lines, or
        they still share a part found nowhere else."""
        if not before.children and not after.children:
            return True
        kept = {self.signature(child) for child in before.children}
        return any(self.signature(child) in kept and self.unique(self.signature(child)) for child in after.children)

    def added(self, node: aria_parser.Node, depth: int) -> None:
        if not ticks(node.text, self.ticking):
            self.lines.append(("+", depth, _unfocused(node.text)))
        for child in node.children:
            self.added(child, depth + 1)

    def alias(self, before: aria_parser.Node, after: aria_parser.Node) -> None:
        self.alias_ref(before, after)
        for old_child, new_child in zip(before.children, after.children, strict=True):
            self.alias(old_child, new_child)

    def alias_ref(self, before: aria_parser.Node, after: aria_parser.Node) -> None:
        if before.ref is not None and after.ref is not None and before.ref != after.ref:
            self.aliases[before.ref] = after.ref


def _kind(node: aria_parser.Node) -> tuple[str, str]:
    return node.role or node.key, node.name


def _bare(node: aria_parser.Node) -> str:
    """The line without its ref and focus: what it says."""
    text = aria_parser.without_ref(node) if node.ref is not None else node.text
    return _unfocused(text) if " [active]" in text else text


def _unfocused(line: str) -> str:
    return line.replace(" [active]", "")
