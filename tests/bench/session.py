"""Session benchmark for issue 3: what an agent pays per call, per snapshot and per session.

    .venv/bin/python tests/bench/session.py [--runs 20] [--pages form.html,tree.html] [--sections ...]

Prints figures, never asserts them (DESIGN.md §6):

1. Per-tool latency on a warm daemon (median, p95): browser_open + browser_snapshot of a local page as
   one pair (the open with snapshot "none", then the snapshot), browser_open alone and with its default
   snapshot, browser_snapshot full / interactive / compact, and every action tool on a suitable
   tests/site page with snapshot "none" (pure action latency), plus browser_click with the default
   delta snapshot, since that is what agents pay.
2. For every tests/site page: the characters of its snapshot (the YAML body, not the header) in full,
   interactive and compact form, the interactive/full ratio, and the share of interactive DOM elements
   that received a ref in the interactive snapshot. The DOM side is counted with Playwright in this
   process, on its own Chromium and the same URL (there is no evaluate tool): visible a[href], button,
   input (not hidden), select, textarea, summary, the interactive ARIA roles, [onclick], [tabindex>=0]
   and elements with a pointer cursor whose parent has none, open shadow roots and frames included.
   The daemon's refs are carried over to this page by aligning the daemon's full snapshot with
   Playwright's own AI snapshot line by line (Playwright refs), and by box (browserd's c-refs, which
   browser_get what=box locates).
3. Daemon RSS (VmRSS of its pid) and Chromium tree RSS (`browserd status --json`) with 0, 1, 4 and 8
   sessions, each a `browserd mcp` process kept open and holding 2 tabs on a tests/site page; also the
   Chromium tree's PSS, since a sum of RSS counts the pages its processes share once per process.

Then one line of JSON with every figure. Everything runs in an isolated browserd home
(tests/conftest.make_home) against tests/site served on 127.0.0.1; only that home's daemon is stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import platform
import re
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

from browserd.daemon.runtime.procinfo import descendants, rss_kib  # noqa: E402
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
    text_of,
    verdict,
    vm_rss_kib,
)
from tests.conftest import SITE, BrowserdHome, make_home, wait_for  # noqa: E402

OPEN_SNAPSHOT_TARGET_MS = 150.0
INTERACTIVE_RATIO_TARGET = 0.40
SESSION_COUNTS = (1, 4, 8)
TABS_PER_SESSION = 2
MEMORY_PAGE = "form.html"
MAX_RUNS = 200  # whatever --runs says
WHOLE = 50_000_000  # maxChars for snapshots measured whole (large.html is about 1 MB)
MISSED_SHOWN = 8  # per page, in the table and the JSON
TAG_BATCH = 100  # refs resolved at once in the measuring browser
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT_WIDTH, VIEWPORT_HEIGHT = 1280, 800  # browserd's default (daemon/config.py BrowserConfig)
WAIT_UNTIL = {"never-loads.html": "domcontentloaded"}  # its /hang image holds `load` back
READY_TEXT = {"late.html": "Loaded late"}  # content that appears after load
SECTIONS = ("latency", "snapshots", "memory")

_REF = re.compile(r"\[ref=([^\]]+)\]")
# What browserd adds to Playwright's lines, and Playwright's own focus and box marks.
_NOT_PLAYWRIGHTS = re.compile(r" \[(?:ref|type|box)=[^\]]*\]| \[(?:readonly|required|collapsed|active)\]")

# Interactive DOM elements of one document (open shadow roots included), and whether each received a
# ref: `__browserdBenchRef` is set on an element by TAG_JS below, before this runs. `boxes` tags the
# elements browserd's own c-refs stand for, by their box ([ref, x, y, width, height]; main frame only).
COUNT_JS = """(boxes) => {
  const roles = new Set(['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'option', 'switch',
                         'combobox', 'textbox', 'treeitem']);
  const all = [];
  const visit = (root) => {
    for (const e of root.querySelectorAll('*')) {
      all.push(e);
      if (e.shadowRoot) visit(e.shadowRoot);
    }
  };
  visit(document);
  const parentOf = (e) => e.parentElement || (e.parentNode && e.parentNode.host) || null;
  const pointer = (e) => getComputedStyle(e).cursor === 'pointer';
  const isInteractive = (e) => {
    const tag = e.tagName;
    if (tag === 'HTML' || tag === 'BODY') return false;
    if (tag === 'A' && e.hasAttribute('href')) return true;
    if (['BUTTON', 'SELECT', 'TEXTAREA', 'SUMMARY'].includes(tag)) return true;
    if (tag === 'INPUT') return (e.getAttribute('type') || '').toLowerCase() !== 'hidden';
    if (roles.has((e.getAttribute('role') || '').trim().split(/\\s+/)[0])) return true;
    if (e.hasAttribute('onclick')) return true;
    const tabindex = e.getAttribute('tabindex');
    if (tabindex !== null && parseInt(tabindex, 10) >= 0) return true;
    if (pointer(e)) {
      const parent = parentOf(e);
      return !parent || !pointer(parent);
    }
    return false;
  };
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && e.checkVisibility({ visibilityProperty: true });
  };
  const counted = all.filter((e) => isInteractive(e) && visible(e));
  const countedSet = new Set(counted);
  let boxTagged = 0;
  for (const [ref, x, y, w, h] of boxes) {
    const near = (r) => Math.abs(r.x - x) < 1 && Math.abs(r.y - y) < 1 && Math.abs(r.width - w) < 1
      && Math.abs(r.height - h) < 1;
    const hits = all.filter((e) => near(e.getBoundingClientRect()));
    const hit = hits.find((e) => countedSet.has(e)) || hits[hits.length - 1];
    if (hit) { hit.__browserdBenchRef = ref; boxTagged++; }
  }
  const describe = (e) => {
    let tag = e.tagName.toLowerCase();
    if (tag === 'input') tag += '[type=' + (e.getAttribute('type') || 'text') + ']';
    if (e.getAttribute('role')) tag += '[role=' + e.getAttribute('role') + ']';
    if (e.getRootNode() !== document) tag += ' (in shadow root)';
    const label = (e.labels && e.labels[0] && e.labels[0].innerText) || e.getAttribute('aria-label')
      || e.innerText || e.value || e.getAttribute('placeholder') || e.getAttribute('title') || '';
    return [tag, label.trim().replace(/\\s+/g, ' ').slice(0, 50)];
  };
  const missed = counted.filter((e) => !e.__browserdBenchRef).map(describe);
  const tagged = all.filter((e) => e.__browserdBenchRef).length;
  return { counted: counted.length, withRef: counted.length - missed.length, missed, tagged, boxTagged };
}"""
TAG_JS = "(e, ref) => { e.__browserdBenchRef = ref; }"


class Figures:
    """Everything measured, for the tables and the final JSON line."""

    def __init__(self) -> None:
        self.latency: dict[str, dict[str, Any]] = {}
        self.pages: dict[str, dict[str, Any]] = {}
        self.memory: list[dict[str, Any]] = []
        self.problems: list[str] = []


# -- 1. latency ----------------------------------------------------------------------------------------

Call = tuple[str, dict[str, Any]]


def timed(shim: RawShim, calls: list[Call]) -> float:
    started = time.perf_counter()
    for name, arguments in calls:
        shim.call_tool(name, arguments)
    return (time.perf_counter() - started) * 1000


def snapshot_body(result: dict[str, Any]) -> str:
    """The YAML of a browser_snapshot answer, without its header and code."""
    text = text_of(result)
    if "```yaml\n" not in text:
        raise BenchError(f"no snapshot in the answer: {text[:200]}")
    return text.split("```yaml\n", 1)[1].split("\n```", 1)[0]


def find_ref(snapshot: str, role: str, name: str) -> str:
    match = re.search(rf'- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=([^\]]+)\]', snapshot)
    if match is None:
        raise BenchError(f'no {role} "{name}" with a ref in the snapshot')
    return match.group(1)


def open_page(shim: RawShim, url: str) -> str:
    """Open `url` in the session's tab and answer its interactive snapshot (for refs)."""
    shim.call_tool("browser_open", {"url": url, "snapshot": "none"})
    return snapshot_body(shim.call_tool("browser_snapshot", {"interactive": True}))


def measure_latency(shim: RawShim, site: str, runs: int, slow_runs: int, budget: Budget, figures: Figures) -> None:
    def case(
        key: str,
        label: str,
        page: str,
        count: int,
        calls: Callable[[int], list[Call]],
        before: Callable[[int], list[Call]] | None = None,
    ) -> None:
        if not budget.left():
            figures.problems.append(f"latency {key}: skipped, the time budget ran out")
            return
        print(f"  {key} x{count}", file=sys.stderr)
        index = [-1]  # the run being prepared and measured

        def measure() -> float:
            return timed(shim, calls(index[0]))

        def prepare() -> None:
            index[0] += 1
            if before is not None:
                for name, arguments in before(index[0]):
                    shim.call_tool(name, arguments)

        try:
            prepare()
            measure()  # one untimed call: the first on a page is not what the next ones cost
        except (BenchError, OSError, subprocess.TimeoutExpired) as exc:
            figures.problems.append(f"latency {key}: {exc}")
            figures.latency[key] = {"label": label, "page": page, **summary([]), "failed": 1}
            return
        times, failures = sample(key, count, measure, budget, prepare)
        figures.latency[key] = {"label": label, "page": page, **summary(times), "failed": len(failures)}
        figures.problems.extend(f"latency {key}: {failure}" for failure in failures[:1])

    none = {"snapshot": "none"}
    index_url, form_url = f"{site}/index.html", f"{site}/form.html"

    open_page(shim, index_url)
    case(
        "open+snapshot",
        "browser_open (snapshot none) + browser_snapshot",
        "index.html",
        runs,
        lambda i: [("browser_open", {"url": index_url, **none}), ("browser_snapshot", {})],
    )
    case(
        "open",
        "browser_open (snapshot none)",
        "index.html",
        runs,
        lambda i: [("browser_open", {"url": index_url, **none})],
    )
    case(
        "open_default",
        "browser_open (default: full snapshot)",
        "index.html",
        runs,
        lambda i: [("browser_open", {"url": index_url})],
    )
    case("snapshot_full", "browser_snapshot (full)", "index.html", runs, lambda i: [("browser_snapshot", {})])
    case(
        "snapshot_interactive",
        "browser_snapshot (interactive)",
        "index.html",
        runs,
        lambda i: [("browser_snapshot", {"interactive": True})],
    )
    case(
        "snapshot_compact",
        "browser_snapshot (compact)",
        "index.html",
        runs,
        lambda i: [("browser_snapshot", {"compact": True})],
    )
    case("tabs_list", "browser_tabs (list)", "index.html", runs, lambda i: [("browser_tabs", {"action": "list"})])
    case(
        "navigate_reload",
        "browser_navigate (reload, snapshot none)",
        "index.html",
        slow_runs,
        lambda i: [("browser_navigate", {"action": "reload", **none})],
    )
    case(
        "screenshot",
        "browser_screenshot (viewport png)",
        "index.html",
        slow_runs,
        lambda i: [("browser_screenshot", {})],
    )

    states = open_page(shim, f"{site}/states.html")
    bold = find_ref(states, "button", "Bold")
    case(
        "click",
        "browser_click (snapshot none)",
        "states.html",
        runs,
        lambda i: [("browser_click", {"target": bold, **none})],
    )
    case(
        "click_delta",
        "browser_click (default: delta snapshot)",
        "states.html",
        runs,
        lambda i: [("browser_click", {"target": bold})],
    )

    form = open_page(shim, form_url)
    name, country = find_ref(form, "textbox", "Full name"), find_ref(form, "combobox", "Country")
    subscribe, send = find_ref(form, "checkbox", "Subscribe"), find_ref(form, "button", "Send")
    countries = ("fr", "de", "jp")
    case(
        "fill",
        "browser_fill (snapshot none)",
        "form.html",
        runs,
        lambda i: [("browser_fill", {"target": name, "value": f"Ada Lovelace {i}", **none})],
    )
    case(
        "select",
        "browser_select (snapshot none)",
        "form.html",
        runs,
        lambda i: [("browser_select", {"target": country, "values": [countries[i % 3]], **none})],
    )
    case(
        "check",
        "browser_check (snapshot none)",
        "form.html",
        runs,
        lambda i: [("browser_check", {"target": subscribe, **none})],
        before=lambda i: [("browser_uncheck", {"target": subscribe, **none})],
    )
    case(
        "wait",
        "browser_wait (text there, snapshot none)",
        "form.html",
        runs,
        lambda i: [("browser_wait", {"text": "Full name", **none})],
    )
    case(
        "get", "browser_get (value)", "form.html", runs, lambda i: [("browser_get", {"what": "value", "target": name})]
    )
    case(
        "is",
        "browser_is (visible)",
        "form.html",
        runs,
        lambda i: [("browser_is", {"state": "visible", "target": send})],
    )
    case("find", "browser_find (role button)", "form.html", runs, lambda i: [("browser_find", {"role": "button"})])

    keys = open_page(shim, f"{site}/keys.html")
    key_input = find_ref(keys, "textbox", "Key input")
    case(
        "type",
        "browser_type (5 keys, snapshot none)",
        "keys.html",
        runs,
        lambda i: [("browser_type", {"target": key_input, "text": "hello", **none})],
        before=lambda i: [("browser_fill", {"target": key_input, "value": "", **none})],
    )
    case(
        "press",
        "browser_press (Shift+A, snapshot none)",
        "keys.html",
        runs,
        lambda i: [("browser_press", {"key": "Shift+A", **none})],
    )

    hover = open_page(shim, f"{site}/hover.html")
    hover_me = find_ref(hover, "button", "Hover me")
    case(
        "hover",
        "browser_hover (snapshot none)",
        "hover.html",
        runs,
        lambda i: [("browser_hover", {"target": hover_me, **none})],
    )

    open_page(shim, f"{site}/scroll.html")
    case(
        "scroll",
        "browser_scroll (deltaY ±600, snapshot none)",
        "scroll.html",
        runs,
        lambda i: [("browser_scroll", {"deltaY": 600 if i % 2 else -600, **none})],
    )


# -- 2. snapshot sizes and ref coverage ----------------------------------------------------------------


def _plain(line: str) -> str:
    return _NOT_PLAYWRIGHTS.sub("", line).rstrip().rstrip(":")


def align_refs(daemon_snapshot: str, local_snapshot: str) -> dict[str, str]:
    """Daemon ref -> the same node's ref in the local snapshot, matching lines without refs and marks."""
    ours, theirs = daemon_snapshot.splitlines(), local_snapshot.splitlines()
    a, b = [_plain(line) for line in ours], [_plain(line) for line in theirs]
    if a == b:
        pairs: list[tuple[int, int]] = [(i, i) for i in range(len(a))]
    else:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        pairs = [(i + k, j + k) for i, j, size in matcher.get_matching_blocks() for k in range(size)]
    mapping: dict[str, str] = {}
    for i, j in pairs:
        mine, local = _REF.search(ours[i]), _REF.search(theirs[j])
        if mine and local:
            mapping[mine.group(1)] = local.group(1)
    return mapping


async def _tag(page: Any, refs: list[tuple[str, str]]) -> int:
    """Mark the local elements of (daemon ref, local ref) pairs; answers how many could not be resolved."""

    async def one(ours: str, local: str) -> bool:
        try:
            await page.locator(f"aria-ref={local}").evaluate(TAG_JS, ours, timeout=2000)
            return True
        except Exception:  # a ref that does not resolve is counted, not fatal
            return False

    failed = 0
    for start in range(0, len(refs), TAG_BATCH):
        done = await asyncio.gather(*(one(o, lo) for o, lo in refs[start : start + TAG_BATCH]))
        failed += done.count(False)
    return failed


async def page_figures(shim: RawShim, page: Any, site: str, name: str) -> dict[str, Any]:
    url = f"{site}/{name}"
    wait_until = WAIT_UNTIL.get(name, "load")
    shim.call_tool("browser_open", {"url": url, "waitUntil": wait_until, "snapshot": "none"})
    if name in READY_TEXT:
        shim.call_tool("browser_wait", {"text": READY_TEXT[name], "timeout": 10_000})
    started = time.perf_counter()
    full = snapshot_body(shim.call_tool("browser_snapshot", {"maxChars": WHOLE}))
    full_ms = (time.perf_counter() - started) * 1000
    interactive = snapshot_body(shim.call_tool("browser_snapshot", {"interactive": True, "maxChars": WHOLE}))
    compact = snapshot_body(shim.call_tool("browser_snapshot", {"compact": True, "maxChars": WHOLE}))
    refs = _REF.findall(interactive)
    box_refs = [ref for ref in refs if ref.startswith("c")]
    boxes: list[list[Any]] = []
    for ref in box_refs:
        box = shim.call_tool("browser_get", {"what": "box", "target": ref}).get("structuredContent", {}).get("value")
        if box:
            boxes.append([ref, box["x"], box["y"], box["width"], box["height"]])

    await page.goto(url, wait_until=wait_until, timeout=30_000)
    if name in READY_TEXT:
        await page.get_by_text(READY_TEXT[name]).first.wait_for(timeout=10_000)
    local = await page.aria_snapshot(mode="ai", timeout=60_000)
    mapping = align_refs(full, local)
    pairs = [(ref, mapping[ref]) for ref in refs if ref in mapping]
    unmapped = [ref for ref in refs if ref not in mapping and not ref.startswith("c")]
    unresolved = await _tag(page, pairs)
    counted = with_ref = tagged = 0
    missed: list[list[str]] = []
    for frame in page.frames:
        try:
            found = await frame.evaluate(COUNT_JS, boxes if frame == page.main_frame else [])
        except Exception as exc:  # a frame that went away is reported, not fatal
            missed.append(["(frame)", f"{frame.url}: {str(exc)[:80]}"])
            continue
        counted += found["counted"]
        with_ref += found["withRef"]
        tagged += found["tagged"]
        missed.extend(found["missed"])
    return {
        "fullChars": len(full),
        "fullSnapshotMs": round(full_ms, 1),
        "interactiveChars": len(interactive),
        "compactChars": len(compact),
        "ratio": round(len(interactive) / len(full), 3) if full else None,
        "interactiveRefs": len(refs),
        "domInteractive": counted,
        "withRef": with_ref,
        "share": round(with_ref / counted, 4) if counted else None,
        "missed": missed[:MISSED_SHOWN],
        "missedCount": len(missed),
        # Refs that could not be carried over to the measuring browser, or landed on no counted element.
        "refsUnmapped": len(unmapped) + unresolved + (len(box_refs) - len(boxes)),
        "refsOnOtherElements": max(0, tagged - with_ref),
    }


async def measure_snapshots(shim: RawShim, site: str, pages: list[str], budget: Budget, figures: Figures) -> None:
    from playwright.async_api import async_playwright  # only this section needs it

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT})
            page = await context.new_page()
            page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.dismiss()))
            for name in pages:
                if not budget.left():
                    figures.problems.append(f"snapshots: the time budget ran out before {name}")
                    break
                print(f"  {name}", file=sys.stderr)
                for attempt in (1, 2):  # one retry: a busy machine can time a big page out once
                    try:
                        figures.pages[name] = await page_figures(shim, page, site, name)
                        break
                    except Exception as exc:  # one page's failure must not hide the others
                        figures.problems.append(f"snapshots {name} (attempt {attempt}): {str(exc)[:300]}")
        finally:
            await browser.close()


# -- 3. memory -----------------------------------------------------------------------------------------


def hold_session(home: BrowserdHome, url: str) -> RawShim:
    """A `browserd mcp` client kept open, with TABS_PER_SESSION tabs on `url`."""
    shim = RawShim(home)
    try:
        shim.initialize()
        shim.notify("notifications/initialized")
        shim.call_tool("browser_open", {"url": url, "snapshot": "none"})
        for _ in range(TABS_PER_SESSION - 1):
            shim.call_tool("browser_open", {"url": url, "newTab": True, "snapshot": "none"})
    except BaseException:
        shim.close()
        raise
    return shim


def tree_rss_kib(pid: int | None) -> int | None:
    return rss_kib(pid) + sum(rss_kib(child) for child in descendants(pid)) if pid else None


def memory_row(home: BrowserdHome, sessions: int) -> dict[str, Any]:
    time.sleep(1.0)  # let the new pages finish their work before reading RSS
    status = status_json(home) or {}
    daemon_pid = home.daemon_pid()
    browser_kib = status.get("memory", {}).get("browserPssKiB")
    browser_pid = status.get("browser", {}).get("pid")
    return {
        "sessions": sessions,
        "tabs": sum(len(s.get("tabs", [])) for s in status.get("sessions", [])),
        "daemonSessions": len(status.get("sessions", [])),
        "daemonRssMiB": mib(vm_rss_kib(daemon_pid)) if daemon_pid else None,
        "chromiumTreeRssMiB": mib(tree_rss_kib(browser_pid)),
        "chromiumTreePssMiB": mib(browser_kib),
        "chromiumProcesses": 1 + len(descendants(browser_pid)) if browser_pid else None,
    }


def measure_memory(home: BrowserdHome, site: str, budget: Budget, figures: Figures) -> None:
    # The other sections' clients are gone: wait until the daemon has closed their sessions.
    wait_for(lambda: not (status_json(home) or {}).get("sessions"), 15, 0.2)
    figures.memory.append(memory_row(home, 0))
    shims: list[RawShim] = []
    try:
        for count in SESSION_COUNTS:
            while len(shims) < count:
                if not budget.left():
                    figures.problems.append(f"memory: the time budget ran out at {len(shims)} sessions")
                    return
                shims.append(hold_session(home, f"{site}/{MEMORY_PAGE}"))
            print(f"  {count} session(s)", file=sys.stderr)
            figures.memory.append(memory_row(home, count))
    finally:
        for shim in shims:
            shim.close()


# -- output --------------------------------------------------------------------------------------------


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def overall(pages: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Sums over the pages, and the same without the biggest page, which can outweigh all the others."""
    totals = _sums(pages)
    if len(pages) > 1:
        biggest = max(pages, key=lambda name: pages[name]["fullChars"])
        rest = _sums({name: p for name, p in pages.items() if name != biggest})
        totals["withoutBiggest"] = {"page": biggest, **{k: rest[k] for k in ("fullChars", "interactiveChars", "ratio")}}
    return totals


def _sums(pages: dict[str, dict[str, Any]]) -> dict[str, Any]:
    full = sum(p["fullChars"] for p in pages.values())
    interactive = sum(p["interactiveChars"] for p in pages.values())
    compact = sum(p["compactChars"] for p in pages.values())
    counted = sum(p["domInteractive"] for p in pages.values())
    with_ref = sum(p["withRef"] for p in pages.values())
    ratios = [p["ratio"] for p in pages.values() if p["ratio"] is not None]
    return {
        "pages": len(pages),
        "fullChars": full,
        "interactiveChars": interactive,
        "compactChars": compact,
        "ratio": round(interactive / full, 3) if full else None,
        "medianPageRatio": round(statistics.median(ratios), 3) if ratios else None,
        "domInteractive": counted,
        "withRef": with_ref,
        "share": round(with_ref / counted, 4) if counted else None,
        "pagesBelowFullShare": sorted(n for n, p in pages.items() if p["share"] is not None and p["share"] < 1),
    }


def print_report(figures: Figures, totals: dict[str, Any]) -> None:
    if figures.latency:
        print()
        print(f"{'latency, warm daemon':<50}{'page':<14}{'median':>9}{'p95':>9}{'n':>5}  target")
        for key, row in figures.latency.items():
            n = f"{row['n']}" + (f" ({row['failed']} failed)" if row.get("failed") else "")
            target = ""
            if key == "open+snapshot":
                median = row.get("median")
                target = f"< {OPEN_SNAPSHOT_TARGET_MS:.0f} ms median: {verdict(median, OPEN_SNAPSHOT_TARGET_MS)}"
            print(
                f"{row['label']:<50}{row['page']:<14}{fmt_ms(row.get('median')):>9}{fmt_ms(row.get('p95')):>9}"
                f"{n:>5}  {target}"
            )

    if figures.pages:
        print()
        print(
            f"{'snapshot chars':<20}{'full':>9}{'inter.':>8}{'compact':>9}{'i/full':>8}"
            f"{'DOM int.':>10}{'ref':>6}{'share':>7}{'unmapped':>10}{'full ms':>9}"
        )
        for name, p in figures.pages.items():
            print(
                f"{name:<20}{p['fullChars']:>9}{p['interactiveChars']:>8}{p['compactChars']:>9}{pct(p['ratio']):>8}"
                f"{p['domInteractive']:>10}{p['withRef']:>6}{pct(p['share']):>7}{p['refsUnmapped']:>10}"
                f"{p['fullSnapshotMs']:>9.0f}"
            )
        ratio_target = f"≤ {INTERACTIVE_RATIO_TARGET:.0%} overall: " + (
            "no figure"
            if totals["ratio"] is None
            else ("met" if totals["ratio"] <= INTERACTIVE_RATIO_TARGET else "MISSED")
        )
        print(
            f"{'overall':<20}{totals['fullChars']:>9}{totals['interactiveChars']:>8}{totals['compactChars']:>9}"
            f"{pct(totals['ratio']):>8}{totals['domInteractive']:>10}{totals['withRef']:>6}{pct(totals['share']):>7}"
        )
        rest = totals.get("withoutBiggest")
        if rest:
            print(
                f"{'without ' + rest['page']:<20}{rest['fullChars']:>9}{rest['interactiveChars']:>8}{'':>9}"
                f"{pct(rest['ratio']):>8}"
            )
        print(f"interactive/full: {ratio_target}; median page ratio {pct(totals['medianPageRatio'])}")
        share_target = "every interactive element keeps a ref: " + (
            "met" if not totals["pagesBelowFullShare"] else "MISSED on " + ", ".join(totals["pagesBelowFullShare"])
        )
        print(share_target)
        print(
            "(chars: the snapshot's YAML without the header; DOM int.: interactive DOM elements counted with "
            "Playwright;\n ref: those with a ref in the interactive snapshot; unmapped: interactive refs that "
            "could not be carried\n over to the counting browser, which would make `ref` too low; full ms: that "
            "browser_snapshot call)"
        )
        for name, p in figures.pages.items():
            if p["missedCount"]:
                shown = "; ".join(f"{tag} {text!r}" for tag, text in p["missed"])
                more = (
                    f" … and {p['missedCount'] - len(p['missed'])} more" if p["missedCount"] > len(p["missed"]) else ""
                )
                print(f"  missed on {name}: {shown}{more}")

    if figures.memory:
        print()
        print(f"{'memory':<26}{'tabs':>6}{'daemon RSS':>12}{'Chromium tree RSS':>19}{'PSS':>12}{'processes':>11}")
        for row in figures.memory:
            label = f"{row['sessions']} session(s)"
            if row["daemonSessions"] != row["sessions"]:
                label += f" [daemon sees {row['daemonSessions']}]"
            print(
                f"{label:<26}{row['tabs']:>6}{fmt_mib(row['daemonRssMiB']):>12}"
                f"{fmt_mib(row['chromiumTreeRssMiB']):>19}{fmt_mib(row['chromiumTreePssMiB']):>12}"
                f"{row['chromiumProcesses'] or '-':>11}"
            )
        print("(Chromium tree RSS sums its processes' RSS, counting shared pages once per process; PSS is")
        print(" `browserd status --json` memory.browserPssKiB, which counts them once)")


# -- main ----------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="calls per tool (default 20)")
    parser.add_argument("--slow-runs", type=int, default=10, help="calls of the slow tools (default 10)")
    parser.add_argument("--pages", default="", help="comma-separated tests/site pages (default: every *.html)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"some of {', '.join(SECTIONS)}")
    parser.add_argument("--budget-s", type=float, default=900, help="wall-clock cap for the whole script")
    args = parser.parse_args()
    runs, slow_runs = (max(1, min(n, MAX_RUNS)) for n in (args.runs, args.slow_runs))
    sections = {"daemon"} | {s.strip() for s in args.sections.split(",") if s.strip()}
    pages = [p.strip() for p in args.pages.split(",") if p.strip()] or sorted(p.name for p in SITE.glob("*.html"))
    budget = Budget(args.budget_s)
    figures = Figures()
    load_at_start = round(os.getloadavg()[0], 2)

    home = make_home(idle_exit_s=120)
    server, site = serve_site()

    def section(key: str, name: str, run: Callable[[], None]) -> None:
        if key not in sections:
            return
        if not budget.left():
            figures.problems.append(f"{name}: skipped, the time budget ran out")
            return
        print(name, file=sys.stderr)
        try:
            run()
        except (BenchError, OSError, subprocess.TimeoutExpired, KeyError) as exc:
            figures.problems.append(f"{name}: {exc!r}")
            print(f"  ! {name}: {exc!r}", file=sys.stderr)

    def start_daemon() -> None:
        done = home.browserd("daemon", timeout=60)
        if done.returncode != 0:
            raise BenchError(f"`browserd daemon` failed: {done.stderr.strip() or done.stdout.strip()}")
        wait_for(lambda: bool((status_json(home) or {}).get("browser", {}).get("running")), 60, 0.2)

    def client() -> RawShim:
        shim = RawShim(home)
        shim.initialize()
        shim.notify("notifications/initialized")
        return shim

    def latency() -> None:
        with client() as shim:
            measure_latency(shim, site, runs, slow_runs, budget, figures)

    def snapshots() -> None:
        with client() as shim:
            asyncio.run(measure_snapshots(shim, site, pages, budget, figures))

    def memory() -> None:
        measure_memory(home, site, budget, figures)

    print(f"browserd session benchmark: home {home.root}, site {site}", file=sys.stderr)
    try:
        section("daemon", "daemon start", start_daemon)
        section("latency", f"latency, warm daemon (x{runs}, slow tools x{slow_runs})", latency)
        section("snapshots", f"snapshots of {len(pages)} page(s)", snapshots)
        section("memory", f"memory with {', '.join(map(str, SESSION_COUNTS))} sessions", memory)
    finally:
        home.stop_daemon()  # the daemon of this isolated home only, by the pid in its lock file
        stop_site(server)

    errors = (home.root / "shim.err").read_text(errors="replace").strip() if (home.root / "shim.err").exists() else ""
    shutil.rmtree(home.root, ignore_errors=True)

    totals = overall(figures.pages)
    print_report(figures, totals)
    load_now = round(os.getloadavg()[0], 2)
    print(f"\nmachine: {os.cpu_count()} CPUs, 1-minute load {load_at_start} at the start, {load_now} at the end")
    if budget.exhausted:
        print("\nnote: the time budget ran out; some measurements have fewer samples than asked for")
    if figures.problems:
        print("\nproblems:\n" + "\n".join(f"  {p}" for p in figures.problems))
    if errors:
        print(f"\nshim stderr (last lines):\n{errors[-1500:]}")
    compact = {
        "latencyMs": {
            key: {k: row.get(k) for k in ("median", "p95", "n", "failed")} for key, row in figures.latency.items()
        },
        "snapshots": {
            name: {k: v for k, v in p.items() if k != "missed"} | {"missed": [" ".join(m) for m in p["missed"]]}
            for name, p in figures.pages.items()
        },
        "snapshotsOverall": totals,
        "memory": figures.memory,
        "problems": figures.problems,
        "targets": {"openSnapshotMedianMs": OPEN_SNAPSHOT_TARGET_MS, "interactiveRatio": INTERACTIVE_RATIO_TARGET},
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "kernel": platform.release(),
            # Other work on the machine skews the latencies: the 1-minute load at the start and at the end.
            "load1": [load_at_start, load_now],
        },
    }
    print()
    print(json.dumps(compact, separators=(",", ":"), ensure_ascii=False))
    return 1 if figures.problems else 0


if __name__ == "__main__":
    sys.exit(main())
