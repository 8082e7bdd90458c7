"""How often a fill answers from the last snapshot (snapshots/field_edit.py), and whether it ever left out a change.

    .venv/bin/python tests/bench/field_edits.py [--value "Sweep 42"] [--per-page 6]

Opens every page of tests/site (and tests/site/fields/) but those that never settle, fills each one-line text
field its snapshot shows (at most --per-page of them) through a raw `browserd mcp` client, and after each fill
reads the page afresh with `browser_snapshot {delta: true}`: a fill whose answer left out a change shows there
as a line, and is printed as MISSED. Whether the answer came from the last snapshot is read from the driver's
own log (`DEBUG=pw:api`): a fill that made no `aria_snapshot` call did. Prints, per page, the fills, the
short answers and the misses, then the totals. Figures only, never asserted (DESIGN.md §6).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.bench.common import BenchError, ready_shim, serve_site, stop_site  # noqa: E402
from tests.bench.widgets import CommandLog  # noqa: E402
from tests.conftest import own_home  # noqa: E402

SITE = REPO / "tests" / "site"
# Pages that never settle, loop, open dialogs or tabs at load, or only download: nothing to fill there.
LEFT_OUT = {
    "never-loads.html", "runaway.html", "large.html", "links300.html", "downloads.html", "dialogs.html",
    "popup-at-load.html", "unsaved.html", "ticker.html", "ticking.html",
}  # fmt: skip
# A one-line text field's snapshot line (email, password... are marked [type=...]; dates are not text).
_FIELD = re.compile(r'- (?:textbox|searchbox) "[^"]*"(?P<attrs>[^\n]*?)\[ref=(?P<ref>(?:f\d+)?e\d+)\](?P<more>[^\n]*)')
_TEXT_KINDS = re.compile(r"\[type=(email|password|search|tel|url)\]")
_NOT_TEXT = re.compile(r"\[(disabled|readonly|type=[a-z-]+)\]")
_UNCHANGED = "did not change"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--value", default="Sweep 42")
    parser.add_argument("--per-page", type=int, default=6)
    args = parser.parse_args()
    pages = [p.name for p in sorted(SITE.glob("*.html")) if p.name not in LEFT_OUT]
    pages += [f"fields/{p.name}" for p in sorted((SITE / "fields").glob("*.html"))]
    server, site = serve_site()
    print(f"load average before: {os.getloadavg()}")
    totals = [0, 0, 0]
    try:
        with own_home() as home:
            home.env["DEBUG"] = "pw:api"  # the daemon (started by the shim) and its driver inherit it
            with ready_shim(home, []) as shim:
                log = CommandLog(home)
                for page in pages:
                    figures = _fill_page(shim, log, f"{site}/{page}", args.value, args.per_page)
                    fills, short, missed = figures
                    if fills:
                        print(f"{page:32s} fills {fills:2d}  from the last snapshot {short:2d}  missed {missed}")
                    totals = [total + figure for total, figure in zip(totals, figures, strict=True)]
    finally:
        stop_site(server)
    print(f"all pages: fills {totals[0]}, answered from the last snapshot {totals[1]}, missed {totals[2]}")
    print(f"load average after: {os.getloadavg()}")


def _fill_page(shim: Any, log: CommandLog, url: str, value: str, per_page: int) -> list[int]:
    """[fills, answered from the last snapshot, missed] on one page."""
    opened = _text(shim.call_tool("browser_open", {"url": url}))
    refs = [
        found["ref"]
        for found in _FIELD.finditer(opened)
        if not _NOT_TEXT.search(_TEXT_KINDS.sub("", found["attrs"] + found["more"]))
    ][:per_page]
    figures = [0, 0, 0]
    for ref in refs:
        log.take()
        try:
            answer = _text(shim.call_tool("browser_fill", {"target": ref, "value": value}))
        except BenchError as exc:
            print(f"  {url} {ref}: {str(exc)[:120]}")
            continue
        calls, _ = log.take()
        fresh = _text(shim.call_tool("browser_snapshot", {"delta": True}))
        figures[0] += 1
        figures[1] += "Page.aria_snapshot" not in calls
        if _UNCHANGED not in fresh:
            figures[2] += 1
            print(f"  MISSED {url} {ref}\n    answer: {answer[-300:]!r}\n    fresh read: {fresh[-400:]!r}")
    return figures


def _text(result: Any) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []) if block.get("type") == "text")


if __name__ == "__main__":
    main()
