"""browser_select on the selects widget libraries draw, not only on native <select> elements.

Three shapes cover most of the web:
- Select2, Choices.js, bootstrap-select and Chosen keep the real <select> in the form, hidden, and draw a
  combobox beside or around it that mirrors it. Choosing in the hidden <select> (with its change event)
  is what the library itself does when a person picks, so that is done here.
- react-select, Headless UI, MUI and ARIA comboboxes have no <select>: options (role=option) exist only
  once the widget is opened. The widget is clicked open and the option is clicked, as a person would;
  an autocomplete that lists options only for what is typed gets the label typed first.
- Home-made dropdowns with no ARIA at all: the same, finding the option by its exact visible text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from playwright.async_api import ElementHandle, Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.errors import ElementNotFound
from browserd.daemon.runtime.page_js import load_js, with_prelude

# How long an opened combobox one can type into is given to show the option before the label is typed.
TYPE_AFTER_MS = 500
# Options come within this after the click or the typing that asks for them (an animation, a debounce, a
# fetch); the action's own timeout, when shorter, wins.
OPTIONS_WAIT_MS = 3_000
_TYPABLE_JS = load_js("browserd.daemon.elements", "typable.js")

_SELECT_MIRROR = load_js("browserd.daemon.elements", "select_mirror.prelude.js")
_NATIVE_JS = with_prelude(load_js("browserd.daemon.elements", "native_select.js"), _SELECT_MIRROR)
_OPTION_HELPERS = load_js("browserd.daemon.elements", "options.prelude.js")
_FIND_OPTION_JS = with_prelude(load_js("browserd.daemon.elements", "find_option.js"), _OPTION_HELPERS)
_LIST_OPTIONS_JS = with_prelude(load_js("browserd.daemon.elements", "list_options.js"), _OPTION_HELPERS)


@dataclass(frozen=True)
class NativeSelect:
    """Where a choice is made in a native <select>."""

    own: bool  # the target is the <select> (or a label of it): its locator sets it
    hidden: bool  # a library's mirror, kept out of sight: Playwright's visibility wait is skipped


_CLASSIFY_JS = with_prelude(load_js("browserd.daemon.elements", "select_kind.js"), _SELECT_MIRROR)
_OPTIONS_JS = load_js("browserd.daemon.elements", "select_options.js")


async def native_select(locator: Locator, timeout_ms: float | None) -> NativeSelect | None:
    """How a choice reaches the native <select> behind the target; None for a widget without one."""
    found = await locator.evaluate(_CLASSIFY_JS, timeout=timeout_ms)
    return None if found is None else NativeSelect(own=bool(found[0]), hidden=bool(found[1]))


async def mirrored_select(locator: Locator, timeout_ms: float | None) -> ElementHandle | None:
    """The hidden <select> a widget mirrors (NativeSelect.own being False): the element, to choose in."""
    handle = await locator.evaluate_handle(_NATIVE_JS, timeout=timeout_ms)
    found = handle.as_element()
    if found is None:
        await handle.dispose()
    return found


async def native_options(select: Locator | ElementHandle) -> list[str]:
    """The labels of a <select>'s options (or of the <select> a label names)."""
    labels: list[str] = await select.evaluate(_OPTIONS_JS)
    return labels


async def pick_options(page: Page, locator: Locator, wanted: Sequence[str], described: str, timeout_ms: float) -> None:
    """Open the widget when the option is not on screen, then click each wanted option as a person does."""
    start = await locator.element_handle(timeout=timeout_ms)
    wait = min(timeout_ms, OPTIONS_WAIT_MS)
    try:
        for label in wanted:
            option = await _option_on_screen(page, start, label, 0)
            if option is None:
                await start.click(timeout=timeout_ms)
                typable = await start.evaluate(_TYPABLE_JS)
                # An autocomplete offers options only for what is typed: wait briefly, then type the label.
                option = await _option_on_screen(page, start, label, TYPE_AFTER_MS if typable else wait)
                if option is None and typable:
                    await locator.fill("", timeout=timeout_ms)
                    await locator.press_sequentially(label, timeout=timeout_ms)
                    option = await _option_on_screen(page, start, label, wait)
            if option is None:
                raise await _no_such_option(start, label, described)
            await option.click(timeout=timeout_ms)
    finally:
        await start.dispose()


async def _option_on_screen(page: Page, start: ElementHandle, label: str, timeout_ms: float) -> ElementHandle | None:
    try:
        if not timeout_ms:
            found = await page.evaluate_handle(_FIND_OPTION_JS, [start, label])
        else:
            # Options come a moment after the click that opens them (an animation, a fetch): wait for this one.
            found = await page.wait_for_function(_FIND_OPTION_JS, arg=[start, label], timeout=timeout_ms)
    except PlaywrightTimeout:
        return None
    return found.as_element()


async def _no_such_option(start: ElementHandle, label: str, described: str) -> ElementNotFound:
    shown: list[str] = await start.evaluate(_LIST_OPTIONS_JS)
    listed = ", ".join(repr(name) for name in shown)
    return ElementNotFound(
        f"{described} was opened (and is left open), but no option {label!r} appeared"
        + (f"; the options on screen are {listed}" if shown else "; no options (role=option) are on screen"),
        hint="Pass one of the labels on screen, or browser_type into the widget to filter it and then browser_click "
        "the option's ref from browser_snapshot.",
        option=label,
        options=shown,
    )
