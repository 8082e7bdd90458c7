"""Task-run tools (reference/001): templates, runs, their results and artifacts.

Every tool here declares an output Struct: tools/list announces its schema as outputSchema and the
answer's structuredContent is that Struct, so the two cannot disagree (S1-03, S1-88).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from browserd.daemon.runs.run_records import RunStatus
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.task_runs import (
    RunAnswer,
    RunTemplateParams,
    TaskRun,
    answer,
    describe,
    run_template,
    task_run,
)
from browserd.daemon.tools.tool_registry import NoParams, Params, Tool, input_schema, output_schema, tool

RunId = Annotated[str, msgspec.Meta(description="The runId run_task_template answered with.")]
MAX_LIST = 100


# -- results ---------------------------------------------------------------------------------------


class TemplateInfo(RunAnswer, kw_only=True):
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


class TemplateList(RunAnswer, kw_only=True):
    templates: list[TemplateInfo]


class RunListEntry(RunAnswer, kw_only=True):
    run_id: str
    template_id: str
    status: RunStatus
    created_at: int
    updated_at: int


class RunList(RunAnswer, kw_only=True):
    runs: list[RunListEntry]


class CancelResult(RunAnswer, kw_only=True):
    cancel_requested: bool
    current_status: RunStatus


class ArtifactChunk(RunAnswer, kw_only=True):
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
    answer(response, result, msgspec.json.encode(msgspec.to_builtins(result)).decode())


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
    await run_template(ctx, params, response)


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
    answer(response, result, describe(result))


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
    answer(response, RunList(runs=runs), "\n".join(lines))


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
    answer(response, CancelResult(cancel_requested=requested, current_status=status), text)


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
    answer(response, result, f"{text}..{chunk.offset + len(chunk.data)} in structuredContent.data (base64){more}")


TOOLS: list[Tool[Any]] = [
    list_task_templates,
    run_task_template,
    get_task_run,
    list_task_runs,
    cancel_task_run,
    get_artifact,
]
