"""Playwright failures turned into errors a model can act on (DESIGN.md §4 error codes)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.elements.overlays import interceptor
from browserd.daemon.errors import (
    BrowserdError,
    ElementAmbiguous,
    ElementNotFound,
    ElementNotInteractable,
    ElementNotVisible,
    ExecutionError,
    NavigationTimeout,
    PageCrashed,
)
from browserd.daemon.runtime.browser import is_crash


@contextmanager
def navigation_errors(url: str, page_url: str = "") -> Iterator[None]:
    try:
        yield
    except PlaywrightTimeout as exc:
        raise NavigationTimeout(
            f"navigation to {url} timed out", url=url, loadedUrl=page_url, cause=_first_line(exc)
        ) from exc
    except PlaywrightError as exc:
        raise _general(exc, url=url) from exc


_MATCHED = re.compile(r"resolved to (\d+) elements")
# Playwright's wording when an action meets an element of the wrong kind.
_WRONG_KIND = (
    "not editable",
    "is not an <input>",
    "Not a checkbox or radio",
    "cannot be filled",
    "Cannot type text into",
    "Not a select element",
    "Element is not a <select>",
)


@contextmanager
def action_errors(action: str, described: str) -> Iterator[None]:
    """An action on one element: Playwright's wording becomes a code and a next step (S2-32, S2-33)."""
    try:
        yield
    except PlaywrightError as exc:
        raise _action_error(exc, action, described) from exc


def _action_error(exc: PlaywrightError, action: str, described: str) -> BrowserdError:
    text = str(exc)
    details: dict[str, Any] = {"action": action, "target": described}
    if "strict mode violation" in text:
        count = _MATCHED.search(text)
        many = count.group(1) if count else "several"
        if count:
            details["count"] = int(many)
        return ElementAmbiguous(f"{described} matched {many} elements; {action} needs exactly one", **details)
    if "intercepts pointer events" in text:
        cover = interceptor(text)
        return ElementNotInteractable(
            f"{described} is covered by {cover or 'another element'}, which would receive the {action}",
            hint="Close the dialog or overlay on top (browser_snapshot shows it), or browser_scroll it into view.",
            covered=True,
            **details,
        )
    if "not enabled" in text or "element is disabled" in text:
        return ElementNotInteractable(
            f"{described} is disabled", hint="Do what enables it first (fill required fields...).", **details
        )
    if any(marker in text for marker in _WRONG_KIND):
        return ElementNotInteractable(
            f"{described} does not support {action}: {_first_line(exc).split(': ', 1)[-1]}",
            hint="Checkboxes and radios take browser_check, selects browser_select, text fields browser_fill; "
            "pick an element of the right kind from browser_snapshot.",
            **details,
        )
    if "not visible" in text:
        return ElementNotVisible(f"{described} exists but is not visible", **details)
    if "not attached" in text or "detached" in text:
        return ElementNotFound(f"{described} was removed from the page during the {action}", **details)
    if isinstance(exc, PlaywrightTimeout):
        if "waiting for" in text and "resolved to" not in text:
            return ElementNotFound(
                f"no element matches {described}",
                hint="Call browser_snapshot (or browser_find) for a ref, or wait for it with browser_wait.",
                **details,
            )
        return ExecutionError(
            f"{action} on {described} timed out: {_first_line(exc)}",
            hint="Call browser_snapshot to see the page's state, then retry.",
            **details,
        )
    return _general(exc, **details)


@contextmanager
def page_errors(action: str) -> Iterator[None]:
    try:
        yield
    except PlaywrightError as exc:
        raise _general(exc, action=action) from exc


def _general(exc: PlaywrightError, **details: Any) -> ExecutionError | PageCrashed:
    if is_crash(exc):
        return PageCrashed("the browser or page crashed during the call", **details)
    message = _first_line(exc)
    if "net::ERR_" in message:
        return ExecutionError(
            f"the page could not be loaded: {message}",
            hint="Check the URL and that the site is reachable from this machine.",
            **details,
        )
    return ExecutionError(message, **details)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
