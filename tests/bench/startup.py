"""Startup benchmark for issue 2: how fast and how small is `browserd mcp`?

    .venv/bin/python tests/bench/startup.py [--runs 20]      (also `make bench`)

Prints figures, never asserts them (DESIGN.md §6):

1. shim spawn -> initialize response, warm daemon (median, p95 over --runs).
2. shim spawn -> first browser_snapshot result (initialize, notifications/initialized, browser_open on
   a tests/site page served on 127.0.0.1, browser_snapshot), with a warm daemon and with none (the
   daemon is stopped with `browserd stop` before each cold run, so the shim spawns it).
3. RSS of the shim after initialize + tools/list, of the daemon and of Chromium's process tree.
4. Size of tools/list (the JSON of its `tools` array) per tool group.
5. For comparison, the cost of `import mcp` (the official SDK), which is why the shim does without it.

The MCP side is a raw newline-delimited JSON-RPC client over the shim's pipes: importing the SDK here
would not change the shim's figures, but a raw client keeps the measuring process out of the way.
Everything runs in an isolated browserd home (tests/conftest.make_home): its own socket, config and
state folders, so the daemon measured is the one this script starts, and only that one is stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.bench.common import (  # noqa: E402
    BenchError,
    Budget,
    RawShim,
    fmt_mib,
    fmt_ms,
    mib,
    sample,
    serve_site,
    status_json,
    stop_site,
    summary,
    verdict,
    vm_rss_kib,
)
from tests.conftest import BrowserdHome, make_home, pid_alive, wait_for  # noqa: E402

INIT_TARGET_MS = 150.0
SHIM_RSS_TARGET_MIB = 30.0
TOOL_GROUPS: list[tuple[str, list[str]]] = [
    ("default", []),
    ("core", ["--tools", "core"]),
    ("pages", ["--tools", "pages"]),
    ("scrape", ["--tools", "scrape"]),
    ("all", ["--tools", "all"]),
]
# What `browserd mcp` imports before it answers initialize (shim/entry.py: no click, no daemon module).
SHIM_IMPORTS = (
    "import browserd.shim.entry, browserd.shim.mcp_server\ntry:\n    import uvloop\nexcept ImportError:\n    pass"
)
MAX_RUNS = 200  # whatever --runs says


# -- the measurements ----------------------------------------------------------------------------------


def spawn_to_initialize(home: BrowserdHome) -> float:
    with RawShim(home) as shim:
        shim.initialize()
        return (time.perf_counter() - shim.started) * 1000


def spawn_to_snapshot(home: BrowserdHome, url: str) -> float:
    with RawShim(home) as shim:
        shim.initialize()
        shim.notify("notifications/initialized")
        shim.call_tool("browser_open", {"url": url}, timeout=60)
        snapshot = shim.call_tool("browser_snapshot", {}, timeout=60)
        elapsed = (time.perf_counter() - shim.started) * 1000
        text = " ".join(block.get("text", "") for block in snapshot.get("content", []))
        if "[ref=e" not in text:
            raise BenchError(f"browser_snapshot returned no refs: {text[:200]}")
        return elapsed


def stop_daemon_cli(home: BrowserdHome) -> None:
    """`browserd stop`, then wait until that daemon's process is really gone (cold start = no daemon)."""
    pid = home.daemon_pid()
    home.browserd("stop", timeout=30)
    if pid is not None and not wait_for(lambda: not pid_alive(pid), 15):
        home.stop_daemon()


def memory(home: BrowserdHome, url: str) -> dict[str, Any]:
    """Shim RSS after initialize + tools/list; daemon and Chromium RSS with the browser warm (a tab open)."""
    shim_kib: list[int] = []
    shim_after_calls_kib: int | None = None
    daemon_kib: int | None = None
    browser_kib: int | None = None
    daemon_pid: int | None = None
    browser_pid: int | None = None
    for attempt in range(3):
        with RawShim(home) as shim:
            shim.initialize()
            shim.notify("notifications/initialized")
            shim.request("tools/list", {}, 15)
            time.sleep(0.2)  # let the shim settle after its answers
            rss = vm_rss_kib(shim.pid)
            if rss is not None:
                shim_kib.append(rss)
            if attempt == 0:
                shim.call_tool("browser_open", {"url": url})
                shim.call_tool("browser_snapshot", {})
                shim_after_calls_kib = vm_rss_kib(shim.pid)
                status = status_json(home)
                if status is not None:
                    daemon_pid = status["pid"]
                    browser_pid = status["browser"]["pid"]
                    daemon_kib = vm_rss_kib(status["pid"])
                    browser_kib = status["memory"]["browserPssKiB"]
    return {
        "shimRssMiB": mib(statistics.median(shim_kib)) if shim_kib else None,
        "shimRssSamplesMiB": [mib(k) for k in shim_kib],
        "shimRssAfterSnapshotMiB": mib(shim_after_calls_kib),
        "daemonRssMiB": mib(daemon_kib),
        "daemonPid": daemon_pid,
        "chromiumTreePssMiB": mib(browser_kib),
        "chromiumPid": browser_pid,
    }


def tools_list_sizes(home: BrowserdHome) -> dict[str, Any]:
    sizes: dict[str, Any] = {}
    for group, args in TOOL_GROUPS:
        try:
            with RawShim(home, args) as shim:
                shim.initialize()
                shim.notify("notifications/initialized")
                tools = shim.request("tools/list", {}, 15)["tools"]
            encoded = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
            sizes[group] = {"tools": len(tools), "chars": len(encoded), "names": [t["name"] for t in tools]}
        except (BenchError, OSError, subprocess.TimeoutExpired) as exc:
            sizes[group] = {"error": str(exc)}
    return sizes


def import_cost(code: str, repeats: int = 3) -> dict[str, Any]:
    """Wall time and peak RSS of `python -c CODE`.

    The peak is the child's own VmHWM, printed by the child as its last act: rusage's ru_maxrss of a
    child is no good here, since Linux carries the forking parent's peak across exec (this process
    imports pytest, so every child would look at least as big as it).
    """
    probe = "\nimport sys\nsys.stdout.write([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"
    walls: list[float] = []
    peaks: list[int] = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code + probe], capture_output=True, text=True, timeout=60)
        walls.append((time.perf_counter() - started) * 1000)
        if done.returncode != 0:
            return {"error": f"exit {done.returncode}: {done.stderr.strip()[-300:]}"}
        peaks.append(int(done.stdout.split()[-2]))  # "VmHWM:   12345 kB"
    return {"wallMs": round(statistics.median(walls), 1), "maxRssMiB": mib(statistics.median(peaks))}


# -- output --------------------------------------------------------------------------------------------


def print_report(figures: dict[str, Any]) -> None:
    rows: list[tuple[str, str, str, str, str]] = []

    def timing(label: str, key: str, target: str = "") -> None:
        s = figures["timings"][key]
        failed = figures["failures"].get(key, 0)
        n = f"{s['n']}" + (f" ({failed} failed)" if failed else "")
        rows.append((label, fmt_ms(s.get("median")), fmt_ms(s.get("p95")), n, target))

    init_median = figures["timings"]["initialize_warm"].get("median")
    timing(
        "shim spawn -> initialize (warm daemon)",
        "initialize_warm",
        f"< {INIT_TARGET_MS:.0f} ms median: {verdict(init_median, INIT_TARGET_MS)}",
    )
    timing("shim spawn -> first snapshot (warm daemon)", "snapshot_warm")
    timing("shim spawn -> first snapshot (no daemon)", "snapshot_cold")
    timing("browserd daemon (start, until it answers)", "daemon_start")

    print()
    print(f"{'startup':<44}{'median':>10}{'p95':>10}{'n':>6}  target")
    for label, median, p95, n, target in rows:
        print(f"{label:<44}{median:>10}{p95:>10}{n:>6}  {target}")

    mem = figures["memory"]
    print()
    print(f"{'memory (VmRSS)':<44}{'':>10}{'':>10}{'':>6}")
    print(
        f"{'shim after initialize + tools/list':<44}{fmt_mib(mem.get('shimRssMiB')):>10}{'':>10}"
        f"{len(mem.get('shimRssSamplesMiB', [])):>6}  < {SHIM_RSS_TARGET_MIB:.0f} MiB: "
        f"{verdict(mem.get('shimRssMiB'), SHIM_RSS_TARGET_MIB)}"
    )
    print(f"{'shim after browser_open + browser_snapshot':<44}{fmt_mib(mem.get('shimRssAfterSnapshotMiB')):>10}")
    print(f"{'daemon (browser warm, one tab open)':<44}{fmt_mib(mem.get('daemonRssMiB')):>10}")
    print(f"{'Chromium process tree PSS (status --json)':<44}{fmt_mib(mem.get('chromiumTreePssMiB')):>10}")

    print()
    print(f"{'tools/list (JSON of the tools array)':<44}{'chars':>10}{'tools':>10}  names")
    for group, size in figures["toolsList"].items():
        label = "default" if group == "default" else f"--tools {group}"
        if "error" in size:
            print(f"{label:<44}{'error':>10}{'':>10}  {size['error'][:80]}")
        else:
            print(f"{label:<44}{size['chars']:>10}{size['tools']:>10}  {', '.join(size['names'])}")

    print()
    print(f"{'python -c ... (median of 3)':<44}{'wall':>10}{'max RSS':>12}")
    for label, cost in figures["imports"].items():
        if "error" in cost:
            print(f"{label:<44}{'error':>10}  {cost['error'][:80]}")
        else:
            print(f"{label:<44}{fmt_ms(cost['wallMs']):>10}{fmt_mib(cost['maxRssMiB']):>12}")

    if figures["budgetExhausted"]:
        print("\nnote: the time budget ran out; some measurements have fewer samples than asked for")


# -- main ----------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="runs of spawn -> initialize (default 20)")
    parser.add_argument("--warm-runs", type=int, default=10, help="runs of spawn -> snapshot, warm daemon")
    parser.add_argument("--cold-runs", type=int, default=5, help="runs of spawn -> snapshot, no daemon")
    parser.add_argument("--budget-s", type=float, default=600, help="wall-clock cap for the whole script")
    args = parser.parse_args()
    runs, warm_runs, cold_runs = (max(1, min(n, MAX_RUNS)) for n in (args.runs, args.warm_runs, args.cold_runs))
    budget = Budget(args.budget_s)

    home = make_home(idle_exit_s=60)
    server, site = serve_site()
    url = f"{site}/index.html"

    timings: dict[str, list[float]] = {}
    failures: dict[str, list[str]] = {}
    figures: dict[str, Any] = {"memory": {}, "toolsList": {}, "imports": {}}
    problems: list[str] = []

    def section(name: str, run: Callable[[], None]) -> None:
        if not budget.left():
            problems.append(f"{name}: skipped, the time budget ran out")
            return
        print(name, file=sys.stderr)
        try:
            run()
        except (BenchError, OSError, subprocess.TimeoutExpired, KeyError) as exc:
            problems.append(f"{name}: {exc!r}")
            print(f"  ! {name}: {exc!r}", file=sys.stderr)

    def start_daemon() -> None:
        # The warm daemon: `browserd daemon` starts it detached and returns once it answers.
        started = time.perf_counter()
        done = home.browserd("daemon", timeout=60)
        if done.returncode != 0:
            raise BenchError(f"`browserd daemon` failed: {done.stderr.strip() or done.stdout.strip()}")
        timings["daemon_start"] = [(time.perf_counter() - started) * 1000]
        # Wait for the prewarmed browser, then one untimed shim round so the first sample is not special.
        wait_for(lambda: bool((status_json(home) or {}).get("browser", {}).get("running")), 60, 0.2)
        spawn_to_snapshot(home, url)

    def measure_initialize() -> None:
        timings["initialize_warm"], failures["initialize_warm"] = sample(
            "initialize", runs, lambda: spawn_to_initialize(home), budget
        )

    def measure_snapshot_warm() -> None:
        timings["snapshot_warm"], failures["snapshot_warm"] = sample(
            "snapshot warm", warm_runs, lambda: spawn_to_snapshot(home, url), budget
        )

    def measure_memory() -> None:
        figures["memory"] = memory(home, url)

    def measure_tools_list() -> None:
        figures["toolsList"] = tools_list_sizes(home)

    def measure_snapshot_cold() -> None:
        timings["snapshot_cold"], failures["snapshot_cold"] = sample(
            "snapshot cold", cold_runs, lambda: spawn_to_snapshot(home, url), budget, lambda: stop_daemon_cli(home)
        )

    def measure_imports() -> None:
        figures["imports"] = {
            "python -c pass": import_cost("pass"),
            "import msgspec, anyio": import_cost("import msgspec, anyio"),
            "the shim's imports (entry, mcp_server, uvloop)": import_cost(SHIM_IMPORTS),
            "import mcp (the official SDK)": import_cost("import mcp"),
        }

    print(f"browserd startup benchmark: home {home.root}, site {url}", file=sys.stderr)
    try:
        section("daemon start", start_daemon)
        section(f"spawn -> initialize, warm daemon x{runs}", measure_initialize)
        section(f"spawn -> snapshot, warm daemon x{warm_runs}", measure_snapshot_warm)
        section("memory", measure_memory)
        section("tools/list sizes", measure_tools_list)
        section(f"spawn -> snapshot, no daemon x{cold_runs}", measure_snapshot_cold)
        section("import costs (python -c, median of 3)", measure_imports)
    finally:
        home.stop_daemon()  # the daemon of this isolated home only, by the pid in its lock file
        stop_site(server)

    errors = (home.root / "shim.err").read_text(errors="replace").strip() if (home.root / "shim.err").exists() else ""
    shutil.rmtree(home.root, ignore_errors=True)

    keys = ("initialize_warm", "snapshot_warm", "snapshot_cold", "daemon_start")
    figures["timings"] = {key: summary(timings.get(key, [])) for key in keys}
    figures["failures"] = {key: len(values) for key, values in failures.items() if values}
    figures["budgetExhausted"] = budget.exhausted
    figures["targets"] = {"initializeMedianMs": INIT_TARGET_MS, "shimRssMiB": SHIM_RSS_TARGET_MIB}
    figures["machine"] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "loadAverage": [round(load, 2) for load in os.getloadavg()],
    }
    print_report(figures)
    print(f"\nload average (1, 5, 15 min) at the end: {figures['machine']['loadAverage']}")
    if problems:
        print("\nproblems:\n" + "\n".join(f"  {p}" for p in problems))
    if errors:
        print(f"\nshim stderr (last lines):\n{errors[-1500:]}")
    compact = {
        "initializeWarmMs": figures["timings"]["initialize_warm"],
        "snapshotWarmMs": figures["timings"]["snapshot_warm"],
        "snapshotColdMs": figures["timings"]["snapshot_cold"],
        "daemonStartMs": figures["timings"]["daemon_start"].get("median"),
        "memory": {k: v for k, v in figures["memory"].items() if not k.endswith("Pid")},
        "toolsListChars": {g: s.get("chars") for g, s in figures["toolsList"].items()},
        "toolsListCount": {g: s.get("tools") for g, s in figures["toolsList"].items()},
        "imports": figures["imports"],
        "failures": figures["failures"],
        "problems": problems,
        "targets": figures["targets"],
        "machine": figures["machine"],
    }
    print()
    print(json.dumps(compact, separators=(",", ":")))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
