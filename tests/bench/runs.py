"""Task-run benchmark for issue 6: how fast do batch_extract_pages and crawl go, and at what memory?

    .venv/bin/python tests/bench/runs.py [--pages 200] [--source gen|site] [--concurrency 1,2,5]
                                         [--crawl-pages 500] [--workers N]

Prints figures, never asserts them (DESIGN.md §6):

1. batch_extract_pages over --pages distinct URLs at each --concurrency: `gen` (default) the
   generated site, /gen/<n>/<i>.html of tests/conftest.py (five paragraphs and four links each);
   `site` the light tests/site pages repeated (`?n=` makes each URL distinct). Each run is async and
   followed with get_task_run: pages/s = succeeded pages / the run's own elapsedMs (start to end in
   the daemon), plus the client's wall time from run_task_template to the terminal status.
2. crawl of the generated --crawl-pages site from page 0 (limit = that many pages, the default
   concurrency of [crawl], robots.txt read): pages/s the same way, and the crawl's stop reason.
3. Memory, sampled every 0.2 s through each run: the daemon's peak RSS, and the peak PSS of the
   daemon's whole process tree (daemon + Chromium), which counts pages Chromium's processes share
   once rather than once per process.

Concurrency above [browser] workers (default 4) is capped by the executor: the report prints workers.
Then one line of JSON with every figure. Everything runs in an isolated browserd home
(tests/conftest.make_home) against tests/site served on 127.0.0.1; only that home's daemon is stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from browserd.daemon.runtime.procinfo import rss_kib, tree_pss_kib  # noqa: E402
from tests.bench.common import BenchError, RawShim, mib, ready_shim, serve_site, status_json, stop_site  # noqa: E402
from tests.conftest import BrowserdHome, make_home, wait_for  # noqa: E402

TERMINAL = ("succeeded", "failed", "partial_success", "canceled")
POLL_S = 0.5
SAMPLE_S = 0.2
RUN_TIMEOUT_MS = 900_000
# Light pages of tests/site that load without waiting on anything (--source site).
SITE_PAGES = ("index.html", "help.html", "form.html", "tree.html", "spa.html", "states.html", "keys.html", "hover.html")


class MemoryPeak:
    """Samples the daemon's RSS and its process tree's PSS in a thread until stopped; keeps the peaks."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.rss_kib = 0
        self.tree_pss_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.rss_kib = max(self.rss_kib, rss_kib(self.pid))
            self.tree_pss_kib = max(self.tree_pss_kib, tree_pss_kib(self.pid))
            self._stop.wait(SAMPLE_S)

    def __enter__(self) -> MemoryPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def client(home: BrowserdHome) -> RawShim:
    return ready_shim(home, ["--tools", "scrape,runs"])


def follow(shim: RawShim, run_id: str, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run: dict[str, Any] = shim.call_tool("get_task_run", {"runId": run_id}, timeout=30)["structuredContent"]
        if run["status"] in TERMINAL:
            return run
        time.sleep(POLL_S)
    raise BenchError(f"run {run_id} did not end within {timeout_s:.0f} s")


def measure(shim: RawShim, pid: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Start a run, follow it to its end, and give its figures."""
    with MemoryPeak(pid) as memory:
        started = time.perf_counter()
        run_id = shim.call_tool(tool, arguments, timeout=60)["structuredContent"]["runId"]
        run = follow(shim, run_id, RUN_TIMEOUT_MS / 1000 + 60)
        wall_s = time.perf_counter() - started
    summary = (run.get("result") or {}).get("summary") or {}
    elapsed_s = run["metrics"]["elapsedMs"] / 1000
    succeeded = summary.get("succeeded", 0)
    figures = {
        "status": run["status"],
        "pages": summary.get("total", 0),
        "succeeded": succeeded,
        "elapsed_s": round(elapsed_s, 2),
        "wall_s": round(wall_s, 2),
        "pages_per_s": round(succeeded / elapsed_s, 2) if elapsed_s else None,
        "daemon_peak_rss_mib": mib(memory.rss_kib),
        "tree_peak_pss_mib": mib(memory.tree_pss_kib),
    }
    crawl = (run.get("result") or {}).get("crawl")
    if crawl:
        figures["stop_reason"] = crawl.get("stopReason")
    if run.get("error"):
        figures["error"] = run["error"].get("error")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=200, help="URLs of each batch_extract_pages run")
    parser.add_argument("--source", choices=("gen", "site"), default="gen", help="the pages batch_extract_pages reads")
    parser.add_argument("--concurrency", default="1,2,5", help="batch_extract_pages concurrencies")
    parser.add_argument("--crawl-pages", type=int, default=500, help="size of the generated site crawled")
    parser.add_argument("--workers", type=int, default=None, help="[browser] workers of the daemon")
    args = parser.parse_args()
    concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
    extra = {"BROWSERD_RUNS_MAX_RUN_TIMEOUT_MS": str(RUN_TIMEOUT_MS)}
    if args.workers:
        extra["BROWSERD_BROWSER_WORKERS"] = str(args.workers)
    home = make_home(idle_exit_s=120)
    home.env.update(extra)
    server, site = serve_site()
    figures: dict[str, Any] = {"batch": {}, "crawl": None, "load_at_start": round(os.getloadavg()[0], 2)}
    try:
        done = home.browserd("daemon", timeout=60)
        if done.returncode != 0:
            raise BenchError(f"`browserd daemon` failed: {done.stderr.strip() or done.stdout.strip()}")
        wait_for(lambda: bool((status_json(home) or {}).get("browser", {}).get("running")), 60, 0.2)
        pid = home.daemon_pid()
        if pid is None:
            raise BenchError("the daemon is not running")
        with client(home) as shim:
            profile = shim.call_tool("get_runtime_profile", {}, timeout=15).get("structuredContent") or {}
            figures["workers"] = profile.get("limits", {}).get("browserWorkers")
            shim.call_tool("scrape", {"url": f"{site}/gen/2/0.html"}, timeout=60)  # untimed warm-up
            if args.source == "gen":
                urls = [f"{site}/gen/{args.pages}/{i}.html" for i in range(args.pages)]
            else:
                urls = [f"{site}/{SITE_PAGES[i % len(SITE_PAGES)]}?n={i}" for i in range(args.pages)]
            for concurrency in concurrencies:
                print(f"batch_extract_pages, {args.pages} pages, concurrency {concurrency}", file=sys.stderr)
                arguments = {
                    "templateId": "batch_extract_pages",
                    "inputs": {"urls": urls, "concurrency": concurrency},
                    "options": {"mode": "async", "timeoutMs": RUN_TIMEOUT_MS},
                }
                figures["batch"][str(concurrency)] = measure(shim, pid, "run_task_template", arguments)
            print(f"crawl, generated {args.crawl_pages}-page site", file=sys.stderr)
            crawl_args = {
                "url": f"{site}/gen/{args.crawl_pages}/0.html",
                "limit": args.crawl_pages,
                "timeoutMs": RUN_TIMEOUT_MS,
            }
            figures["crawl"] = measure(shim, pid, "crawl", crawl_args)
            figures["daemon_rss_after_mib"] = mib(rss_kib(pid))
    except (BenchError, OSError, subprocess.TimeoutExpired, KeyError) as exc:
        figures["problem"] = repr(exc)
        print(f"! {exc!r}", file=sys.stderr)
    finally:
        home.stop_daemon()
        stop_site(server)
        shutil.rmtree(home.root, ignore_errors=True)
    figures["source"] = args.source
    report(figures, args.pages, args.crawl_pages)
    print(json.dumps(figures))
    return 1 if "problem" in figures else 0


def report(figures: dict[str, Any], pages: int, crawl_pages: int) -> None:
    print(f"\nTask runs (workers {figures.get('workers')}, load average at start {figures['load_at_start']})")
    header = f"{'run':<34}{'status':>16}{'ok/pages':>10}{'elapsed':>10}{'pages/s':>9}{'peak RSS':>11}{'peak PSS':>11}"
    print(header)
    source = figures["source"]
    rows = [(f"batch_extract_pages c={c} ({pages} {source})", f) for c, f in figures["batch"].items()]
    if figures.get("crawl"):
        rows.append((f"crawl /gen/{crawl_pages} (limit {crawl_pages})", figures["crawl"]))
    for label, f in rows:
        print(
            f"{label:<34}{f['status']:>16}{f['succeeded']:>5}/{f['pages']:<4}{f['elapsed_s']:>9.1f}s"
            f"{f['pages_per_s'] or 0:>9.2f}{f['daemon_peak_rss_mib'] or 0:>7.1f} MiB"
            f"{f['tree_peak_pss_mib'] or 0:>7.0f} MiB"
        )
    print("peak RSS: the daemon process; peak PSS: the daemon and Chromium together")
    if figures.get("crawl", {}) and figures["crawl"].get("stop_reason"):
        print(f"crawl stop reason: {figures['crawl']['stop_reason']}")


if __name__ == "__main__":
    sys.exit(main())
