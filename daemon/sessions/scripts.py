"""A caller's own JavaScript run on a tab's page or on one element (browser_evaluate), under a deadline: a
script that never returns is stopped, so the tab works again, and its failure is told as the script's."""

from __future__ import annotations

import re
from typing import Any

import anyio
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.errors import ExecutionError, PageCrashed, ScriptError
from browserd.daemon.runtime.browser import is_crash
from browserd.daemon.sessions.tab import Tab

# Playwright prefixes the page's error with the API that ran it: "Page.evaluate: Error: boom".
_API_PREFIX = re.compile(r"^\w+\.evaluate: ")
_STACK_LINES = 5


def _script_error(exc: PlaywrightError) -> ScriptError | PageCrashed:
    if is_crash(exc):
        return PageCrashed("the page crashed while the script ran")
    lines = _API_PREFIX.sub("", str(exc).strip()).splitlines()
    message = lines[0] if lines else "the script failed"
    return ScriptError(f"the script threw {message}", jsError=message, stack=[s.strip() for s in lines[1:_STACK_LINES]])


async def run_script(tab: Tab, expression: str, arg: Any, element: Locator | None, timeout_ms: float) -> Any:
    """`expression`'s result on the page (or given `element` first); EXECUTION_ERROR past `timeout_ms`."""
    try:
        # A promise that never settles must not hold the tab: the deadline releases it.
        with anyio.fail_after(timeout_ms / 1000):
            if element is not None:
                return await element.evaluate(expression, arg, timeout=timeout_ms)
            return await tab.page.evaluate(expression, arg)
    except TimeoutError as exc:
        if await tab.answers():
            raise ExecutionError(
                f"the script did not finish within {timeout_ms} ms",
                hint="Return sooner (do not await a promise that may never settle), or pass a larger timeout.",
                timeoutMs=timeout_ms,
            ) from exc
        # The script still runs and holds the page: nothing else on this tab can run until it is stopped.
        done = await tab.recover()
        raise ExecutionError(
            f"the script did not finish within {timeout_ms} ms; {done}",
            hint="Do not loop without end (while(true) with no way out); pass a larger timeout for slow work.",
            timeoutMs=timeout_ms,
            recovered=done,
        ) from exc
    except PlaywrightTimeout as exc:
        raise ExecutionError(f"the script timed out: {exc}", timeoutMs=timeout_ms) from exc
    except PlaywrightError as exc:
        raise _script_error(exc) from exc
