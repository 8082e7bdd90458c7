"""The console's page weight and time to first render (issue 25), and its screenshots for docs/console/.

    .venv/bin/python -m tests.bench.console_page [--runs 5] [--no-screenshots]

A daemon serving HTTP on loopback gets some work to show (a client's open tab, a finished crawl, a flow
with a failed replay, a replay over rows, a schedule, a V2 graph flow); then a real Chromium opens the
console from a fresh one-time link `--runs` times, each in a new browser context (nothing cached), and
prints, with the load average beside them (figures are noisy on a shared machine, never asserted):

- bytes transferred until the first page (Sessions, with its thumbnails) is drawn: every response's
  encoded size as the browser's network log counts it (headers included), the event stream's bytes so far;
- time to first render: first-contentful-paint, and the moment the Sessions page shows its data, both from
  the start of the navigation to the link (its redirect included), by the page's own clock.

Then it saves a screenshot of each page to docs/console/ (regenerate them with this script when the
console's look changes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.conftest import mcp_client, serve_site_on  # noqa: E402
from tests.e2e.console_browser import chromium, console_home, console_link, opened_console  # noqa: E402
from tests.e2e.test_console import call, record_sign_in  # noqa: E402

SHOTS = REPO / "docs" / "console"
VIEWPORT = {"width": 1360, "height": 860}
# When the Sessions page has drawn its data (the page's clock, from the start of the navigation to the link).
MARK_RENDER = """(() => {
  const seen = () => document.querySelector('#view section h1');
  new MutationObserver((_, observer) => {
    if (seen() && document.querySelector('#view section .card, #view section p.muted:not(:first-child)')) {
      window.__rendered = performance.now();
      observer.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
})();"""
GRAPH_FLOW = {
    "id": "flow_graph_demo",
    "name": "Search each term (graph)",
    "variables": [{"key": "terms", "type": "array", "required": False, "default": ["teapot", "mug"]}],
    "nodes": [
        {"id": "n1", "type": "navigate", "url": "{site}/form.html"},
        {"id": "n2", "type": "foreach", "items": "{terms}", "as": "term"},
        {"id": "n3", "type": "extract", "value": "text"},
        {"id": "n4", "type": "if", "condition": "${outputs.n3.text} contains 'Form'"},
        {"id": "n5", "type": "datasetWrite", "fields": {"term": "{term}"}},
        {"id": "n6", "type": "delay", "ms": 10},
    ],
    "edges": [
        {"from": "n1", "to": "n2"},
        {"from": "n2", "to": "n3", "on": "body"},
        {"from": "n3", "to": "n4"},
        {"from": "n4", "to": "n5", "on": "true"},
        {"from": "n4", "to": "n6", "on": "false"},
    ],
}


async def populate(client: Any, site: str) -> dict[str, str]:
    """Work for the console to show; the ids of what the screenshots open."""
    crawl = await call(client, "crawl", {"url": f"{site}/gen/12/0.html", "limit": 8, "mode": "sync"})
    flow = await record_sign_in(client, site)
    failed = await call(
        client,
        "flow_run",
        {
            "flowId": flow["id"],
            "args": {"email": "a@example.test"},
            "startUrl": f"{site}/flow-form.html?v=removed",
            "stepTimeoutMs": 1500,
        },
    )
    rows = [{"email": f"row{i}@example.test"} for i in range(4)]
    dataset = await call(client, "flow_run", {"flowId": flow["id"], "rows": rows, "startUrl": f"{site}/flow-form.html"})
    await call(
        client,
        "flow_schedule",
        {"action": "add", "flowId": flow["id"], "cron": "0 9 * * 1-5", "args": {"email": "daily@example.test"}},
    )
    graph = {
        **GRAPH_FLOW,
        "nodes": [{**n, "url": n["url"].replace("{site}", site)} if "url" in n else n for n in GRAPH_FLOW["nodes"]],
    }
    await call(client, "flow_import", {"flow": graph, "overwrite": True})
    # The client's tab stays on a page, so Sessions has a thumbnail to show.
    await call(client, "browser_open", {"url": f"{site}/flow-form.html", "snapshot": "none"})
    return {
        "crawl": crawl["runId"],
        "flow": flow["id"],
        "failed": failed["runId"],
        "dataset": dataset["runId"],
        "graph": GRAPH_FLOW["id"],
    }


async def measure_once(browser: Any, home: Any) -> dict[str, float]:
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(MARK_RENDER)
    page = await context.new_page()
    cdp = await context.new_cdp_session(page)
    await cdp.send("Network.enable")
    finished: dict[str, float] = {}
    streaming: dict[str, float] = {}
    cdp.on("Network.loadingFinished", lambda e: finished.__setitem__(e["requestId"], e["encodedDataLength"]))
    cdp.on(
        "Network.dataReceived",
        lambda e: streaming.__setitem__(e["requestId"], streaming.get(e["requestId"], 0) + e["encodedDataLength"]),
    )
    await page.goto(console_link(home))
    await page.wait_for_function("() => window.__rendered !== undefined", timeout=30_000)
    await page.wait_for_function("() => [...document.images].every((img) => img.complete)", timeout=30_000)
    await page.wait_for_timeout(300)
    timing = await page.evaluate(
        "() => ({ fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime, data: window.__rendered })"
    )
    total = sum(finished.values()) + sum(v for k, v in streaming.items() if k not in finished)
    await context.close()
    return {"bytes": total, "fcp_ms": timing["fcp"], "data_ms": timing["data"]}


async def screenshots(browser: Any, home: Any, ids: dict[str, str]) -> list[Path]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    saved = []
    async with opened_console(browser, home, VIEWPORT) as console:
        page = console.page
        pages = [
            ("sessions", "#/sessions", "figure.tab img", None),
            ("runs", "#/runs", "tr[data-run-id]", None),
            ("run-crawl", f"#/runs/{ids['crawl']}", ".artifacts", None),
            ("run-failed-replay", f"#/runs/{ids['failed']}", ".report.failed img.shot", None),
            ("flows", "#/flows", "table", None),
            ("flow-editor", f"#/flows/{ids['flow']}", "ol.timeline > li", "ol.timeline > li:nth-child(4)"),
            ("flow-graph", f"#/flows/{ids['graph']}", "svg.graph", None),
            ("schedules", "#/schedules", "table", None),
            ("datasets", "#/datasets", "select", None),
            ("profiles", "#/profiles", "h1", None),
            ("bridge", "#/bridge", "h1", None),
        ]
        for name, route, ready, click in pages:
            await console.goto(route)
            await page.locator(ready).first.wait_for(timeout=30_000)
            if click:
                await page.locator(click).click()
            if name == "datasets":
                option = page.locator("option", has_text=ids["dataset"])
                await page.get_by_label("Dataset").select_option(await option.get_attribute("value"))
                await page.locator("table tbody tr").first.wait_for(timeout=30_000)
            await page.wait_for_timeout(500)
            path = SHOTS / f"{name}.png"
            await page.screenshot(path=str(path))
            saved.append(path)
    return saved


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-screenshots", action="store_true")
    options = parser.parse_args()
    with serve_site_on("127.0.0.1") as site, console_home() as home:
        async with mcp_client(home, args=("--tools", "all")) as client, chromium() as browser:
            ids = await populate(client, site)
            figures = [await measure_once(browser, home) for _ in range(options.runs)]
            load = os.getloadavg()
            for key, unit in (("bytes", "B"), ("fcp_ms", "ms"), ("data_ms", "ms")):
                values = [f[key] for f in figures]
                print(
                    f"{key}: median {statistics.median(values):.0f} {unit}, min {min(values):.0f}, "
                    f"max {max(values):.0f} over {len(values)} loads (load average {load[0]:.2f} {load[1]:.2f})"
                )
            print("targets: <= 300 KB transferred on first load, first render < 500 ms")
            if not options.no_screenshots:
                for path in await screenshots(browser, home, ids):
                    print(f"saved {path.relative_to(REPO)}")


if __name__ == "__main__":
    asyncio.run(main())
