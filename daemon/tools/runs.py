"""Task-run tools (reference/001): templates, runs, their results and artifacts.

Every tool here declares an output Struct: tools/list announces its schema as outputSchema and the
answer's structuredContent is that Struct, so the two cannot disagree (S1-03, S1-88).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
import msgspec

from browserd.daemon.errors import request_timeout
from browserd.daemon.runs.manager import ActiveRun, RunView, StartRequest
from browserd.daemon.runs.records import RunMode, RunRecord, RunStatus
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.registry import NoParams, Params, Tool, input_schema, output_schema, tool
from browserd.daemon.tools.response import Response

RunId = Annotated[str, msgspec.Meta(description="The runId run_task_template answered with.")]
MAX_LIST = 100
# Runs with more steps than this list them in get_task_run only when includeSteps asks.
INLINE_STEPS = 50
# How long after a sync run's own timeout the call still waits: for the run to stop and write its result.
RUN_FINISH_MARGIN_S = 30.0


class _Out(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """Base of the answers. The schema requires only what reference/001's examples have (S1-88); the
    fields we add are `X | None = None`, so they are optional in the schema yet sent whenever set."""


# -- results ---------------------------------------------------------------------------------------


class TemplateInfo(_Out, kw_only=True):
    template_id: str
    version: str
    name: str
    description: str | None = None
    trust_level_support: list[str]
    limits: dict[str, int]
    supports_partial_success: bool | None = None
    partial_success_threshold: float | None = None
    max_timeout_ms: int | None = None
    keeps_session: bool | None = None
    inputs_schema: dict[str, Any]
    outputs_schema: dict[str, Any]


class TemplateList(_Out, kw_only=True):
    templates: list[TemplateInfo]


class RunProgress(_Out, kw_only=True):
    total_steps: int
    done_steps: int


class RunMetrics(_Out, kw_only=True):
    elapsed_ms: int


class ArtifactInfo(_Out, kw_only=True):
    artifact_id: str
    type: str
    mime_type: str | None = None
    size: int
    name: str | None = None


class RunError(_Out, kw_only=True):
    error: str
    error_code: str
    recover_hint: str
    details: dict[str, Any]


class StepInfo(_Out, kw_only=True):
    index: int
    name: str
    status: str
    error_code: str | None = None
    error: str | None = None


class TaskRun(_Out, kw_only=True):
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


class RunListEntry(_Out, kw_only=True):
    run_id: str
    template_id: str
    status: RunStatus
    created_at: int
    updated_at: int


class RunList(_Out, kw_only=True):
    runs: list[RunListEntry]


class CancelResult(_Out, kw_only=True):
    cancel_requested: bool
    current_status: RunStatus


class ArtifactChunk(_Out, kw_only=True):
    artifact_id: str
    run_id: str | None = None
    mime_type: str
    size: int
    data: Annotated[str, msgspec.Meta(description="base64 of the raw bytes from offset.")]
    # reference/001 §5's one-chunk answer leaves these two out; we always send them.
    offset: int | None = None
    bytes_returned: int | None = None
    complete: bool


# -- parameters ------------------------------------------------------------------------------------


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


class GetRunParams(Params, kw_only=True):
    run_id: RunId
    include_steps: Annotated[bool, msgspec.Meta(description="List every step with its status.")] = False


class ListRunsParams(Params, kw_only=True):
    status: RunStatus | None = None
    template_id: str | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_LIST)] = 20
    offset: Annotated[int, msgspec.Meta(ge=0)] = 0


class CancelParams(Params, kw_only=True):
    run_id: RunId
    force: Annotated[bool, msgspec.Meta(description="Also interrupt the step in flight (it fails).")] = False


class ArtifactParams(Params, kw_only=True):
    artifact_id: Annotated[str, msgspec.Meta(description="From a run's artifacts or an item.")]
    offset: Annotated[int, msgspec.Meta(ge=0, description="Byte offset; add bytesReturned for the next chunk.")] = 0
    limit: Annotated[int, msgspec.Meta(ge=1, description="Bytes; capped at maxArtifactInlineBytes.")] | None = None


# -- views -----------------------------------------------------------------------------------------


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


def _answer(response: Response, result: msgspec.Struct, text: str) -> None:
    response.data(msgspec.to_builtins(result))
    response.text(text)


def _describe(run: TaskRun) -> str:
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


# -- tools -----------------------------------------------------------------------------------------


@tool(
    "list_task_templates",
    "runs",
    "The task templates this daemon runs (run_task_template), with their inputs and outputs schemas.",
    NoParams,
    read_only=True,
    output=TemplateList,
)
async def list_task_templates(ctx: ToolContext, params: NoParams, response: Response) -> None:
    templates = [
        TemplateInfo(
            template_id=t.template_id,
            version=t.version,
            name=t.name,
            description=t.description,
            trust_level_support=list(t.trust_level_support),
            limits=t.limits_under(ctx.services.config),
            supports_partial_success=t.supports_partial_success,
            partial_success_threshold=t.partial_success_threshold,
            max_timeout_ms=t.max_timeout_ms,
            keeps_session=t.keep_session,
            inputs_schema=input_schema(t.inputs),
            outputs_schema=output_schema(t.outputs),
        )
        for t in ctx.services.runs.templates.all()
    ]
    result = TemplateList(templates=templates)
    _answer(response, result, msgspec.json.encode(msgspec.to_builtins(result)).decode())


@tool(
    "run_task_template",
    "runs",
    "Run a task template. mode sync waits and answers with the result; async answers at once with a runId for "
    "get_task_run; auto (default) lets the template choose.",
    RunTemplateParams,
    output=TaskRun,
    task_arguments={"options": {"mode": "sync"}},
)
async def run_task_template(ctx: ToolContext, params: RunTemplateParams, response: Response) -> None:
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
        await _wait(ctx, run)
        result = task_run(await manager.get(record.run_id, ctx.session))
    else:
        # The run as created (S1-21: queued), before its task had a chance to start.
        result = task_run(RunView(msgspec.structs.replace(record), [], list(run.ctx.steps)))
    _answer(response, result, _describe(result))


async def _wait(ctx: ToolContext, run: ActiveRun) -> None:
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


@tool(
    "get_task_run",
    "runs",
    "A run's status, progress and, once it has ended, its result, error and artifacts. Poll every 2 s while it "
    "is queued or running.",
    GetRunParams,
    read_only=True,
    output=TaskRun,
)
async def get_task_run(ctx: ToolContext, params: GetRunParams, response: Response) -> None:
    result = task_run(await ctx.services.runs.get(params.run_id, ctx.session), params.include_steps)
    _answer(response, result, _describe(result))


@tool(
    "list_task_runs",
    "runs",
    "Runs kept by the daemon, newest first, filtered by status and templateId.",
    ListRunsParams,
    read_only=True,
    output=RunList,
)
async def list_task_runs(ctx: ToolContext, params: ListRunsParams, response: Response) -> None:
    records = await ctx.services.runs.list(
        params.status, params.template_id, params.limit, params.offset, caller=ctx.session
    )
    runs = [
        RunListEntry(
            run_id=r.run_id,
            template_id=r.template_id,
            status=r.status,
            created_at=r.created_at,
            updated_at=r.updated_at,
        )
        for r in records
    ]
    lines = [f"- {r.run_id} {r.template_id} {r.status}" for r in runs] or ["(no runs)"]
    _answer(response, RunList(runs=runs), "\n".join(lines))


@tool(
    "cancel_task_run",
    "runs",
    "Ask a run to stop: the step in flight finishes, the rest are skipped, and results so far stay readable.",
    CancelParams,
    output=CancelResult,
)
async def cancel_task_run(ctx: ToolContext, params: CancelParams, response: Response) -> None:
    requested, status = await ctx.services.runs.cancel(params.run_id, params.force, ctx.session)
    text = (
        f"Cancel requested; the run is {status}. Poll get_task_run until it is canceled."
        if requested
        else f"The run has already ended ({status}); nothing to cancel."
    )
    _answer(response, CancelResult(cancel_requested=requested, current_status=status), text)


@tool(
    "get_artifact",
    "runs",
    "Read a run's artifact as base64, at most maxArtifactInlineBytes at a time: repeat with offset += "
    "bytesReturned until complete is true.",
    ArtifactParams,
    read_only=True,
    output=ArtifactChunk,
)
async def get_artifact(ctx: ToolContext, params: ArtifactParams, response: Response) -> None:
    chunk = await ctx.services.runs.read_artifact(params.artifact_id, params.offset, params.limit, ctx.session)
    artifact = chunk.artifact
    result = ArtifactChunk(
        artifact_id=artifact.artifact_id,
        run_id=artifact.run_id,
        mime_type=artifact.mime_type,
        size=artifact.size,
        data=chunk.data_base64(),
        offset=chunk.offset,
        bytes_returned=len(chunk.data),
        complete=chunk.complete,
    )
    more = "" if chunk.complete else f"; next: get_artifact with offset {chunk.offset + len(chunk.data)}"
    text = f"Artifact {artifact.artifact_id} ({artifact.mime_type}, {artifact.size} bytes): bytes {chunk.offset}"
    _answer(response, result, f"{text}..{chunk.offset + len(chunk.data)} in structuredContent.data (base64){more}")


TOOLS: list[Tool[Any]] = [
    list_task_templates,
    run_task_template,
    get_task_run,
    list_task_runs,
    cancel_task_run,
    get_artifact,
]
