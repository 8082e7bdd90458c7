"""`login_keep_session` 1.0.0: a scripted login whose session stays open for the agent (S1-18, S1-49, D-41).

Each step is one browser tool (open, fill, type, click, press, wait) run in-process on the run's
session, so its checks and errors are exactly the tool's. The run is atomic: all steps succeed, or
the run fails at the first step that does not (no partial success) and a session the run created
is closed. On success the session is kept and `result.sessionId` names it; when the caller passed
its own sessionId, its browser tools continue in the logged-in tab.

`{{name}}` in a step's values is replaced by `variables[name]`; variables and typed values are
never written to runs.db.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from browserd.daemon.config import RunsConfig
from browserd.daemon.errors import InvalidParameter
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.runs.templates.template_interface import Inputs, Template

if TYPE_CHECKING:
    from browserd.daemon.services import ToolCaller

Action = Literal["open", "fill", "type", "click", "press", "wait"]
TOOLS: dict[str, str] = {
    "open": "browser_open",
    "fill": "browser_fill",
    "type": "browser_type",
    "click": "browser_click",
    "press": "browser_press",
    "wait": "browser_wait",
}
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}")
REDACTED = "***"


class LoginStep(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True):
    action: Action
    url: Annotated[str, msgspec.Meta(description="open: the page; wait: a URL glob to reach.")] | None = None
    target: Annotated[str, msgspec.Meta(description="fill/type/click/press: a CSS selector.")] | None = None
    value: Annotated[str, msgspec.Meta(description="fill: the value; {{name}} takes a variable.")] | None = None
    text: Annotated[str, msgspec.Meta(description="type: the text; wait: text to appear.")] | None = None
    key: Annotated[str, msgspec.Meta(description="press: a key such as Enter.")] | None = None
    selector: Annotated[str, msgspec.Meta(description="wait: an element to appear.")] | None = None
    time_ms: Annotated[int, msgspec.Meta(ge=1, le=60_000)] | None = None
    timeout: Annotated[int, msgspec.Meta(ge=1, le=300_000)] | None = None
    profile_id: Annotated[str, msgspec.Meta(description="open: in a window of this login profile.")] | None = None


class LoginInputs(Inputs, kw_only=True):
    steps: Annotated[list[LoginStep], msgspec.Meta(min_length=1, max_length=50)]
    variables: Annotated[dict[str, str], msgspec.Meta(description="Values for {{name}}; never stored.")] = (
        msgspec.field(default_factory=dict)
    )


class LoginResult(msgspec.Struct, kw_only=True, rename="camel"):
    summary: dict[str, int]
    items: list[dict[str, Any]]
    session_id: str
    final_url: str
    title: str
    logged_in: bool


def _substitute(value: str, variables: dict[str, str], where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise InvalidParameter(
                f"{where} uses {{{{{name}}}}} but variables has no `{name}`",
                hint="Add it to inputs.variables.",
                field="inputs.variables",
            )
        return variables[name]

    return _VARIABLE.sub(replace, value)


def tool_arguments(step: LoginStep, variables: dict[str, str], where: str) -> dict[str, Any]:
    """The step as its tool's arguments, with variables filled in; no snapshot in the answer."""
    fields = {key: value for key, value in msgspec.to_builtins(step).items() if key != "action"}
    arguments = {
        key: _substitute(value, variables, where) if isinstance(value, str) else value for key, value in fields.items()
    }
    return {**arguments, "snapshot": "none"}


class LoginKeepSession(Template[LoginInputs]):
    template_id = "login_keep_session"
    version = "1.0.0"
    name = "Log in and keep the session"
    description = "Run login steps (open, fill, type, click, press, wait) and keep the logged-in session open."
    inputs = LoginInputs
    outputs = LoginResult
    # The session outlives the call and only local connections may reach another session (D-11).
    trust_level_support = ("local",)
    limits = {"maxSteps": 50}  # noqa: RUF012
    supports_partial_success = False
    max_timeout_ms = 300_000
    keep_session = True

    def check_tools(self, inputs: LoginInputs, tools: ToolCaller) -> None:
        for index, step in enumerate(inputs.steps):
            where = f"inputs.steps[{index}]"
            try:
                tools.check(TOOLS[step.action], tool_arguments(step, inputs.variables, where))
            except InvalidParameter as exc:
                raise InvalidParameter(
                    f"{where} ({step.action}): {exc.message}",
                    hint="Each step takes the fields of its browser tool: open url; fill target+value; type "
                    "target+text; click target; press key; wait text, selector, url or timeMs.",
                    field=where,
                ) from exc

    def default_mode(self, inputs: LoginInputs, config: RunsConfig, timeout_ms: int | None) -> Literal["sync", "async"]:
        return "sync"

    def plan(self, inputs: LoginInputs) -> list[str]:
        names = []
        for step in inputs.steps:
            subject = step.url or step.target or step.key or step.text or step.selector or ""
            names.append(f"{step.action} {subject}".strip())
        return names

    def stored_inputs(self, inputs: LoginInputs) -> dict[str, Any]:
        stored = msgspec.to_builtins(inputs)
        stored["variables"] = dict.fromkeys(inputs.variables, REDACTED)
        for step in stored["steps"]:
            if step["action"] in ("fill", "type"):
                for secret in ("value", "text"):
                    if secret in step:
                        step[secret] = REDACTED
        return dict(stored)

    async def run(self, ctx: RunContext, inputs: LoginInputs) -> None:
        for index, step in enumerate(inputs.steps):
            arguments = tool_arguments(step, inputs.variables, f"inputs.steps[{index}]")
            async with ctx.step(index):
                await ctx.call_tool(TOOLS[step.action], arguments)
        tab = await ctx.session.tab()
        ctx.set_output(sessionId=ctx.session.id, finalUrl=tab.page.url, title=await tab.page.title(), loggedIn=True)
