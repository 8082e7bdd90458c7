"""A replayed step's action on the element its resolution verified, through the element helpers the tools use.

A fill goes through elements/filling.py (a date picker's own setter, arrow keys for a slider, Playwright's
fill for a text field), a select through elements/choosing.py (a widget's mirrored <select>, its options
clicked), a check through elements/checkables.py (the label a theme draws over its hidden input), a click or
hover through elements/clicking.py (a checkbox through its label, patience with covers, a block's content),
a drag through elements/dragging.py, a wheel through elements/wheel.py: the functions the browser tools call,
so a step replays the way it was recorded. The element is the one resolution.py marked, named by its locator.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from playwright.async_api import Locator, Page

from browserd.daemon.elements.checkables import set_checked
from browserd.daemon.elements.choosing import choose
from browserd.daemon.elements.clicking import click, hover
from browserd.daemon.elements.dragging import drag
from browserd.daemon.elements.filling import PICKERS_OWN, fill_field
from browserd.daemon.elements.wheel import wheel_over
from browserd.daemon.errors import ElementNotFound, ExecutionError
from browserd.daemon.flows.flow_model import Step
from browserd.daemon.flows.replay.resolution import Resolved


@dataclass
class Acted:
    setter: str | None = None  # the element helper that took a fill, select or check
    read: dict[str, Any] | None = None  # what an extract step read, for the run's outputs
    # A fill's check that the field took the value, for the caller to run before the step counts as done.
    verify: Callable[[], Awaitable[None]] | None = None


async def act_on_element(
    page: Page, step: Step, target: Resolved, end: Resolved | None, value: str, timeout_ms: float
) -> Acted:
    """Do the step's action on `target` (and drop target `end`); `value` is the step's value rendered with the
    run's variables. A helper's error may quote that value (a field that did not take it): the caller scrubs
    sensitive values out of it."""
    locator = _marked(target)
    described = _described(step)
    kind = step.type
    if kind == "fill":
        filled = await fill_field(page, locator, described, value, timeout_ms, target.field)
        if step.setter in PICKERS_OWN and filled.setter != step.setter:
            # The form may send the picker's own state (flatpickr's altInput): the events alone do not reach it.
            raise ExecutionError(
                f"{described} was recorded through the {step.setter} date picker's own setter, which the page "
                "does not offer now: its value was set with input and change events only",
                hint="The page's date picker changed or has not started: check the page, then record the step again.",
                recorded=step.setter,
                replayed=filled.setter,
            )
        return Acted(setter=filled.setter, verify=filled.verify)
    if kind == "select":
        wanted = msgspec.json.decode(step.value or "{}")
        chosen = await choose(page, locator, described, wanted.get("labels"), wanted.get("values"), timeout_ms)
        return Acted(setter=chosen.setter)
    if kind in ("check", "uncheck"):
        return Acted(setter=(await set_checked(locator, described, kind == "check", timeout_ms)).setter)
    if kind in ("click", "dblclick"):
        await click(page, locator, described, timeout_ms, target.role, double=kind == "dblclick")
    elif kind == "hover":
        # An element without a role of its own (a div, a span) is what a snapshot calls generic.
        await hover(page, locator, timeout_ms, target.role or "generic")
    elif kind == "scroll" and step.delta:
        # A person's scrolling inside this element (a feed, a list): the wheel over it, by as much.
        await wheel_over(page, locator, step.delta[0], step.delta[1], timeout_ms)
    elif kind == "scroll":
        await locator.scroll_into_view_if_needed(timeout=timeout_ms)
    elif kind == "key":
        for key in (step.keys or "").split():
            await locator.press(key, timeout=timeout_ms)
    elif kind == "drag":
        if end is None:
            raise ElementNotFound("the drag's drop target is not on the page")
        await drag(page, locator, _marked(end), timeout_ms, step.path or ())
    elif kind == "extract":
        return Acted(read=await _read(locator, step.value or "text", timeout_ms))
    return Acted()


def _marked(found: Resolved) -> Locator:
    if found.locator is None:
        raise ElementNotFound("the recorded element left the page before the step could act on it")
    return found.locator


async def _read(locator: Locator, what: str, timeout_ms: float) -> dict[str, Any]:
    if what == "value":
        read: str | None = await locator.input_value(timeout=timeout_ms)
    elif what.startswith("attribute:"):
        read = await locator.get_attribute(what.removeprefix("attribute:"), timeout=timeout_ms)
    else:
        read = await locator.inner_text(timeout=timeout_ms)
    return {what.split(":", 1)[0]: read}


def _described(step: Step) -> str:
    """How a helper's error names the step's element: by the step and the recorded role and name."""
    fingerprint = step.target.fingerprint if step.target is not None else None
    if fingerprint is None:
        return f"step {step.id}'s element"
    what = fingerprint.role or fingerprint.tag or "element"
    return f"step {step.id}'s {what} {fingerprint.name!r}" if fingerprint.name else f"step {step.id}'s {what}"
