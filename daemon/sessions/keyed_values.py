"""Values that no text can be written into: ARIA sliders and spinbuttons, and read-only picker inputs.

A `role=slider` div (rc-slider, MUI, noUiSlider) takes no text; a person moves it with the arrow keys,
and every library implements those keys (the WAI-ARIA slider pattern). Filling one presses the arrows
until `aria-valuenow` is the wanted number. A date picker's input (flatpickr, pikaday) is read-only
so that people pick in its calendar; its value is set directly, with the events a picker sends, and the
answer says that the calendar is the way a person would pick.
"""

from __future__ import annotations

from playwright.async_api import Locator

from browserd.daemon.errors import ExecutionError
from browserd.daemon.sessions.fields import FieldInfo

# More presses than this are not a slider a person would move by keys (a step of 1 over a wide range).
MAX_PRESSES = 400
_NOW_JS = "(el) => Number(el.getAttribute('aria-valuenow'))"
# What a picker's own code does when a day is picked: the value, then input and change.
_SET_VALUE_JS = """(el, value) => {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, value);
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return el.value;
}"""


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
    text = await locator.evaluate("(el) => el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow')")
    return str(text)


async def set_picker_value(locator: Locator, value: str, timeout_ms: float | None) -> None:
    await locator.evaluate(_SET_VALUE_JS, value, timeout=timeout_ms)
