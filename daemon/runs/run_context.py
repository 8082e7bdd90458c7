"""What a template's `run` receives: the run's session and services, its steps, items and artifacts.

The RunManager builds one RunContext per run. A template reports everything through it:

- steps: `plan()` names the steps known up front (they start `pending`); `await ctx.add_step(name)`
  adds one found on the way (a crawl's next page). `async with ctx.step(i):` marks step i running,
  then succeeded, or failed with the BrowserdError that escaped (re-raised: catch it to go on with
  the other steps, let it escape to fail the run). Entering a step checks for cancellation first.
- `await ctx.add_item(dict)`: one result item; an item with `"success": False` counts as failed in
  `result.summary` and in the partial-success ratio (D-37). Items are stored as they come, so a
  canceled or timed-out run keeps them.
- `await ctx.add_artifact(bytes, mime_type, name)`: a large output (a page's markdown, a CSV);
  returns its ArtifactRecord, whose `artifact_id` an item may name.
- `ctx.set_output(**fields)`: fields of `result` beside summary and items (e.g. `sessionId`).
- `await ctx.progress(message)`: tells listeners (a sync caller's progress notifications) how many
  steps are done; step transitions report progress by themselves.
- `ctx.check_cancelled()`: raises RunCancelRequested once cancel_task_run was called; call it
  between units of work that are not steps. Never catch RunCancelRequested.
- `ctx.session` (the run's Session, with its windows and tabs), `ctx.services` (executor, scrape
  through `browserd.daemon.scrape.scrape_service.load_page/render`, profiles, config), `ctx.trust` (the
  TrustPolicy every page load, profile and script of the run must pass, daemon/policy/trust.py),
  and `await ctx.call_tool(name, arguments)`, which runs a browser tool's handler in-process on the
  run's session (never through MCP) and returns its structured data. The tools reach runs through
  `services.tools` (a ToolCaller the daemon sets to its catalog), so nothing here imports the tools layer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from browserd.daemon.errors import BrowserdError
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.runs.artifacts import ArtifactStore
from browserd.daemon.runs.run_records import ArtifactRecord, RunRecord, StepRecord, now_ms
from browserd.daemon.runs.run_store import RunStore

if TYPE_CHECKING:
    from browserd.daemon.services import Services
    from browserd.daemon.sessions.session import Session

Listener = Callable[[float, float | None, str | None], Awaitable[None]]


class RunCancelRequested(Exception):
    """Raised between steps once the run was asked to stop; the manager turns it into `canceled`."""


class RunContext:
    def __init__(
        self,
        record: RunRecord,
        steps: list[StepRecord],
        services: Services,
        session: Session,
        store: RunStore,
        artifacts: ArtifactStore,
    ) -> None:
        self.record = record
        self.steps = steps
        self.services = services
        self.session = session
        self._store = store
        self._artifacts = artifacts
        self.output: dict[str, Any] = {}
        self.listeners: set[Listener] = set()
        self.items_total = 0
        self.items_succeeded = 0
        self._item_numbers = 0
        self.last_failed_step: StepRecord | None = None
        self._record_total()

    # -- what the template reads -----------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def trust(self) -> TrustPolicy:
        # A local caller may run in a remote session (D-11): the run is held to the lower of the two levels.
        return self.session.trust.lowered(self.record.trust_level)

    @property
    def cancel_requested(self) -> bool:
        return self.record.cancel_requested

    def check_cancelled(self) -> None:
        if self.record.cancel_requested:
            raise RunCancelRequested(self.run_id)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A browser tool's own logic on the run's session; its BrowserdError propagates."""
        return await self.services.tools.call(name, arguments, self.services, self.session)

    # -- steps -----------------------------------------------------------------------------------

    def _record_total(self) -> None:
        self.record.total_steps = len(self.steps)
        self.record.done_steps = sum(step.status in ("succeeded", "failed", "skipped") for step in self.steps)

    async def add_step(self, name: str) -> int:
        step = StepRecord(run_id=self.run_id, index=len(self.steps), name=name)
        self.steps.append(step)
        self._record_total()
        await self._store.save_steps([step])
        return step.index

    @asynccontextmanager
    async def step(self, index: int) -> AsyncIterator[StepRecord]:
        self.check_cancelled()
        step = self.steps[index]
        step.status, step.started_at = "running", now_ms()
        await self._store.save_steps([step])
        self.announce(f"{step.name}: running", step)
        # A step still running when a timeout or a forced cancel strikes is ended by the manager.
        try:
            yield step
        except BrowserdError as exc:
            await self._end_step(step, "failed", exc)
            raise
        await self._end_step(step, "succeeded", None)

    async def _end_step(self, step: StepRecord, status: Any, error: BrowserdError | None) -> None:
        step.status, step.ended_at = status, now_ms()
        if error is not None:
            step.error = error.info()
            self.last_failed_step = step
        self._record_total()
        await self._store.save_steps([step])
        await self.progress(f"{step.name}: {status}", step)

    # -- results -----------------------------------------------------------------------------------

    async def add_item(self, item: dict[str, Any], index: int | None = None) -> None:
        """One result item, at `index` in `result.items` (default: after the last one)."""
        if index is None:
            index = self._item_numbers
        self._item_numbers = max(self._item_numbers, index + 1)
        self.items_total += 1
        if item.get("success", True) is not False:
            self.items_succeeded += 1
        await self._store.add_item(self.run_id, index, item)

    async def add_artifact(self, data: bytes, mime_type: str, name: str = "") -> ArtifactRecord:
        return await self._artifacts.save(self.run_id, data, mime_type, name)

    def set_output(self, **fields: Any) -> None:
        self.output.update(fields)

    def announce(self, message: str | None, step: StepRecord | None = None) -> None:
        """The run's state on the daemon's push channel (the console's live progress and step log)."""
        record = self.record
        changed = {"index": step.index, "name": step.name, "status": step.status} if step is not None else None
        self.services.events.publish(
            "run",
            runId=record.run_id,
            templateId=record.template_id,
            sessionId=record.session_id,
            status=record.status,
            doneSteps=record.done_steps,
            totalSteps=record.total_steps,
            message=message,
            step=changed,
        )

    async def progress(self, message: str | None = None, step: StepRecord | None = None) -> None:
        self.announce(message, step)
        for listener in list(self.listeners):
            try:
                await listener(float(self.record.done_steps), float(self.record.total_steps or 0) or None, message)
            except Exception:  # a listener that went away must not stop the run
                self.listeners.discard(listener)
