"""Network log benchmark (issue 4 item 3): what keeping each tab's request log costs.

    .venv/bin/python tests/bench/network.py [--runs 10] [--requests 300] [--entries 10000]

Prints figures, never asserts them (DESIGN.md §6):

1. Page load time of tests/site/network-many.html (`--requests` images, all part of the load, with new
   URLs on every run so Chromium's cache does not answer them) through browser_open, on two daemons
   side by side: one with the log on (browser.network_log_size 500) and one with it off (0, so no
   request events are subscribed at all). Runs alternate between the two, so load from elsewhere on
   the machine hits both alike. On a busy machine wall-clock loads vary by seconds, so the CPU time
   the daemon and its Playwright driver (node) spent per load is measured too: it is what the log
   really costs. Also the latency of browser_network listing the newest 50 requests.
2. Memory of the log itself for `--entries` requests (tracemalloc, in this process): records fed
   through the log's own event handlers from stand-in requests with realistic URLs, each URL a string
   of its own (an upper bound: in the daemon a record shares its URL with Playwright's request while
   Playwright keeps it). Also the handlers' CPU time per request.

Then one line of JSON with every figure. Everything runs in isolated browserd homes
(tests/conftest.make_home) against tests/site served on 127.0.0.1; only those homes' daemons are stopped.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from browserd.daemon.runtime.procinfo import find_descendant  # noqa: E402
from browserd.daemon.sessions.network import NetworkLog  # noqa: E402
from tests.bench.common import Budget, RawShim, cpu_ms, fmt_ms, sample, serve_site, stop_site, summary  # noqa: E402
from tests.conftest import BrowserdHome, make_home  # noqa: E402


class _Response:
    status = 200
    status_text = "OK"
    from_service_worker = False

    def __init__(self) -> None:
        self.headers = {"content-type": "image/svg+xml", "content-length": "134"}


class _Request:
    """What the log's handlers read from a Playwright Request, without a browser behind it."""

    method = "GET"
    resource_type = "image"
    redirected_from = None
    failure = None
    existing_response = _Response()

    def __init__(self, n: int) -> None:
        self.url = f"https://static.example-cdn.com/assets/images/products/2026/11/item-{n:06d}.webp?w=640&q=80"
        self.timing = {"requestStart": 1.5, "responseEnd": 12.25}


def _feed(log: NetworkLog, requests: list[_Request]) -> None:
    for request in requests:
        log._request(request)  # type: ignore[arg-type]
        log._finished(request)  # type: ignore[arg-type]


def log_memory(entries: int) -> dict[str, Any]:
    requests = [_Request(n) for n in range(entries)]
    started = time.perf_counter()
    _feed(NetworkLog(entries), requests)  # timed apart: tracemalloc slows every allocation down
    handler_s = time.perf_counter() - started
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    log = NetworkLog(entries)
    _feed(log, requests)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    own = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    url_bytes = sum(sys.getsizeof(r.url) for r in requests)
    assert len(log.records) == entries
    return {
        "entries": entries,
        "log_bytes": own,
        "bytes_per_entry": round(own / entries),
        "with_own_url_bytes": own + url_bytes,
        "with_own_url_per_entry": round((own + url_bytes) / entries),
        "handler_us_per_request": round(handler_s / entries * 1e6, 2),
    }


def start(home: BrowserdHome) -> RawShim:
    shim = RawShim(home, ["--tools", "pages,devtools"])
    shim.initialize()
    return shim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--budget-s", type=float, default=600)
    args = parser.parse_args()

    memory = log_memory(args.entries)
    print(
        f"log memory for {memory['entries']} entries: {memory['log_bytes'] / 1024:.0f} KiB "
        f"({memory['bytes_per_entry']} B/entry; {memory['with_own_url_per_entry']} B/entry counting each URL "
        f"as its own string); handlers {memory['handler_us_per_request']} µs per request"
    )

    server, site = serve_site()
    homes = {"on": make_home(idle_exit_s=60), "off": make_home(idle_exit_s=60)}
    homes["on"].env["BROWSERD_BROWSER_NETWORK_LOG_SIZE"] = "500"
    homes["off"].env["BROWSERD_BROWSER_NETWORK_LOG_SIZE"] = "0"
    shims: dict[str, RawShim] = {}
    budget = Budget(args.budget_s)
    loads: dict[str, list[float]] = {"on": [], "off": []}
    cpu: dict[str, list[float]] = {"on": [], "off": []}
    watched: dict[str, list[int]] = {}
    version = 0
    try:
        for name, home in homes.items():
            shims[name] = start(home)
            shims[name].call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"})
            daemon = home.daemon_pid()
            driver = find_descendant(daemon, "run-driver") if daemon is not None else None
            watched[name] = [pid for pid in (daemon, driver) if pid is not None]

        def load(name: str) -> float:
            nonlocal version
            version += 1
            url = f"{site}/network-many.html?n={args.requests}&v={version}"
            cpu_before = cpu_ms(watched[name])
            started = time.perf_counter()
            shims[name].call_tool("browser_open", {"url": url, "snapshot": "none"}, timeout=120)
            took = (time.perf_counter() - started) * 1000
            cpu[name].append(cpu_ms(watched[name]) - cpu_before)
            return took

        for _ in range(args.runs):
            for name in ("on", "off"):
                times, _failures = sample(f"load, log {name}", 1, lambda name=name: load(name), budget)
                loads[name].extend(times)

        def listing() -> float:
            started = time.perf_counter()
            shims["on"].call_tool("browser_network", {})
            return (time.perf_counter() - started) * 1000

        list_times, _ = sample("browser_network", args.runs, listing, budget)
    finally:
        for shim in shims.values():
            shim.close()
        for home in homes.values():
            home.stop_daemon()  # this isolated home's daemon only, by the pid in its lock file
            shutil.rmtree(home.root, ignore_errors=True)
        stop_site(server)

    on, off = summary(loads["on"]), summary(loads["off"])
    for name, figures in (("on ", on), ("off", off)):
        print(
            f"page load with {args.requests} requests, log {name}: median {fmt_ms(figures.get('median'))}, "
            f"min {fmt_ms(figures.get('min'))}, p95 {fmt_ms(figures.get('p95'))}"
        )
    overhead = None
    if loads["on"] and loads["off"]:
        # Loads on a shared machine vary by seconds; the minimum is the least disturbed run of each.
        overhead = round((on["min"] - off["min"]) / args.requests * 1000, 1)
        print(f"log cost per request (difference of the minimum loads): {overhead} µs")
    cpu_on, cpu_off = summary(cpu["on"]), summary(cpu["off"])
    print(
        f"daemon + driver CPU per load: log on median {fmt_ms(cpu_on.get('median'))}, "
        f"off {fmt_ms(cpu_off.get('median'))}"
    )
    cpu_cost = None
    if cpu["on"] and cpu["off"]:
        cpu_cost = round((cpu_on["median"] - cpu_off["median"]) / args.requests * 1000, 1)
        print(f"log CPU cost per request (difference of the medians): {cpu_cost} µs")
    listed = summary(list_times)
    print(f"browser_network (newest 50 of {args.requests + 1}): median {fmt_ms(listed.get('median'))}")
    print(
        json.dumps(
            {
                "requests": args.requests,
                "load_ms_log_on": on,
                "load_ms_log_off": off,
                "log_cost_us_per_request": overhead,
                "cpu_ms_log_on": cpu_on,
                "cpu_ms_log_off": cpu_off,
                "log_cpu_us_per_request": cpu_cost,
                "browser_network_ms": listed,
                "memory": memory,
            }
        )
    )


if __name__ == "__main__":
    main()
