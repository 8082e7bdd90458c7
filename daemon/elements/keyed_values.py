"""Values that no text can be written into: ARIA sliders and spinbuttons, and read-only picker inputs.

A `role=slider` div (rc-slider, MUI, noUiSlider) takes no text; a person moves it with the arrow keys,
and every library implements those keys (the WAI-ARIA slider pattern). Filling one presses the arrows
until `aria-valuenow` is the wanted number. A date picker's input (flatpickr, pikaday, jQuery UI) is
read-only so that people pick in its calendar, and the picker keeps its own state: the selected date,
often a hidden input the form sends (flatpickr's altInput shows "October 20, 2017" and sends 2017-10-20
from another field). Writing the visible input leaves that state behind, so the date goes through the
picker's own setter when the page exposes one (flatpickr's instance on the input, jQuery's datepicker);
otherwise the value is set with the events a picker listens to (pikaday reads its input on change), and
the answer says that the calendar is the way a person would pick.
"""

from __future__ import annotations

from dataclasses import dataclass

from playwright.async_api import Locator

from browserd.daemon.elements.fields import FieldInfo, parse_when
from browserd.daemon.errors import ExecutionError
from browserd.daemon.runtime.page_js import load_js

# More presses than this are not a slider a person would move by keys (a step of 1 over a wide range).
MAX_PRESSES = 400
_NOW_JS = load_js("browserd.daemon.elements", "aria_value_now.js")
_TEXT_JS = load_js("browserd.daemon.elements", "aria_value_text.js")
_SET_PICKER_JS = load_js("browserd.daemon.elements", "set_picker.js")


async def move_by_keys(
    locator: Locator, field: FieldInfo, stored: str, described: str, timeout_ms: float | None
) -> str:
    """Press the arrow keys until the ARIA slider or spinbutton says `stored`; answer what it says then."""
    wanted = float(stored)
    up, down = ("ArrowUp", "ArrowDown") if field.kind == "aria-spinbutton" else ("ArrowRight", "ArrowLeft")
    now = float(await locator.evaluate(_NOW_JS, timeout=timeout_ms))
    if now == wanted:
        return await _said(locator)
    key = up if wanted > now else down
    await locator.press(key, timeout=timeout_ms)
    after = float(await locator.evaluate(_NOW_JS, timeout=timeout_ms))
    step = abs(after - now)
    if step == 0:
        raise ExecutionError(
            f"{described} is a {field.described} that did not move when {key} was pressed",
            hint="Drag its handle with browser_drag, or browser_click the track where the value lies.",
            kind=field.kind,
        )
    presses = round(abs(wanted - after) / step)
    if presses > MAX_PRESSES:
        raise ExecutionError(
            f"{described} moves by {step:g} per key: reaching {stored} takes {presses} presses",
            hint="Press Home, End or PageUp/PageDown on it with browser_press, or drag its handle with browser_drag.",
            kind=field.kind,
        )
    for _ in range(presses):
        await locator.press(key, timeout=timeout_ms)
    final = float(await locator.evaluate(_NOW_JS, timeout=timeout_ms))
    if abs(final - wanted) >= step:
        raise ExecutionError(
            f"{described} stopped at {final:g}, not {stored}",
            hint=f"Its steps are {step:g} apart and its bounds are {field.min or '?'}..{field.max or '?'}: "
            "pass a value it can take.",
            kind=field.kind,
        )
    return await _said(locator)


async def _said(locator: Locator) -> str:
    text = await locator.evaluate(_TEXT_JS)
    return str(text)


@dataclass(frozen=True)
class Picked:
    setter: str | None  # the picker's own setter that took the date ("flatpickr", "datepicker"), or None
    shown: str  # what the field shows now (a picker formats it its own way: "October 20, 2017")

    @property
    def note(self) -> str:
        if self.setter:
            return f"It is a {self.setter} date picker: its own setter took the date, shown as {self.shown!r}."
        return (
            "It is a read-only picker input: its value was set with the input and change events; a picker that "
            "keeps its own state may not see it (browser_click opens its calendar to pick the day)."
        )


async def set_picker_value(locator: Locator, value: str, timeout_ms: float | None) -> Picked:
    """Set a read-only picker input to `value`, through the picker itself when the page exposes it."""
    when = parse_when(value)
    parts = None if when is None else [when.year, when.month, when.day, when.hour, when.minute]
    setter, shown = await locator.evaluate(_SET_PICKER_JS, [value, parts], timeout=timeout_ms)
    return Picked(setter, str(shown))
