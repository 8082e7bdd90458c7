"""The URL guard's cost on a page load: the same pages opened by a local session (no guard) and by a
remote session (every request through the guard proxy, daemon/policy/proxy.py).

    .venv/bin/python tests/bench/guard.py [--runs N] [--images N]

Pages: help.html (one request) and a generated page with N images (N+1 requests), each run with fresh
URLs so nothing comes from the cache; `browser_open` with snapshot none, timed at the MCP client, and
`scrape` of the generated page. Runs alternate between the two sessions so that machine load hits
both alike. Prints figures (median, p95, overhead of the guard), never asserts them (DESIGN.md §6).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.bench.common import BenchError, Budget, RawShim, fmt_ms, ready_shim, summary  # noqa: E402
from tests.conftest import SiteHandler, _Server, make_home  # noqa: E402


class BenchSite(SiteHandler):
    """tests/site plus /images.html?n=N&run=R: a page of N distinct images, new URLs for every run."""

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/images.html":
            query = dict(urllib.parse.parse_qsl(url.query))
            count, run = int(query.get("n", "50")), query.get("run", "0")
            images = "".join(f'<img src="/favicon.ico?run={run}&i={i}" alt="">' for i in range(count))
            self._send(200, f"<!doctype html><title>Images</title><h1>{count} images</h1>{images}".encode())
            return
        super().do_GET()


def timed(shim: RawShim, tool: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    shim.call_tool(tool, arguments)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="loads per page and session (default 20)")
    parser.add_argument("--images", type=int, default=50, help="images on the generated page (default 50)")
    parser.add_argument("--budget-s", type=float, default=600, help="wall-clock cap for the whole script")
    args = parser.parse_args()
    budget = Budget(args.budget_s)
    server = _Server(("127.0.0.1", 0), BenchSite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}"
    home = make_home(idle_exit_s=120)
    # The remote session may reach the loopback test site only through this exemption; all else is as usual.
    home.env["BROWSERD_SECURITY_REMOTE_EXEMPT_ORIGINS"] = site
    load_at_start = round(os.getloadavg()[0], 2)
    cases: dict[str, Callable[[int], tuple[str, dict[str, Any]]]] = {
        "open help.html": lambda run: ("browser_open", {"url": f"{site}/help.html?run={run}", "snapshot": "none"}),
        f"open {args.images} images": lambda run: (
            "browser_open",
            {"url": f"{site}/images.html?n={args.images}&run={run}", "snapshot": "none"},
        ),
        f"scrape {args.images} images": lambda run: (
            "scrape",
            {"url": f"{site}/images.html?n={args.images}&run=s{run}", "format": "links", "waitFor": 1},
        ),
    }
    times: dict[str, dict[str, list[float]]] = {case: {"local": [], "remote": []} for case in cases}
    problems: list[str] = []
    print(f"URL guard benchmark: home {home.root}, site {site}", file=sys.stderr)
    try:
        with (
            ready_shim(home, ["--tools", "pages,scrape"]) as local,
            ready_shim(home, ["--trust", "remote", "--tools", "pages,scrape"]) as remote,
        ):
            shims = {"local": local, "remote": remote}
            for name, shim in shims.items():  # warm-up: first tab, first window, first guard
                shim.call_tool("browser_open", {"url": f"{site}/help.html?warm={name}", "snapshot": "none"})
            run = 0
            for case, call in cases.items():
                print(case, file=sys.stderr)
                for _ in range(args.runs):
                    if not budget.left():
                        break
                    run += 1
                    for name in ("local", "remote") if run % 2 else ("remote", "local"):
                        tool, arguments = call(run)
                        try:
                            times[case][name].append(timed(shims[name], tool, arguments))
                        except BenchError as exc:
                            problems.append(f"{case} ({name}): {exc}")
                    print(".", end="", file=sys.stderr, flush=True)
                print(file=sys.stderr)
    finally:
        home.stop_daemon()  # the daemon of this isolated home only, by the pid in its lock file
        server.shutdown()
        shutil.rmtree(home.root, ignore_errors=True)

    rows: dict[str, Any] = {}
    header = f"{'local median':>13} {'remote median':>14} {'overhead':>9} {'local p95':>10} {'remote p95':>11}"
    print(f"\n{'case':<24} {header}")
    for case, by_session in times.items():
        local_s, remote_s = summary(by_session["local"]), summary(by_session["remote"])
        overhead = None
        if local_s.get("median") and remote_s.get("median"):
            overhead = round(remote_s["median"] - local_s["median"], 1)
        rows[case] = {"local": local_s, "remote": remote_s, "overheadMs": overhead}
        print(
            f"{case:<24} {fmt_ms(local_s.get('median')):>13} {fmt_ms(remote_s.get('median')):>14} "
            f"{'-' if overhead is None else f'{overhead:+.0f} ms':>9} {fmt_ms(local_s.get('p95')):>10} "
            f"{fmt_ms(remote_s.get('p95')):>11}"
        )
    load_now = round(os.getloadavg()[0], 2)
    print(f"\nmachine: {os.cpu_count()} CPUs, 1-minute load {load_at_start} at the start, {load_now} at the end")
    if budget.exhausted:
        print("note: the time budget ran out; some cases have fewer samples than asked for")
    if problems:
        print("problems:\n" + "\n".join(f"  {p}" for p in problems[:20]))
    print(json.dumps({"cases": rows, "problems": problems, "load1": [load_at_start, load_now]}, separators=(",", ":")))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
