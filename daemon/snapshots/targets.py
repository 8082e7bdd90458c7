"""Turning an agent's target — a ref from the latest snapshot or a CSS selector — into a Locator.

A ref never silently acts on a different element: it must come from this tab's latest snapshot of
the current document, and its element must still be on the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from browserd.daemon.errors import ElementNotFound, InvalidParameter, RefNotFound
from browserd.daemon.sessions.ref_table import RefInfo
from browserd.daemon.sessions.tab import Tab
from browserd.daemon.snapshots.aria_capture import IDENTITY_JS, Clickable

_REF = re.compile(r"^@?((?:f\d+)?e\d+|c\d+)$")
# Roles whose names are only their text, not an author's label: another element may well say the same.
_NOT_REFOUND = frozenset({"generic", "text", "paragraph", "clickable", "cell", "gridcell", "listitem", "img"})
# One-line inputs that take any text as typed (the snapshot marks each kind but text with [type=...]).
TEXT_LINE_KINDS = frozenset({"text", "email", "password", "search", "tel", "url"})
# The element was there a moment ago (count > 0): reading it takes no longer than a round trip.
IDENTITY_TIMEOUT_MS = 2_000


@dataclass
class Target:
    locator: Locator
    described: str  # how errors and reports name it: `ref e5 (button "Save")` or `selector "#save"`
    code: str  # the same element as Playwright Python code, for scripts and flows
    # A ref's element is known to exist: checks that would otherwise wait can answer at once.
    exists: bool = False
    # The kind of one-line text input the snapshot showed ("text", "email", "password"...; see TEXT_LINE_KINDS)
    # when it is neither disabled nor read-only: fill needs no closer look at it. None for anything else.
    text_line: str | None = None
    # How an answer names it after acting: `button "Save"` (the ref was the caller's own words); else `described`.
    short: str = ""
    # The role the snapshot showed ("" for a selector): a click on a checkbox goes through its label.
    role: str = ""
    # A ref of a child frame's element (RefInfo.in_frame): an action on it settles that frame too.
    in_frame: bool = False
    # The action `locate` started on a plain text field while it made sure the ref's element is still there
    # (`early`); the caller awaits it in place of starting the action itself.
    under_way: Awaitable[None] | None = None
    ref: str | None = None  # the ref it was found by, as the snapshot issued it (None: a selector)

    @property
    def named(self) -> str:
        return self.short or self.described


def is_ref(target: str) -> bool:
    return _REF.match(target.strip()) is not None


# An action on a located element, given its locator.
EarlyAction = Callable[[Locator], Awaitable[None]]


async def locate(tab: Tab, target: str, early: EarlyAction | None = None) -> Target:
    """`early`: an action to start at once on a ref the snapshot showed as a plain text field in the main
    frame, while the element is counted (one round trip to the browser fewer per fill). It can only act on
    the ref's own element, so it is aborted when that element turns out to be gone; else `Target.under_way`
    holds it."""
    target = target.strip()
    if not target:
        raise InvalidParameter("empty target", hint="Pass a ref such as e5 or a CSS selector.", field="target")
    match = _REF.match(target)
    if match is None:
        return Target(tab.page.locator(target), f"selector {json.dumps(target)}", f"page.locator({target!r})")
    ref = match.group(1)
    if ref not in tab.refs.issued:
        raise RefNotFound(
            f"ref {ref} was never in a snapshot of {tab.id}",
            hint=f"Call browser_snapshot (or browser_find) on {tab.id} and use a ref it shows; refs of another "
            "tab work only with that tab's tabId.",
            ref=ref,
            tabId=tab.id,
        )
    if not tab.refs_current:
        raise _stale(tab, ref)
    # Rendered anew, identical, in the same place: the delta that showed the change left it out.
    ref = tab.refs.stands_for(ref)
    info = tab.refs.current.get(ref)
    if info is None and ref in tab.refs.earlier:
        earlier = tab.refs.earlier[ref]
        again = await _rendered_anew(tab, ref, earlier)
        if again is not None:
            return _found_again(again, ref, earlier)
    if info is None:
        raise RefNotFound(
            f"ref {ref} is not in the latest snapshot of {tab.id} (an earlier one showed it)", ref=ref, tabId=tab.id
        )
    short = f"{info.role} {json.dumps(info.name, ensure_ascii=False) if info.name else ref}"
    described = f"ref {ref} ({info.role}{' ' + json.dumps(info.name, ensure_ascii=False) if info.name else ''})"
    selector = info.clickable.selector if info.clickable else f"aria-ref={ref}"
    locator = tab.page.locator(selector)
    text_line = (
        (info.kind or "text")
        if info.role in ("textbox", "searchbox")
        and (info.kind or "text") in TEXT_LINE_KINDS
        and info.clickable is None
        and info.editable
        else None
    )
    # Not in a child frame: an action there waits until the page is told to count what that frame posts it.
    under_way = asyncio.ensure_future(early(locator)) if early and text_line and not info.in_frame else None
    try:
        count = await locator.count()
        if count == 0 and under_way is not None:
            await aborted(under_way)
            under_way = None
    except BaseException as exc:
        if under_way is not None:
            await aborted(under_way)
        if not isinstance(exc, PlaywrightError):
            raise
        if tab.navigations != tab.refs.navigations:
            raise _stale(tab, ref) from exc
        # The iframe the ref lived in was removed from a page that is otherwise still there.
        raise RefNotFound(
            f"{described} is stale: the frame it lived in is no longer on the page",
            ref=ref,
            tabId=tab.id,
        ) from exc
    if count == 0 and tab.navigations != tab.refs.navigations:
        raise _stale(tab, ref)
    if count == 0:
        again = await _rendered_anew(tab, ref, info)
        if again is None:
            raise ElementNotFound(
                f"{described} is no longer on the page",
                hint="The page changed since the snapshot: call browser_snapshot for fresh refs.",
                ref=ref,
            )
        return _found_again(again, ref, info)
    if info.clickable is not None:
        await _same_clickable(locator, info.clickable, described, ref)
    return Target(
        locator,
        described,
        _code_for(info, selector),
        exists=True,
        text_line=text_line,
        short=short,
        role=info.role,
        in_frame=info.in_frame,
        under_way=under_way,
        ref=ref,
    )


async def aborted(action: asyncio.Future[Any]) -> None:
    """Cancel a call to the page whose answer is no longer wanted (an early action, a read ahead, a settle: Playwright
    aborts the call in its driver) and let it end; its own error is moot."""
    action.cancel()
    with contextlib.suppress(asyncio.CancelledError, PlaywrightError):
        await action


async def _same_clickable(locator: Locator, clickable: Clickable, described: str, ref: str) -> None:
    """A ref of ours goes by position in the document: after the page changes, that position may hold
    another element, and acting on it would be acting on the wrong thing."""
    try:
        now = await locator.first.evaluate(IDENTITY_JS, timeout=IDENTITY_TIMEOUT_MS)
    except PlaywrightError:
        now = None
    if now is None or not clickable.same(now):
        raise RefNotFound(
            f"{described} is stale: the element at its place is now "
            + (f"<{str(now[0]).lower()}> {json.dumps(now[1], ensure_ascii=False)}" if now else "gone"),
            ref=ref,
            expected={"tag": clickable.tag.lower(), "text": clickable.text},
        )


async def _rendered_anew(tab: Tab, ref: str, info: RefInfo) -> Locator | None:
    """The element a framework rendered in place of the ref's (React, Vue and the like replace nodes on
    every update): the one element on the page now with the ref's role and name, when that pair was
    unique in the snapshot too. Unnamed or generic elements, and elements inside frames, are not guessed."""
    if info.clickable is not None or info.nth is not None or not info.name or info.role in _NOT_REFOUND:
        return None
    if not ref.startswith("e"):
        return None
    locator = tab.page.get_by_role(info.role, name=info.name, exact=True)  # type: ignore[arg-type]
    return locator if await locator.count() == 1 else None


def _found_again(locator: Locator, ref: str, info: RefInfo) -> Target:
    described = f"ref {ref} ({info.role} {json.dumps(info.name, ensure_ascii=False)}, rendered anew since)"
    return Target(locator, described, _code_for(info, ""), exists=True, role=info.role)


def _stale(tab: Tab, ref: str) -> RefNotFound:
    return RefNotFound(
        f"ref {ref} is stale: {tab.id} has loaded a new page since the snapshot that issued it",
        ref=ref,
        tabId=tab.id,
    )


def _code_for(info: RefInfo, selector: str) -> str:
    if info.role and info.name and info.role not in ("generic", "text", "clickable"):
        nth = f".nth({info.nth})" if info.nth is not None else ""
        return f"page.get_by_role({info.role!r}, name={info.name!r}, exact=True){nth}"
    return f"page.locator({selector!r})"
