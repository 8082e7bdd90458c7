"""Scrape benchmark for issue 5: how fast is `scrape`, and how good is its markdown?

    .venv/bin/python tests/bench/scrape.py [--rounds 2] [--runs 10] [--page form.html] [--skip-extraction]
                                           [--sections throughput,formats,split,speed,runs,extraction]
                                           [--articles 10] [--speed-rounds 2]

Prints figures, never asserts them (DESIGN.md §6):

1. Throughput: pages/s of markdown scrapes (smartWait, the default) of every tests/site page but
   never-loads.html, --rounds times over, with 1 client and with 4 clients at once (4 `browserd mcp
   --tools scrape` processes, one thread each, each scraping its share of the same pages): successful
   scrapes / wall time from the moment all clients are ready until the last one is done. Also the
   per-scrape latency in each case, and per page: median time with 1 and with 4 clients, markdown
   size, whether main content was found (else the whole page was used).
2. Latency per format (median, p95 over --runs scrapes of --page): markdown, html, links, screenshot,
   fullscreenshot.
3. Where a scrape's time goes, on --page: an MCP round trip that does nothing (get_runtime_profile), a
   markdown scrape with waitFor=1 (no smartWait: context, navigation, capture, extraction), the same
   with smartWait, and the extraction alone in this process on the page's HTML file; then
   never-loads.html once with smartWait (which runs into its cap) and once with waitFor=500.
4. The extraction-dev score (../shared/bench/extraction-dev), through tests/bench/extraction.py's
   functions: token F1, AEB F1, structure recall per kind and pages per CPU-second, for our extractor
   beside plain trafilatura on the same pages (--skip-extraction leaves it out).

5. Speed (issue 12): the first --articles real pages of extraction-dev, served on 127.0.0.1 with their
   third-party <script>/<img>/<iframe> tags, which fail at once because the benchmark's browsers resolve
   no host name (THIRD_PARTY_REFUSED in [browser] args); --speed-rounds times over them with 1 and 4
   clients for `render` auto, never (the fast path) and always (the browser): pages/s, latency median
   and p95, and which path served them (`via`); beside Playwright + trafilatura, a fresh context per
   page, `domcontentloaded`, the floor to beat. Targets printed: fast path >= 6 pages/s with 1 client
   and >= 12 with 4, p50 <= 150 ms; browser >= 3 pages/s with 1 client.
6. Runs: batch_extract_pages (concurrency 5) of 60 tests/site pages and a crawl of the generated
   60-page site, pages/s by the run's own elapsed time (target >= 5).

Then one line of JSON with every figure. Everything runs in an isolated browserd home
(tests/conftest.make_home) against tests/site served on 127.0.0.1; only that home's daemon is stopped.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.bench.common import (  # noqa: E402
    BenchError,
    Budget,
    RawShim,
    fmt_ms,
    ready_shim,
    sample,
    status_json,
    summary,
    text_of,
    tree_cpu_ms,
)
from tests.conftest import (  # noqa: E402
    SITE,
    BrowserdHome,
    SiteHandler,
    _Server,
    make_home,
    short_temp_dir,
    wait_for,
)

FORMATS = ("markdown", "html", "links", "screenshot", "fullscreenshot")
CLIENTS = (1, 4)
NEVER_LOADS = "never-loads.html"  # its /hang image never answers: smartWait runs into its cap
TICKING = "ticking.html"  # its content changes for ever: smartWait always runs into its cap
NEVER_LOADS_WAIT_MS = 500
SCRAPE_TIMEOUT_S = 90  # per call, as the client sees it
MAX_RUNS = 200  # whatever --runs says
MAX_ROUNDS = 20
SECTIONS = ("throughput", "formats", "split", "speed", "runs", "extraction")
# issue 12: every mode of `render` against the same pages, and the floor to beat
SPEED_MODES: dict[str, dict[str, Any]] = {"auto": {}, "fast path": {"render": "never"}, "browser": {"render": "always"}}
# The benchmark's browsers resolve no host name: third-party requests of the real pages fail at once.
THIRD_PARTY_REFUSED = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
RUN_PAGES = 60
SPEED_TARGETS = {"fast1": 6.0, "fast4": 12.0, "browser1": 3.0, "fastP50Ms": 150.0, "runs": 5.0}
# issue 5's extraction targets
F1_TARGET = 0.975
STRUCTURE_TARGET = 0.9
PAGES_PER_CPU_S_TARGET = 30.0
STRUCTURE_KINDS = ("headings", "list_items", "links", "tables")


@dataclass
class Figures:
    throughput: dict[str, dict[str, Any]] = field(default_factory=dict)
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    formats: dict[str, dict[str, Any]] = field(default_factory=dict)
    split: dict[str, Any] = field(default_factory=dict)
    extraction: dict[str, Any] = field(default_factory=dict)
    speed: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: dict[str, Any] = field(default_factory=dict)
    workers: int | None = None
    problems: list[str] = field(default_factory=list)


class _QuietServer(_Server):
    """tests/site's server without tracebacks for the connections a closed browser context cuts."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve_site_quietly() -> tuple[_Server, str]:
    server = _QuietServer(("127.0.0.1", 0), SiteHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


# -- scraping ------------------------------------------------------------------------------------------


def client(home: BrowserdHome) -> RawShim:
    return ready_shim(home, ["--tools", "scrape"])


def scrape(shim: RawShim, url: str, **arguments: Any) -> tuple[float, dict[str, Any]]:
    """One scrape: its wall time in ms as the client sees it, and the result."""
    started = time.perf_counter()
    result = shim.call_tool("scrape", {"url": url, **arguments}, timeout=SCRAPE_TIMEOUT_S)
    elapsed = (time.perf_counter() - started) * 1000
    if arguments.get("format", "markdown") in ("screenshot", "fullscreenshot"):
        if not any(block.get("type") == "image" for block in result.get("content", [])):
            raise BenchError(f"scrape {url} {arguments}: no image in the result")
    elif not text_of(result).strip():
        raise BenchError(f"scrape {url} {arguments}: empty text")
    return elapsed, result


def scrape_ms(shim: RawShim, url: str, **arguments: Any) -> float:
    return scrape(shim, url, **arguments)[0]


# -- 1. throughput -------------------------------------------------------------------------------------


@dataclass
class ClientRun:
    times: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    per_page: dict[str, list[tuple[float, dict[str, Any], int]]] = field(default_factory=dict)


def scrape_share(shim: RawShim, share: list[str], arguments: dict[str, Any], budget: Budget, run: ClientRun) -> None:
    for url in share:
        name = url.rsplit("/", 1)[-1]
        if not budget.left() or len(run.failures) >= 3:
            return
        try:
            elapsed, result = scrape(shim, url, **arguments)
        except (BenchError, OSError) as exc:
            run.failures.append(f"{name}: {str(exc)[:200]}")
            print(f"  ! {name}: {str(exc)[:200]}", file=sys.stderr)
            continue
        run.times.append(elapsed)
        run.per_page.setdefault(name, []).append((elapsed, result.get("structuredContent") or {}, len(text_of(result))))
        print(".", end="", file=sys.stderr, flush=True)


def run_clients(
    home: BrowserdHome, urls: list[str], clients: int, arguments: dict[str, Any], budget: Budget
) -> tuple[dict[str, Any], list[ClientRun]]:
    """`urls` shared out among `clients` MCP clients scraping at once: pages/s, latency, and each client's run."""
    shares = [urls[i::clients] for i in range(clients)]
    runs = [ClientRun() for _ in range(clients)]
    shims: list[RawShim] = []
    try:
        for _ in range(clients):  # started and initialised before the clock starts
            shims.append(client(home))
        ready = threading.Barrier(clients + 1)

        def worker(index: int) -> None:
            ready.wait()
            scrape_share(shims[index], shares[index], arguments, budget, runs[index])

        threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
        for thread in threads:
            thread.start()
        pid = home.daemon_pid()
        cpu_before = tree_cpu_ms(pid) if pid else None
        ready.wait()
        started = time.perf_counter()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        cpu_after = tree_cpu_ms(pid) if pid else None
    finally:
        for shim in shims:
            shim.close()
    print(file=sys.stderr)
    times = [t for run in runs for t in run.times]
    failures = [f for run in runs for f in run.failures]
    row = {
        "clients": clients,
        "scrapes": len(times),
        "asked": len(urls),
        "failed": len(failures),
        "wallS": round(wall, 2),
        "pagesPerS": round(len(times) / wall, 2) if wall > 0 else None,
        "latencyMs": summary(times),
        "failures": failures[:3],
    }
    if cpu_before and cpu_after and times:
        # CPU per page tells the code's cost apart from the machine's load, which wall time mixes in.
        row["cpuMsPerPage"] = {
            "daemon": round((cpu_after[0] - cpu_before[0]) / len(times), 1),
            "withBrowser": round((cpu_after[1] - cpu_before[1]) / len(times), 1),
        }
    return row, runs


def measure_throughput(
    home: BrowserdHome, site: str, pages: list[str], rounds: int, clients: int, budget: Budget, figures: Figures
) -> None:
    urls = [f"{site}/{name}" for _ in range(rounds) for name in pages]
    row, runs = run_clients(home, urls, clients, {}, budget)
    failures = row.pop("failures")
    figures.throughput[str(clients)] = row
    figures.problems.extend(f"throughput, {clients} client(s): {f}" for f in failures)
    for name in pages:
        rows = [row for run in runs for row in run.per_page.get(name, [])]
        if not rows:
            continue
        entry = figures.pages.setdefault(name, {})
        entry[f"medianMs{clients}"] = round(statistics.median(r[0] for r in rows), 1)
        if clients == 1 or "chars" not in entry:
            data = rows[-1][1]
            entry.update(
                chars=rows[-1][2], mainContentFound=data.get("mainContentFound"), status=data.get("statusCode")
            )


# -- 2. latency per format -----------------------------------------------------------------------------


def measure_formats(shim: RawShim, url: str, runs: int, budget: Budget, figures: Figures) -> None:
    for fmt in FORMATS:
        print(f"  {fmt}", file=sys.stderr)
        times, failures = sample(fmt, runs, functools.partial(scrape_ms, shim, url, format=fmt), budget)
        figures.formats[fmt] = summary(times) | ({"failed": len(failures)} if failures else {})
        figures.problems.extend(f"format {fmt}: {f}" for f in failures[:3])


# -- 3. where the time goes ----------------------------------------------------------------------------


def extraction_ms(html: str, url: str, runs: int) -> list[float]:
    from browserd.daemon.scrape.extract import extract  # the daemon's own pipeline, in this process

    extract(html, url)  # imports and caches out of the figures
    times: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        extract(html, url)
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure_split(shim: RawShim, site: str, page: str, runs: int, budget: Budget, figures: Figures) -> None:
    url = f"{site}/{page}"
    rows: dict[str, dict[str, Any]] = {}

    def timed(key: str, label: str, measure: Callable[[], float], n: int = runs) -> None:
        print(f"  {label}", file=sys.stderr)
        times, failures = sample(label, n, measure, budget)
        rows[key] = {"label": label, **summary(times)} | ({"failed": len(failures)} if failures else {})
        figures.problems.extend(f"split, {label}: {f}" for f in failures[:3])

    def round_trip() -> float:
        started = time.perf_counter()
        shim.call_tool("get_runtime_profile", {}, timeout=15)
        return (time.perf_counter() - started) * 1000

    timed("roundTrip", "MCP round trip (get_runtime_profile)", round_trip)
    timed("waitFor1", f"scrape {page} markdown, waitFor=1", lambda: scrape(shim, url, waitFor=1)[0])
    timed("smartWait", f"scrape {page} markdown, smartWait", lambda: scrape(shim, url)[0])
    html = (SITE / page).read_text()
    rows["extract"] = {"label": f"extract() in-process, {page} file", **summary(extraction_ms(html, url, runs))}

    never = f"{site}/{NEVER_LOADS}"
    content: dict[str, bool] = {}

    def never_loads(**arguments: Any) -> float:
        elapsed, result = scrape(shim, never, **arguments)
        content[json.dumps(arguments)] = "Partial content" in text_of(result)
        return elapsed

    timed("neverLoadsSmartWait", f"scrape {NEVER_LOADS}, smartWait", never_loads, 1)
    timed(
        "neverLoadsWaitFor",
        f"scrape {NEVER_LOADS}, waitFor={NEVER_LOADS_WAIT_MS}",
        lambda: never_loads(waitFor=NEVER_LOADS_WAIT_MS),
        1,
    )
    for arguments, found in content.items():
        if not found:
            figures.problems.append(f"split: {NEVER_LOADS} {arguments}: no 'Partial content' in the markdown")

    median = {key: row.get("median") for key, row in rows.items()}
    derived: dict[str, float | None] = {}
    if None not in (median["smartWait"], median["waitFor1"]):
        derived["smartWaitMs"] = round(median["smartWait"] - median["waitFor1"], 1)  # type: ignore[operator]
    if None not in (median["waitFor1"], median["extract"], median["roundTrip"]):
        derived["browserAndCaptureMs"] = round(
            median["waitFor1"] - median["extract"] - median["roundTrip"],  # type: ignore[operator]
            1,
        )
    figures.split = {"page": page, "rows": rows, "derivedMs": derived}


# -- 4. extraction-dev ---------------------------------------------------------------------------------


def measure_extraction(data: Path | None, limit: int, figures: Figures) -> None:
    from tests.bench import extraction

    folder = data or extraction.DEV_DATA
    scorer = extraction._load_scorer(folder)
    for name, target in (("browserd", "extract_for_score"), ("trafilatura", "trafilatura_markdown")):
        print(f"  {name}", file=sys.stderr)
        started = time.perf_counter()
        figures.extraction[name] = extraction._score(scorer, folder, target, limit) | {
            "wallS": round(time.perf_counter() - started, 1)
        }
    figures.extraction["data"] = str(folder)


# -- 5. speed (issue 12): real article pages, fast path against browser, the Playwright floor ----------


def serve_articles(count: int, data: Path | None) -> tuple[_Server, str, list[str], Path]:
    """The first `count` real pages of extraction-dev, served on 127.0.0.1 as a0.html, a1.html, ...

    They keep their third-party <script>, <img> and <iframe> tags; the browsers of this benchmark
    resolve no host name (THIRD_PARTY_REFUSED), so those requests fail at once and never leave the machine.
    """
    from tests.bench import extraction

    data = data or extraction.DEV_DATA
    folder = short_temp_dir("bd-articles-")
    names = []
    for index, source in enumerate(sorted((data / "html").glob("*.html.gz"))[:count]):
        (folder / f"a{index}.html").write_bytes(gzip.decompress(source.read_bytes()))
        names.append(f"a{index}.html")
    if not names:
        raise BenchError(f"no pages in {data / 'html'}")
    server = _QuietServer(("127.0.0.1", 0), functools.partial(_QuietFiles, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}", names, folder


def measure_speed(
    home: BrowserdHome,
    articles: str,
    names: list[str],
    rounds: int,
    budget: Budget,
    figures: Figures,
    modes: list[str],
) -> None:
    urls = [f"{articles}/{name}" for _ in range(rounds) for name in names]
    for mode in modes:
        arguments = SPEED_MODES[mode]
        for count in CLIENTS:
            print(f"  browserd {mode}, {count} client(s)", file=sys.stderr)
            row, runs = run_clients(home, urls, count, arguments, budget)
            figures.problems.extend(f"speed {mode}, {count} client(s): {f}" for f in row.pop("failures"))
            via = [str(data.get("via")) for run in runs for rows in run.per_page.values() for _, data, _ in rows]
            row["via"] = {name: via.count(name) for name in sorted(set(via))}
            figures.speed.setdefault(f"browserd {mode}", {})[str(count)] = row
    for count in CLIENTS:
        print(f"  playwright + trafilatura, {count} client(s)", file=sys.stderr)
        figures.speed.setdefault("playwright+trafilatura", {})[str(count)] = playwright_floor(urls, count)


def playwright_floor(urls: list[str], clients: int) -> dict[str, Any]:
    """What the issue holds browserd to: Playwright, a fresh context per page, domcontentloaded, trafilatura."""
    import asyncio

    import trafilatura
    from playwright.async_api import async_playwright

    from browserd.daemon.runtime.chromium import find_chromium

    found = find_chromium(headless=True)  # the executable browserd's headless pages run in
    if found is None:
        raise BenchError("no Chromium for the Playwright floor")
    times: list[float] = []

    async def main() -> float:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=found.path, args=[THIRD_PARTY_REFUSED])
            shares = [urls[i::clients] for i in range(clients)]

            async def one(url: str) -> None:
                started = time.perf_counter()
                context = await browser.new_context()
                page = await context.new_page()
                await page.goto(url, wait_until="domcontentloaded")
                html = await page.content()
                await context.close()
                await asyncio.to_thread(trafilatura.extract, html, output_format="markdown")
                times.append((time.perf_counter() - started) * 1000)

            async def worker(share: list[str]) -> None:
                for url in share:
                    await one(url)

            await one(urls[0])  # untimed warm-up
            times.clear()
            started = time.perf_counter()
            await asyncio.gather(*(worker(share) for share in shares))
            wall = time.perf_counter() - started
            await browser.close()
            return wall

    wall = asyncio.run(main())
    return {
        "clients": clients,
        "scrapes": len(times),
        "wallS": round(wall, 2),
        "pagesPerS": round(len(times) / wall, 2),
        "latencyMs": summary(times),
    }


def measure_runs(home: BrowserdHome, site: str, figures: Figures) -> None:
    """batch_extract_pages and crawl of tests/site pages, pages/s by the run's own elapsed time."""
    from tests.bench import runs as run_bench

    pid = home.daemon_pid()
    if pid is None:
        raise BenchError("the daemon is not running")
    urls = [f"{site}/{run_bench.SITE_PAGES[i % len(run_bench.SITE_PAGES)]}?n={i}" for i in range(RUN_PAGES)]
    with run_bench.client(home) as shim:
        arguments = {
            "templateId": "batch_extract_pages",
            "inputs": {"urls": urls, "concurrency": 5},
            "options": {"mode": "async"},
        }
        figures.runs["batch_extract_pages"] = run_bench.measure(shim, pid, "run_task_template", arguments)
        crawl = {"url": f"{site}/gen/{RUN_PAGES}/0.html", "limit": RUN_PAGES, "concurrency": 5}
        figures.runs["crawl"] = run_bench.measure(shim, pid, "crawl", crawl)


# -- output --------------------------------------------------------------------------------------------


def at_least(value: float | None, target: float) -> str:
    if value is None:
        return "no figure"
    return "met" if value >= target else "MISSED"


def print_report(figures: Figures, page: str, rounds: int) -> None:
    if figures.throughput:
        print()
        workers = f" (daemon browser workers: {figures.workers})" if figures.workers else ""
        print(f"markdown scrapes of the tests/site pages, x{rounds} rounds{workers}")
        print(f"{'clients':<10}{'scrapes':>9}{'wall':>9}{'pages/s':>9}{'median':>10}{'p95':>10}{'max':>10}")
        for row in figures.throughput.values():
            n = f"{row['scrapes']}" + (f" ({row['failed']} failed)" if row["failed"] else "")
            lat = row["latencyMs"]
            print(
                f"{row['clients']:<10}{n:>9}{row['wallS']:>8.1f}s{row['pagesPerS'] or 0:>9.2f}"
                f"{fmt_ms(lat.get('median')):>10}{fmt_ms(lat.get('p95')):>10}{fmt_ms(lat.get('max')):>10}"
            )
        one, four = figures.throughput.get("1"), figures.throughput.get("4")
        if one and four and one.get("pagesPerS") and four.get("pagesPerS"):
            print(f"4 clients / 1 client: x{four['pagesPerS'] / one['pagesPerS']:.2f}")
    if figures.pages:
        print()
        print(f"{'page':<22}{'1 client':>10}{'4 clients':>11}{'chars':>8}  main content found")
        for name, p in figures.pages.items():
            print(
                f"{name:<22}{fmt_ms(p.get('medianMs1')):>10}{fmt_ms(p.get('medianMs4')):>11}{p['chars']:>8}"
                f"  {p['mainContentFound']}"
            )
    if figures.formats:
        print()
        print(f"{'latency per format, ' + page:<34}{'median':>10}{'p95':>10}{'n':>5}")
        for fmt, row in figures.formats.items():
            n = f"{row['n']}" + (f" ({row['failed']} failed)" if row.get("failed") else "")
            print(f"{fmt:<34}{fmt_ms(row.get('median')):>10}{fmt_ms(row.get('p95')):>10}{n:>5}")
    if figures.split:
        print()
        print(f"{'where a scrape goes':<48}{'median':>10}{'p95':>10}{'n':>5}")
        for row in figures.split["rows"].values():
            n = f"{row['n']}" + (f" ({row['failed']} failed)" if row.get("failed") else "")
            print(f"{row['label']:<48}{fmt_ms(row.get('median')):>10}{fmt_ms(row.get('p95')):>10}{n:>5}")
        derived = figures.split["derivedMs"]
        if derived:
            print(
                f"so, per scrape of {figures.split['page']}: smartWait ≈ {fmt_ms(derived.get('smartWaitMs'))}; "
                f"context + navigation + capture + IPC ≈ {fmt_ms(derived.get('browserAndCaptureMs'))}"
            )
            print(" (waitFor=1 minus extraction minus a round trip; medians of separate samples, so rough)")
    if figures.speed:
        print_speed(figures)
    if figures.runs:
        print()
        print(f"task runs over tests/site pages ({RUN_PAGES} pages, concurrency 5)")
        for name, row in figures.runs.items():
            print(
                f"{name:<22}{row.get('succeeded')}/{row.get('pages')} pages in {row.get('elapsed_s')} s: "
                f"{row.get('pages_per_s')} pages/s ({at_least(row.get('pages_per_s'), SPEED_TARGETS['runs'])} "
                f"target {SPEED_TARGETS['runs']:.0f})"
            )
    if figures.extraction:
        results = {k: v for k, v in figures.extraction.items() if isinstance(v, dict)}
        print()
        pages = next(iter(results.values()), {}).get("pages")
        print(f"extraction-dev, {pages} pages ({figures.extraction.get('data')})")
        header = ("tok F1", "AEB F1", "head", "list", "links", "tables", "p/CPU-s", "p/s")
        print(f"{'extractor':<13}" + "".join(f"{h:>9}" for h in header))
        for name, r in results.items():
            s = r["structure_recall"]
            cells = [f"{s[k]:>9.3f}" if s.get(k) is not None else f"{'n/a':>9}" for k in STRUCTURE_KINDS]
            print(
                f"{name:<13}{r['tok_F1']:>9.4f}{r['AEB_F1']:>9.4f}{''.join(cells)}"
                f"{r['pages_per_cpu_s']:>9.1f}{r['pages_per_s']:>9.1f}"
                + (f"  ({r['failures']} failed)" if r["failures"] else "")
            )
        ours = results.get("browserd")
        if ours:
            s = ours["structure_recall"]
            weakest = min((s[k] for k in STRUCTURE_KINDS if s.get(k) is not None), default=None)
            print(
                f"targets: tok F1 ≥ {F1_TARGET}: {at_least(ours['tok_F1'], F1_TARGET)}; "
                f"structure recall ≥ {STRUCTURE_TARGET} each: {at_least(weakest, STRUCTURE_TARGET)}; "
                f"≥ {PAGES_PER_CPU_S_TARGET:.0f} pages per CPU-s: "
                f"{at_least(ours['pages_per_cpu_s'], PAGES_PER_CPU_S_TARGET)}"
            )


def print_speed(figures: Figures) -> None:
    print()
    print("real article pages (extraction-dev), third-party requests refused")
    print(f"{'scraper':<26}{'clients':>8}{'pages/s':>9}{'median':>10}{'p95':>10}{'cpu/page':>16}  served by")
    for name, rows in figures.speed.items():
        for row in rows.values():
            lat = row["latencyMs"]
            n = "" if not row.get("failed") else f"  ({row['failed']} failed)"
            via = ", ".join(f"{k} {v}" for k, v in row.get("via", {}).items())
            cpu = row.get("cpuMsPerPage")
            # the daemon's own CPU ms / with Chromium's
            cpu_text = f"{cpu['daemon']:.0f}/{cpu['withBrowser']:.0f} ms" if cpu else ""
            print(
                f"{name:<26}{row['clients']:>8}{row['pagesPerS'] or 0:>9.2f}{fmt_ms(lat.get('median')):>10}"
                f"{fmt_ms(lat.get('p95')):>10}{cpu_text:>16}  {via}{n}"
            )
    fast, browser = figures.speed.get("browserd fast path", {}), figures.speed.get("browserd browser", {})

    def rate(rows: dict[str, Any], clients: str) -> float | None:
        return (rows.get(clients) or {}).get("pagesPerS")

    p50 = ((fast.get("1") or {}).get("latencyMs") or {}).get("median")
    print(
        f"targets: fast path >= {SPEED_TARGETS['fast1']:.0f} pages/s 1 client: "
        f"{at_least(rate(fast, '1'), SPEED_TARGETS['fast1'])}; >= {SPEED_TARGETS['fast4']:.0f} with 4: "
        f"{at_least(rate(fast, '4'), SPEED_TARGETS['fast4'])}; browser >= {SPEED_TARGETS['browser1']:.0f} 1 client: "
        f"{at_least(rate(browser, '1'), SPEED_TARGETS['browser1'])}; fast p50 <= {SPEED_TARGETS['fastP50Ms']:.0f} ms: "
        + ("no figure" if p50 is None else "met" if p50 <= SPEED_TARGETS["fastP50Ms"] else "MISSED")
    )


# -- main ----------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=2, help="times over the pages in the throughput runs")
    parser.add_argument("--runs", type=int, default=10, help="scrapes per format and per split row (default 10)")
    parser.add_argument("--page", default="form.html", help="the page of the latency and split sections")
    parser.add_argument("--pages", default="", help="comma-separated tests/site pages (default: every *.html)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"some of {', '.join(SECTIONS)}")
    parser.add_argument("--skip-extraction", action="store_true", help="leave out the extraction-dev score")
    parser.add_argument("--extraction-limit", type=int, default=0, help="score only the first N pages")
    parser.add_argument("--data", type=Path, default=None, help="extraction-dev folder (score.py; speed articles)")
    parser.add_argument("--budget-s", type=float, default=900, help="wall-clock cap for the browser sections")
    parser.add_argument("--articles", type=int, default=10, help="real extraction-dev pages in the speed section")
    parser.add_argument("--speed-rounds", type=int, default=2, help="times over the articles per speed row")
    parser.add_argument(
        "--speed-modes",
        default=",".join(SPEED_MODES),
        help=f"the browserd rows of the speed section, some of {', '.join(SPEED_MODES)} (the floor always runs)",
    )
    args = parser.parse_args()
    runs = max(1, min(args.runs, MAX_RUNS))
    rounds = max(1, min(args.rounds, MAX_ROUNDS))
    sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    speed_modes = [m.strip() for m in args.speed_modes.split(",") if m.strip()]
    if unknown := [m for m in speed_modes if m not in SPEED_MODES]:
        parser.error(f"--speed-modes: unknown {', '.join(unknown)}; choose from {', '.join(SPEED_MODES)}")
    if args.skip_extraction:
        sections.discard("extraction")
    pages = [p.strip() for p in args.pages.split(",") if p.strip()] or sorted(
        p.name for p in SITE.glob("*.html") if p.name not in (NEVER_LOADS, TICKING)
    )
    budget = Budget(args.budget_s)
    figures = Figures()
    load_at_start = round(os.getloadavg()[0], 2)

    def section(name: str, run: Callable[[], None], limited: bool = True) -> None:
        if limited and not budget.left():
            figures.problems.append(f"{name}: skipped, the time budget ran out")
            return
        print(name, file=sys.stderr)
        try:
            run()
        except (BenchError, OSError, subprocess.TimeoutExpired, KeyError, ImportError, SystemExit) as exc:
            figures.problems.append(f"{name}: {exc!r}")
            print(f"  ! {name}: {exc!r}", file=sys.stderr)

    errors = ""
    if sections & {"throughput", "formats", "split", "speed", "runs"}:
        home = make_home(idle_exit_s=120)
        from browserd.daemon.config import BrowserConfig

        home.env["BROWSERD_BROWSER_ARGS"] = json.dumps([*BrowserConfig().args, THIRD_PARTY_REFUSED])
        server, site = serve_site_quietly()

        def start_daemon() -> None:
            done = home.browserd("daemon", timeout=60)
            if done.returncode != 0:
                raise BenchError(f"`browserd daemon` failed: {done.stderr.strip() or done.stdout.strip()}")
            wait_for(lambda: bool((status_json(home) or {}).get("browser", {}).get("running")), 60, 0.2)
            with client(home) as shim:
                profile = shim.call_tool("get_runtime_profile", {}, timeout=15).get("structuredContent") or {}
                figures.workers = profile.get("limits", {}).get("browserWorkers")
                scrape(shim, f"{site}/index.html")  # untimed: the first scrape is not special

        def throughput() -> None:
            for count in CLIENTS:
                print(f"  {count} client(s)", file=sys.stderr)
                measure_throughput(home, site, pages, rounds, count, budget, figures)

        def formats() -> None:
            with client(home) as shim:
                measure_formats(shim, f"{site}/{args.page}", runs, budget, figures)

        def split() -> None:
            with client(home) as shim:
                measure_split(shim, site, args.page, runs, budget, figures)

        def speed() -> None:
            articles, base, names, folder = serve_articles(args.articles, args.data)
            try:
                measure_speed(home, base, names, max(1, args.speed_rounds), budget, figures, speed_modes)
            finally:
                articles.shutdown()
                articles.server_close()
                shutil.rmtree(folder, ignore_errors=True)

        print(f"browserd scrape benchmark: home {home.root}, site {site}", file=sys.stderr)
        try:
            section("daemon start", start_daemon)
            if "throughput" in sections:
                section(f"throughput: {len(pages)} pages x{rounds}, clients {CLIENTS}", throughput)
            if "formats" in sections:
                section(f"latency per format, {args.page} x{runs}", formats)
            if "split" in sections:
                section(f"where the time goes, {args.page} x{runs}", split)
            if "speed" in sections:
                section(f"speed: {args.articles} real article pages x{args.speed_rounds}", speed)
            if "runs" in sections:
                section(f"batch_extract_pages and crawl, {RUN_PAGES} pages", lambda: measure_runs(home, site, figures))
        finally:
            home.stop_daemon()  # the daemon of this isolated home only, by the pid in its lock file
            server.shutdown()
            server.server_close()
        shim_err = home.root / "shim.err"
        errors = shim_err.read_text(errors="replace").strip() if shim_err.exists() else ""
        shutil.rmtree(home.root, ignore_errors=True)

    if "extraction" in sections:
        # After the browser is gone, so the CPU-seconds are the extractor's own; not held to --budget-s.
        section(
            "extraction-dev score", lambda: measure_extraction(args.data, args.extraction_limit, figures), limited=False
        )

    print_report(figures, args.page, rounds)
    load_now = round(os.getloadavg()[0], 2)
    print(f"\nmachine: {os.cpu_count()} CPUs, 1-minute load {load_at_start} at the start, {load_now} at the end")
    if budget.exhausted:
        print("\nnote: the time budget ran out; some measurements have fewer samples than asked for")
    if figures.problems:
        print("\nproblems:\n" + "\n".join(f"  {p}" for p in figures.problems))
    if errors:
        print(f"\nshim stderr (last lines):\n{errors[-1500:]}")
    compact = {
        "throughput": figures.throughput,
        "browserWorkers": figures.workers,
        "pages": figures.pages,
        "formatsMs": {
            fmt: {k: row[k] for k in ("median", "p95", "n", "failed") if k in row}
            for fmt, row in figures.formats.items()
        },
        "split": figures.split,
        "extraction": figures.extraction,
        "speed": figures.speed,
        "runs": figures.runs,
        "problems": figures.problems,
        "targets": {
            "tokF1": F1_TARGET,
            "structureRecall": STRUCTURE_TARGET,
            "pagesPerCpuS": PAGES_PER_CPU_S_TARGET,
        },
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "kernel": platform.release(),
            "load1": [load_at_start, load_now],
        },
    }
    print()
    print(json.dumps(compact, separators=(",", ":"), ensure_ascii=False))
    return 1 if figures.problems else 0


if __name__ == "__main__":
    sys.exit(main())
