"""A flow's replayed fill, through the setters browser_fill uses, chosen the same way (browser_fill itself,
tools/actions.py, starts a plain field's fill while its ref is checked and names its setter from here).

A text field takes Playwright's fill; an ARIA slider or spinbutton is moved by its arrow keys; a read-only
date picker input is set through the picker's own setter (flatpickr, jQuery UI) or, failing one, with the
events a picker listens to. Which of these took the value is the `setter` a recorded step keeps, so a replay
of the step goes the same way (daemon/flows/replay/acting.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from playwright.async_api import Locator, Page

from browserd.daemon.elements.fields import ARIA_VALUES, FieldInfo, check_taken, field_info, input_value
from browserd.daemon.elements.keyed_values import move_by_keys, set_picker_value
from browserd.daemon.elements.usable import refused

# The setters a fill goes through: Playwright's fill, arrow keys, a picker input's value with its events, or
# the picker's own setter (keyed_values.Picked.setter names it: "flatpickr", "datepicker").
NATIVE_FILL, ARROW_KEYS, PICKER_EVENTS = "fill", "keys", "picker"
PICKERS_OWN = frozenset({"flatpickr", "datepicker"})


@dataclass(frozen=True)
class Filled:
    stored: str  # the value in the field's own format (a date as 2017-10-20)
    setter: str  # which setter took it (above)
    note: str  # how, for the answer; "" when it was a plain fill of the value as given


async def fill_field(
    page: Page, locator: Locator, described: str, value: str, timeout_ms: float | None, plain_text: bool = False
) -> Filled:
    """Set the field to `value` through the setter its kind needs; fail when the field did not take it.
    `plain_text`: the snapshot already showed an editable one-line textbox, so no closer look is needed."""
    # What kind of field it is decides the format it stores and the error that helps when it is no field;
    # the same read says whether it is disabled or read-only, so the fill fails at once then. (A plain
    # textbox disabled since its snapshot fails when Playwright's fill gives up waiting for it.)
    field = FieldInfo("text") if plain_text else await field_info(locator, described, timeout_ms)
    if field.disabled or (field.readonly and not field.picker):
        raise refused(described, "fill", "disabled" if field.disabled else "read-only")
    stored = await input_value(page, field, value, described)
    note = f"It holds {stored!r}, the field's own format for {value!r}." if stored != value else ""
    if field.kind in ARIA_VALUES:
        said = await move_by_keys(locator, field, stored, described, timeout_ms)
        return Filled(stored, ARROW_KEYS, f"It is a {field.described} moved by arrow keys; it now says {said!r}.")
    if field.picker:
        picked = await set_picker_value(locator, stored, timeout_ms)
        if picked.setter:
            # The picker's setter writes the field in its own format ("October 20, 2017"): that is the value taking.
            return Filled(stored, picked.setter, picked.note)
        setter, note = PICKER_EVENTS, picked.note
    else:
        await locator.fill(stored, timeout=timeout_ms)
        setter = NATIVE_FILL
    # Pages rewrite or refuse values (masks, maxlength, scripts): a fill is done only when the value took.
    await check_taken(locator, field, stored, described, timeout_ms)
    return Filled(stored, setter, note)
