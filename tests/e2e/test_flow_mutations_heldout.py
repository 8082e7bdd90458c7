"""Replay on the held-out set (tests/e2e/replay_heldout.py): pages modelled on real sites and the changes
they see between deploys, written before the scorer was read. The same promises as test_flow_mutations.py:
act where a person recognises the element, refuse where a person would not, never act on another element.
"""

from __future__ import annotations

import pytest

from tests.conftest import BrowserdHome
from tests.e2e.replay_cases import Kind
from tests.e2e.replay_flows import outcomes
from tests.e2e.replay_heldout import HELD_OUT

pytestmark = [pytest.mark.anyio]


@pytest.mark.shared_daemon
@pytest.mark.parametrize("kind", ["name", "testid", "lookalike", "structure"])
async def test_held_out_replay_acts_on_the_element_a_person_still_recognises(
    home: BrowserdHome, site: str, kind: Kind
) -> None:
    got = await outcomes(home, site, HELD_OUT, kind)
    assert not got["wrong"], f"acted on another element than the recorded one: {got['wrong']}"
    assert not got["refused"], f"refused an element a person recognises: {got['refused']}"


@pytest.mark.shared_daemon
async def test_held_out_replay_refuses_where_a_person_would_not_act(home: BrowserdHome, site: str) -> None:
    got = await outcomes(home, site, HELD_OUT, "negative")
    assert not got["wrong"], f"acted where it must stop: {got['wrong']}"
    assert not got["correct"]
