"""Replay on a later release of the page (issue 23 part 1): act where a person would recognise the element,
refuse where a person would not, and never act on another element.

Every target of tests/e2e/replay_cases.py (and of the held-out set, tests/e2e/replay_heldout.py) is recorded
once on its page (tests/site/replay/), then replayed on each mutated page of one class; the page logs WHO
received the click or the input (data-who).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.replay_cases import CASES, Case, Kind, Target, outcome
from tests.e2e.replay_heldout import HELD_OUT
from tests.e2e.results import ok, text_of

pytestmark = [pytest.mark.anyio]

STOP_MS = 2000  # a refusing step's limit; never an asserted duration
ACTIONS = {"click": "browser_click", "fill": "browser_fill", "check": "browser_check"}


async def record(client: Any, site: str, target: Target) -> tuple[str, dict[str, str]]:
    """The target's one-step flow and the arguments a replay gives its variables."""
    await client.call_tool("browser_open", {"url": f"{site}/replay/{target.page}", "snapshot": "none"})
    ok(await client.call_tool("flow_record_start", {"name": target.who}))
    args = {"target": target.css, "snapshot": "none"} | ({"value": "x"} if target.action == "fill" else {})
    ok(await client.call_tool(ACTIONS[target.action], args))
    flow = ok(await client.call_tool("flow_record_stop", {})).structured_content
    return flow["flowId"], {v["key"]: "x" for v in flow["flow"]["variables"]}


async def replay(client: Any, site: str, flow: tuple[str, dict[str, str]], case: Case) -> str:
    args = {"flowId": flow[0], "args": flow[1], "startUrl": case.url(site), "stepTimeoutMs": STOP_MS}
    run = ok(await client.call_tool("flow_run", args)).structured_content
    log = text_of(ok(await client.call_tool("browser_get", {"what": "text", "target": "#log"})))
    return outcome(case, run["status"] == "succeeded", log.split())


SETS = {"tuned": CASES, "held-out": HELD_OUT}


async def results_of(home: BrowserdHome, site: str, kind: Kind, which: str = "tuned") -> dict[str, list[str]]:
    """Each case of the class in the set under the outcome it got (correct, wrong, refused)."""
    cases = [case for case in SETS[which] if case.kind == kind]
    got: dict[str, list[str]] = {"correct": [], "wrong": [], "refused": []}
    async with mcp_client(home, args=("--tools", "all")) as client:
        flows: dict[Target, tuple[str, dict[str, str]]] = {}
        for case in cases:
            if case.target not in flows:
                flows[case.target] = await record(client, site, case.target)
            got[await replay(client, site, flows[case.target], case)].append(case.label)
    return got


@pytest.mark.shared_daemon
@pytest.mark.parametrize("kind", ["name", "testid", "lookalike"])
async def test_replay_acts_on_the_element_a_person_still_recognises(home: BrowserdHome, site: str, kind: Kind) -> None:
    got = await results_of(home, site, kind)
    assert not got["wrong"], f"acted on another element than the recorded one: {got['wrong']}"
    assert not got["refused"], f"refused an element a person recognises: {got['refused']}"


@pytest.mark.shared_daemon
async def test_replay_refuses_where_a_person_would_not_act(home: BrowserdHome, site: str) -> None:
    got = await results_of(home, site, "negative")
    assert not got["wrong"], f"acted where it must stop: {got['wrong']}"
    assert not got["correct"]


@pytest.mark.shared_daemon
@pytest.mark.parametrize("kind", ["name", "testid", "lookalike", "structure"])
async def test_held_out_replay_acts_on_the_element_a_person_still_recognises(
    home: BrowserdHome, site: str, kind: Kind
) -> None:
    got = await results_of(home, site, kind, "held-out")
    assert not got["wrong"], f"acted on another element than the recorded one: {got['wrong']}"
    assert not got["refused"], f"refused an element a person recognises: {got['refused']}"


@pytest.mark.shared_daemon
async def test_held_out_replay_refuses_where_a_person_would_not_act(home: BrowserdHome, site: str) -> None:
    got = await results_of(home, site, "negative", "held-out")
    assert not got["wrong"], f"acted where it must stop: {got['wrong']}"
    assert not got["correct"]
