"""Form fields for browser_fill: what kind a field is, the value in the format it stores, and whether it took.

Date, time, month, week, color and range inputs store one exact format each (HTML's), and a value in
any other format is dropped without a word; people and models write `10/20/2017`, `Oct 20 2017` or
`3:30 PM`. Those are turned into the field's format here, or refused with the format named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dateutil import parser as dateparser  # type: ignore[import-untyped]
from playwright.async_api import Locator, Page

from browserd.daemon.errors import ElementNotInteractable, ExecutionError, InvalidParameter
from browserd.daemon.runtime.page_js import load_js

_FIELD_JS = load_js("browserd.daemon.elements", "field.js")
_COLOR_JS = load_js("browserd.daemon.elements", "color.js")

# ARIA widgets with a value that keys move (rc-slider, MUI, noUiSlider...): filled by key presses.
ARIA_VALUES = frozenset({"aria-slider", "aria-spinbutton"})
TEXT_KINDS = frozenset({"text", "search", "email", "password", "tel", "url", "textarea", "contenteditable"})
# Kinds fill cannot set, and the call that does what was meant.
_OTHER_CALLS = {
    "checkbox": "browser_check or browser_uncheck",
    "radio": "browser_check",
    "select": "browser_select",
    "file": "browser_upload",
    "button": "browser_click",
    "submit": "browser_click",
    "reset": "browser_click",
    "image": "browser_click",
}
# What each input stores (HTML's value formats), said in errors.
FORMATS = {
    "date": "a date such as 2017-10-20 (also 10/20/2017 or Oct 20 2017)",
    "time": "a time such as 15:30 (also 3:30 PM)",
    "datetime-local": "a date and time such as 2017-10-20T15:30 (also 10/20/2017 3:30 PM)",
    "month": "a month such as 2017-10 (also Oct 2017)",
    "week": "a week such as 2017-W42 (or any date in it)",
    "color": "a color such as #336699 (also #369, rgb(51, 102, 153) or a CSS name)",
    "number": "a number such as 3 or -1.5",
    "range": "a number",
    "aria-slider": "a number",
    "aria-spinbutton": "a number",
}
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_WEEK = re.compile(r"^(\d{4})-?W(\d{1,2})$", re.I)
_HEX = re.compile(r"^#([0-9a-f]{3}|[0-9a-f]{6})$", re.I)
# Parts a written date leaves out (a month without its day) come from here, not from today.
_DEFAULT = datetime(2000, 1, 1)


@dataclass(frozen=True)
class FieldInfo:
    kind: str  # an input's type, or textarea, select, contenteditable, or the tag of something else
    min: str = ""
    max: str = ""
    disabled: bool = False
    readonly: bool = False
    picker: bool = False  # a read-only input that a date/time picker fills

    @property
    def described(self) -> str:
        return {
            "textarea": "text area",
            "contenteditable": "rich-text editor",
            "aria-slider": "slider",
            "aria-spinbutton": "spinbutton",
        }.get(self.kind, f"{self.kind} field")


# What field.js answers of an element, for a program that reads it in the same round trip as its own work
# (a replay's resolution, flows/fingerprint_js.py): a prelude declaring `fieldOf`.
FIELD_PRELUDE = f"const fieldOf = {_FIELD_JS};"


async def read_field(locator: Locator, timeout_ms: float | None) -> FieldInfo:
    """What the element a fill would act on is (not yet judged: see judged)."""
    return FieldInfo(*await locator.evaluate(_FIELD_JS, timeout=timeout_ms))


def judged(field: FieldInfo, described: str) -> FieldInfo:
    """`field` when a fill can set it; else a clear error naming the right call."""
    kind = field.kind
    other = _OTHER_CALLS.get(kind)
    if other is not None:
        raise ElementNotInteractable(
            f"{described} is a {field.described}: fill does not set it",
            hint=f"Use {other} on it.",
            kind=kind,
            action="fill",
            target=described,
        )
    if kind not in TEXT_KINDS and kind not in FORMATS and kind not in ARIA_VALUES:
        raise ElementNotInteractable(
            f"{described} is a <{kind}>, not a field one can fill",
            hint="Fill a textbox, searchbox or spinbutton from browser_snapshot (a label's ref works too); "
            "for a custom widget, browser_click it and then browser_type.",
            kind=kind,
            action="fill",
            target=described,
        )
    return field


async def input_value(page: Page, field: FieldInfo, value: str, described: str) -> str:
    """`value` in the format the field stores, or INVALID_PARAMETER naming that format."""
    if field.kind not in FORMATS:
        return value
    text = value.strip()
    stored = await _color(page, text) if field.kind == "color" else _formatted(field, text)
    if stored is None:
        raise InvalidParameter(
            f"{described} is a {field.described}: {value!r} is not {FORMATS[field.kind]}",
            hint=f"Pass {FORMATS[field.kind]}.",
            field="value",
            kind=field.kind,
        )
    if field.kind in ("range", "aria-slider", "aria-spinbutton") and (
        field.kind == "range" or (field.min and field.max)
    ):
        low, high = float(field.min or 0), float(field.max or 100)
        if not low <= float(stored) <= high:
            raise InvalidParameter(
                f"{described} is a slider from {field.min or 0} to {field.max or 100}: {value!r} is outside it",
                hint=f"Pass a number from {field.min or 0} to {field.max or 100}.",
                field="value",
                kind=field.kind,
            )
    return stored


def _formatted(field: FieldInfo, text: str) -> str | None:
    if field.kind in ("number", "range", *ARIA_VALUES):
        return text if _NUMBER.match(text) else None
    if field.kind == "week":
        week = _WEEK.match(text)
        if week:
            return f"{int(week[1]):04d}-W{int(week[2]):02d}"
    when = parse_when(text)
    if when is None:
        return None
    if field.kind == "date":
        return when.strftime("%Y-%m-%d")
    if field.kind == "month":
        return when.strftime("%Y-%m")
    if field.kind == "week":
        year, week_number, _day = when.isocalendar()
        return f"{year:04d}-W{week_number:02d}"
    clock = when.strftime("%H:%M:%S" if when.second else "%H:%M")
    return clock if field.kind == "time" else f"{when:%Y-%m-%d}T{clock}"


def parse_when(text: str) -> datetime | None:
    """A date or time as people write it (`10/20/2017`, `Oct 20 2017`, `3:30 PM`); None when it is none."""
    try:
        when: datetime = dateparser.parse(text, default=_DEFAULT)
    except (ValueError, OverflowError):
        return None
    return when


async def _color(page: Page, text: str) -> str | None:
    if _HEX.match(text):
        hex_digits = text[1:].lower()
        return "#" + (hex_digits if len(hex_digits) == 6 else "".join(c * 2 for c in hex_digits))
    found: Any = await page.evaluate(_COLOR_JS, text)
    return found if isinstance(found, str) else None


_VALUE_JS = load_js("browserd.daemon.elements", "field_value.js")


async def field_value(locator: Locator, described: str, timeout_ms: float | None = None) -> str:
    """The value of an input, a rich-text editor or an ARIA slider/spinbutton; a clear error for others."""
    value = await locator.evaluate(_VALUE_JS, timeout=timeout_ms)
    if value is None:
        raise ElementNotInteractable(
            f"{described} has no value: it is no input, editor, slider or spinbutton",
            hint="Use browser_get with what='text' for its text, or pick the field's ref from browser_snapshot.",
            action="get value",
            target=described,
        )
    return str(value)


async def check_taken(
    locator: Locator, field: FieldInfo, stored: str, described: str, timeout_ms: float | None
) -> None:
    """Fail when the field does not hold what was filled: the page dropped or changed it."""
    if field.kind == "contenteditable":
        now = await locator.inner_text(timeout=timeout_ms)
    else:
        now = await locator.input_value(timeout=timeout_ms)
    if _same(field, now, stored):
        return
    raise ExecutionError(
        f"{described} did not take the value: it holds {now!r} after filling {stored!r}",
        hint=f"The {field.described} refuses or rewrites what is filled (a mask, a length limit, a script): "
        "browser_type types it key by key as a person does; browser_snapshot shows the field now.",
        kind=field.kind,
        filled=stored,
        value=now,
    )


def _same(field: FieldInfo, now: str, stored: str) -> bool:
    if field.kind in ("number", "range"):
        try:
            return float(now) == float(stored)
        except ValueError:
            return False
    if field.kind == "contenteditable":
        return " ".join(now.split()) == " ".join(stored.split())
    # Masks that only add separators or change case ("5551234" shown as "555-1234") kept the value.
    return now == stored or _letters(now) == _letters(stored) != ""


def _letters(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())
