"""Replay on a later release of the page (issue 23 part 1): act where a person would recognise the element,
refuse where a person would not, and never act on another element.

Every target of tests/e2e/replay_cases.py is recorded once on its page (tests/site/replay/), then replayed on
each mutated page of one class; the page logs WHO received the click or the input (data-who). The held-out
set is test_flow_mutations_heldout.py (a module of its own, so the two run on different workers).
"""

from __future__ import annotations

import pytest

from tests.conftest import BrowserdHome
from tests.e2e.replay_cases import CASES, Kind
from tests.e2e.replay_flows import outcomes

pytestmark = [pytest.mark.anyio]


@pytest.mark.shared_daemon
@pytest.mark.parametrize("kind", ["name", "testid", "lookalike"])
async def test_replay_acts_on_the_element_a_person_still_recognises(home: BrowserdHome, site: str, kind: Kind) -> None:
    got = await outcomes(home, site, CASES, kind)
    assert not got["wrong"], f"acted on another element than the recorded one: {got['wrong']}"
    assert not got["refused"], f"refused an element a person recognises: {got['refused']}"


@pytest.mark.shared_daemon
async def test_replay_refuses_where_a_person_would_not_act(home: BrowserdHome, site: str) -> None:
    got = await outcomes(home, site, CASES, "negative")
    assert not got["wrong"], f"acted where it must stop: {got['wrong']}"
    assert not got["correct"]
