"""browser_evaluate: run JavaScript on the page or on one element (local sessions only)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from browserd.daemon.sessions.page_errors import action_errors
from browserd.daemon.sessions.scripts import run_script
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import ActionParams, SnapshotMode, TargetText, TimeoutMs, tab_tool
from browserd.daemon.tools.tool_registry import Tool


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
    element = target.locator if target is not None else None
    result = await run_script(tab, params.expression, params.arg, element, timeout_ms)
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
