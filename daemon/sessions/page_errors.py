"""Playwright failures turned into errors a model can act on (DESIGN.md §4 error codes)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.errors import ExecutionError, NavigationTimeout, PageCrashed
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


@contextmanager
def page_errors(action: str) -> Iterator[None]:
    try:
        yield
    except PlaywrightError as exc:
        raise _general(exc, action=action) from exc


def _general(exc: PlaywrightError, **details: str) -> ExecutionError | PageCrashed:
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
