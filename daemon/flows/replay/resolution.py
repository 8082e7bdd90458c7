"""A replayed step's target found again: every candidate found and scored in one page evaluate, and the element
that wins clearly marked, so that the step acts on exactly it through the element helpers the tools use.

The element helpers take a Locator, and a Playwright handle cannot become one; so resolve.js marks the winner
with a one-off attribute in the same evaluate that finds it, and the step's locator is that attribute's
(an element the page renders anew loses the mark: the helper then fails and the step is resolved again). The
same evaluate answers the element's role (a click on a checkbox goes through its label, a hover on a block
aims at its content) and, for a fill, what field it is: a fill step costs no round trip beyond the resolution,
the fill, the value's check and the unmarking (tests/bench/flows.py --calls).
"""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass
from typing import Any

import msgspec
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator

from browserd.daemon.elements.fields import FieldInfo
from browserd.daemon.errors import ElementNotFound
from browserd.daemon.flows.fingerprint_js import RESOLVE_ELEMENT_JS, SENSITIVE_CSS
from browserd.daemon.flows.flow_model import ModelPick, TargetLocator
from browserd.daemon.runtime.page_js import load_js
from browserd.daemon.sessions.tab import Tab

PIN = "data-browserd-step"
_UNPIN_JS = load_js("browserd.daemon.flows.replay", "unpin.js")


@dataclass
class Resolved:
    report: dict[str, Any]
    # The element found (the clear winner, or the model's pick), marked; None while there is none.
    locator: Locator | None = None
    # Set when the element is the model's choice, the scorer having found no clear winner.
    pick: ModelPick | None = None

    @property
    def status(self) -> str:
        return str(self.report["status"])

    @property
    def role(self) -> str:
        """The element's role as the fingerprint reads roles ("" for a div or span)."""
        return str(self.report.get("role") or "")

    @property
    def field(self) -> FieldInfo | None:
        """What field the element is, when the resolution was asked (a fill step's)."""
        read = self.report.get("field")
        return FieldInfo(*read) if read else None

    async def unpin(self) -> None:
        """Take the mark away (no wait: an element gone with a navigation or a render has none to take)."""
        if self.locator is not None:
            with contextlib.suppress(PlaywrightError):  # the page closed or navigated under the evaluate
                await self.locator.evaluate_all(_UNPIN_JS, PIN)


async def frame_of(tab: Tab, path: list[str]) -> Frame:
    frame = tab.page.main_frame
    for selector in path:
        element = await frame.query_selector(selector)
        inner = await element.content_frame() if element is not None else None
        if inner is None:
            raise ElementNotFound(f"the frame {selector} of the recorded element is not on the page", frame=path)
        frame = inner
    return frame


async def resolve(
    tab: Tab, target: TargetLocator, threshold: float, margin: float, pick: int | None = None, field: bool = False
) -> Resolved:
    """Every candidate, found and scored in one evaluate; the element, marked, only when it wins clearly. With
    `pick`, the pick-th element of the report whatever its score, rated in full as the report's `picked`.
    `field`: also read what field the element is (for a fill)."""
    frame = await frame_of(tab, target.frame)
    candidates = [{"type": c.type, "value": c.value} for c in target.candidates]
    token = secrets.token_hex(6)
    options: dict[str, Any] = {"pin": [PIN, token], "field": field}
    if pick is not None:
        options |= {"index": pick, "sensitiveCss": SENSITIVE_CSS}
    args = [candidates, msgspec.to_builtins(target.fingerprint), target.shadow, threshold, margin, options]
    report = await frame.evaluate(RESOLVE_ELEMENT_JS, args)
    # The report says the element's role only when it marked one.
    marked = "role" in report
    return Resolved(report, frame.locator(f'[{PIN}="{token}"]') if marked else None)
