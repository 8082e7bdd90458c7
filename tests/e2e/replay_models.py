"""Scripted models for `[flows] llm_fallback` (issue 23 part 1): how a model might choose among a replay step's
scored elements, for tests/e2e/test_flow_llm_fallback.py and `tests/bench/flows.py --mutations --llm-fallback`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.llm_server import Script, Turn, answer_json

Policy = Callable[[dict[str, Any]], int | None]
REASON = "same form as before"


def question(text: str) -> dict[str, Any]:
    """What the model was shown: the JSON between the request's markers (its first and last lines)."""
    data: dict[str, Any] = json.loads(text.split("\n", 1)[1].rsplit("\n", 1)[0])
    return data


def where_it_was(asked: dict[str, Any]) -> int | None:
    """A sensible model: the element in the recorded element's container and row, nothing against it there."""
    recorded = asked["recorded"]
    for element in asked["found"]:
        same_place = all(element.get(key) == recorded.get(key) for key in ("container", "row"))
        if same_place and not element["conflicts"]:
            return int(element["index"])
    return None


def same_name(asked: dict[str, Any]) -> int | None:
    """A careless model: whatever still shows the recorded name (a promo's look-alike, say)."""
    return next((e["index"] for e in asked["found"] if e.get("name") == asked["recorded"]["name"]), None)


def first(asked: dict[str, Any]) -> int | None:
    """A model that always takes the best-scored element: only the checks before acting stand in its way."""
    return 0


POLICIES: dict[str, Policy] = {"place": where_it_was, "name": same_name, "first": first}


def answering(choose: Policy) -> Script:
    """The scripted server's answer under `choose`."""

    def script(turn: Turn) -> dict[str, Any]:
        return answer_json({"index": choose(question(turn.messages[-1]["content"])), "reason": REASON})

    return script
