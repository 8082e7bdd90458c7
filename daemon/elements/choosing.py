"""One choice for browser_select and a flow's replay: a native <select>, the hidden <select> a widget mirrors
(Select2, Choices.js), or a widget opened and its option clicked (react-select, ARIA comboboxes); see
choices.py for how each is found. Which one took the choice is the `setter` a recorded step keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.async_api import ElementHandle, Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.elements.choices import mirrored_select, native_options, native_select, pick_options
from browserd.daemon.errors import ElementNotFound

# The setters a choice goes through: the target's own <select>, the hidden <select> a widget mirrors, the
# widget's options clicked as a person would.
NATIVE_SELECT, MIRRORED_SELECT, OPTION_CLICKS = "select", "mirror", "options"


@dataclass(frozen=True)
class Chosen:
    selected: list[str]  # the values a <select> took, or the labels of the options clicked
    setter: str  # which setter took the choice (above)


async def choose(
    page: Page, locator: Locator, described: str, labels: list[str] | None, values: list[str] | None, timeout_ms: float
) -> Chosen:
    """Choose the options given by `values` (else `labels`) in the select or select-like widget; a widget
    without a <select> has its options found by their text, which is what either names then."""
    native = await native_select(locator, timeout_ms)
    if native is None:
        wanted = labels or values or []
        await pick_options(page, locator, wanted, described, timeout_ms)
        return Chosen(wanted, OPTION_CLICKS)
    # The target is the <select> (or its label) in the usual case: its own locator chooses, with no handle.
    select = locator if native.own else await mirrored_select(locator, timeout_ms)
    if select is None:
        raise ElementNotFound(f"{described} changed while the select was being chosen in")
    choice: dict[str, Any] = {"value": values} if values else {"label": labels or []}
    try:
        # A library's hidden <select> is not for people to see, so Playwright's visibility wait is skipped.
        chosen = await select.select_option(**choice, timeout=timeout_ms, force=native.hidden)
    except PlaywrightTimeout as exc:
        raise await _missing_option(select, described, choice) from exc
    finally:
        if isinstance(select, ElementHandle):
            await select.dispose()
    return Chosen(chosen, MIRRORED_SELECT if native.hidden else NATIVE_SELECT)


async def _missing_option(select: Locator | ElementHandle, described: str, choice: dict[str, Any]) -> ElementNotFound:
    labels = await native_options(select)
    kind, wanted = next(iter(choice.items()))
    return ElementNotFound(
        f"{described} has no option with {kind} {', '.join(map(repr, wanted))}; its options are "
        + ", ".join(map(repr, labels)),
        hint="Pass labels (or values) from that list.",
        options=labels,
    )
