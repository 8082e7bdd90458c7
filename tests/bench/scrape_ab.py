"""Paired A/B of the scrape browser path: another browserd tree (A, say main) against this one (B), in one run.

    .venv/bin/python tests/bench/scrape_ab.py --base /path/to/other/tree [--articles 10] [--rounds 3]

On a loaded machine two runs of tests/bench/scrape.py minutes apart compare the load, not the code.
Here both daemons run at once (each in its own isolated home, A importing `browserd` from --base),
on the same real extraction-dev pages (served as in scrape.py's speed section, third-party
requests refused), and every page is scraped with `render: "always"` by A and by B back to back,
the order alternating. Printed: per daemon the latency median and p95, pages/s from the summed
latencies, CPU ms per page (the daemon alone / with its Chromium); the median of the per-page B/A
latency ratios; then 4 clients (one `browserd mcp` each) on all pages, A and B alternating in
--rounds blocks, pages/s and CPU per page; then batch_extract_pages and crawl of tests/site (scrape.py's
runs section) on A and B alternating, --rounds times. Never asserts (DESIGN.md §6).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.bench.common import BenchError, Budget, status_json, summary, tree_cpu_ms  # noqa: E402
from tests.bench.scrape import (  # noqa: E402
    THIRD_PARTY_REFUSED,
    Figures,
    client,
    measure_runs,
    run_clients,
    scrape,
    serve_articles,
    serve_site_quietly,
)
from tests.conftest import BrowserdHome, make_home, short_temp_dir, wait_for  # noqa: E402

BROWSER = {"render": "always"}


def start(home: BrowserdHome, first_url: str) -> int:
    """The home's daemon, its browser up and one untimed scrape done; its pid."""
    done = home.browserd("daemon", timeout=60)
    if done.returncode != 0:
        raise BenchError(f"`browserd daemon` failed: {done.stderr.strip() or done.stdout.strip()}")
    wait_for(lambda: bool((status_json(home) or {}).get("browser", {}).get("running")), 60, 0.2)
    shim = client(home)
    try:
        scrape(shim, first_url, **BROWSER)
    finally:
        shim.close()
    pid = home.daemon_pid()
    if pid is None:
        raise BenchError("the daemon is not running")
    return pid


def paired(homes: dict[str, BrowserdHome], pids: dict[str, int], urls: list[str], rounds: int) -> dict[str, Any]:
    """One client per daemon; each page by both back to back, who goes first alternating."""
    shims = {name: client(home) for name, home in homes.items()}
    times: dict[str, list[float]] = {name: [] for name in homes}
    cpu = dict.fromkeys(homes, (0.0, 0.0))
    ratios = []
    try:
        for turn, url in enumerate(url for _ in range(rounds) for url in urls):
            order = sorted(homes) if turn % 2 == 0 else sorted(homes, reverse=True)
            took = {}
            for name in order:
                before = tree_cpu_ms(pids[name])
                took[name], _ = scrape(shims[name], url, **BROWSER)
                after = tree_cpu_ms(pids[name])
                cpu[name] = (cpu[name][0] + after[0] - before[0], cpu[name][1] + after[1] - before[1])
                times[name].append(took[name])
            ratios.append(took["B"] / took["A"])
    finally:
        for shim in shims.values():
            shim.close()
    rows: dict[str, Any] = {}
    for name, values in times.items():
        rows[name] = {
            "latencyMs": summary(values),
            "pagesPerS": round(len(values) / (sum(values) / 1000), 2),
            "cpuMsPerPage": [round(cpu[name][0] / len(values)), round(cpu[name][1] / len(values))],
        }
    rows["medianRatioBA"] = round(statistics.median(ratios), 3)
    return rows


def blocks(homes: dict[str, BrowserdHome], urls: list[str], rounds: int) -> dict[str, Any]:
    """4 clients on all pages, A and B alternating block by block."""
    rates: dict[str, list[float]] = {name: [] for name in homes}
    cpu: dict[str, list[float]] = {name: [] for name in homes}
    budget = Budget(600)
    for turn in range(rounds):
        for name in sorted(homes) if turn % 2 == 0 else sorted(homes, reverse=True):
            row, _ = run_clients(homes[name], urls, 4, BROWSER, budget)
            rates[name].append(row["pagesPerS"] or 0.0)
            cpu[name].append((row.get("cpuMsPerPage") or {}).get("withBrowser", 0.0))
    return {
        name: {"pagesPerS": rates[name], "median": statistics.median(rates[name]), "cpuMsPerPage": cpu[name]}
        for name in homes
    }


def runs(homes: dict[str, BrowserdHome], site: str, rounds: int) -> dict[str, Any]:
    """batch_extract_pages and crawl of tests/site (scrape.py's runs section), A and B alternating."""
    rates: dict[str, dict[str, list[float]]] = {name: {"batch_extract_pages": [], "crawl": []} for name in homes}
    for turn in range(rounds):
        for name in sorted(homes) if turn % 2 == 0 else sorted(homes, reverse=True):
            figures = Figures()
            measure_runs(homes[name], site, figures)
            for run, row in figures.runs.items():
                rates[name][run].append(row.get("pages_per_s") or 0.0)
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--base", type=Path, required=True, help="the other browserd source tree (A)")
    parser.add_argument("--data", type=Path, default=None, help="extraction-dev folder (the articles)")
    parser.add_argument("--articles", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3, help="times over the articles, paired and in blocks")
    parser.add_argument("--skip-runs", action="store_true", help="leave out batch_extract_pages and crawl")
    args = parser.parse_args()
    if not (args.base / "daemon").is_dir():
        parser.error(f"--base {args.base}: no browserd tree there (no daemon/)")
    # A imports `browserd` from --base: a folder holding only a `browserd` link to it goes first on its path.
    package = short_temp_dir("bd-ab-")
    (package / "browserd").symlink_to(args.base.resolve())
    from browserd.daemon.config import BrowserConfig

    homes = {"A": make_home(idle_exit_s=120), "B": make_home(idle_exit_s=120)}
    for home in homes.values():
        home.env["BROWSERD_BROWSER_ARGS"] = json.dumps([*BrowserConfig().args, THIRD_PARTY_REFUSED])
    homes["A"].env["PYTHONPATH"] = str(package)
    homes["B"].env.pop("PYTHONPATH", None)
    server, base, names, folder = serve_articles(args.articles, args.data)
    site_server, site = serve_site_quietly()
    urls = [f"{base}/{name}" for name in names]
    load_at_start = round(os.getloadavg()[0], 1)
    started = time.perf_counter()
    try:
        pids = {name: start(home, urls[0]) for name, home in homes.items()}
        one = paired(homes, pids, urls, max(1, args.rounds))
        four = blocks(homes, urls, max(1, args.rounds))
        run_rates = {} if args.skip_runs else runs(homes, site, max(1, args.rounds))
    finally:
        for home in homes.values():
            home.stop_daemon()  # only these homes' daemons, by the pids in their lock files
            shutil.rmtree(home.root, ignore_errors=True)
        for each in (server, site_server):
            each.shutdown()
            each.server_close()
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(package, ignore_errors=True)
    print(f"A = {args.base}, B = {REPO}; {len(urls)} real article pages, render always")
    print(f"{'1 client, paired':<20}{'median':>10}{'p95':>10}{'pages/s':>9}{'cpu/page daemon/all':>22}")
    for name in ("A", "B"):
        row = one[name]
        daemon, total = row["cpuMsPerPage"]
        print(
            f"{name:<20}{row['latencyMs']['median']:>8.0f}ms{row['latencyMs']['p95']:>8.0f}ms"
            f"{row['pagesPerS']:>9.2f}{daemon:>14} / {total} ms"
        )
    print(f"median per-page latency B/A: {one['medianRatioBA']}")
    for name in ("A", "B"):
        row = four[name]
        rates = ", ".join(f"{rate:.2f}" for rate in row["pagesPerS"])
        cpus = ", ".join(f"{c:.0f}" for c in row["cpuMsPerPage"])
        print(f"4 clients {name}: pages/s {rates} (median {row['median']:.2f}); cpu ms/page {cpus}")
    for name, rows in run_rates.items():
        print(
            f"runs {name}: "
            + "; ".join(f"{run} {', '.join(f'{r:.2f}' for r in rates)} pages/s" for run, rates in rows.items())
        )
    load_now = round(os.getloadavg()[0], 1)
    wall = time.perf_counter() - started
    print(f"machine: {os.cpu_count()} CPUs, 1-minute load {load_at_start} -> {load_now}, {wall:.0f} s")
    print(json.dumps({"paired": one, "fourClients": four, "runs": run_rates, "load": [load_at_start, load_now]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
