"""browser_find's search of a tab's snapshot: the elements (with refs) whose line matches, each with the
landmark or heading it sits under, so a model can act on a match without reading the whole page."""

from __future__ import annotations

import re
from dataclasses import dataclass

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.snapshots import aria_filters
from browserd.daemon.snapshots.aria_parser import Node


@dataclass(frozen=True)
class Search:
    """What a match must have; None: no condition."""

    text: str | None
    pattern: re.Pattern[str] | None
    role: str | None
    name: str | None

    @classmethod
    def of(cls, text: str | None, regex: str | None, role: str | None, name: str | None) -> Search:
        """INVALID_PARAMETER for a search that asks for nothing or whose regex does not compile."""
        if not any((text, regex, role, name)):
            raise InvalidParameter("give at least one of text, regex, role, name", field="text")
        try:
            pattern = re.compile(regex) if regex else None
        except re.error as exc:
            raise InvalidParameter(f"bad regex: {exc}", field="regex") from exc
        return cls(text, pattern, role, name)

    def matches(self, node: Node) -> bool:
        line = node.plain  # as a person reads it, without YAML's quoting
        return (
            (self.text is None or self.text.lower() in line.lower())
            and (self.pattern is None or self.pattern.search(line) is not None)
            and (self.role is None or node.role == self.role)
            and (self.name is None or self.name.lower() in node.name.lower())
        )

    def found_in(self, nodes: list[Node], path: tuple[str, ...] = ()) -> list[tuple[Node, str]]:
        """Every matching node with a ref, in page order, with the last two landmarks/headings above it."""
        found: list[tuple[Node, str]] = []
        for node in nodes:
            if node.ref is not None and self.matches(node):
                found.append((node, " > ".join(path[-2:])))
            label = f'{node.role} "{node.name}"' if node.name else ""
            locates = node.role in aria_filters.LANDMARK_ROLES or node.role == "heading"
            found.extend(self.found_in(node.children, (*path, label) if label and locates else path))
        return found


def match_line(node: Node) -> str:
    """A match as the snapshot shows it, with its ref where the lean line leaves it out (prose)."""
    line = node.text.rstrip(":")
    return line if node.ref is None or f"[ref={node.ref}]" in line else f"{line}  [ref={node.ref}]"
