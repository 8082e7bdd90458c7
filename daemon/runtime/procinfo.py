"""Memory of a process and of its children, read from /proc (Linux only; 0 elsewhere)."""

from __future__ import annotations

from pathlib import Path


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    pending = [pid]
    while pending:
        current = pending.pop()
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                children = [int(child) for child in task.read_text().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            pending.extend(children)
    return found


def tree_rss_kib(pid: int) -> int:
    return rss_kib(pid) + sum(rss_kib(child) for child in descendants(pid))


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def find_descendant(root_pid: int, *markers: str, without: str = "") -> int | None:
    """The first descendant whose command line has every marker (and not `without`)."""
    for pid in descendants(root_pid):
        args = cmdline(pid)
        if all(any(marker in arg for arg in args) for marker in markers) and not (
            without and any(without in arg for arg in args)
        ):
            return pid
    return None
