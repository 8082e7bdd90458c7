"""Extension bridge benchmark (issue 13): what driving the user's Chrome through the extension costs.

    .venv/bin/python tests/bench/bridge.py [--runs 30] [--resumes 5]

Prints figures, never asserts them (DESIGN.md §6). A real Chromium loads extension-bridge/ and is paired
for real (tests/e2e/bridge_chrome.py); one `browserd mcp` drives a window of the daemon's own browser
and another an extension window (a tab group in that Chromium), on the same tests/site pages:

1. Per-tool latency, own backend vs bridge (median, p95), the two called in turn so that the machine's
   load weighs on both alike, and the median of each pair's difference: browser_get what=title (one
   Runtime.evaluate: its difference is the relay's overhead per CDP round trip), browser_snapshot,
   browser_click with snapshot "none" (in a background tab of the user's Chrome).
2. Resume time: the extension's service worker is stopped (as Chrome stops an idle one) with no side
   panel open; the time from the daemon seeing the disconnect to the extension being connected again,
   from the daemon log's timestamps (target: <= 2 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from playwright.async_api import async_playwright  # noqa: E402

from tests.bench.common import Budget, RawShim, ready_shim, sample, serve_site, stop_site, summary, text_of  # noqa: E402
from tests.conftest import BrowserdHome, make_home  # noqa: E402
from tests.e2e import bridge_chrome  # noqa: E402

_BOLD = re.compile(r'button "Bold"[^\n]*?\[ref=(\w+)\]')
# browser_windows (an extension window) is in the devtools group.
DEVTOOLS = ["--tools", "pages,devtools"]


def _timed(shim: RawShim, tool: str, arguments: dict[str, object]) -> float:
    started = time.perf_counter()
    shim.call_tool(tool, arguments)
    return (time.perf_counter() - started) * 1000


def _open_states(shim: RawShim, site: str) -> str:
    snapshot = text_of(shim.call_tool("browser_open", {"url": f"{site}/states.html"}))
    bold = _BOLD.search(snapshot)
    if bold is None:
        raise SystemExit(f"no Bold button in the snapshot:\n{snapshot}")
    return bold.group(1)


def tool_latency(own: RawShim, bridged: RawShim, site: str, runs: int, budget: Budget) -> dict[str, object]:
    """Each call on the own backend, then the same on the bridge, in turn: the machine's load at any moment
    weighs on both alike, and the difference of each pair is the bridge's cost for that call."""
    bold = {"own": _open_states(own, site), "bridge": _open_states(bridged, site)}
    figures: dict[str, object] = {"own": {}, "bridge": {}, "difference": {}}
    for label, tool, arguments in (
        ("get title", "browser_get", {"what": "title"}),
        ("snapshot", "browser_snapshot", {}),
        ("click", "browser_click", {"target": "", "snapshot": "none"}),
    ):
        pairs: list[tuple[float, float]] = []

        def pair(t: str = tool, a: dict[str, object] = arguments, pairs: list[tuple[float, float]] = pairs) -> float:
            if t == "browser_click":
                timed = (
                    _timed(own, t, {**a, "target": bold["own"]}),
                    _timed(bridged, t, {**a, "target": bold["bridge"]}),
                )
            else:
                timed = (_timed(own, t, a), _timed(bridged, t, a))
            pairs.append(timed)
            return timed[1] - timed[0]

        differences, _ = sample(label, runs, pair, budget)
        for side, index in (("own", 0), ("bridge", 1)):
            figures[side][label] = summary([p[index] for p in pairs])  # type: ignore[index]
        figures["difference"][label] = summary(differences)  # type: ignore[index]
    return figures


def _log_time(line: str) -> float:
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


async def resume_times(home: BrowserdHome, chrome: bridge_chrome.UserChrome, resumes: int) -> list[float]:
    times: list[float] = []
    async with async_playwright() as playwright:
        # No side panel is open: the service worker has to wake and reconnect by itself.
        browser = await playwright.chromium.connect_over_cdp(chrome.endpoint)
        for _ in range(resumes):
            seen = len(home.log.read_text().splitlines())
            await bridge_chrome.stop_service_worker(browser)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                lines = home.log.read_text().splitlines()[seen:]
                down = next((line for line in lines if "bridge: extension" in line and "disconnected" in line), None)
                up = [line for line in lines if "bridge: extension" in line and line.endswith(" connected")]
                if down is not None and up:
                    times.append((_log_time(up[-1]) - _log_time(down)) * 1000)
                    break
                await asyncio.sleep(0.02)
            print(".", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        await browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--resumes", type=int, default=5)
    parser.add_argument("--budget-s", type=float, default=600)
    args = parser.parse_args()
    budget = Budget(args.budget_s)
    server, site = serve_site()
    home = make_home(idle_exit_s=120)
    home.env.update(BROWSERD_BRIDGE_ENABLED="1", BROWSERD_BRIDGE_PORT=str(bridge_chrome.free_port()))
    results: dict[str, object] = {}
    try:
        with bridge_chrome.user_chrome() as chrome:
            bridge_chrome.pair(home, chrome)
            with ready_shim(home, DEVTOOLS) as own, ready_shim(home, DEVTOOLS) as bridged:
                bridged.call_tool("browser_windows", {"action": "new", "kind": "extension"})
                results.update(tool_latency(own, bridged, site, args.runs, budget))
            results["resumeMs"] = summary(asyncio.run(resume_times(home, chrome, args.resumes)))
    finally:
        home.stop_daemon()
        stop_site(server)
    print(
        f"{'tool':<12} {'own median':>11} {'own p95':>9} {'bridge median':>14} {'bridge p95':>11} {'diff median':>12}"
    )
    own, bridge, diff = results["own"], results["bridge"], results["difference"]
    assert isinstance(own, dict) and isinstance(bridge, dict) and isinstance(diff, dict)
    for label in own:
        o, b, d = own[label], bridge[label], diff[label]
        print(
            f"{label:<12} {o.get('median', '-'):>9} ms {o.get('p95', '-'):>6} ms {b.get('median', '-'):>11} ms "
            f"{b.get('p95', '-'):>8} ms {d.get('median', '-'):>9} ms"
        )
    # browser_get title is one Runtime.evaluate round trip through the relay, the rest being the same work.
    print(
        f"relay overhead per CDP round trip (browser_get title, median of paired differences): "
        f"{diff['get title'].get('median')} ms (target <= 5 ms)"
    )
    resume = results["resumeMs"]
    assert isinstance(resume, dict)
    print(
        f"resume after the service worker stopped: median {resume.get('median')} ms, max {resume.get('max')} ms "
        f"over {resume.get('n')} (target <= 2000 ms)"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
