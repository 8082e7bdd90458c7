"""Replay on a later release of the page (issue 23 part 1): act where a person would recognise the element,
refuse where a person would not, and never act on another element.

Every target of tests/e2e/replay_cases.py (and of the held-out set, tests/e2e/replay_heldout.py) is recorded
once on its page (tests/site/replay/), then replayed on each mutated page of one class; the page logs WHO
received the click or the input (data-who).
"""

from __future__ import annotations

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.replay_cases import CASES, Kind, Target
from tests.e2e.replay_flows import Recorded, record, replay_run
from tests.e2e.replay_heldout import HELD_OUT

pytestmark = [pytest.mark.anyio]


SETS = {"tuned": CASES, "held-out": HELD_OUT}


async def results_of(home: BrowserdHome, site: str, kind: Kind, which: str = "tuned") -> dict[str, list[str]]:
    """Each case of the class in the set under the outcome it got (correct, wrong, refused)."""
    cases = [case for case in SETS[which] if case.kind == kind]
    got: dict[str, list[str]] = {"correct": [], "wrong": [], "refused": []}
    async with mcp_client(home, args=("--tools", "all")) as client:
        flows: dict[Target, Recorded] = {}
        for case in cases:
            if case.target not in flows:
                flows[case.target] = await record(client, site, case.target)
            result, _ = await replay_run(client, site, flows[case.target], case)
            got[result].append(case.label)
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
