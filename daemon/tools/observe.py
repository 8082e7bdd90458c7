"""What pages did on their own: the dialogs they raised (and how to answer them) and their console."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import msgspec

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.sessions.page_records import DIALOG_HISTORY
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import TabParams, tab_tool
from browserd.daemon.tools.tool_registry import Params, Tool, tool

ConsoleLevel = Literal["all", "error", "warning", "info", "log", "debug"]
# A level and everything more severe: asking for warnings also shows errors and uncaught exceptions.
_AT_LEAST = {
    "error": {"error", "uncaught"},
    "warning": {"error", "uncaught", "warning"},
    "info": {"error", "uncaught", "warning", "info"},
    "log": {"error", "uncaught", "warning", "info", "log"},
}


class DialogsParams(Params, kw_only=True):
    policy: Annotated[Literal["accept", "dismiss"], msgspec.Meta(description="How to answer later dialogs.")] | None = (
        None
    )
    prompt_text: Annotated[str, msgspec.Meta(description="What prompts are answered with (accept).")] | None = None


class ConsoleParams(TabParams, kw_only=True):
    level: Annotated[ConsoleLevel, msgspec.Meta(description="This level and more severe ones.")] = "all"
    text: Annotated[str, msgspec.Meta(description="Only messages containing this (case-insensitive).")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500)] = 50
    clear: Annotated[bool, msgspec.Meta(description="Empty the buffer after reading it.")] = False


@tool(
    "browser_dialogs",
    "devtools",
    f"The session's last {DIALOG_HISTORY} dialogs (alert, confirm, prompt) and how they are answered; set the policy.",
    DialogsParams,
)
async def browser_dialogs(ctx: ToolContext, params: DialogsParams, response: Response) -> None:
    dialogs = ctx.session.dialogs
    if params.policy is not None:
        dialogs.policy = params.policy
    if params.prompt_text is not None:
        if dialogs.policy == "dismiss":
            raise InvalidParameter("promptText answers prompts only when they are accepted", field="promptText")
        dialogs.prompt_text = params.prompt_text
    history = [
        {
            "type": d.type,
            "message": d.message,
            "defaultValue": d.default_value,
            "action": d.action,
            "tabId": d.tab_id,
            "at": d.at,
        }
        for d in dialogs.history
    ]
    response.data({"policy": dialogs.policy, "promptText": dialogs.prompt_text, "history": history})
    answer = f"{dialogs.policy}" + (f", prompts get {dialogs.prompt_text!r}" if dialogs.prompt_text is not None else "")
    lines = [f"- {d['at']} {d['tabId']} {d['type']} {d['message']!r}: {d['action']}" for d in history]
    response.text(f"Dialogs are answered: {answer}.\n" + ("\n".join(lines) if lines else "No dialog so far."))


@tab_tool(
    "browser_console",
    "devtools",
    "The tab's console messages and uncaught errors, newest last.",
    ConsoleParams,
    read_only=True,
)
async def browser_console(ctx: ToolContext, call: TabCall, params: ConsoleParams, response: Response) -> None:
    tab = call.tab
    wanted = _AT_LEAST.get(params.level)
    needle = params.text.lower() if params.text else None
    found = [
        record
        for record in tab.console
        if (wanted is None or record.level in wanted) and (needle is None or needle in record.text.lower())
    ]
    shown = found[-params.limit :]
    if params.clear:
        tab.console.clear()
        tab.console_errors.clear()
    response.data({"messages": [dataclasses.asdict(r) for r in shown], "total": len(found), "tabId": tab.id})
    lines = [f"- [{r.level}] {r.text[:500]}" for r in shown]
    more = f"\n… {len(found) - len(shown)} older message(s) not shown; raise limit" if len(found) > len(shown) else ""
    response.text(
        f"{len(found)} console message(s) in {tab.id}:\n" + "\n".join(lines) + more
        if found
        else f"No console message in {tab.id} matches."
    )


TOOLS: list[Tool[Any]] = [browser_dialogs, browser_console]
