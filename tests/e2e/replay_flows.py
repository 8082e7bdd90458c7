"""Recording a target of tests/e2e/replay_cases.py and replaying it on a mutated page, through a real MCP client:
for test_flow_mutations (every case) and test_flow_llm_fallback (the model's choice)."""

from __future__ import annotations

from typing import Any, Literal

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.replay_cases import Case, Kind, Target, outcome
from tests.e2e.results import ok, text_of

STOP_MS = 2000  # a refusing step's limit; never an asserted duration
# The limit of test_flow_mutations*'s negative cases: the replay pages are static (mutate.js changes them before
# the page is used), so the first look at the page decides and a longer wait only delays the same refusal
# (2 s for each of 75 cases).
NEGATIVE_STOP_MS = 300
ACTIONS = {"click": "browser_click", "fill": "browser_fill", "check": "browser_check"}

Recorded = tuple[str, dict[str, str]]


async def record(client: Any, site: str, target: Target) -> Recorded:
    """The target's one-step flow and the arguments a replay gives its variables."""
    ok(await client.call_tool("browser_open", {"url": f"{site}/replay/{target.page}", "snapshot": "none"}))
    ok(await client.call_tool("flow_record_start", {"name": target.who}))
    args = {"target": target.css, "snapshot": "none"} | ({"value": "x"} if target.action == "fill" else {})
    ok(await client.call_tool(ACTIONS[target.action], args))
    flow = ok(await client.call_tool("flow_record_stop", {})).structured_content
    return flow["flowId"], {v["key"]: "x" for v in flow["flow"]["variables"]}


async def replay_run(
    client: Any, site: str, flow: Recorded, case: Case, stop_ms: int = STOP_MS
) -> tuple[Literal["correct", "wrong", "refused"], dict[str, Any]]:
    """The case's outcome (what the page's log says was acted on) and the flow_run answer."""
    args = {"flowId": flow[0], "args": flow[1], "startUrl": case.url(site), "stepTimeoutMs": stop_ms}
    run: dict[str, Any] = ok(await client.call_tool("flow_run", args)).structured_content
    log = text_of(ok(await client.call_tool("browser_get", {"what": "text", "target": "#log"})))
    return outcome(case, run["status"] == "succeeded", log.split()), run


async def outcomes(home: BrowserdHome, site: str, cases: list[Case], kind: Kind) -> dict[str, list[str]]:
    """Each case of the class under the outcome it got (correct, wrong, refused); one recording per target."""
    got: dict[str, list[str]] = {"correct": [], "wrong": [], "refused": []}
    async with mcp_client(home, args=("--tools", "all")) as client:
        flows: dict[Target, Recorded] = {}
        for case in (case for case in cases if case.kind == kind):
            if case.target not in flows:
                flows[case.target] = await record(client, site, case.target)
            stop_ms = NEGATIVE_STOP_MS if kind == "negative" else STOP_MS
            result, run = await replay_run(client, site, flows[case.target], case, stop_ms)
            if result == "refused" and kind == "negative" and acting_failed(run):
                # It chose an element where it must stop; only the short limit kept the action from landing.
                result = "wrong"
            got[result].append(case.label)
    return got


def acting_failed(run: dict[str, Any]) -> bool:
    """The run's step chose an element and failed while acting on it: not a refusal, which stops before acting."""
    steps: list[dict[str, Any]] = run.get("steps") or [{}]
    return bool((steps[-1].get("details") or {}).get("category") == "interaction")
