"""Latency of the files, storage and evaluate tools through a real shim and a warm daemon.

Per call, as an agent sees it (MCP request to answer): browser_evaluate, browser_upload, a click on a
download link until the answer says where the file is, browser_open on a PDF (viewer plus the saved
copy), browser_pdf, browser_storage export / import / clear, and browser_downloads. Prints median and
p95 in ms, then one JSON line. Run by hand: `.venv/bin/python tests/bench/files.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.bench.common import Budget, RawShim, fmt_ms, sample, serve_site, stop_site, summary  # noqa: E402
from tests.conftest import make_home  # noqa: E402

MAX_RUNS = 200


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="calls per tool (default 20)")
    parser.add_argument("--budget-s", type=float, default=600, help="wall-clock cap for the whole script")
    args = parser.parse_args()
    runs = max(1, min(args.runs, MAX_RUNS))
    budget = Budget(args.budget_s)
    home = make_home(idle_exit_s=60)
    server, site = serve_site()
    upload = Path(tempfile.mkdtemp(prefix="bd-bench-")) / "upload.bin"
    upload.write_bytes(os.urandom(64 * 1024))
    figures: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    try:
        with RawShim(home, ["--tools", "pages,devtools"]) as shim:
            shim.initialize()
            shim.notify("notifications/initialized")
            shim.call_tool("browser_open", {"url": f"{site}/set-cookie?session=bench", "snapshot": "none"})
            shim.call_tool("browser_open", {"url": f"{site}/storage.html", "snapshot": "none"})
            shim.call_tool("browser_click", {"target": "#remember", "snapshot": "none"})
            exported = shim.call_tool("browser_storage", {"action": "export"})["structuredContent"]["state"]

            def timed(name: str, arguments: dict[str, Any]) -> float:
                started = time.perf_counter()
                shim.call_tool(name, arguments)
                return (time.perf_counter() - started) * 1000

            def go(page: str) -> None:
                shim.call_tool("browser_open", {"url": f"{site}/{page}", "snapshot": "none"})

            cases: list[tuple[str, str, str, dict[str, Any]]] = [
                ("evaluate expression", "storage.html", "browser_evaluate", {"expression": "document.title"}),
                ("storage export", "storage.html", "browser_storage", {"action": "export"}),
                ("storage import (merge)", "storage.html", "browser_storage", {"action": "import", "state": exported}),
                ("storage clear", "storage.html", "browser_storage", {"action": "clear"}),
                ("upload 64 KiB", "upload.html", "browser_upload", {"target": "#single", "paths": [str(upload)]}),
                ("pdf of form.html", "form.html", "browser_pdf", {}),
                ("download link click", "downloads.html", "browser_click", {"target": "#notes", "snapshot": "none"}),
                ("open a PDF url", "index.html", "browser_open", {"url": f"{site}/sample.pdf", "snapshot": "none"}),
                ("downloads list", "index.html", "browser_downloads", {}),
            ]
            for label, page, tool, arguments in cases:
                print(label, file=sys.stderr)
                go(page)
                times, failures = sample(label, runs, lambda t=tool, a=arguments: timed(t, a), budget)
                figures[label] = summary(times) | {"failed": len(failures)}
                problems.extend(f"{label}: {f}" for f in failures[:1])
    finally:
        home.stop_daemon()  # the daemon of this isolated home only, by the pid in its lock file
        stop_site(server)
        shutil.rmtree(home.root, ignore_errors=True)
        shutil.rmtree(upload.parent, ignore_errors=True)

    print(f"{'call':<26}{'median':>10}{'p95':>10}{'n':>5}")
    for label, row in figures.items():
        print(f"{label:<26}{fmt_ms(row.get('median')):>10}{fmt_ms(row.get('p95')):>10}{row.get('n', 0):>5}")
    print(f"\nmachine: {os.cpu_count()} CPUs, 1-minute load {os.getloadavg()[0]:.2f}")
    if problems:
        print("\nproblems:\n" + "\n".join(f"  {p}" for p in problems))
    print(json.dumps({"latencyMs": figures, "problems": problems}, separators=(",", ":")))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
