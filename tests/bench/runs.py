"""batch_extract_pages throughput: pages/s over tests/site pages at concurrency 1, 2 and 5, and the
daemon's peak RSS while it runs (issue 6). Prints figures; asserts nothing.

    .venv/bin/python tests/bench/runs.py [--pages 200] [--concurrency 1,2,5] [--budget-s 900]

Each measurement is one async run polled with get_task_run; pages/s = pages / the run's own
metrics.elapsedMs (from `running` to terminal), so queueing and polling do not count.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.common import (
    Budget,
    RawShim,
    fmt_mib,
    mib,
    serve_site,
    status_json,
    stop_site,
    vm_rss_kib,
)
from tests.conftest import make_home

# Light pages of tests/site that load without waiting on anything.
PAGES = ("index.html", "help.html", "form.html", "tree.html", "spa.html", "states.html", "keys.html", "hover.html")
TERMINAL = {"succeeded", "failed", "partial_success", "canceled"}


@dataclass
class PeakRss:
    """Samples a process's VmRSS every 50 ms in a thread and keeps the highest."""

    pid: int
    peak_kib: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> PeakRss:
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            self.peak_kib = max(self.peak_kib, vm_rss_kib(self.pid) or 0)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def structured(result: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = result["structuredContent"]
    return data


def batch(shim: RawShim, urls: list[str], concurrency: int, timeout_s: float) -> dict[str, Any]:
    arguments = {
        "templateId": "batch_extract_pages",
        "inputs": {"urls": urls, "concurrency": concurrency},
        "options": {"mode": "async"},
    }
    run_id = structured(shim.call_tool("run_task_template", arguments))["runId"]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = structured(shim.call_tool("get_task_run", {"runId": run_id}))
        if run["status"] in TERMINAL:
            return run
        time.sleep(0.25)
    shim.call_tool("cancel_task_run", {"runId": run_id, "force": True})
    raise TimeoutError(f"run {run_id} did not finish in {timeout_s} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--concurrency", default="1,2,5")
    parser.add_argument("--budget-s", type=float, default=900)
    args = parser.parse_args()
    levels = [int(level) for level in args.concurrency.split(",")]
    budget = Budget(args.budget_s)
    server, site = serve_site()
    home = make_home(idle_exit_s=0)
    rows: list[tuple[int, int, float, str, int]] = []
    peak = 0
    try:
        with RawShim(home, ["--tools", "runs"]) as shim:
            shim.initialize()
            shim.notify("notifications/initialized")
            pid = structured(shim.call_tool("get_runtime_profile", {}))["daemonPid"]
            # One page first, so Chromium's launch is not part of the first figure.
            batch(shim, [f"{site}/index.html"], 1, 60)
            for concurrency in levels:
                if not budget.left():
                    print(f"budget spent; concurrency {concurrency} skipped", file=sys.stderr)
                    break
                urls = [f"{site}/{PAGES[n % len(PAGES)]}?n={n}&c={concurrency}" for n in range(args.pages)]
                with PeakRss(pid) as rss:
                    run = batch(shim, urls, concurrency, max(budget.deadline - time.monotonic(), 60))
                peak = max(peak, rss.peak_kib)
                elapsed_s = run["metrics"]["elapsedMs"] / 1000
                succeeded = run["result"]["summary"]["succeeded"]
                rows.append((concurrency, succeeded, elapsed_s, run["status"], rss.peak_kib))
                print(f"concurrency {concurrency}: {succeeded} pages in {elapsed_s:.1f} s", file=sys.stderr)
            status = status_json(home)
    finally:
        home.stop_daemon()
        stop_site(server)
        shutil.rmtree(home.root, ignore_errors=True)
    print(f"batch_extract_pages over {args.pages} tests/site pages (markdown, main content)")
    print(f"{'concurrency':>11}  {'pages':>5}  {'seconds':>7}  {'pages/s':>7}  {'status':<16} daemon peak RSS")
    for concurrency, pages, seconds, status_text, rss_kib in rows:
        rate = pages / seconds if seconds else 0.0
        print(
            f"{concurrency:>11}  {pages:>5}  {seconds:>7.1f}  {rate:>7.2f}  {status_text:<16} {fmt_mib(mib(rss_kib))}"
        )
    print(f"daemon peak RSS over all runs: {fmt_mib(mib(peak))}")
    if status is not None:
        print(f"browser PSS at the end: {fmt_mib(mib(status['memory']['browserPssKiB']))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
