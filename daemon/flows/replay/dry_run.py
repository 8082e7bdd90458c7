"""A dry run (issue 25): every step's target found and scored on a tab as it is, the element a replay would
act on outlined in the page with its score, and nothing acted on. Steps after one that would change the
page (a navigation, a submit) are judged on this page too, so a target on a later page reads `none`."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError

from browserd.daemon.config import Config
from browserd.daemon.flows.flow_model import Flow
from browserd.daemon.flows.graph import graph_of
from browserd.daemon.flows.replay.resolution import resolve
from browserd.daemon.runtime.page_js import load_js
from browserd.daemon.sessions.tab import Tab

# How long the outlines stay in the page: long enough to look at, not left over for a later snapshot or action.
OUTLINE_S = 60
# Draws one outline with its label over an element; every outline carries the marker attribute, so the next
# dry run (or CLEAR_JS) takes them all away and nothing else.
MARK_JS = load_js("browserd.daemon.flows.replay", "dry_run_mark.js")
CLEAR_JS = load_js("browserd.daemon.flows.replay", "dry_run_clear.js")


async def dry_run(tab: Tab, flow: Flow, config: Config) -> list[dict[str, Any]]:
    """For each enabled step with a target, in the flow's order: what a replay would find, and its box."""
    threshold, margin = config.flows.match_threshold, config.flows.match_margin
    reports: list[dict[str, Any]] = []
    async with tab.lock:
        await tab.page.evaluate(CLEAR_JS)
        for step in graph_of(flow).nodes.values():
            if step.disabled or step.target is None:
                continue
            try:
                found = await resolve(tab, step.target, threshold, margin)
            except PlaywrightError as exc:
                reports.append({"stepId": step.id, "type": step.type, "status": "none", "message": str(exc)[:200]})
                continue
            report = found.report
            row: dict[str, Any] = {
                "stepId": step.id,
                "type": step.type,
                "status": report["status"],
                "score": report["score"],
                "candidates": report["candidates"],
                "elements": report["elements"],
            }
            if found.locator is not None:
                label = f"{step.id} {step.type} {report['score']:.2f}"
                row["box"] = await found.locator.evaluate(MARK_JS, [label, OUTLINE_S * 1000])
                await found.unpin()
            reports.append(row)
    return reports
