"""A task run as the tools answer it (run_task_template, get_task_run, flow_run, crawl): the TaskRun Struct,
its view of a run, and a sync run's wait. Shared by the run, flow and scrape tools, which never import
each other (tools/runs.py holds only its tools)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
import msgspec

from browserd.daemon.errors import request_timeout
from browserd.daemon.runs.run_manager import ActiveRun, RunView, StartRequest
from browserd.daemon.runs.run_records import RunMode, RunRecord, RunStatus
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tool_registry import Params

# Runs with more steps than this list them in get_task_run only when includeSteps asks.
INLINE_STEPS = 50
# How long after a sync run's own timeout the call still waits: for the run to stop and write its result.
RUN_FINISH_MARGIN_S = 30.0


class RunAnswer(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """Base of the answers. The schema requires only what reference/001's examples have (S1-88); the
    fields we add are `X | None = None`, so they are optional in the schema yet sent whenever set."""


class RunProgress(RunAnswer, kw_only=True):
    total_steps: int
    done_steps: int


class RunMetrics(RunAnswer, kw_only=True):
    elapsed_ms: int


class ArtifactInfo(RunAnswer, kw_only=True):
    artifact_id: str
    type: str
    mime_type: str | None = None
    size: int
    name: str | None = None


class RunError(RunAnswer, kw_only=True):
    error: str
    error_code: str
    recover_hint: str
    details: dict[str, Any]


class StepInfo(RunAnswer, kw_only=True):
    index: int
    name: str
    status: str
    error_code: str | None = None
    error: str | None = None


class TaskRun(RunAnswer, kw_only=True):
    """A run, as run_task_template and get_task_run answer. We always send every field of the run, but
    reference/001 §4.1's async answer has only runId, status and createdAt, and its sync answer no
    createdAt: only runId and status are required."""

    run_id: str
    status: RunStatus
    created_at: int | None = None
    template_id: str | None = None
    template_version: str | None = None
    mode: Literal["sync", "async"] | None = None
    updated_at: int | None = None
    session_id: str | None = None
    session_kept: bool | None = None
    progress: RunProgress | None = None
    metrics: RunMetrics | None = None
    cancel_requested: bool = False
    # Only once the run is terminal (S1-26, S1-27).
    result: dict[str, Any] | None = None
    error: RunError | None = None
    artifacts: list[ArtifactInfo] | None = None
    steps: list[StepInfo] | None = None


class RunOptions(Params, kw_only=True):
    timeout_ms: (
        Annotated[int, msgspec.Meta(ge=1, description="Run deadline; capped by the template and the runtime.")] | None
    ) = None
    mode: Annotated[RunMode, msgspec.Meta(description="sync waits for the result; async answers with runId.")] = "auto"


class RunTemplateParams(Params, kw_only=True):
    template_id: Annotated[str, msgspec.Meta(description="From list_task_templates.")]
    template_version: Annotated[str, msgspec.Meta(description="Default: the latest.")] | None = None
    session_id: Annotated[str, msgspec.Meta(description="Run in this session and keep it; default: a new one.")] | (
        None
    ) = None
    inputs: Annotated[dict[str, Any], msgspec.Meta(description="As the template's inputsSchema says.")] = msgspec.field(
        default_factory=dict
    )
    options: RunOptions | None = None


def task_run(view: RunView, include_steps: bool = False) -> TaskRun:
    record: RunRecord = view.record
    run = TaskRun(
        run_id=record.run_id,
        status=record.status,
        created_at=record.created_at,
        template_id=record.template_id,
        template_version=record.template_version,
        mode=record.mode,
        updated_at=record.updated_at,
        session_id=record.session_id,
        session_kept=record.session_kept,
        progress=RunProgress(total_steps=record.total_steps, done_steps=record.done_steps),
        metrics=RunMetrics(elapsed_ms=record.elapsed_ms()),
        cancel_requested=record.cancel_requested,
    )
    if record.terminal:
        run.result = record.result
        if view.artifacts:
            run.artifacts = [
                ArtifactInfo(artifact_id=a.artifact_id, type=a.type, mime_type=a.mime_type, size=a.size, name=a.name)
                for a in view.artifacts
            ]
    if record.error is not None:
        run.error = RunError(
            error=record.error.error,
            error_code=record.error.error_code,
            recover_hint=record.error.recover_hint,
            details=record.error.details,
        )
    if include_steps or len(view.steps) <= INLINE_STEPS:
        run.steps = [
            StepInfo(
                index=step.index,
                name=step.name,
                status=step.status,
                error_code=step.error.error_code if step.error else None,
                error=step.error.error if step.error else None,
            )
            for step in view.steps
        ]
    return run


def answer(response: Response, result: msgspec.Struct, text: str) -> None:
    response.data(msgspec.to_builtins(result))
    response.text(text)


def describe(run: TaskRun) -> str:
    line = f"Run {run.run_id} ({run.template_id}): {run.status}"
    if run.progress is not None:
        line += f", {run.progress.done_steps}/{run.progress.total_steps} steps"
    if run.error is not None:
        line += f"\nError [{run.error.error_code}]: {run.error.error}"
    if run.status in ("queued", "running"):
        line += f"\nNext: get_task_run with runId {run.run_id} (every 2 s) until the status is terminal."
    elif run.result is not None:
        line += "\n" + msgspec.json.encode(run.result).decode()
    return line


async def run_template(ctx: ToolContext, params: RunTemplateParams, response: Response) -> None:
    """Start a template's run and answer it: the result once done (sync), else the run as created (async)."""
    options = params.options or RunOptions()
    manager = ctx.services.runs
    request = StartRequest(
        template_id=params.template_id,
        template_version=params.template_version,
        inputs=params.inputs,
        session_id=params.session_id,
        timeout_ms=options.timeout_ms,
        mode=options.mode,
    )
    run = await manager.start(request, ctx.session)
    record = run.record
    if record.mode == "sync":
        await wait_for_run(ctx, run)
        result = task_run(await manager.get(record.run_id, ctx.session))
    else:
        # The run as created (S1-21: queued), before its task had a chance to start.
        result = task_run(RunView(msgspec.structs.replace(record), [], list(run.ctx.steps)))
    answer(response, result, describe(result))


async def wait_for_run(ctx: ToolContext, run: ActiveRun) -> None:
    """Block until the run ends, relaying its progress; a cancelled call cancels the run (issue 6).

    Queued, the call waits under the request deadline ([daemon] request_timeout_s); once running, the run's
    own timeout governs, so the deadline moves past it: a run ends on RUN_TIMEOUT, never cut by the request.
    """
    record = run.record
    run.ctx.listeners.add(ctx.progress)
    try:
        # The first notification names the run, so a client can follow it even if this call is lost (D-38).
        await ctx.progress(float(record.done_steps), float(record.total_steps) or None, record.run_id)
        await run.started.wait()
        ctx.allow(record.timeout_ms / 1000 + RUN_FINISH_MARGIN_S)
        await run.done.wait()
    except anyio.get_cancelled_exc_class():
        status = record.status
        with anyio.CancelScope(shield=True):
            await ctx.services.runs.cancel(record.run_id)
        if ctx.past_deadline():
            # The answer tells the run's end: a queued run ends canceled at once, a running one after its step.
            with anyio.move_on_after(RUN_FINISH_MARGIN_S, shield=True):
                await run.done.wait()
            raise request_timeout(
                "run_task_template",
                ctx.services.config.daemon.request_timeout_s,
                f"run {record.run_id} was canceled while {status}: this call reached the daemon's request "
                "deadline ([daemon] request_timeout_s) first",
                hint="Run it with options.mode 'async' and poll get_task_run, or raise [daemon] request_timeout_s "
                "(BROWSERD_DAEMON_REQUEST_TIMEOUT_S).",
                runId=record.run_id,
            ) from None
        raise
    finally:
        run.ctx.listeners.discard(ctx.progress)
