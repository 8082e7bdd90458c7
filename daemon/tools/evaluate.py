"""browser_evaluate: run JavaScript on the page or on one element (local sessions only)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import anyio
import msgspec
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.errors import ExecutionError, PageCrashed, ScriptError
from browserd.daemon.runtime.browser import is_crash
from browserd.daemon.sessions.page_errors import action_errors
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import ActionParams, SnapshotMode, TargetText, TimeoutMs, tab_tool
from browserd.daemon.tools.tool_registry import Tool

# Playwright prefixes the page's error with the API that ran it: "Page.evaluate: Error: boom".
_API_PREFIX = re.compile(r"^\w+\.evaluate: ")
_STACK_LINES = 5


class EvaluateParams(ActionParams, kw_only=True):
    expression: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            description="A JS expression (document.title) or function (() => ..., async () => ..., (el) => ... "
            "with target); its result comes back as JSON.",
        ),
    ]
    target: Annotated[TargetText, msgspec.Meta(description="Pass this element to the function.")] | None = None
    arg: Annotated[Any, msgspec.Meta(description="JSON value passed to the function (after the element).")] = None
    max_chars: Annotated[int, msgspec.Meta(ge=100, description="Cut the result after this many characters.")] | None = (
        None
    )
    timeout: TimeoutMs | None = None
    snapshot: SnapshotMode = "none"


def _script_error(exc: PlaywrightError) -> ScriptError | PageCrashed:
    if is_crash(exc):
        return PageCrashed("the page crashed while the script ran")
    lines = _API_PREFIX.sub("", str(exc).strip()).splitlines()
    message = lines[0] if lines else "the script failed"
    return ScriptError(f"the script threw {message}", jsError=message, stack=[s.strip() for s in lines[1:_STACK_LINES]])


@tab_tool(
    "browser_evaluate",
    "devtools",
    "Run a JS expression or function on the page, or on an element (ref or selector); answers the result as JSON "
    "(local sessions only).",
    EvaluateParams,
)
async def browser_evaluate(ctx: ToolContext, call: TabCall, params: EvaluateParams, response: Response) -> None:
    tab = call.tab
    ctx.session.trust.check_scripts("evaluate scripts")
    config = ctx.services.config.browser
    timeout_ms = params.timeout or config.action_timeout_ms
    target = await call.locate(params.target) if params.target is not None else None
    if target is not None:
        with action_errors("evaluate", target.described):
            await target.locator.wait_for(state="attached", timeout=timeout_ms)
    try:
        # A promise that never settles must not hold the tab: the deadline releases it.
        with anyio.fail_after(timeout_ms / 1000):
            if target is not None:
                result = await target.locator.evaluate(params.expression, params.arg, timeout=timeout_ms)
            else:
                result = await tab.page.evaluate(params.expression, params.arg)
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
    try:
        text = msgspec.json.encode(result).decode()
    except (TypeError, msgspec.EncodeError):
        text = msgspec.json.encode(str(result)).decode()
    max_chars = params.max_chars or config.evaluate_max_chars
    truncated = len(text) > max_chars
    data: dict[str, Any] = {"truncated": truncated, "chars": len(text), "tabId": tab.id}
    if truncated:
        data["resultJson"] = text[:max_chars]
        response.text(
            f"{text[:max_chars]}\n… cut after {max_chars} of {len(text)} characters; return less (a slice, the "
            "fields you need) or raise maxChars"
        )
    else:
        data["result"] = msgspec.json.decode(text)
        response.text(text if result is not None else "undefined or null")
    response.data(data)
    on = f"{target.code}.evaluate" if target is not None else "page.evaluate"
    response.code(f"await {on}({params.expression!r}{', ' + repr(params.arg) if params.arg is not None else ''})")


TOOLS: list[Tool[Any]] = [browser_evaluate]
