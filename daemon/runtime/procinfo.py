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
        try:
            tasks = list(Path(f"/proc/{current}/task").glob("*/children"))
        except OSError:  # the process ended while we looked: it has no children left to count
            continue
        for task in tasks:
            try:
                children = [int(child) for child in task.read_text().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            pending.extend(children)
    return found


def pss_kib(pid: int) -> int:
    """Proportional set size: shared pages split between the processes that share them."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def tree_pss_kib(pid: int) -> int:
    """A process tree's memory without counting shared pages once per process (Chromium shares a lot)."""
    return pss_kib(pid) + sum(pss_kib(child) for child in descendants(pid))


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
