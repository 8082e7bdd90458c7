"""`flow` 1.0.0: a flow's replay as a task run (D-42), so the run tools, artifacts and durability apply.

The run works in the caller's session, on its active tab (tabTarget current) or a new one. Each
flow step is a run step; the run's result holds the flow RunRecord (`steps`, one report per step, and
`outputs`). Sensitive values arrive in `secrets`, which the stored inputs leave out (S4-83): they
live in this run's memory only, and every message that could echo one is scrubbed.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from browserd.daemon.config import Config, RunsConfig
from browserd.daemon.errors import BrowserdError, InvalidParameter, LimitExceeded, SiteMismatch, TrustLevelNotAllowed
from browserd.daemon.flows.flow_model import MAX_CELL_CHARS, MAX_ROWS, Flow, RunRecord, StepReport
from browserd.daemon.flows.graph import graph_of
from browserd.daemon.flows.owners import level_of
from browserd.daemon.flows.replay.graph_walk import Execution, Lane
from browserd.daemon.flows.replay.model_choice import ModelChooser
from browserd.daemon.flows.replay.step_runner import Runner, same_page
from browserd.daemon.policy.trust import stricter
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.runs.run_manager import ActiveRun, RunManager, StartRequest
from browserd.daemon.runs.run_records import RunMode, now_ms
from browserd.daemon.runs.templates.template_interface import Inputs, Template
from browserd.daemon.sessions.navigation import goto
from browserd.daemon.sessions.session import Session
from browserd.daemon.sessions.tab import Tab

TabTarget = Literal["current", "new"]


def check_from_step(flow: Flow, step_id: str | None) -> None:
    """INVALID_PARAMETER unless `step_id` (a replay's fromStep) is None or a step of the flow."""
    if step_id is not None and step_id not in graph_of(flow).nodes:
        raise InvalidParameter(
            f"flow {flow.id} has no step {step_id}", hint="flow_get lists its step ids.", field="fromStep"
        )


def page_before(flow: Flow, step_id: str | None) -> str | None:
    """The page a step of a linear flow acts on: the URL of the last navigate before it, else where the
    flow starts (a graph's nodes have no one order: its start page)."""
    before = next((flow.steps[:i] for i, step in enumerate(flow.steps) if step.id == step_id), [])
    urls = [s.url for s in before if s.type == "navigate" and s.url and not s.url.startswith("history:")]
    return urls[-1] if urls else flow.meta.start_url


class FlowRunInputs(Inputs, kw_only=True):
    flow_id: Annotated[str, msgspec.Meta(description="A flow id or a published flow's slug.")]
    # A published flow_<slug>_v<N> runs the version it names; default: the latest.
    flow_version: int | None = None
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    # Values of sensitive variables: kept in memory only, never in the run record.
    secrets: dict[str, str] = msgspec.field(default_factory=dict)
    start_url: str | None = None
    tab_target: TabTarget = "current"
    tab_id: str | None = None
    step_timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=300_000)] | None = None
    # A dataset: the flow runs once per row (the row's values over args); each row's result is an item.
    rows: Annotated[list[dict[str, Any]], msgspec.Meta(max_length=MAX_ROWS)] | None = None
    # Rows that succeeded in this earlier run (one a daemon restart interrupted) are not run again.
    resume_run_id: str | None = None
    # Replay from this step (node) on, in the tab as it is: the steps before it are reported skipped.
    from_step: str | None = None


class FlowRunResult(msgspec.Struct, rename="camel", kw_only=True):
    run_id: str
    success: bool
    url: str | None = None
    steps: list[StepReport]
    outputs: dict[str, Any]


class FlowRun(Template[FlowRunInputs]):
    template_id = "flow"
    version = "1.0.0"
    name = "Replay a recorded flow"
    description = "Replays a flow (flow_run says more); each recorded step is a run step."
    inputs = FlowRunInputs
    outputs = FlowRunResult
    trust_level_support = ("local", "remote")
    # Over rows, a run whose rows mostly succeeded is partial_success (reference/001 §6).
    supports_partial_success = True

    def default_mode(
        self, inputs: FlowRunInputs, config: RunsConfig, timeout_ms: int | None
    ) -> Literal["sync", "async"]:
        return "sync"

    def check(self, inputs: FlowRunInputs, config: Config) -> None:
        for index, row in enumerate(inputs.rows or []):
            for key, value in row.items():
                if len(str(value)) > MAX_CELL_CHARS:
                    raise LimitExceeded(
                        f"row {index}, `{key}` holds more than {MAX_CELL_CHARS} characters",
                        hint="Shorten the cell, or split the data set into segments.",
                        field="rows",
                    )

    def stored_inputs(self, inputs: FlowRunInputs) -> dict[str, Any]:
        kept = dict(msgspec.to_builtins(inputs))
        kept.pop("secrets", None)
        return kept

    async def run(self, ctx: RunContext, inputs: FlowRunInputs) -> None:
        flow = await ctx.services.flows.get(inputs.flow_id, inputs.flow_version)
        _check_owner(ctx, flow)
        check_from_step(flow, inputs.from_step)
        tab = await self._tab(ctx, inputs)
        if inputs.rows is None:
            await self._start_page(ctx, tab, flow, inputs, again=False)
            record = RunRecord(run_id=ctx.run_id, flow_id=flow.id, flow_version=flow.version, started_at=now_ms())
            outputs: dict[str, Any] = {}
            try:
                await self._replay(ctx, tab, flow, inputs, inputs.args, record, outputs, "")
            finally:
                ctx.set_output(
                    flowRun=msgspec.to_builtins(record), steps=msgspec.to_builtins(record.entries), outputs=outputs
                )
            return
        await self._rows(ctx, tab, flow, inputs, inputs.rows)

    async def _rows(
        self, ctx: RunContext, tab: Tab, flow: Flow, inputs: FlowRunInputs, rows: list[dict[str, Any]]
    ) -> None:
        """One replay per row; each row's result is an item, stored as it comes (so it outlives a crash)."""
        done: set[int] = set()
        if inputs.resume_run_id is not None:
            earlier = await ctx.services.runs.store.items(inputs.resume_run_id)
            done = {int(item["row"]) for item in earlier if item.get("success") and "row" in item}
        ctx.set_output(rowsTotal=len(rows), rowsResumed=len(done))
        for index, row in enumerate(rows):
            if index in done:
                continue
            ctx.check_cancelled()
            record = RunRecord(run_id=ctx.run_id, flow_id=flow.id, flow_version=flow.version, started_at=now_ms())
            outputs: dict[str, Any] = {}
            try:
                await self._start_page(ctx, tab, flow, inputs, again=True)
                await self._replay(ctx, tab, flow, inputs, {**inputs.args, **row}, record, outputs, f"r{index} ")
            except BrowserdError as exc:
                item = {"row": index, "success": False, "errorCode": exc.code, "error": exc.message}
                await ctx.add_item(item, index)
                continue
            await ctx.add_item({"row": index, "success": True, "outputs": outputs}, index)

    async def _replay(
        self,
        ctx: RunContext,
        tab: Tab,
        flow: Flow,
        inputs: FlowRunInputs,
        args: dict[str, Any],
        record: RunRecord,
        outputs: dict[str, Any],
        prefix: str,
    ) -> None:
        """The flow once, each node a run step; `record` gets every node's report, even on failure."""
        secret_values = [value for value in inputs.secrets.values() if value]
        values = {**args, **inputs.secrets}
        runner = Runner(tab, ctx.services.config, values, secret_values, ctx.trust, inputs.step_timeout_ms)
        if ctx.services.config.flows.llm_fallback:
            runner.chooser = ModelChooser(
                ctx.services.llm,
                ctx.record.owner_session_id,
                ctx.services.config.flows.llm_fallback_timeout_s,
                frozenset(flow.sensitive_keys | inputs.secrets.keys()),
            )
        runner.outputs = outputs
        execution = Execution(ctx, record, secret_values)
        try:
            await execution.run(Lane(runner, flow, prefix=prefix), inputs.from_step)
            record.success = True
        finally:
            items = flow.nodes or flow.steps
            record.entries.extend(
                StepReport(step_id=s.id, type=s.type, status="skipped")
                for s in items
                if s.id not in execution.ran and not s.disabled
            )
            record.finished_at = now_ms()
            record.success = bool(record.success)
            record.url = runner.tab.page.url
            await ctx.services.flows.suggest(flow.id, execution.suggestions)

    @staticmethod
    async def _tab(ctx: RunContext, inputs: FlowRunInputs) -> Tab:
        if inputs.tab_target == "new":
            return await (await ctx.session.window()).new_tab()
        return await ctx.session.tab(inputs.tab_id, create=True)

    @staticmethod
    async def _start_page(ctx: RunContext, tab: Tab, flow: Flow, inputs: FlowRunInputs, again: bool) -> None:
        """A flow bound to a page starts there (a replay from a step, on that step's page): opened when asked,
        in a fresh tab or for each row (`again`), else checked (S4-118)."""
        graph = graph_of(flow)
        first = inputs.from_step or graph.entry
        opens_itself = first is not None and graph.nodes[first].type in ("navigate", "openTab")
        start = inputs.start_url or (None if opens_itself else page_before(flow, first))
        if start is None:
            return
        fresh = again or tab.page.url in ("", "about:blank")
        elsewhere = not fresh and not same_page(tab.page.url, start)
        if inputs.start_url is None and elsewhere and inputs.from_step is None:
            raise SiteMismatch(
                f"flow {flow.id} starts on {start}, but the tab is on {tab.page.url}",
                flowId=flow.id,
                startUrl=start,
                category="navigation",
            )
        # Replaying from a step, the tab goes to the page that step acts on unless it is there already.
        if inputs.start_url is not None or fresh or elsewhere:
            async with tab.lock:
                await goto(tab, start, ctx.trust)


def _check_owner(ctx: RunContext, flow: Flow) -> None:
    """Whether this run may replay `flow`: flow_run and the published tools hold a run to the lower of the flow
    owner's and the caller's trust; a run started another way (run_task_template) must already be no higher,
    and reaches only flows its caller could (a published flow is offered to every client)."""
    owner = level_of(flow.meta.owner)
    if not flow.meta.tool.published:
        ctx.trust.check_owner(owner, f"flow {flow.id}", flowId=flow.id)
    if stricter(ctx.trust.level, owner) != ctx.trust.level:
        raise TrustLevelNotAllowed(
            f"flow {flow.id} was made by a {owner} session: it runs with {owner} rights only",
            hint="Start it with flow_run, which gives it a session of its own at that level.",
            rule="owner-trust",
            flowId=flow.id,
        )


async def start_flow_run(
    runs: RunManager,
    caller: Session,
    flow: Flow,
    values: dict[str, Any],
    tab_target: TabTarget = "current",
    start_url: str | None = None,
    timeout_ms: int | None = None,
    mode: RunMode = "sync",
    **extra: Any,
) -> ActiveRun:
    """`flow` as a task run for `caller` with these variable values (`extra`: more FlowRunInputs, camelCase).
    The run has the lower of the flow owner's and the caller's trust: lower than the caller's session, it runs
    in a session of its own (whose windows go through the URL guard) rather than in the caller's tabs."""
    sensitive = flow.sensitive_keys
    trust = caller.trust.lowered(level_of(flow.meta.owner))
    if start_url is not None:
        await trust.check_url(start_url)  # before the run exists: nothing loads, nothing is recorded
    own_session = trust.level != caller.trust_level
    inputs = {
        "flowId": flow.id,
        "args": {k: v for k, v in values.items() if k not in sensitive},
        "secrets": {k: str(v) for k, v in values.items() if k in sensitive},
        "tabTarget": "new" if own_session else tab_target,
        "startUrl": start_url,
        **{k: v for k, v in extra.items() if v is not None and not (own_session and k == "tabId")},
    }
    session_id = None if own_session else caller.id
    request = StartRequest("flow", None, inputs, session_id, timeout_ms, mode, trust_level=trust.level)
    return await runs.start(request, caller)
