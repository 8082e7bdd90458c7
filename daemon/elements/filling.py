"""One fill, for browser_fill and a flow's replay alike: the setter a field's kind needs, chosen and used here.

A text field takes Playwright's fill; an ARIA slider or spinbutton is moved by its arrow keys; a read-only
date picker input is set through the picker's own setter (flatpickr, jQuery UI) or, failing one, with the
events a picker listens to. Which of these took the value is the `setter` a recorded step keeps, so a replay
of the step goes the same way (daemon/flows/replay/acting.py). The callers differ only in how they name the
field (a ref, or the element a replay verified) and in when they read the value back (`Filled.verify`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from playwright.async_api import Locator, Page

from browserd.daemon.elements.fields import ARIA_VALUES, FieldInfo, check_taken, input_value, judged, read_field
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
    # The read that fails when the page dropped or rewrote the value (masks, maxlength, scripts), for the caller
    # to run before it says "filled": at once, or while the page settles (one round trip less to wait for).
    # None when the setter's own answer already says the value took (arrow keys, a picker's own setter).
    verify: Callable[[], Awaitable[None]] | None


async def fill_field(
    page: Page,
    locator: Locator,
    described: str,
    value: str,
    timeout_ms: float | None,
    field: FieldInfo | None = None,
    under_way: Awaitable[None] | None = None,
) -> Filled:
    """Set the field to `value` through the setter its kind needs; fail at once when it is disabled, read-only
    or no field. `field`: what the field is when the caller already knows (a snapshot's editable textbox, the
    reading a replay's resolution took), saving the round trip that reads it. `under_way`: Playwright's fill of
    `value` into that plain text field, already started (browser_fill starts it while the ref is checked)."""
    field = judged(field if field is not None else await read_field(locator, timeout_ms), described)
    if field.disabled or (field.readonly and not field.picker):
        raise refused(described, "fill", "disabled" if field.disabled else "read-only")
    stored = await input_value(page, field, value, described)
    note = f"It holds {stored!r}, the field's own format for {value!r}." if stored != value else ""
    if field.kind in ARIA_VALUES:
        said = await move_by_keys(locator, field, stored, described, timeout_ms)
        return Filled(stored, ARROW_KEYS, f"It is a {field.described} moved by arrow keys; it now says {said!r}.", None)
    if field.picker:
        picked = await set_picker_value(locator, stored, timeout_ms)
        if picked.setter:
            # The picker's setter writes the field in its own format ("October 20, 2017"): that is the value taking.
            return Filled(stored, picked.setter, picked.note, None)
        setter, note = PICKER_EVENTS, picked.note
    elif under_way is not None:
        await under_way
        setter = NATIVE_FILL
    else:
        await locator.fill(stored, timeout=timeout_ms)
        setter = NATIVE_FILL

    async def verify() -> None:
        await check_taken(locator, field, stored, described, timeout_ms)

    return Filled(stored, setter, note, verify)
