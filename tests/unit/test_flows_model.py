"""Flows without a browser: templating, variables as a schema, the stored format (issue 14, S4-65..S4-67,
S4-110, S4-112, D-48, D-50)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows.flow_model import Flow, VariableDef, decode, encode
from browserd.daemon.flows.placeholders import render, variables_in
from browserd.daemon.flows.variables import args_struct, check_variables, parse_args
from browserd.daemon.tools.tool_registry import Params, input_schema


def flow(*variables: VariableDef) -> Flow:
    return Flow(id="flow_test", name="t", variables=list(variables))


def test_templates_substitute_variables_and_outputs_and_leave_other_braces() -> None:
    outputs = {"s2": {"text": "Bob"}}
    assert render("{email} / ${vars.n} / ${outputs.s2.text}", {"email": "a@b.c", "n": 3}, outputs) == "a@b.c / 3 / Bob"
    assert render("{notavar} {x", {}, {}) == "{notavar} {x"
    assert variables_in("{a} and {b} and ${vars.c}") == ["a", "b"]


def test_a_template_path_to_nothing_is_a_clear_error() -> None:
    with pytest.raises(InvalidParameter) as caught:
        render("${outputs.s9.text}", {}, {})
    assert "s9" in caught.value.message and caught.value.recover_hint


def test_no_code_runs_in_a_template() -> None:
    assert render("{__class__}", {}, {}) == "{__class__}"
    assert render("${vars.__class__}", {"__class__": "x"}, {}) == "x"


def test_variables_become_a_schema_at_the_root_with_types_and_required() -> None:
    f = flow(
        VariableDef(key="email", pattern="^.+@.+$"),
        VariableDef(key="password", sensitive=True),
        VariableDef(key="plan", type="enum", options=["free", "pro"], required=False, default="free"),
        VariableDef(key="count", type="number", required=False),
    )
    schema = input_schema(args_struct(f, Params))
    props = schema["properties"]
    assert props["email"]["pattern"] == "^.+@.+$"
    assert "Sensitive" in props["password"]["description"]
    assert props["plan"]["enum"] == ["free", "pro"]
    assert set(schema["required"]) == {"email", "password"}
    assert parse_args(f, {"email": "a@b.c", "password": "pw"}, Params) == {
        "email": "a@b.c",
        "password": "pw",
        "plan": "free",
    }


@pytest.mark.parametrize(
    "args", [{"password": "pw"}, {"email": "nope", "password": "pw"}, {"email": "a@b", "password": "pw", "x": 1}]
)
def test_bad_args_name_the_field_never_the_sensitive_value(args: dict[str, Any]) -> None:
    f = flow(VariableDef(key="email", pattern="^.+@.+$"), VariableDef(key="password", sensitive=True))
    with pytest.raises(InvalidParameter) as caught:
        parse_args(f, args, Params)
    assert "pw" not in caught.value.message


@pytest.mark.parametrize(
    "variable",
    [
        VariableDef(key="tabTarget"),
        VariableDef(key="9lives"),
        VariableDef(key="pin", sensitive=True, default="1234"),
        VariableDef(key="kind", type="enum"),
    ],
)
def test_variables_that_cannot_work_are_refused(variable: VariableDef) -> None:
    with pytest.raises(InvalidParameter):
        check_variables(flow(variable))


def test_a_flow_round_trips_and_a_newer_schema_is_refused() -> None:
    f = flow(VariableDef(key="email"))
    assert decode(encode(f)) == f
    raw = msgspec.json.decode(encode(f))
    raw["schema"] = 99
    with pytest.raises(ValueError, match="not one this browserd understands"):
        decode(raw)
