"""Where the CPU of 4 clients x 10 navigate+snapshot cycles goes, per Chromium process kind (issue 10).

    .venv/bin/python tests/bench/chromium_cpu.py [--rounds 3] [--arm NAME=JSON_FLAGS ...] [--no-floor] [--full]
        [--peer-dir /tmp/peers]
    .venv/bin/python tests/bench/chromium_cpu.py --steps [--rounds 10]

Not part of `make test`. Runs peers.py's 4-client cycle against browserd and, in the same run, a
plain-Playwright floor (4 contexts in parallel, each `goto` + `aria_snapshot(mode="ai")`, same pages,
same Chromium flags). While each runs it samples /proc of every process under the daemon (or under this
process, for the floor) and prints pages/s and CPU milliseconds per page for: the daemon, Playwright's
driver (node), Chromium's browser process, its renderers, GPU/viz, the network and other utility
processes, and children that exited during the run (their time as the browser process reaped it).
`--peer-dir` adds @playwright/mcp (peers.py's pinned version, one browser per client) on the same
executables, and prints how far the floor (one shared browser, no server at all) leads the peer: the most
any server sharing one browser could lead it by.

`--arm name='["--flag", ...]'` adds a browserd daemon whose Chromium gets those flags instead of the
default ones; arms run in alternating rounds (A B A B ...) so load drifts hit each the same, and the
medians of the rounds are compared with the default arm as a paired ratio.

`--full` adds browserd and the floor on the full Chromium (`find_chromium()`, what a headed launch uses)
beside the headless shell that headless pages run in when one is installed (daemon/runtime/chromium.py).

`--steps` splits browserd's cost above the floor: one Chromium, one context per arm, each arm loading
the cycle's pages one after the other with one more of browserd's page-side steps than the arm before
(its init scripts, the settle evaluate, the page facts riding on it, boxes in the ARIA snapshot), and
prints each arm's Chromium CPU per page as a paired ratio to the floor, round by round.

What it showed (issue 10; load average 24 on 2 cores, 3 rounds): browserd 159 ms of CPU per page
(renderer 68, browser process 54, GPU/viz 13, driver 8, daemon 6, zygote 5, network 4) against the
plain-Playwright floor's 151 (renderer 64, browser 52, GPU 12; the floor's "daemon" is this script, its
sampling included). So Chromium's own per-navigation cost is ~95% of it and browserd's scripts and
round trips the rest. Every navigation starts a new renderer (44 for 40 pages), but capping them
(--renderer-process-limit) leaves the CPU as it is. A trace of the floor puts the browser process's time
in the window's own compositor frames, navigation and IPC, the renderer's in a new frame, widget and V8
context per document, style, layout and raster. Rejected flags and why: daemon/config.py.

With `--full`, 3 rounds at load 2 (the headless shell, /usr/bin/chromium-headless-shell 156): the floor
30.8 pages/s at 62 ms of CPU per page on the shell against 12.3 pages/s at 149 ms on the full browser;
the shell's browser process spends 14 ms a page where the full one spends 45 (no window compositor).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from playwright.async_api import async_playwright  # noqa: E402

from browserd.daemon.config import BrowserConfig  # noqa: E402
from browserd.daemon.runtime.chromium import find_chromium, merged_feature_switches  # noqa: E402
from browserd.daemon.sessions.session import WINDOW_SCRIPT  # noqa: E402
from browserd.daemon.snapshots.aria_capture import PAGE_FACTS_JS  # noqa: E402
from browserd.daemon.snapshots.settle import GRACE_MS, _action_script  # noqa: E402
from tests.bench.common import serve_site, stop_site  # noqa: E402
from tests.bench.peers import (  # noqa: E402
    CLIENTS,
    CYCLE_PAGES,
    CYCLES,
    browserd_flavor,
    connect,
    peer_command,
    peer_flavor,
)
from tests.conftest import BrowserdHome, make_home, short_temp_dir  # noqa: E402

TICK_S = 1 / os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.05  # often enough to see a short-lived renderer before it exits


def _stat(pid: int) -> tuple[int, float, float] | None:
    """(parent pid, own CPU s, reaped children's CPU s) of a process, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    # After the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14), counted from state = 0.
    return int(fields[1]), (int(fields[11]) + int(fields[12])) * TICK_S, (int(fields[13]) + int(fields[14])) * TICK_S


def _kind(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "gone"
    # Chromium rewrites its children's titles into one space-separated string.
    words = [word for arg in argv for word in arg.decode(errors="replace").split(" ") if word]
    program = os.path.basename(words[0]) if words else ""
    if "node" in program or any("playwright" in word and word.endswith("cli.js") for word in words):
        return "driver"
    if "chrom" not in program and "headless_shell" not in program:
        return "daemon" if "python" in program or "browserd" in program else program
    kind = next((word.split("=", 1)[1] for word in words if word.startswith("--type=")), "browser")
    if kind == "utility":
        sub = next((word.split("=", 1)[1] for word in words if word.startswith("--utility-sub-type=")), "")
        return "network" if "network" in sub.lower() else "utility"
    return "gpu" if kind == "gpu-process" else kind


class CpuWatch:
    """CPU seconds of every process under `root` (and root itself) between start() and stop()."""

    def __init__(self, root: int, include_root: bool) -> None:
        self.root = root
        self.include_root = include_root
        self.first: dict[int, tuple[str, float, float]] = {}
        self.last: dict[int, tuple[str, float, float]] = {}
        self._task: asyncio.Task[None] | None = None

    def _sample(self) -> None:
        parents: dict[int, int] = {}
        stats: dict[int, tuple[int, float, float]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (found := _stat(int(entry))) is not None:
                stats[int(entry)] = found
                parents[int(entry)] = found[0]
        for pid, (_ppid, own, reaped) in stats.items():
            ancestor = pid
            while ancestor not in (0, 1, self.root):
                ancestor = parents.get(ancestor, 0)
            if ancestor != self.root or (pid == self.root and not self.include_root):
                continue
            kind = self.last[pid][0] if pid in self.last else _kind(pid)
            self.first.setdefault(pid, (kind, own, reaped))
            self.last[pid] = (kind, own, reaped)

    async def _loop(self) -> None:
        while True:
            self._sample()
            await asyncio.sleep(SAMPLE_S)

    def start(self) -> None:
        self._sample()
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> dict[str, float]:
        assert self._task is not None
        self._task.cancel()
        self._sample()
        spent: dict[str, float] = defaultdict(float)
        for pid, (kind, own, reaped) in self.last.items():
            _kind0, own0, reaped0 = self.first[pid]
            spent[kind] += own - own0
            if kind == "browser":
                spent["exited"] += reaped - reaped0
        spent["processes"] = len(self.last)
        for kind, *_ in self.last.values():
            spent[f"n_{kind}"] = spent.get(f"n_{kind}", 0) + 1
        return dict(spent)


async def browserd_round(home: BrowserdHome, site: str) -> tuple[float, dict[str, float]]:
    flavor = browserd_flavor(home)
    async with contextlib.AsyncExitStack() as stack:
        agents = [await stack.enter_async_context(connect(flavor)) for _ in range(CLIENTS)]
        for agent in agents:
            await agent.open(f"{site}/index.html")
        pid = home.daemon_pid()
        assert pid is not None
        watch = CpuWatch(pid, include_root=True)
        return await _timed_cycles(watch, [lambda url, a=a: a.open(url) for a in agents], site)


async def peer_round(peer_dir: Path, executable_path: str, site: str) -> tuple[float, dict[str, float]]:
    """The same cycles on @playwright/mcp (peers.py's pinned version), one browser per client as it runs."""
    flavor = peer_flavor(peer_command(peer_dir, executable_path), short_temp_dir("bd-peer-"))
    with open(os.devnull, "w") as quiet:
        flavor.errlog = quiet
        async with contextlib.AsyncExitStack() as stack:
            agents = [await stack.enter_async_context(connect(flavor)) for _ in range(CLIENTS)]
            for agent in agents:
                await agent.open(f"{site}/index.html")
            # Every process under this one: the peer's servers and browsers (this script's own idle
            # Playwright driver is under it too, and costs next to nothing while the peer runs).
            watch = CpuWatch(os.getpid(), include_root=False)
            return await _timed_cycles(watch, [lambda url, a=a: a.open(url) for a in agents], site)


async def _timed_cycles(
    watch: CpuWatch, opens: list[Callable[[str], Awaitable[Any]]], site: str
) -> tuple[float, dict[str, float]]:
    async def cycles(open_page: Callable[[str], Awaitable[Any]], offset: int) -> None:
        for cycle in range(CYCLES):
            await open_page(f"{site}/{CYCLE_PAGES[(cycle + offset) % len(CYCLE_PAGES)]}")

    watch.start()
    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for number, open_page in enumerate(opens):
            group.create_task(cycles(open_page, number))
    elapsed = time.perf_counter() - started
    spent = await watch.stop()
    return CLIENTS * CYCLES / elapsed, spent


def executable(headless: bool) -> str:
    """What browserd launches: the headless shell for headless pages when one is installed."""
    found = find_chromium(headless=headless)
    if found is None:
        raise SystemExit("no Chromium found; run `browserd doctor`")
    return found.path


async def floor_round(
    playwright: Any, args: list[str], site: str, executable_path: str
) -> tuple[float, dict[str, float]]:
    browser = await playwright.chromium.launch(executable_path=executable_path, headless=True, args=args)
    try:
        pages = [await (await browser.new_context()).new_page() for _ in range(CLIENTS)]
        for page in pages:
            await page.goto(f"{site}/index.html")

        async def open_page(page: Any, url: str) -> None:
            await page.goto(url)
            await page.aria_snapshot(mode="ai")

        watch = CpuWatch(os.getpid(), include_root=True)
        return await _timed_cycles(watch, [lambda url, p=p: open_page(p, url) for p in pages], site)
    finally:
        await browser.close()


STEPS = ("floor", "+init scripts", "+settle", "+page facts", "+boxes")


async def steps(playwright: Any, site: str, rounds: int) -> None:
    browser = await playwright.chromium.launch(
        executable_path=executable(headless=True), headless=True, args=merged_feature_switches(BrowserConfig().args)
    )
    pages = []
    for number in range(len(STEPS)):
        context = await browser.new_context()
        if number >= 1:
            await context.add_init_script(WINDOW_SCRIPT)
        pages.append(await context.new_page())
    spent: dict[str, list[float]] = defaultdict(list)
    try:
        for _ in range(rounds):
            for number, (step, page) in enumerate(zip(STEPS, pages, strict=True)):
                watch = CpuWatch(os.getpid(), include_root=False)
                watch.start()
                for name in CYCLE_PAGES:
                    await page.goto(f"{site}/{name}")
                    if number >= 2:
                        then = PAGE_FACTS_JS if number >= 3 else None
                        await page.evaluate(_action_script(then), [GRACE_MS, 200, 5000, 200])
                    await page.aria_snapshot(mode="ai", boxes=number >= 4)
                found = await watch.stop()
                cpu = sum(value for kind, value in found.items() if kind != "processes" and not kind.startswith("n_"))
                spent[step].append(cpu * 1000 / len(CYCLE_PAGES))
    finally:
        await browser.close()
    print(f"load average {os.getloadavg()[0]:.2f}; {rounds} rounds of {len(CYCLE_PAGES)} pages per step")
    for step in STEPS:
        paired = statistics.median(ms / floor for ms, floor in zip(spent[step], spent["floor"], strict=True))
        print(f"{step:<16} cpu/page {statistics.median(spent[step]):6.1f} ms  paired ratio to the floor {paired:.3f}")


def show(name: str, rounds: list[tuple[float, dict[str, float]]]) -> dict[str, Any]:
    pages = CLIENTS * CYCLES
    rates = [rate for rate, _ in rounds]
    kinds = sorted({kind for _, spent in rounds for kind in spent if kind != "processes" and not kind.startswith("n_")})
    per_page = {kind: statistics.median(spent.get(kind, 0.0) for _, spent in rounds) * 1000 / pages for kind in kinds}
    total = sum(per_page.values())
    counts = sorted({kind for _, spent in rounds for kind in spent if kind.startswith("n_")})
    procs = " ".join(f"{kind[2:]} {statistics.median(spent.get(kind, 0) for _, spent in rounds):g}" for kind in counts)
    parts = "  ".join(f"{kind} {ms:.1f}" for kind, ms in sorted(per_page.items(), key=lambda item: -item[1]))
    print(
        f"{name:<14} {statistics.median(rates):6.2f} pages/s  cpu/page {total:6.1f} ms  ({parts})  processes: {procs}"
    )
    return {"pages_per_s": statistics.median(rates), "rates": rates, "cpu_ms_per_page": per_page, "total": total}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arm", action="append", default=[], help="NAME=JSON list of Chromium flags")
    parser.add_argument("--no-floor", action="store_true")
    parser.add_argument("--full", action="store_true", help="browserd and the floor on the full Chromium too")
    parser.add_argument("--steps", action="store_true", help="browserd's page-side steps, one by one")
    parser.add_argument(
        "--peer-dir", type=Path, default=None, help="also run @playwright/mcp (installed there, as peers.py does)"
    )
    args = parser.parse_args()
    if args.steps:
        server, site = serve_site()
        try:
            async with async_playwright() as playwright:
                await steps(playwright, site, args.rounds)
        finally:
            stop_site(server)
        return
    # Merged as the daemon merges them: a feature switch of its own would replace Playwright's list.
    default_args = merged_feature_switches(BrowserConfig().args)
    arms: dict[str, list[str] | None] = {"browserd": None}
    for arm in args.arm:
        name, _, flags = arm.partition("=")
        arms[name] = json.loads(flags)
    server, site = serve_site()
    homes: dict[str, BrowserdHome] = {}
    for name, flags in arms.items():
        homes[name] = make_home(idle_exit_s=120)
        if flags is not None:
            homes[name].env["BROWSERD_BROWSER_ARGS"] = json.dumps(flags)
    floors = {"playwright": executable(headless=True)}
    if args.full:
        floors["playwright full"] = executable(headless=False)
        homes["browserd full"] = make_home(idle_exit_s=120)
        homes["browserd full"].env["BROWSERD_CHROMIUM"] = floors["playwright full"]
    results: dict[str, list[tuple[float, dict[str, float]]]] = defaultdict(list)
    try:
        async with async_playwright() as playwright:
            for _ in range(args.rounds):
                for name, home in homes.items():
                    results[name].append(await browserd_round(home, site))
                if not args.no_floor:
                    for name, path in floors.items():
                        results[name].append(await floor_round(playwright, default_args, site, path))
                if args.peer_dir is not None:
                    for name, path in floors.items():
                        peer = name.replace("playwright", "peer")
                        results[peer].append(await peer_round(args.peer_dir, path, site))
    finally:
        for home in homes.values():
            home.stop_daemon()
        stop_site(server)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds of {CLIENTS} clients x {CYCLES} cycles")
    figures = {name: show(name, rounds) for name, rounds in results.items()}
    base = figures["browserd"]
    for name, figure in figures.items():
        if name != "browserd":
            paired = [a / b for a, (b, _) in zip(figure["rates"], results["browserd"], strict=False)]
            print(
                f"{name:<14} pages/s vs browserd, paired median ratio {statistics.median(paired):.3f}; "
                f"cpu/page ratio {figure['total'] / base['total']:.3f}"
            )
    for floor in floors:
        peer = floor.replace("playwright", "peer")
        if floor in figures and peer in figures:
            paired = [a / b for (a, _), (b, _) in zip(results[floor], results[peer], strict=False)]
            print(
                f"{floor:<14} pages/s vs {peer}, paired median ratio {statistics.median(paired):.3f}: the most a "
                "server sharing one browser could lead the peer by, with no cost of its own"
            )
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
