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

# How long an opened combobox one can type into is given to show the option before the label is typed.
TYPE_AFTER_MS = 500
# Options come within this after the click or the typing that asks for them (an animation, a debounce, a
# fetch); the action's own timeout, when shorter, wins.
OPTIONS_WAIT_MS = 3_000
_TYPABLE_JS = "(el) => el.matches('input:not([type=hidden]):not([readonly]):not([disabled]), textarea')"

# How far up from the widget a mirrored <select> is looked for: Select2 puts its combobox three levels
# inside the container that follows the <select>; farther up is the form, holding other fields' selects.
_MIRROR_DEPTH = 4

# A <select> kept out of people's sight: the mirror of a widget drawn in its place.
_HIDDEN_JS = """(el) => {
  const box = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  return box.width <= 1 || box.height <= 1 || style.visibility === 'hidden' || style.opacity === '0'
    || el.getAttribute('aria-hidden') === 'true';
}"""

# The native <select> behind the target: the target itself, a label's control, or a select hidden from
# view (so it is the widget's mirror, not a field of its own) inside or just before one of its ancestors.
# The climb stops where an ancestor holds a control of something else: that is the form, not the widget.
_NATIVE_JS = f"""(start) => {{
  if (start.tagName === 'SELECT') return start;
  if (start.tagName === 'LABEL' && start.control && start.control.tagName === 'SELECT') return start.control;
  const hidden = {_HIDDEN_JS};
  const CONTROLS = 'input:not([type=hidden]), textarea, button, select, [role=combobox], [contenteditable=""], '
    + '[contenteditable=true]';
  const foreign = (node) => [...node.querySelectorAll(CONTROLS)].some(
    (el) => !start.contains(el) && !el.contains(start) && !hidden(el));
  let node = start;
  for (let depth = 0; node && node !== document.body && depth < {_MIRROR_DEPTH}; depth++, node = node.parentElement) {{
    if (foreign(node)) return null;
    const inside = node.querySelectorAll('select');
    if (inside.length > 1) return null;
    if (inside.length === 1) return hidden(inside[0]) ? inside[0] : null;
    const before = node.previousElementSibling;
    if (before && before.tagName === 'SELECT') return hidden(before) ? before : null;
  }}
  return null;
}}"""

# Helpers shared by the option scripts: what is on screen, the popup a combobox names, an element's text.
_OPTION_HELPERS = """
  const shown = (el) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const text = (el) => (el.getAttribute('aria-label') || el.textContent || '').replace(/\\s+/g, ' ').trim();
  const popup = () => {
    const box = start.matches('[aria-controls], [aria-owns]') ? start
      : start.querySelector('[aria-controls], [aria-owns]');
    const id = box && (box.getAttribute('aria-controls') || box.getAttribute('aria-owns'));
    return (id && document.getElementById(id.split(' ')[0])) || document;
  };
  const options = () => [...popup().querySelectorAll('[role=option]')].filter(shown);
"""

# The option named `wanted` on screen, or null: an option of the widget's popup (else any visible one)
# by exact text, then ignoring case; else, for dropdowns without ARIA, the innermost visible element
# outside the widget whose whole text is `wanted` (or whose data-value is).
_FIND_OPTION_JS = (
    "([start, wanted]) => {"
    + _OPTION_HELPERS
    + """
  const want = wanted.replace(/\\s+/g, ' ').trim();
  const listed = options();
  const byValue = (el) => el.getAttribute('data-value') === want;
  const exact = listed.find((el) => text(el) === want || byValue(el));
  if (exact) return exact;
  const folded = listed.find((el) => text(el).toLowerCase() === want.toLowerCase());
  if (folded || listed.length) return folded || null;
  const all = document.body.querySelectorAll('li, div, span, a, p, button, label, td');
  for (const el of all) {
    if (start.contains(el) || !shown(el)) continue;
    if ((text(el) === want || byValue(el)) && ![...el.children].some((child) => text(child) === want)) return el;
  }
  return null;
}"""
)
_LIST_OPTIONS_JS = "(start) => {" + _OPTION_HELPERS + "  return options().map(text).slice(0, 30);\n}"


@dataclass(frozen=True)
class NativeSelect:
    """Where a choice is made in a native <select>."""

    own: bool  # the target is the <select> (or a label of it): its locator sets it
    hidden: bool  # a library's mirror, kept out of sight: Playwright's visibility wait is skipped


# One read: whether the target is a <select> (or its label), the hidden mirror of a widget, or neither.
_CLASSIFY_JS = f"""(start) => {{
  const select = ({_NATIVE_JS})(start);
  if (!select) return null;
  const own = select === start || select === start.control;
  return [own, ({_HIDDEN_JS})(select)];
}}"""
_OPTIONS_JS = """(start) => {
  const select = start.tagName === 'SELECT' ? start : start.control;
  return [...select.options].map((o) => o.label || o.text).slice(0, 30);
}"""


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
