"""V2 flows without a browser: conditions, graph checks at save time, the schema 1 -> 2 migration, the terse
tool schema (issue 14 item 5, reference/004 §2, S4-110)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows import conditions
from browserd.daemon.flows.flow_model import SCHEMA, Flow, VariableDef, decode
from browserd.daemon.flows.graph import check_graph, graph_of
from browserd.daemon.flows.placeholders import value
from browserd.daemon.flows.variables import tool_schema

SCOPE_VARS = {"country": "FR", "count": 3, "names": ["Ann", "Bob"], "on": True}
SCOPE_OUTPUTS = {"n1": {"status": 200, "text": "Hello Bob", "empty": ""}}


def holds(expression: str) -> bool:
    return conditions.holds(conditions.check(expression), SCOPE_VARS, SCOPE_OUTPUTS)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("${outputs.n1.status} == 200", True),
        ("${outputs.n1.status} >= 300", False),
        ('{country} != "FR"', False),
        ("{country} == 'FR' && ${vars.count} > 2", True),
        ("!${outputs.n1.empty} || false", True),
        ("${outputs.n1.text} contains 'Bob'", True),
        ('{names} contains "Cy"', False),
        ("${outputs.n9.text}", False),  # names nothing: null, not an error
        ("${outputs.n9.text} == null", True),
        ("({on} and not false) or 0", True),
        ('"{country}-x" == "FR-x"', True),
    ],
)
def test_conditions_compare_and_combine_without_evaluating_code(expression: str, expected: bool) -> None:
    assert holds(expression) is expected


@pytest.mark.parametrize("expression", ["", "__import__('os')", "1 +", "(true", "{a} == ", "x == 1", "1 ; 2"])
def test_a_condition_that_cannot_be_read_is_refused_with_the_syntax(expression: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        conditions.check(expression)
    assert caught.value.details["field"] == "condition" and "contains" in caught.value.recover_hint


def test_a_template_naming_one_value_keeps_its_type() -> None:
    assert value("{names}", SCOPE_VARS, {}) == ["Ann", "Bob"]
    assert value("${outputs.n1.status}", {}, SCOPE_OUTPUTS) == 200
    assert value("n={count}", SCOPE_VARS, {}) == "n=3"


def node(node_id: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": node_id, "type": kind, **fields}


def graph(nodes: list[dict[str, Any]], edges: list[tuple[str, str, str]]) -> Flow:
    raw = {
        "id": "flow_g",
        "name": "g",
        "schema": SCHEMA,
        "nodes": nodes,
        "edges": [{"from": a, "to": b, "on": on} for a, b, on in edges],
    }
    return decode(raw)


def test_a_loop_through_a_while_is_a_graph_that_starts_at_its_first_node() -> None:
    flow = graph(
        [node("a", "delay", ms=0), node("w", "while", condition="true", maxIterations=2), node("b", "delay", ms=0)],
        [("a", "w", "next"), ("w", "b", "body"), ("b", "w", "next")],
    )
    check_graph(flow)
    assert graph_of(flow).entry == "a" and graph_of(flow).after("w", "body") == "b"


@pytest.mark.parametrize(
    ("nodes", "edges", "said"),
    [
        ([node("a", "delay", ms=0), node("b", "delay", ms=0)], [("a", "b", "next"), ("b", "a", "next")], "cycle"),
        (
            [node("s", "delay", ms=0), node("a", "delay", ms=0), node("b", "delay", ms=0)],
            [("s", "a", "next"), ("a", "b", "next"), ("b", "a", "onError")],
            "cycle without a while",
        ),
        ([node("a", "delay", ms=0)], [("a", "zz", "next")], "names no node: `zz`"),
        ([node("a", "delay", ms=0), node("b", "delay", ms=0)], [("a", "b", "true")], "no `true` edge"),
        ([node("a", "if", condition="1 ==")], [], "condition"),
        ([node("a", "if", condition="true"), node("b", "delay", ms=0)], [("a", "b", "next")], "no `next` edge"),
        ([node("w", "while", condition="true")], [], "no `body` edge"),
        ([node("a", "http")], [], "needs `url`"),
        ([node("a", "click")], [], "needs a `target`"),
        ([node("a", "delay", ms=0), node("a", "delay", ms=0)], [], "two nodes"),
        (
            [node("a", "delay", ms=0), node("b", "delay", ms=0), node("c", "delay", ms=0)],
            [("a", "b", "next")],
            "c are never reached",
        ),
    ],
)
def test_a_bad_graph_is_refused_at_save_time_naming_what_to_fix(
    nodes: list[dict[str, Any]], edges: list[tuple[str, str, str]], said: str
) -> None:
    with pytest.raises(InvalidParameter) as caught:
        check_graph(graph(nodes, edges))
    assert said in caught.value.message and caught.value.recover_hint


def test_an_unknown_node_kind_or_too_many_lanes_is_refused_when_read() -> None:
    with pytest.raises(msgspec.ValidationError, match="nodes"):
        graph([node("a", "teleport")], [])
    with pytest.raises(msgspec.ValidationError, match="concurrency"):
        graph([node("a", "foreach", items="[]", concurrency=11)], [])


def test_a_schema_1_flow_migrates_and_its_steps_still_run_as_a_chain() -> None:
    old = {
        "id": "flow_old",
        "name": "old",
        "schema": 1,
        "steps": [node("s1", "delay", ms=0), node("s2", "delay", ms=0)],
    }
    flow = decode(old)
    assert flow.schema == SCHEMA and flow.nodes == [] and graph_of(flow).after("s1") == "s2"


def test_the_tool_schema_names_required_strings_only_and_describes_the_rest() -> None:
    flow = Flow(
        id="flow_t",
        name="t",
        variables=[
            VariableDef(key="email"),
            VariableDef(key="password", sensitive=True),
            VariableDef(key="count", type="number"),
            VariableDef(key="size", type="enum", options=["s", "m"], default="m"),
            VariableDef(key="note", required=False),
        ],
    )
    assert tool_schema(flow) == {
        "type": "object",
        "properties": {
            "count": {"type": "number"},
            "size": {"enum": ["s", "m"], "default": "m"},
            "note": {"type": "string"},
        },
        "required": ["email", "password", "count"],
    }
