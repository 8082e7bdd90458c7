"""Flow tools (issue 14, DESIGN §4): record, keep, replay, export/import, and publish flows as tools.

A published flow is a tool `flow_<slug>` in every client's tools/list (published_tools), plus
`flow_<slug>_v<N>` for earlier versions it keeps: their arguments are the flow's variables, checked
by a msgspec Struct built from them; the schema clients see is a terser one (variables.tool_schema).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from browserd.daemon.errors import InvalidParameter
from browserd.daemon.flows.catalogue.datasets import DatasetFormat, as_text, flatten
from browserd.daemon.flows.catalogue.python_export import export_script
from browserd.daemon.flows.flow_model import MAX_ROWS, Flow, StepReport
from browserd.daemon.flows.owners import Actor, level_of
from browserd.daemon.flows.replay.run_template import check_from_step, start_flow_run
from browserd.daemon.flows.variables import args_struct, parse_args, parse_rows, tool_schema, values_of
from browserd.daemon.runs.run_records import RunMode
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import TabId
from browserd.daemon.tools.task_runs import task_run, wait_for_run
from browserd.daemon.tools.tool_registry import NoParams, Params, Tool, tool

FlowRef = Annotated[str, msgspec.Meta(description="flowId (flow_...) or a published slug.")]
TabTarget = Literal["current", "new"]


class FlowRunAnswer(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    run_id: str
    status: str
    success: bool | None = None
    url: str | None = None
    steps: list[StepReport] = msgspec.field(default_factory=list)
    outputs: dict[str, Any] = msgspec.field(default_factory=dict)
    # Over rows: one item per row {row, success, outputs | errorCode, error}, and the run's summary.
    items: list[dict[str, Any]] | None = None
    summary: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    # Set when the run did not work where the call asked (tabTarget current, tabId): a flow made by a lower
    # trust level than the caller's runs in a session of its own.
    note: str | None = None


class RecordStartParams(Params, kw_only=True):
    name: str = "Recorded flow"
    tab_id: Annotated[str, msgspec.Meta(description="Record only this tab's actions; default: all.")] | None = None


class RecordStopParams(Params, kw_only=True):
    save: bool = True


class FlowParams(Params, kw_only=True):
    flow_id: FlowRef


class GetParams(FlowParams, kw_only=True):
    version: Annotated[int, msgspec.Meta(ge=1, description="An earlier version; default: the latest.")] | None = None


class SaveParams(Params, kw_only=True):
    flow: Annotated[dict[str, Any], msgspec.Meta(description="The flow as flow_get shows it; saved as a new version.")]


class RunOptions(Params, kw_only=True):
    tab_target: TabTarget = "current"
    start_url: str | None = None
    timeout_ms: Annotated[int, msgspec.Meta(ge=1)] | None = None


class RunParams(RunOptions, kw_only=True):
    flow_id: FlowRef
    args: Annotated[dict[str, Any], msgspec.Meta(description="Variable values by key (flow_get lists them).")] = (
        msgspec.field(default_factory=dict)
    )
    step_timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=300_000, description="Default 10000.")] | None = None
    mode: Literal["sync", "async"] = "sync"
    tab_id: TabId | None = None
    rows: (
        Annotated[
            list[dict[str, Any]],
            msgspec.Meta(max_length=MAX_ROWS, description="A data set: one replay per row (values over args)."),
        ]
        | None
    ) = None
    resume_run_id: Annotated[str, msgspec.Meta(description="Skip the rows this earlier run finished.")] | None = None
    from_step: Annotated[str, msgspec.Meta(description="Replay from this step id on (retry at a failure).")] | None = (
        None
    )


class ExportParams(FlowParams, kw_only=True):
    format: Literal["json", "playwright"] = "json"


class ImportParams(Params, kw_only=True):
    flow: Annotated[
        dict[str, Any], msgspec.Meta(description="A flow as flow_export (json) wrote it, or a Recorder file.")
    ]
    format: Annotated[
        Literal["browserd", "chrome_recorder"], msgspec.Meta(description="chrome_recorder: DevTools Recorder JSON.")
    ] = "browserd"
    overwrite: Annotated[bool, msgspec.Meta(description="Replace the flow with the same id; default: a copy.")] = False


class PublishParams(FlowParams, kw_only=True):
    slug: Annotated[str, msgspec.Meta(pattern="^[a-z0-9_]{1,40}$", description="Tool name flow_<slug>.")] | None = None
    description: str | None = None


def _by(ctx: ToolContext) -> Actor:
    """The caller, for what the flow service lets it see and change (daemon/flows/owners.py)."""
    return Actor(ctx.session.trust, ctx.session.client_name)


def _flow_data(flow: Flow) -> dict[str, Any]:
    return dict(msgspec.to_builtins(flow))


def _summary(flow: Flow) -> str:
    shape = f"{len(flow.nodes)} nodes, {len(flow.edges)} edges" if flow.nodes else f"{len(flow.steps)} steps"
    lines = [f"Flow {flow.id} v{flow.version} {flow.name!r}: {shape}"]
    if flow.variables:
        variables = ", ".join(f"{v.key}{' (sensitive)' if v.sensitive else ''}" for v in flow.variables)
        lines.append(f"Variables: {variables}")
    if flow.meta.tool.published:
        lines.append(f"Published as flow_{flow.meta.tool.slug}")
    return "\n".join(lines)


@tool(
    "flow_record_start",
    "flows",
    "Start recording this session's browser actions (click, fill, select, press, open...) as a flow.",
    RecordStartParams,
)
async def flow_record_start(ctx: ToolContext, params: RecordStartParams, response: Response) -> None:
    session = ctx.session
    tab = session.find_tab(params.tab_id) if params.tab_id else session.active_tab()
    await ctx.services.flows.start_recording(session.id, params.name, params.tab_id, tab)
    response.data({"recording": True})
    response.text(
        "Recording. Act with the browser tools (a person's own clicks and typing in the tab are recorded too), "
        "then call flow_record_stop."
    )


@tool("flow_record_stop", "flows", "Stop recording; answers {flowId, flow}.", RecordStopParams)
async def flow_record_stop(ctx: ToolContext, params: RecordStopParams, response: Response) -> None:
    flow, warnings = await ctx.services.flows.stop_recording(ctx.session.id, params.save, _by(ctx))
    response.data({"flowId": flow.id, "flow": _flow_data(flow), **({"warnings": warnings} if warnings else {})})
    response.text(_summary(flow) + ("" if params.save else "\n(not saved)"))
    for warning in warnings:
        response.text(f"Warning: {warning}")


@tool("flow_list", "flows", "The stored flows, newest first.", NoParams, read_only=True)
async def flow_list(ctx: ToolContext, params: NoParams, response: Response) -> None:
    rows = await ctx.services.flows.listed(_by(ctx))
    flows = [
        {"flowId": r.flow_id, "name": r.name, "version": r.version, "slug": r.slug, "published": r.published}
        for r in rows
    ]
    response.data({"flows": flows})
    response.text("\n".join(f"- {r.flow_id} v{r.version} {r.name!r}" for r in rows) or "(no flows)")


@tool("flow_get", "flows", "A flow: steps, targets, variables.", GetParams, read_only=True)
async def flow_get(ctx: ToolContext, params: GetParams, response: Response) -> None:
    flow = await ctx.services.flows.get(params.flow_id, params.version, _by(ctx))
    response.data(_flow_data(flow))
    response.text(_summary(flow))


@tool("flow_save", "flows", "Create or change a flow (each change is a new version).", SaveParams)
async def flow_save(ctx: ToolContext, params: SaveParams, response: Response) -> None:
    flow = await ctx.services.flows.import_flow(params.flow, overwrite=True, by=_by(ctx))
    response.data({"flowId": flow.id, "version": flow.version})
    response.text(_summary(flow))


@tool("flow_delete", "flows", "Delete a flow and its versions (unpublishing it).", FlowParams)
async def flow_delete(ctx: ToolContext, params: FlowParams, response: Response) -> None:
    flow = await ctx.services.flows.delete(params.flow_id, _by(ctx))
    response.data({"deleted": flow.id})
    response.text(f"Deleted {flow.id}")


async def run_flow(
    ctx: ToolContext, flow: Flow, values: dict[str, Any], options: RunOptions, response: Response, **extra: Any
) -> None:
    """Start the flow as a task run (flows/replay/run_template.py); sync waits and answers with every step's
    report."""
    mode: RunMode = extra.pop("mode", None) or "sync"
    level = ctx.session.trust.lowered(level_of(flow.meta.owner)).level
    note = None
    if level != ctx.session.trust_level and (options.tab_target == "current" or extra.get("tabId") is not None):
        # start_flow_run gives it a session of its own: the caller's tab choice does not apply, and says so.
        note = (
            f"{flow.id} was made by a {level} session, so it ran with {level} rights in a session of its own "
            "whose windows go through the URL guard, not in this session's tab (tabTarget current does not "
            "apply to it)."
        )
    manager = ctx.services.runs
    run = await start_flow_run(
        manager, ctx.session, flow, values, options.tab_target, options.start_url, options.timeout_ms, mode, **extra
    )
    if run.record.mode == "sync":
        await wait_for_run(ctx, run)
    view = task_run(await manager.get(run.record.run_id, ctx.session))
    result = view.result or {}
    answer = FlowRunAnswer(
        run_id=view.run_id,
        status=view.status,
        success=result.get("flowRun", {}).get("success") if view.result is not None else None,
        url=result.get("flowRun", {}).get("url"),
        steps=msgspec.convert(result.get("steps", []), list[StepReport]),
        outputs=result.get("outputs", {}),
        items=result.get("items") or None,
        summary=result.get("summary") if "rowsTotal" in result else None,
        error=msgspec.to_builtins(view.error) if view.error is not None else None,
        note=note,
    )
    response.data(msgspec.to_builtins(answer))
    lines = [f"Run {answer.run_id} of {flow.id}: {answer.status}"] + ([f"Note: {note}"] if note else [])
    for step in answer.steps:
        how = f" via {step.matched_by} (score {step.score})" if step.matched_by else ""
        fell = f" [chosen by the model: {step.llm.reason}]" if step.llm else " [fallback]" if step.fallback else ""
        said = f" {step.message}" if step.message else ""
        lines.append(f"- {step.step_id} {step.type}: {step.status}{how}{fell}{said}")
    if view.error is not None:
        lines.append(f"Error [{view.error.error_code}]: {view.error.error}")
    if answer.status in ("queued", "running"):
        lines.append(f"Next: get_task_run with runId {answer.run_id}.")
    response.text("\n".join(lines))


@tool(
    "flow_run",
    "flows",
    "Replay a flow as a task run. Acts only on elements that match the recorded ones; stops with the "
    "candidates and scores otherwise. Answers {runId, status, steps, outputs}.",
    RunParams,
    output=FlowRunAnswer,
    task_arguments={"mode": "sync"},
)
async def flow_run(ctx: ToolContext, params: RunParams, response: Response) -> None:
    flow = await ctx.services.flows.get(params.flow_id, by=_by(ctx))
    check_from_step(flow, params.from_step)
    if params.rows is None:
        values = parse_args(flow, params.args, Params)
    else:
        values = parse_rows(flow, params.args, params.rows, Params)
    await run_flow(
        ctx,
        flow,
        values,
        params,
        response,
        stepTimeoutMs=params.step_timeout_ms,
        tabId=params.tab_id,
        mode=params.mode,
        rows=params.rows,
        resumeRunId=params.resume_run_id,
        fromStep=params.from_step,
    )


@tool(
    "flow_update_targets",
    "flows",
    "Apply the candidate order the last runs found better (their fallbacks) as a new flow version.",
    FlowParams,
)
async def flow_update_targets(ctx: ToolContext, params: FlowParams, response: Response) -> None:
    flow, changed = await ctx.services.flows.update_targets(params.flow_id, _by(ctx))
    response.data({"flowId": flow.id, "version": flow.version, "stepsUpdated": changed})
    response.text(f"{changed} step(s) reordered; {flow.id} is now v{flow.version}")


@tool("flow_export", "flows", "A flow as JSON (no sensitive values) or a Playwright Python script.", ExportParams)
async def flow_export(ctx: ToolContext, params: ExportParams, response: Response) -> None:
    flow = await ctx.services.flows.for_export(params.flow_id, _by(ctx))
    if params.format == "playwright":
        script = await export_script(flow, ctx.session.trust)
        response.data({"flowId": flow.id, "format": "playwright", "script": script})
        response.text(f"```python\n{script}```")
        return
    response.data({"flowId": flow.id, "format": "json", "flow": _flow_data(flow)})
    response.text(msgspec.json.encode(flow).decode())


@tool("flow_import", "flows", "Import a flow exported as JSON (a copy unless overwrite).", ImportParams)
async def flow_import(ctx: ToolContext, params: ImportParams, response: Response) -> None:
    flow = await ctx.services.flows.import_flow(params.flow, params.overwrite, _by(ctx), params.format)
    response.data({"flowId": flow.id, "version": flow.version})
    response.text(_summary(flow))


@tool("flow_publish", "flows", "Offer a flow to every client as the tool flow_<slug>.", PublishParams)
async def flow_publish(ctx: ToolContext, params: PublishParams, response: Response) -> None:
    flow = await ctx.services.flows.publish(params.flow_id, params.slug, params.description, _by(ctx))
    response.data({"flowId": flow.id, "tool": f"flow_{flow.meta.tool.slug}", "version": flow.version})
    response.text(f"Published {flow.id} as flow_{flow.meta.tool.slug}")


@tool("flow_unpublish", "flows", "Remove a flow's flow_<slug> tool.", FlowParams)
async def flow_unpublish(ctx: ToolContext, params: FlowParams, response: Response) -> None:
    flow = await ctx.services.flows.unpublish(params.flow_id, _by(ctx))
    response.data({"flowId": flow.id, "published": False})
    response.text(f"Unpublished {flow.id}")


class DatasetExportParams(Params, kw_only=True):
    run_id: Annotated[str, msgspec.Meta(description="A flow_run over rows: its per-row results.")] | None = None
    flow_id: Annotated[str, msgspec.Meta(description="A flow: the rows its datasetWrite nodes wrote.")] | None = None
    clear: Annotated[bool, msgspec.Meta(description="With flowId: empty the dataset once exported.")] = False
    format: DatasetFormat = "csv"


@tool(
    "dataset_export",
    "flows",
    "As CSV or JSON: a flow run's per-row results (runId; outputs as stepId.field), or the dataset a flow's "
    "datasetWrite nodes wrote (flowId).",
    DatasetExportParams,
)
async def dataset_export(ctx: ToolContext, params: DatasetExportParams, response: Response) -> None:
    if (params.run_id is None) == (params.flow_id is None):
        raise InvalidParameter("give runId or flowId (one of them)", field="runId")
    if params.flow_id is not None:
        rows = await ctx.services.flows.dataset(params.flow_id, _by(ctx), params.clear)
    else:
        rows = [flatten(item) for item in await ctx.services.runs.items(params.run_id or "", ctx.session)]
    text = as_text(rows, params.format)
    source = {"flowId": params.flow_id} if params.flow_id is not None else {"runId": params.run_id}
    response.data({**source, "format": params.format, "rows": len(rows), "text": text})
    response.text(text or "(no rows)")


class ScheduleParams(Params, kw_only=True):
    action: Literal["add", "list", "remove", "run"] = "list"
    flow_id: Annotated[str, msgspec.Meta(description="For add: the flow (id or slug).")] | None = None
    cron: (
        Annotated[str, msgspec.Meta(description="For add: 5 fields, e.g. '*/15 * * * *'; a 6th is the second.")] | None
    ) = None
    on_page: (
        Annotated[str, msgspec.Meta(description="For add, instead of cron: a URL glob; runs in the tab.")] | None
    ) = None
    args: Annotated[dict[str, Any], msgspec.Meta(description="For add: variable values (none sensitive).")] = (
        msgspec.field(default_factory=dict)
    )
    start_url: str | None = None
    systemd: Annotated[bool, msgspec.Meta(description="For add: a systemd user timer fires it, not the daemon.")] = (
        False
    )
    schedule_id: Annotated[str, msgspec.Meta(description="For remove and run.")] | None = None


@tool(
    "flow_schedule",
    "flows",
    "Triggers: add {flowId, cron | onPage, args?}, list, remove {scheduleId}, run {scheduleId} (now). A cron run "
    "is an async task run in a session of its own; an onPage run, in the session and tab whose page loaded.",
    ScheduleParams,
)
async def flow_schedule(ctx: ToolContext, params: ScheduleParams, response: Response) -> None:
    flows = ctx.services.flows
    if params.action == "add":
        if params.flow_id is None:
            raise InvalidParameter("add needs flowId", field="flowId")
        trigger = (params.cron, params.on_page)
        by = _by(ctx)
        schedule = await flows.add_schedule(params.flow_id, trigger, params.args, params.start_url, params.systemd, by)
        response.data(msgspec.to_builtins(schedule))
        when = f"at '{schedule.cron}'" if schedule.cron else f"on pages {schedule.on_page}"
        response.text(f"Schedule {schedule.schedule_id}: {schedule.flow_id} {when}")
        return
    if params.action == "list":
        schedules = await flows.schedules(_by(ctx))
        response.data({"schedules": msgspec.to_builtins(schedules)})
        lines = [
            f"- {s.schedule_id} {s.flow_id} {repr(s.cron) if s.cron else 'onPage ' + str(s.on_page)}"
            f"{' (systemd)' if s.systemd else ''}"
            for s in schedules
        ]
        response.text("\n".join(lines) or "(no schedules)")
        return
    if params.schedule_id is None:
        raise InvalidParameter(f"{params.action} needs scheduleId", field="scheduleId")
    if params.action == "remove":
        schedule = await flows.remove_schedule(params.schedule_id, _by(ctx))
        response.data(msgspec.to_builtins(schedule))
        response.text(f"Removed {schedule.schedule_id}")
        return
    run_id = await flows.run_schedule(params.schedule_id, _by(ctx))
    response.data({"scheduleId": params.schedule_id, "runId": run_id})
    response.text(f"Started {run_id}; get_task_run follows it.")


TOOLS: list[Tool[Any]] = [
    flow_record_start, flow_record_stop, flow_list, flow_get, flow_save, flow_delete, flow_run,
    flow_update_targets, flow_export, flow_import, flow_publish, flow_unpublish, dataset_export, flow_schedule,
]  # fmt: skip


# -- published flows as tools ----------------------------------------------------------------------


def _published(name: str, flow: Flow) -> Tool[Any]:
    """flow_<slug>[_v<N>]: the flow's variables only (run options are flow_run's), a terse schema and no
    outputSchema, since every client lists every published flow (issue 14: 50 within 6,000 characters)."""
    params = args_struct(flow, Params)

    async def handler(ctx: ToolContext, parsed: Any, response: Response) -> None:
        await run_flow(ctx, flow, values_of(flow, parsed), RunOptions(), response, flowVersion=flow.version)

    description = flow.meta.tool.description or flow.description or flow.name
    owner = level_of(flow.meta.tool.owner)
    return Tool(name, "flows", description, params, handler, schema=tool_schema(flow), owner=owner)


def published_tools(published: dict[str, Flow]) -> list[Tool[Any]]:
    return [_published(name, flow) for name, flow in published.items()]
