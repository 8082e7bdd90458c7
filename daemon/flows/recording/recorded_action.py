"""What a tool did on a tab, as a flow step will say it: the typed action a recorder turns into a step.

Each action tool declares the action it records (`tab_tool(..., records=...)` in tools/tabtool.py) from its
parameters; targets are still refs or selectors here, and the recorder describes them (candidates and
fingerprint) before the tool acts. Once the tool has succeeded, the wrapper hands the recorder the element
helper that took the action (TabCall.setter: "flatpickr", "mirror", "keys"...), kept on the step so that a
replay goes through the same one.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class _Action(msgspec.Struct, kw_only=True):
    pass


class Navigate(_Action):
    url: str


class MoveInHistory(_Action):
    move: Literal["back", "forward", "reload"]


class Click(_Action):
    target: str
    double: bool = False


class Fill(_Action):
    """A value written into a field (browser_fill, browser_type): it becomes a variable of the flow."""

    target: str
    value: str


class Press(_Action):
    keys: str
    target: str | None = None


class Choose(_Action):
    target: str
    labels: list[str] | None = None
    values: list[str] | None = None


class SetChecked(_Action):
    target: str
    checked: bool


class Hover(_Action):
    target: str


class Scroll(_Action):
    """Into view (a target without a delta), by a wheel delta over the page, or over a target."""

    target: str | None = None
    delta: tuple[int, int] = (0, 0)


class Drag(_Action):
    source: str
    target: str


class WaitForText(_Action):
    text: str


class Read(_Action):
    """An element's text, value or attribute, which a replay reads into the run's outputs."""

    target: str
    what: Literal["text", "value", "attribute"]
    attribute: str | None = None


RecordedAction = (
    Navigate | MoveInHistory | Click | Fill | Press | Choose | SetChecked | Hover | Scroll | Drag | WaitForText | Read
)
