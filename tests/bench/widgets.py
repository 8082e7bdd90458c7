"""What the widget-aware actions cost, next to the plain actions they extend (issue 10, widgets).

    .venv/bin/python tests/bench/widgets.py [--runs 10]

On one warm daemon, each action with snapshot "none" on a tests/site page, timed end to end through a
raw `browserd mcp` client (median and p95 in ms, failures counted), with its round trips (medians): the
Playwright calls the daemon made ("calls", each a round trip to the driver) and the CDP commands the
driver sent to the page ("CDP", each a round trip to Chromium), settle included. Both are read from the
driver's own log (`DEBUG=pw:api,pw:protocol`), which the daemon's process writes to daemon.out.
`--methods` prints the calls and commands of each row's last sample. Plain controls (form.html) are the
baseline; the widget rows (tests/site/w-*.html) are what the same tool does on library markup. A row
that fails on a build without widget support prints its error count instead of figures. Figures only,
never asserted (DESIGN.md §6); compare rows of one run, since the machine's load moves them all.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.bench.common import BenchError, Budget, ready_shim, serve_site, stop_site, summary  # noqa: E402
from tests.conftest import BrowserdHome, own_home  # noqa: E402

# A command's line in the protocol log: `pw:protocol SEND ► {"id":7,"method":"Runtime.callFunctionOn",...`;
# a call's: `pw:api => Locator.evaluate started`.
_SENT = re.compile(rb'SEND \xe2\x96\xba \{"id":\d+,"method":"([\w.]+)"|pw:api => ([\w.]+) started')

# (label, page, tool, arguments of each call; "reset" calls put the page back between samples)
CASES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("click button (plain)", "index.html", "browser_click", {"target": "button"}),
    ("check checkbox (plain)", "form.html", "browser_check", {"target": "input[name=subscribe]"}),
    ("check Bootstrap hidden input", "w-checks.html", "browser_check", {"target": "#newsletter"}),
    ("click Bootstrap checkbox", "w-checks.html", "browser_click", {"target": "#newsletter"}),
    ("select native <select>", "form.html", "browser_select", {"target": "#country", "labels": ["Japan"]}),
    ("select Select2 (hidden <select>)", "w-select.html", "browser_select",
     {"target": "#s2-selection", "labels": ["Japan"]}),
    ("select react-select (open + pick)", "w-select.html", "browser_select",
     {"target": "#rs-input", "labels": ["Vanilla"]}),
    ("hover link", "w-menus.html", "browser_hover", {"target": "a[href='#help']"}),
    ("fill textbox (plain)", "form.html", "browser_fill", {"target": "#fullname", "value": "Ada"}),
    ("fill ARIA slider (keys)", "w-pickers.html", "browser_fill", {"target": "#price", "value": "200"}),
    ("drag HTML5 sortable", "w-sortable.html", "browser_drag",
     {"source": "#html5 li:nth-child(1)", "target": "#html5 li:nth-child(2)"}),
]  # fmt: skip


class CommandLog:
    """The CDP commands the daemon's Playwright driver sent since the last `take()`."""

    def __init__(self, home: BrowserdHome) -> None:
        self.path = home.log.with_name("daemon.out")
        self.offset = 0

    def take(self) -> tuple[list[str], list[str]]:
        """The Playwright calls and the CDP commands logged since the last take."""
        with self.path.open("rb") as log:
            log.seek(self.offset)
            text = log.read()
        self.offset += len(text)
        found = _SENT.findall(text)
        return [call.decode() for _, call in found if call], [method.decode() for method, _ in found if method]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--methods", action="store_true", help="print the CDP commands of each row's last sample")
    args = parser.parse_args()
    server, site = serve_site()
    budget = Budget(600)
    print(f"load average before: {os.getloadavg()}")
    with own_home() as home:
        home.env["DEBUG"] = "pw:api,pw:protocol"  # the daemon (started by the shim) and its driver inherit it
        with ready_shim(home, []) as shim:
            _measure(shim, CommandLog(home), site, budget, args.runs, args.methods)
    stop_site(server)
    print(f"load average after: {os.getloadavg()}")


def _measure(shim: Any, commands: CommandLog, site: str, budget: Budget, runs: int, methods: bool) -> None:
    shim.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"})
    for label, page, tool, arguments in CASES:
        times: list[float] = []
        sent: list[tuple[list[str], list[str]]] = []
        failures: list[str] = []
        for _ in range(runs):
            if not budget.left():
                break
            # A fresh page per sample: every action meets the same starting state.
            shim.call_tool("browser_open", {"url": f"{site}/{page}", "snapshot": "none"})
            commands.take()
            started = time.perf_counter()
            try:
                shim.call_tool(tool, {**arguments, "snapshot": "none", "timeout": 3000})
                times.append((time.perf_counter() - started) * 1000)
                sent.append(commands.take())
            except BenchError as exc:
                failures.append(str(exc))
        figures = summary(times)
        shown = f"median {figures['median']:7.1f}  p95 {figures['p95']:7.1f} ms" if times else "no figures"
        calls = statistics.median(len(c) for c, _ in sent) if sent else float("nan")
        cdp = statistics.median(len(m) for _, m in sent) if sent else float("nan")
        print(f"{label:36s} {shown}  {calls:4.1f} calls {cdp:5.1f} CDP  ({len(times)} ok, {len(failures)} failed)")
        if methods and sent:
            print("    calls: " + " ".join(sent[-1][0]) + "\n    CDP: " + " ".join(sent[-1][1]))


if __name__ == "__main__":
    main()
