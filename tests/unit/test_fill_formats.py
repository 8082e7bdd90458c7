"""What browser_fill stores in typed inputs (daemon/elements/fields.py), without a browser: the formats
people write become the one format each input type holds; anything else is INVALID_PARAMETER naming it."""

from __future__ import annotations

import pytest

from browserd.daemon.elements.fields import FORMATS, FieldInfo, input_value
from browserd.daemon.errors import InvalidParameter

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("kind", "written", "stored"),
    [
        ("date", "10/20/2017", "2017-10-20"),
        ("date", "2017-10-20", "2017-10-20"),
        ("date", "Oct 20 2017", "2017-10-20"),
        ("date", "20 October 2017", "2017-10-20"),
        ("time", "3:30 PM", "15:30"),
        ("time", "15:30", "15:30"),
        ("time", "07:05:09", "07:05:09"),
        ("datetime-local", "2017-10-20T15:30", "2017-10-20T15:30"),
        ("datetime-local", "Oct 20 2017 3:30 pm", "2017-10-20T15:30"),
        ("month", "Oct 2017", "2017-10"),
        ("month", "2017-10", "2017-10"),
        ("week", "2017-W42", "2017-W42"),
        ("week", "2017w7", "2017-W07"),
        ("week", "2017-10-20", "2017-W42"),
        ("week", "2021-01-01", "2020-W53"),  # ISO weeks: 1 January 2021 is in 2020's last week
        ("number", "12", "12"),
        ("number", "-1.5e3", "-1.5e3"),
        ("range", "7", "7"),
        ("text", "anything: at #all", "anything: at #all"),
    ],
)
async def test_written_values_become_the_inputs_format(kind: str, written: str, stored: str) -> None:
    field = FieldInfo(kind, "0" if kind == "range" else "", "10" if kind == "range" else "")
    assert await input_value(None, field, written, "the field") == stored  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "written"),
    [("date", "the day after"), ("time", "teatime"), ("number", "twelve"), ("number", "1,000"), ("range", "11")],
)
async def test_values_an_input_cannot_hold_name_its_format(kind: str, written: str) -> None:
    field = FieldInfo(kind, "0" if kind == "range" else "", "10" if kind == "range" else "")
    with pytest.raises(InvalidParameter) as raised:
        await input_value(None, field, written, "the field")  # type: ignore[arg-type]
    error = raised.value
    assert error.details["field"] == "value" and error.details["kind"] == kind
    expected = "from 0 to 10" if kind == "range" else FORMATS[kind]
    assert expected in error.message and error.recover_hint.startswith("Pass "), error.message
