"""A replayed step's action on the element its resolution verified, through the element helpers the tools use.

A fill goes through elements/filling.py (a date picker's own setter, arrow keys for a slider, Playwright's
fill for a text field), a select through elements/choosing.py (a widget's mirrored <select>, its options
clicked), a check through elements/checkables.py (the label a theme draws over its hidden input): the
functions browser_fill, browser_select and browser_check call, so a step replays the way it was recorded.

Those helpers take a Locator; the verified element is an ElementHandle. It is pinned for the action with
a one-off attribute, so the locator finds exactly that element and no other (an element the page renders
anew loses the pin, and the helper then fails and the step is resolved and verified again).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

import msgspec
from playwright.async_api import ElementHandle, Locator, Page
from playwright.async_api import Error as PlaywrightError

from browserd.daemon.elements.checkables import set_checked
from browserd.daemon.elements.choosing import choose
from browserd.daemon.elements.dragging import drag
from browserd.daemon.elements.filling import PICKERS_OWN, fill_field
from browserd.daemon.errors import ElementNotFound, ExecutionError
from browserd.daemon.flows.flow_model import Step
from browserd.daemon.runtime.page_js import load_js

_PIN = "data-browserd-step"
_PIN_JS = load_js("browserd.daemon.flows.replay", "pin.js")
_UNPIN_JS = load_js("browserd.daemon.flows.replay", "unpin.js")
# Steps whose action goes through an element helper of the tools (the rest act on the handle directly).
_THROUGH_HELPERS = frozenset({"fill", "select", "check", "uncheck"})


@dataclass
class Acted:
    setter: str | None = None  # the element helper that took a fill, select or check
    read: dict[str, Any] | None = None  # what an extract step read, for the run's outputs


@asynccontextmanager
async def pinned(element: ElementHandle) -> AsyncIterator[Locator]:
    """A locator that finds the verified element alone, while the action runs."""
    frame = await element.owner_frame()
    if frame is None:
        raise ElementNotFound("the recorded element left the page before the step could act on it")
    token = secrets.token_hex(6)
    await element.evaluate(_PIN_JS, [_PIN, token])
    try:
        yield frame.locator(f'[{_PIN}="{token}"]')
    finally:
        with suppress(PlaywrightError):  # gone with a navigation the action caused
            await element.evaluate(_UNPIN_JS, _PIN)


async def act_on_element(
    page: Page,
    step: Step,
    target: ElementHandle,
    end: ElementHandle | None,
    value: str,
    timeout_ms: float,
) -> Acted:
    """Do the step's action on `target` (and drop target `end`); `value` is the step's value rendered with the
    run's variables. A helper's error may quote that value (a field that did not take it): the caller scrubs
    sensitive values out of it."""
    if step.type not in _THROUGH_HELPERS:
        return await _on_handle(page, step, target, end, timeout_ms)
    described = _described(step)
    async with pinned(target) as locator:
        if step.type == "fill":
            filled = await fill_field(page, locator, described, value, timeout_ms)
            if step.setter in PICKERS_OWN and filled.setter != step.setter:
                # The form may send the picker's own state (flatpickr's altInput): the events alone do not reach it.
                raise ExecutionError(
                    f"{described} was recorded through the {step.setter} date picker's own setter, which the page "
                    "does not offer now: its value was set with input and change events only",
                    hint="The page's date picker changed or has not started: check the page, then record the step "
                    "again.",
                    recorded=step.setter,
                    replayed=filled.setter,
                )
            return Acted(setter=filled.setter)
        if step.type == "select":
            wanted = msgspec.json.decode(step.value or "{}")
            chosen = await choose(page, locator, described, wanted.get("labels"), wanted.get("values"), timeout_ms)
            return Acted(setter=chosen.setter)
        return Acted(setter=(await set_checked(locator, described, step.type == "check", timeout_ms)).setter)


async def _on_handle(
    page: Page, step: Step, target: ElementHandle, end: ElementHandle | None, timeout_ms: float
) -> Acted:
    kind = step.type
    if kind in ("click", "dblclick"):
        await (target.click if kind == "click" else target.dblclick)(timeout=timeout_ms)
    elif kind == "hover":
        await target.hover(timeout=timeout_ms)
    elif kind == "scroll":
        await target.scroll_into_view_if_needed(timeout=timeout_ms)
        box = await target.bounding_box() if step.delta else None
        if step.delta and box is not None:
            # A person's scrolling inside this element (a feed, a list): the wheel over it, by as much.
            await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            dx, dy = step.delta[:2]
            await page.mouse.wheel(dx, dy)
    elif kind == "key":
        for key in (step.keys or "").split():
            await target.press(key, timeout=timeout_ms)
    elif kind == "drag":
        if end is None:
            raise ElementNotFound("the drag's drop target is not on the page")
        await drag(page, target, end, timeout_ms, step.path or ())
    elif kind == "extract":
        what = step.value or "text"
        if what == "value":
            read: str | None = await target.input_value(timeout=timeout_ms)
        elif what.startswith("attribute:"):
            read = await target.get_attribute(what.removeprefix("attribute:"))
        else:
            read = await target.inner_text()
        return Acted(read={what.split(":", 1)[0]: read})
    return Acted()


def _described(step: Step) -> str:
    """How a helper's error names the step's element: by the step and the recorded role and name."""
    fingerprint = step.target.fingerprint if step.target is not None else None
    if fingerprint is None:
        return f"step {step.id}'s element"
    what = fingerprint.role or fingerprint.tag or "element"
    return f"step {step.id}'s {what} {fingerprint.name!r}" if fingerprint.name else f"step {step.id}'s {what}"
