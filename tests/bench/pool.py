"""The browser pool's throughput and cost (issue 24): the daemon's own Chromium only, two
`playwright run-server` members only, and both, in one run on this machine.

    .venv/bin/python tests/bench/pool.py [--pages 100] [--rounds 15] [--json]

For each set-up: a crawl of tests/site's generated pages (render always, concurrency 5) and 4 clients
doing browser_open (snapshot none) + browser_snapshot rounds at once; pages/s, the CPU per page of everything
(daemon, its Playwright driver, every browser and server), and the daemon's own share per page (its
Python process alone, then with its Playwright driver). Then the latency a call adds on a remote member:
browser_snapshot and browser_open (a navigation) medians in a window pinned to `local` against one pinned to a
run-server. Every member has capacity 4 (local_capacity too), so placement spreads the work in "both".

This machine has 2 cores shared with other work: the servers run on the same cores as the daemon, so
the figures show the costs (CPU per page), not the scaling a second host would bring; the load average
is printed beside each figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.common import (
    RawShim,
    cpu_ms,
    descendants,
    ready_shim,
    serve_site,
    status_json,
    stop_site,
    tree_cpu_ms,
)
from tests.conftest import own_home
from tests.e2e.pool_servers import Server, configure, run_server

CAPACITY = 4
CLIENTS = 4
TOOLS = ["--tools", "pages,devtools,scrape,runs"]
SETUPS = {"local only": (True, 0), "2 run-servers": (False, 2), "local + 2 run-servers": (True, 2)}


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def _is_driver(pid: int) -> bool:
    try:
        return b"node" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return False


class Cpu:
    """CPU time (ms) of the daemon alone, its Playwright driver, and everything (daemon tree + servers)."""

    def __init__(self, daemon_pid: int, servers: list[Server]) -> None:
        self.daemon_pid, self.servers = daemon_pid, servers

    def read(self) -> dict[str, float]:
        own, tree = tree_cpu_ms(self.daemon_pid)
        driver = cpu_ms([pid for pid in descendants(self.daemon_pid) if _is_driver(pid)])
        servers = sum(tree_cpu_ms(server.process.pid)[1] for server in self.servers)
        return {"daemon": own, "driver": driver, "all": tree + servers}

    @staticmethod
    def per(before: dict[str, float], after: dict[str, float], pages: int) -> dict[str, float]:
        return {key: round((after[key] - before[key]) / pages, 1) for key in before}


def crawl(shim: RawShim, site: str, pages: int, cpu: Cpu) -> dict[str, Any]:
    before, started = cpu.read(), time.perf_counter()
    args = {"url": f"{site}/gen/{pages}/0.html", "limit": pages, "render": "always", "sitemap": "skip"}
    result = shim.call_tool("crawl", {**args, "concurrency": 5, "mode": "sync"}, timeout=600)
    wall = time.perf_counter() - started
    run = result["structuredContent"]
    done = run["result"]["summary"]["succeeded"]
    return {
        "pagesPerS": round(done / wall, 2),
        "pages": done,
        "cpuMsPerPage": Cpu.per(before, cpu.read(), done),
        "load": load(),
    }


def rounds(shims: list[RawShim], site: str, count: int, cpu: Cpu) -> dict[str, Any]:
    """Each client navigates to a page of its own and snapshots it, `count` times, all clients at once."""
    errors: list[str] = []

    def client(index: int, shim: RawShim) -> None:
        try:
            for i in range(count):
                shim.call_tool(
                    "browser_open", {"url": f"{site}/gen/64/{(index * 16 + i) % 64}.html", "snapshot": "none"}
                )
                shim.call_tool("browser_snapshot", {})
        except Exception as exc:  # reported below: a failed client makes the figure worthless
            errors.append(repr(exc))

    for shim in shims:  # each client's window exists before the clock starts
        shim.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"})
    before, started = cpu.read(), time.perf_counter()
    threads = [threading.Thread(target=client, args=(i, shim)) for i, shim in enumerate(shims)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    total = count * len(shims)
    return {
        "roundsPerS": round(total / wall, 2),
        "rounds": total,
        "cpuMsPerRound": Cpu.per(before, cpu.read(), total),
        "errors": errors,
        "load": load(),
    }


def median_ms(call: Callable[[], object], count: int) -> float:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def latency(shim: RawShim, site: str, count: int) -> dict[str, Any]:
    """browser_snapshot and browser_open in a window on `local`, then in one on a run-server."""
    figures: dict[str, Any] = {}
    for endpoint in ("local", "pw1"):
        shim.call_tool("browser_windows", {"action": "new", "endpoint": endpoint})
        url = f"{site}/gen/64/1.html"
        shim.call_tool("browser_open", {"url": url, "snapshot": "none"})
        figures[endpoint] = {
            "snapshotMs": median_ms(lambda: shim.call_tool("browser_snapshot", {}), count),
            "navigateMs": median_ms(
                lambda url=url: shim.call_tool("browser_open", {"url": url, "snapshot": "none"}), count
            ),
            "load": load(),
        }
    local, remote = figures["local"], figures["pw1"]
    figures["addedMs"] = {key: round(remote[key] - local[key], 1) for key in ("snapshotMs", "navigateMs")}
    return figures


def measure(name: str, local: bool, remotes: int, site: str, args: argparse.Namespace) -> dict[str, Any]:
    servers = [run_server(f"pw{i + 1}") for i in range(remotes)]
    try:
        with own_home() as home:
            configure(home, servers, capacity=CAPACITY, local=local)
            home.env["BROWSERD_BROWSER_PREWARM"] = "1"
            result: dict[str, Any] = {}
            shims = [ready_shim(home, TOOLS) for _ in range(CLIENTS)]
            try:
                profile = shims[0].call_tool("get_runtime_profile", {})["structuredContent"]
                cpu = Cpu(profile["daemonPid"], servers)
                print(f"{name}: crawl of {args.pages} pages", file=sys.stderr)
                result["crawl"] = crawl(shims[0], site, args.pages, cpu)
                print(f"{name}: {CLIENTS} clients x {args.rounds} navigate+snapshot", file=sys.stderr)
                result["clients"] = rounds(shims, site, args.rounds, cpu)
                if local and remotes:
                    print(f"{name}: latency local vs remote", file=sys.stderr)
                    result["latency"] = latency(shims[0], site, args.rounds)
                status = status_json(home) or {}
                result["served"] = {m["name"]: m["pagesServed"] for m in status.get("pool", [])}
            finally:
                for shim in shims:
                    shim.close()
            return result
    finally:
        for server in servers:
            server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    server, site = serve_site()
    results: dict[str, Any] = {}
    try:
        for name, (local, remotes) in SETUPS.items():
            results[name] = measure(name, local, remotes, site, args)
    finally:
        stop_site(server)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"{'set-up':24} {'crawl p/s':>9} {'CPU ms/page':>11} {'daemon':>7} {'+driver':>8}   "
        f"{'4 clients r/s':>13} {'CPU ms/round':>12} {'daemon':>7} {'+driver':>8}  served"
    )
    for name, result in results.items():
        c, r = result["crawl"], result["clients"]
        cc, rc = c["cpuMsPerPage"], r["cpuMsPerRound"]
        print(
            f"{name:24} {c['pagesPerS']:>9} {cc['all']:>11} {cc['daemon']:>7} {cc['daemon'] + cc['driver']:>8.1f}   "
            f"{r['roundsPerS']:>13} {rc['all']:>12} {rc['daemon']:>7} {rc['daemon'] + rc['driver']:>8.1f}  "
            f"{result['served']}  ({c['load']}, {r['load']})"
        )
        if r["errors"]:
            print(f"  client errors: {r['errors'][:3]}")
        if "latency" in result:
            lat = result["latency"]
            print(
                f"  latency (median): snapshot local {lat['local']['snapshotMs']} ms, run-server "
                f"{lat['pw1']['snapshotMs']} ms; navigate local {lat['local']['navigateMs']} ms, run-server "
                f"{lat['pw1']['navigateMs']} ms; added {lat['addedMs']} ({lat['pw1']['load']})"
            )


if __name__ == "__main__":
    main()
