"""Walking a flow's graph in a run (reference/004 §2, issue 14 item 5): every node is a run step.

Browser steps go to the Runner (verified targets); control nodes (if, while, foreach, subflow) walk
parts of the graph; data nodes (delay, http, extract, datasetWrite) and tab nodes (openTab,
switchTab, closeTab) do their one thing. A node that fails follows its `onError` edge when it has one
(its output is then `{error: {errorCode, message}}`), else the run fails there. Every text that goes
into an output or a dataset row passes through `scrub`, so a sensitive value a page or server echoes
back is stored as *** (S4-83).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import msgspec

from browserd.daemon.errors import BrowserdError, InvalidParameter, LimitExceeded
from browserd.daemon.flows import conditions
from browserd.daemon.flows.fingerprint_js import SENSITIVE_CSS
from browserd.daemon.flows.flow_model import MAX_CELL_CHARS, MAX_ROWS, Flow, RunRecord, Step, StepReport
from browserd.daemon.flows.graph import Graph, check_graph, graph_of
from browserd.daemon.flows.owners import level_of
from browserd.daemon.flows.placeholders import render, value
from browserd.daemon.flows.replay import http_node
from browserd.daemon.flows.replay.step_runner import Runner, same_page, scrub
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.sessions.session import TabNotFound
from browserd.daemon.sessions.tab import Tab

CONTROL = frozenset({"if", "while", "foreach", "subflow"})
OWN_KINDS = CONTROL | {"delay", "http", "openTab", "switchTab", "closeTab", "datasetWrite"}
MAX_DEPTH = 5  # subflows within subflows
DEFAULT_MAX_ITERATIONS = 100
_SWITCH_POLL_S = 0.05


@dataclass
class Lane:
    """Where a walk acts and what it knows: its runner (tab, variables, outputs), its flow."""

    runner: Runner
    flow: Flow
    depth: int = 0
    prefix: str = ""

    def fork(self, tab: Tab | None = None, values: dict[str, Any] | None = None, **changes: Any) -> Lane:
        runner = replace(
            self.runner,
            tab=tab or self.runner.tab,
            values=self.runner.values if values is None else values,
            outputs=changes.pop("outputs", self.runner.outputs),
        )
        return replace(self, runner=runner, **changes)


@dataclass
class Execution:
    ctx: RunContext
    record: RunRecord
    secrets: list[str]
    suggestions: dict[str, list[int]] = field(default_factory=dict)
    ran: set[str] = field(default_factory=set)

    async def run(self, lane: Lane, start: str | None = None) -> None:
        """The flow from its entry, or from the node `start` on."""
        graph = graph_of(lane.flow)
        first = start or graph.entry
        if first is not None:
            await self.walk(graph, first, lane, frozenset())

    async def walk(self, graph: Graph, start: str | None, lane: Lane, stops: frozenset[str]) -> None:
        """From `start` along the edges until a node with no way on, or back at an enclosing loop."""
        current = start
        while current is not None and current not in stops:
            node = graph.nodes[current]
            if node.disabled:
                current = graph.after(current)
                continue
            try:
                label = await self.node(graph, node, lane, stops)
            except BrowserdError as exc:
                handler = graph.after(current, "onError")
                if handler is None:
                    raise
                lane.runner.outputs[node.id] = {"error": {"errorCode": exc.code, "message": exc.message}}
                current = handler
                continue
            current = graph.after(current, label)

    async def node(self, graph: Graph, node: Step, lane: Lane, stops: frozenset[str]) -> str:
        """Run one node as a run step; the label of the edge to follow."""
        self.ran.add(node.id)
        index = await self.ctx.add_step(f"{lane.prefix}{node.id} {node.type}")
        handled = graph.after(node.id, "onError") is not None
        started = time.monotonic()
        error: BrowserdError | None = None
        try:
            async with self.ctx.step(index):
                try:
                    if node.type in OWN_KINDS:
                        label, said = await self._own(graph, node, lane, stops)
                        report = StepReport(step_id=node.id, type=node.type, status="success", message=said)
                    else:
                        label, report = "next", await self._browser(node, lane)
                except BrowserdError as exc:
                    if not handled:
                        raise
                    error = exc  # the flow goes on along onError: as a run step, this one did its part
        except BrowserdError as exc:
            error = exc
        if error is not None:
            error.message = scrub(error.message, self.secrets)
            failed = StepReport(
                step_id=node.id,
                type=node.type,
                status="failed",
                error_code=error.code,
                message=error.message,
                recover_hint=error.recover_hint,
                details=error.details or None,
                took_ms=int((time.monotonic() - started) * 1000),
            )
            if node.type not in OWN_KINDS and node.screenshot_on_fail:
                failed.screenshot_artifact_id = await _screenshot(self.ctx, lane.runner.tab, node.id)
            self.record.entries.append(failed)
            raise error
        if node.type in OWN_KINDS:
            report.took_ms = int((time.monotonic() - started) * 1000)
        self.record.entries.append(report)
        return label

    async def _browser(self, node: Step, lane: Lane) -> StepReport:
        async with lane.runner.tab.lock:
            outcome = await lane.runner.run_step(node)
        if node.type == "extract" and node.id in lane.runner.outputs:
            lane.runner.outputs[node.id] = self._clean(lane.runner.outputs[node.id])
        if outcome.suggested_order is not None and lane.depth == 0:
            self.suggestions[node.id] = outcome.suggested_order
        return outcome.report

    def _clean(self, value: Any) -> Any:
        """`value` with every sensitive value in its texts replaced by ***."""
        if isinstance(value, str):
            return scrub(value, self.secrets)
        if isinstance(value, dict):
            return {key: self._clean(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._clean(item) for item in value]
        return value

    # -- the kinds the runner does not know -------------------------------------------------------------

    async def _own(self, graph: Graph, node: Step, lane: Lane, stops: frozenset[str]) -> tuple[str, str | None]:
        runner = lane.runner
        values, outputs = runner.values, runner.outputs
        if node.type == "if":
            result = conditions.holds(conditions.check(node.condition or ""), values, outputs)
            outputs[node.id] = {"result": result}
            return ("true" if result else "false"), f"condition {str(result).lower()}"
        if node.type == "while":
            count = await self._while(graph, node, lane, stops)
            return "next", f"{count} iteration(s)"
        if node.type == "foreach":
            count = await self._foreach(graph, node, lane, stops)
            return "next", f"{count} item(s)"
        if node.type == "subflow":
            await self._subflow(node, lane)
            return "next", f"flow {node.flow_id}"
        if node.type == "delay":
            await anyio.sleep((node.ms or 0) / 1000)
            return "next", None
        if node.type == "http":
            services = self.ctx.services
            answer = await http_node.send(
                node, runner.trust, services.guards, services.scrape.http, values, outputs, runner.timeout_s(node)
            )
            outputs[node.id] = self._clean(answer)
            return "next", f"HTTP {answer['status']}"
        if node.type == "datasetWrite":
            return "next", await self._dataset_write(node, lane)
        return "next", await self._tabs(node, lane)

    async def _while(self, graph: Graph, node: Step, lane: Lane, stops: frozenset[str]) -> int:
        condition = conditions.check(node.condition or "")
        limit = node.max_iterations or DEFAULT_MAX_ITERATIONS
        runner, count = lane.runner, 0
        runner.outputs[node.id] = {"iteration": 0}
        while conditions.holds(condition, runner.values, runner.outputs):
            if count >= limit:
                raise LimitExceeded(
                    f"while `{node.id}`: its condition still held after {limit} iterations",
                    hint="Raise the node's maxIterations, or make its body change what the condition reads.",
                    nodeId=node.id,
                )
            count += 1
            runner.outputs[node.id] = {"iteration": count}
            await self.walk(graph, graph.after(node.id, "body"), lane, stops | {node.id})
        return count

    async def _foreach(self, graph: Graph, node: Step, lane: Lane, stops: frozenset[str]) -> int:
        """The body once per item, `concurrency` at once, each lane after the first in a tab of its own."""
        items = _items(node, lane.runner.values, lane.runner.outputs)
        name = node.as_ or "item"
        results: list[Any] = [None] * len(items)
        body, inner = graph.after(node.id, "body"), stops | {node.id}

        async def one(position: int, at: Lane) -> None:
            values = {**at.runner.values, name: items[position], f"{name}Index": position}
            shared = at.runner.outputs
            iteration = at.fork(values=values, outputs=dict(shared), prefix=f"{lane.prefix}{node.id}[{position}] ")
            await self.walk(graph, body, iteration, inner)
            results[position] = {k: v for k, v in iteration.runner.outputs.items() if shared.get(k) is not v}

        lanes = min(node.concurrency or 1, len(items))
        if lanes <= 1:
            for position in range(len(items)):
                await one(position, lane)
        else:
            await self._parallel(lane, lanes, len(items), one)
        lane.runner.outputs[node.id] = {"items": results}
        return len(items)

    async def _parallel(self, lane: Lane, lanes: int, total: int, one: Any) -> None:
        window = await self.ctx.session.window()
        start = lane.runner.tab.page.url
        tabs = [lane.runner.tab]
        failures: list[BrowserdError] = []
        try:
            for _ in range(lanes - 1):
                tab = await window.new_tab(activate=False)
                tabs.append(tab)
                if start not in ("", "about:blank"):
                    await lane.runner.navigate_in(tab, start, lane.runner.timeout_s(None) * 1000)
            queue = iter(range(total))

            async def worker(tab: Tab) -> None:
                mine = lane.fork(tab=tab)
                for position in queue:
                    if failures:
                        return
                    try:
                        await one(position, mine)
                    except BrowserdError as exc:
                        failures.append(exc)  # the first failure ends the loop, as in a serial one

            async with anyio.create_task_group() as group:
                for tab in tabs:
                    group.start_soon(worker, tab)
        finally:
            with anyio.CancelScope(shield=True):
                for tab in tabs[1:]:
                    await tab.page.close()
        if failures:
            raise failures[0]

    async def _subflow(self, node: Step, lane: Lane) -> None:
        if lane.depth >= MAX_DEPTH:
            raise LimitExceeded(
                f"subflow `{node.id}`: flows nest deeper than {MAX_DEPTH}",
                hint="A subflow calls itself, directly or through others: break the chain.",
                nodeId=node.id,
            )
        flow = await self.ctx.services.flows.get(node.flow_id or "")
        # What the calling flow's owner may reach, whoever runs it: a remote flow cannot borrow a local one.
        owner = TrustPolicy(level_of(lane.flow.meta.owner), self.ctx.trust.urls)
        owner.check_owner(level_of(flow.meta.owner), f"flow {flow.id}", flowId=flow.id, nodeId=node.id)
        check_graph(flow)
        runner = lane.runner
        values = {key: render(template, runner.values, runner.outputs) for key, template in (node.args or {}).items()}
        for variable in flow.variables:
            if variable.key not in values:
                # A sensitive value travels to a subflow under the same key, never through a template's text.
                if variable.sensitive and variable.key in runner.values:
                    values[variable.key] = runner.values[variable.key]
                elif variable.default is not None:
                    values[variable.key] = variable.default
                elif variable.required:
                    raise InvalidParameter(
                        f"subflow `{node.id}`: flow {flow.id} needs `{variable.key}`",
                        hint="Add it to the node's args, as a template over this flow's values.",
                        field="args",
                        nodeId=node.id,
                    )
        inner = lane.fork(values=values, outputs={}, flow=flow, depth=lane.depth + 1, prefix=f"{node.id}/")
        inner.runner.trust = runner.trust.lowered(level_of(flow.meta.owner))
        await self.run(inner)
        runner.outputs[node.id] = inner.runner.outputs

    async def _dataset_write(self, node: Step, lane: Lane) -> str:
        row: dict[str, Any] = {}
        for column, template in (node.fields or {}).items():
            cell = scrub(render(template, lane.runner.values, lane.runner.outputs), self.secrets)
            if len(cell) > MAX_CELL_CHARS:
                raise LimitExceeded(
                    f"datasetWrite `{node.id}`: column `{column}` holds more than {MAX_CELL_CHARS} characters",
                    hint="Write a shorter value (extract a part of the page, not all of it).",
                    nodeId=node.id,
                )
            row[column] = cell
        # The dataset of the flow that holds the node: a subflow writes to its own, whoever calls it.
        n = await self.ctx.services.flows.store.add_row(lane.flow.id, self.ctx.run_id, row, MAX_ROWS)
        lane.runner.outputs[node.id] = {"row": n}
        return f"row {n}"

    async def _tabs(self, node: Step, lane: Lane) -> str:
        runner, session = lane.runner, self.ctx.session
        if node.type == "openTab":
            tab = await (await session.window()).new_tab(activate=False)
            if node.url:
                await runner.navigate_in(
                    tab, render(node.url, runner.values, runner.outputs), runner.timeout_s(node) * 1000
                )
            runner.tab = tab
            return f"opened {tab.page.url}"
        chosen = await self._find_tab(node, lane)
        if node.type == "switchTab":
            runner.tab = chosen
            return f"on {chosen.page.url}"
        await chosen.page.close()
        if chosen is runner.tab:
            left = session.all_tabs()
            if left:
                runner.tab = left[-1]
        return "closed"

    async def _find_tab(self, node: Step, lane: Lane) -> Tab:
        """The session's tab on the node's page (origin and path), else its index-th tab, else this lane's;
        waited for until the node's timeout, since a click may still be opening it."""
        runner = lane.runner
        if node.url is None and node.index is None:
            return runner.tab
        url = render(node.url, runner.values, runner.outputs) if node.url else None
        deadline = time.monotonic() + runner.timeout_s(node)
        while True:
            tabs = self.ctx.session.all_tabs()
            matching = [tab for tab in tabs if same_page(tab.page.url, url)] if url else []
            if matching:
                return matching[-1]
            if url is None and node.index is not None and node.index < len(tabs):
                return tabs[node.index]
            if time.monotonic() >= deadline:
                raise TabNotFound(
                    f"{node.type} `{node.id}`: no tab of this session is on {url or f'index {node.index}'}",
                    nodeId=node.id,
                    tabs=[tab.page.url for tab in tabs],
                )
            await anyio.sleep(_SWITCH_POLL_S)


def _items(node: Step, values: dict[str, Any], outputs: dict[str, Any]) -> list[Any]:
    """A foreach's list: `${path}` or `{var}` naming a list (or a JSON array text), or a JSON array."""
    found = value(node.items or "", values, outputs)
    if isinstance(found, str):
        with contextlib.suppress(msgspec.DecodeError):
            found = msgspec.json.decode(found)
    if not isinstance(found, list):
        raise InvalidParameter(
            f"foreach `{node.id}`: `items` is not a list",
            hint="Use ${outputs.<nodeId>.<field>} or {var} naming a list, or a JSON array.",
            field="items",
            nodeId=node.id,
        )
    return found


async def _screenshot(ctx: RunContext, tab: Tab, step_id: str) -> str | None:
    """The page at the failure, with every password, one-time-code and card field masked (S4-56, S4-83)."""
    from playwright.async_api import Error as PlaywrightError

    try:
        image = await tab.page.screenshot(mask=[tab.page.locator(SENSITIVE_CSS)], timeout=5_000)
    except PlaywrightError:
        return None  # best effort: the step's error is what matters (S4-61)
    artifact = await ctx.add_artifact(image, "image/png", f"failure-{step_id}.png")
    return artifact.artifact_id
