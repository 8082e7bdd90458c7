"""The refs a tab's snapshots issued, and what each pointed at (the tab holds one table; snapshots/reader.py
fills it, snapshots/targets.py resolves refs through it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from browserd.daemon.snapshots.aria_capture import Clickable


@dataclass
class RefInfo:
    """What a ref pointed at when the snapshot that issued it was taken."""

    role: str
    name: str
    # Set for refs of ours (c1...), which Playwright cannot resolve.
    clickable: Clickable | None = None
    # Position among the elements of the same role and name, when there are several (S2-21).
    nth: int | None = None
    # The input kind the snapshot showed ([type=date], [type=multiline]...); None for a plain text input.
    kind: str | None = None
    # False when the snapshot showed it [disabled] or [readonly].
    editable: bool = True
    # In a child frame: Playwright numbers a document's refs with its frame's prefix (`f3e2`), and the main
    # frame's refs carry one too after a navigation (`f2e5`), so only a prefix other than the page's says so.
    in_frame: bool = False


@dataclass
class RefTable:
    # Refs of the tab's latest snapshot; a new document starts afresh, because Playwright numbers refs
    # anew in every document (e5 on the next page is another element).
    current: dict[str, RefInfo] = field(default_factory=dict)
    # Every ref any snapshot of the tab has shown, to tell a stale ref from one that never existed.
    issued: set[str] = field(default_factory=set)
    # Refs of the earlier snapshots of the current document: one whose element a framework has since
    # rendered anew is found again by its role and name (snapshots/targets.py).
    earlier: dict[str, RefInfo] = field(default_factory=dict)
    # Refs a delta left out because their elements were rendered anew, identical, in the same place
    # (snapshots/delta.py): the ref of the current snapshot each one stands for.
    aliases: dict[str, str] = field(default_factory=dict)
    # The tab's document and navigation counts (Tab.document, Tab.navigations) when `current` was taken.
    document: int = -1
    navigations: int = -1

    def replace(self, refs: dict[str, RefInfo], document: int, navigations: int) -> None:
        """A new snapshot's refs; those of earlier snapshots of the same document are kept as `earlier`."""
        if (self.document, self.navigations) == (document, navigations):
            self.earlier = {**self.earlier, **self.current}
        else:
            self.earlier, self.aliases = {}, {}
        self.current, self.document, self.navigations = refs, document, navigations
        self.issued.update(refs)

    def rendered_anew(self, aliases: dict[str, str]) -> None:
        """Refs a delta left out stand for the new ones (chains too: an alias of an alias)."""
        self.aliases = {old: aliases.get(new, new) for old, new in self.aliases.items()} | aliases

    def stands_for(self, ref: str) -> str:
        """The current ref `ref` stands for: itself, or the one it was rendered anew as."""
        alias = self.aliases.get(ref)
        return alias if ref not in self.current and alias in self.current else ref
