"""Whether an element can take an action now: fail at once on what the snapshot already shows (disabled,
read-only) instead of after the action's whole timeout. Shared by the action and file tools."""

from __future__ import annotations

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from browserd.daemon.errors import ElementNotInteractable
from browserd.daemon.sessions.page_errors import action_errors
from browserd.daemon.snapshots.targets import Target


async def usable(target: Target, action: str, editable: bool = False) -> None:
    """Fail at once, not after the whole timeout, on what the snapshot already shows: disabled, read-only."""
    if not target.exists:
        return  # a selector may match an element that has yet to appear: let the action wait for it
    if editable and await _editable(target.locator):
        return  # editable means enabled too (Playwright's definition): one round trip for the usual case
    with action_errors(action, target.described):
        if not await target.locator.is_enabled():
            raise not_usable(target, action, "disabled")
        if editable and not await target.locator.is_editable():
            raise not_usable(target, action, "read-only")


async def _editable(locator: Locator) -> bool:
    """Whether the element can be edited; False also when that cannot be told (usable() then says why)."""
    try:
        return await locator.is_editable()
    except PlaywrightError:
        return False


_NOT_USABLE_HINTS = {
    "disabled": "Do what enables it first (fill the required fields...), then retry.",
    "read-only": "Pick a field that can be edited; a field filled by a picker or a popup takes browser_click, "
    "then a click on the choice that opens.",
}


def not_usable(target: Target, action: str, state: str) -> ElementNotInteractable:
    return refused(target.described, action, state)


def refused(described: str, action: str, state: str) -> ElementNotInteractable:
    """The error for an element that is `state` (disabled, read-only), named as `described`."""
    return ElementNotInteractable(
        f"{described} is {state}", hint=_NOT_USABLE_HINTS[state], action=action, target=described
    )
