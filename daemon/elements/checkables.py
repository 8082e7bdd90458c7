"""Checkboxes, radios and switches as widget libraries draw them, for browser_check and browser_uncheck.

Bootstrap, Material and most themes hide the real <input> (opacity 0 under its label, display:none, a
1 px clip) and let the label or a span draw the box. A person clicks what is drawn; Playwright's check
clicks the input itself and fails as "covered" or "not visible". Here the element that takes the click
is found first (the input, else its label), and the checked state is read back after the click.
"""

from __future__ import annotations

from dataclasses import dataclass

from playwright.async_api import Locator

from browserd.daemon.elements.at_rest import click_at_rest
from browserd.daemon.elements.overlays import patiently
from browserd.daemon.errors import ElementNotInteractable, ExecutionError
from browserd.daemon.runtime.page_js import load_js, with_prelude

_CHECKABLE = load_js("browserd.daemon.elements", "checkable.prelude.js")
_PROBE_JS = with_prelude(load_js("browserd.daemon.elements", "checkable_probe.js"), _CHECKABLE)
_CLICK_TARGET_JS = with_prelude(load_js("browserd.daemon.elements", "checkable_click_target.js"), _CHECKABLE)
_CHECKED_JS = with_prelude(load_js("browserd.daemon.elements", "checkable_checked.js"), _CHECKABLE)
_FOUND_JS = with_prelude(load_js("browserd.daemon.elements", "checkable_found.js"), _CHECKABLE)


# Snapshot roles of the elements this module clicks through their labels.
CHECKABLE_ROLES = frozenset({"checkbox", "radio"})
_VIA_LABEL = "Its input is hidden, so its label was clicked."


@dataclass
class Checkable:
    kind: str  # checkbox, radio, switch... or "none"
    checked: bool
    via_label: bool  # the click goes to its label, the input itself being hidden or covered
    click: str | None  # "target" (the target itself), "other" (a label or wrapper), None (nothing to click)
    disabled: bool


async def checkable(locator: Locator, described: str, action: str, timeout_ms: float | None) -> Checkable:
    """What `browser_check` toggles for this target, or a clear error when it has no checked state."""
    info = await locator.evaluate(_PROBE_JS, timeout=timeout_ms)
    if info["kind"] == "none":
        raise ElementNotInteractable(
            f"{described} is a <{info['tag']}> with no checked state a page exposes (no checkbox, radio or "
            "switch in or behind it)",
            hint="If it is a toggle drawn without ARIA, browser_click it and read the page's state; "
            "otherwise pick the checkbox or switch ref from browser_snapshot.",
            action=action,
            target=described,
        )
    return Checkable(
        kind=str(info["kind"]),
        checked=bool(info["checked"]),
        via_label=bool(info["viaLabel"]),
        click=info["click"],
        disabled=bool(info["disabled"]),
    )


# The setters a check goes through (a recorded step keeps which): a click on the control, or on its label.
CONTROL_CLICK, LABEL_CLICK = "click", "label"


@dataclass(frozen=True)
class Toggled:
    note: str  # how, for the answer; "" when it was plain
    setter: str  # CONTROL_CLICK or LABEL_CLICK


async def set_checked(locator: Locator, described: str, checked: bool, timeout_ms: float) -> Toggled:
    """Toggle the target to `checked` the way a person would."""
    action = "check" if checked else "uncheck"
    box = await checkable(locator, described, action, timeout_ms)
    if box.disabled:
        raise ElementNotInteractable(
            f"{described} is disabled", hint="Do what enables it first, then retry.", action=action, target=described
        )
    setter = LABEL_CLICK if box.via_label else CONTROL_CLICK
    if box.checked == checked:
        return Toggled(f"It was already {'checked' if checked else 'unchecked'}.", setter)
    if box.kind == "radio" and not checked:
        raise ElementNotInteractable(
            f"{described} is a radio button: it is unchecked by choosing another of its group",
            hint="browser_check the radio button that should be chosen instead.",
            action=action,
            target=described,
        )
    await _click(locator, box, described, action, timeout_ms)
    now = await _now_checked(locator)
    if now is None:
        return Toggled("The page rendered it anew after the click: its state is in the snapshot.", setter)
    if now != checked:
        raise ExecutionError(
            f"{described} is still {'unchecked' if checked else 'checked'} after clicking it"
            + (" through its label" if box.via_label else ""),
            hint="The page refused the change (a script or a condition): browser_snapshot shows why.",
            action=action,
            target=described,
        )
    return Toggled(_VIA_LABEL if box.via_label else "", setter)


async def is_checkable(locator: Locator) -> bool:
    """Whether the target is (or stands for) a checkbox, radio or switch."""
    found: bool = await locator.evaluate(_FOUND_JS)
    return found


async def toggle(locator: Locator, described: str, timeout_ms: float) -> str:
    """A click on a checkbox, radio or switch: through its label when the input is hidden or covered."""
    box = await checkable(locator, described, "click", timeout_ms)
    await _click(locator, box, described, "click", timeout_ms)
    return _VIA_LABEL if box.via_label else ""


async def _click(locator: Locator, box: Checkable, described: str, action: str, timeout_ms: float) -> None:
    if box.click is None:
        raise ElementNotInteractable(
            f"{described} is a {box.kind} hidden from view with no visible label to click",
            hint="browser_click what the page draws for it (see browser_snapshot), then browser_is checked.",
            action=action,
            target=described,
        )
    if box.click == "target":
        if await click_at_rest(locator.page, locator, timeout_ms):
            return
        await patiently(lambda ms: locator.click(timeout=ms), locator.page, timeout_ms)
        return
    # A label or the wrapper the theme draws: only this rarer path holds the element it clicks.
    clicked = (await locator.evaluate_handle(_CLICK_TARGET_JS, timeout=timeout_ms)).as_element()
    if clicked is None:
        raise ElementNotInteractable(f"{described} changed while it was being clicked", action=action, target=described)
    try:
        await patiently(lambda ms: clicked.click(timeout=ms), locator.page, timeout_ms)
    finally:
        await clicked.dispose()


async def _now_checked(locator: Locator) -> bool | None:
    """The state read back in one round trip that never waits: a ref whose element was rendered anew
    matches nothing, and a locator would wait out its timeout for it. The page's root, which always
    matches and comes first in document order, stands in for it then."""
    either = locator.or_(locator.page.locator(":root")).last
    now: bool | None = await either.evaluate(_CHECKED_JS)
    return now
