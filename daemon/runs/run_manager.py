"""The RunManager: a run's life from `queued` to a terminal state that never changes (reference/001 §6).

It owns a task group (opened in Daemon.run), so every run has an owner and ends when the daemon
does; at most maxConcurrentRuns run at once and the rest wait `queued`; each run has a deadline
(the effective timeout, counted from `running`, D-36) and holds the daemon's idle exit while it is
queued or running. A run gets its own session unless the caller named one; that session is closed
at the end unless the caller named it or the template keeps it. A run holds its session while it is
active (sessions/session_manager.py), so a named session outlives its client until the run ends.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from anyio.abc import TaskGroup

from browserd.daemon.errors import (
    ArtifactNotFound,
    BrowserdError,
    ExecutionError,
    InvalidParameter,
    RunCanceled,
    RunNotFound,
    RunTimeout,
    SessionNotFound,
    StepExecutionFailed,
)
from browserd.daemon.policy.trust import stricter
from browserd.daemon.runs.artifacts import ArtifactStore, Chunk
from browserd.daemon.runs.outcome import outcome
from browserd.daemon.runs.run_context import RunCancelRequested, RunContext
from browserd.daemon.runs.run_records import (
    TERMINAL,
    ArtifactRecord,
    RunMode,
    RunRecord,
    RunStatus,
    StepRecord,
    now_ms,
)
from browserd.daemon.runs.run_store import RunStore
from browserd.daemon.runs.templates.template_interface import Inputs, Template
from browserd.daemon.runs.templates.template_registry import TemplateRegistry
from browserd.daemon.runtime.idle_hold import IdleHold, NoIdleHold
from browserd.protocol.messages import ErrorInfo, TrustLevel

if TYPE_CHECKING:
    from browserd.daemon.services import Services
    from browserd.daemon.sessions.session import Session

log = logging.getLogger(__name__)

USER_LIMIT = "options.timeoutMs"
TEMPLATE_LIMIT = "the template's maxTimeoutMs"
RUN_LIMIT = "[runs] max_run_timeout_ms"
_TIMEOUT_HINTS = {
    USER_LIMIT: "Raise options.timeoutMs (up to the template's maxTimeoutMs) or split the task into smaller runs.",
    TEMPLATE_LIMIT: "This template allows no longer run (list_task_templates shows maxTimeoutMs); split the task.",
    RUN_LIMIT: "Runs last at most [runs] max_run_timeout_ms (BROWSERD_RUNS_MAX_RUN_TIMEOUT_MS); raise it in the "
    "config or split the task into smaller runs.",
}


@dataclass
class StartRequest:
    template_id: str
    template_version: str | None
    inputs: dict[str, Any]
    session_id: str | None = None
    timeout_ms: int | None = None
    mode: RunMode = "auto"
    # At most this level, whoever calls: the owner of the work that runs (a flow a remote session made).
    trust_level: TrustLevel = "local"


@dataclass
class ActiveRun:
    template: Template[Any]
    inputs: Inputs
    ctx: RunContext
    # The run made its session (no sessionId given), so it decides whether the session survives it.
    own_session: bool
    # Which limit set record.timeout_ms: "options.timeoutMs", the template's or [runs] max_run_timeout_ms.
    timeout_limit: str = RUN_LIMIT
    # Set once the run leaves `queued` (running, or ended without running); its timeout counts from then.
    started: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    waiting: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    working: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    @property
    def record(self) -> RunRecord:
        return self.ctx.record


@dataclass
class RunView:
    """A run as get_task_run shows it: the record, its artifacts, and (when terminal) its result."""

    record: RunRecord
    artifacts: list[ArtifactRecord]
    steps: list[StepRecord]


def _first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def new_run_id() -> str:
    return f"run_{secrets.token_hex(8)}"


class RunManager:
    def __init__(self, services: Services, templates: TemplateRegistry) -> None:
        self.services = services
        self.config = services.config.runs
        self.store = RunStore(Path(self.config.root))
        self.artifacts = ArtifactStore(self.store, self.config.max_artifact_inline_bytes)
        self.templates = templates
        self.active: dict[str, ActiveRun] = {}
        self._slots = anyio.Semaphore(self.config.max_concurrent_runs)
        self._group: TaskGroup | None = None
        self._idle: IdleHold = NoIdleHold()

    # -- life cycle --------------------------------------------------------------------------------

    @asynccontextmanager
    async def serving(self, idle: IdleHold | None = None) -> AsyncIterator[RunManager]:
        """Open the store, settle what a dead daemon left running, and own the runs until exit."""
        self._idle = idle or NoIdleHold()
        await self.store.open()
        await self.recover()
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                group.start_soon(self._clean_periodically)
                try:
                    yield self
                finally:
                    group.cancel_scope.cancel()
        finally:
            self._group = None
            self.store.close()

    async def recover(self) -> None:
        """Runs left queued or running by a daemon that died: failed, saying so, with what they kept."""
        for record in await self.store.interrupted_runs():
            steps = await self.store.steps(record.run_id)
            error = ExecutionError(
                "the daemon stopped while this run was running; it was marked failed when the daemon started again",
                hint="Run the task again with run_task_template; items it had finished are in result.",
                reason="daemon_restarted",
                runId=record.run_id,
            ).info()
            for step in steps:
                if step.status == "running":
                    step.status, step.error, step.ended_at = "failed", error, now_ms()
                elif step.status == "pending":
                    step.status = "skipped"
            record.status, record.error = "failed", error
            record.ended_at = record.updated_at = now_ms()
            record.done_steps, record.total_steps = len(steps), len(steps)
            record.result = await self._result(record, steps, {})
            await self.store.finish_run(record, steps, self._expiry())
            log.warning("run %s was interrupted by a daemon exit; marked failed", record.run_id)

    def _expiry(self) -> int:
        return now_ms() + int(self.config.ttl_s * 1000)

    async def _clean_periodically(self) -> None:
        while True:
            try:
                await self.cleanup()
            except Exception:  # a failed sweep must not end the daemon; the next one tries again
                log.exception("run cleanup failed")
            await anyio.sleep(self.config.cleanup_interval_s)

    async def cleanup(self) -> None:
        expired = await self.store.cleanup(now_ms(), int(self.config.tombstone_s * 1000))
        if expired:
            await self.artifacts.delete_files(expired)
            log.info("deleted %d expired artifact(s)", len(expired))

    # -- starting a run ----------------------------------------------------------------------------

    async def start(self, request: StartRequest, caller: Session) -> ActiveRun:
        if self._group is None:
            raise ExecutionError("the run manager is not running", hint="Restart the daemon: browserd stop.")
        template = self.templates.get(request.template_id, request.template_version)
        trust = caller.trust.lowered(request.trust_level)
        trust.check_template(template.template_id, template.trust_level_support)
        inputs = template.parse(request.inputs)
        template.check(inputs, self.services.config)
        template.check_trust(inputs, trust)
        template.check_tools(inputs, self.services.tools)
        session, kept = self._session_for(request.session_id, caller, template, trust.level)
        # D-36: the effective timeout is the smallest of the three limits; the first named wins a tie.
        limits = [(request.timeout_ms, USER_LIMIT), (template.max_timeout_ms, TEMPLATE_LIMIT)]
        limits.append((self.config.max_run_timeout_ms, RUN_LIMIT))
        timeout_ms, timeout_limit = min(((ms, name) for ms, name in limits if ms), key=lambda limit: limit[0])
        mode = (
            template.default_mode(inputs, self.config, request.timeout_ms) if request.mode == "auto" else request.mode
        )
        created = now_ms()
        record = RunRecord(
            run_id=new_run_id(),
            template_id=template.template_id,
            template_version=template.version,
            status="queued",
            session_id=session.id,
            session_kept=kept,
            trust_level=trust.level,
            owner_session_id=caller.id,
            mode=mode,
            timeout_ms=timeout_ms,
            inputs=template.stored_inputs(inputs),
            created_at=created,
            updated_at=created,
        )
        steps = [StepRecord(run_id=record.run_id, index=i, name=name) for i, name in enumerate(template.plan(inputs))]
        ctx = RunContext(record, steps, self.services, session, self.store, self.artifacts)
        run = ActiveRun(template, inputs, ctx, own_session=request.session_id is None, timeout_limit=timeout_limit)
        # Held from here, so the session outlives a client that goes away while the run works in it.
        self.services.sessions.hold(session.id)
        try:
            await self.store.create_run(record, steps)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.services.sessions.release(session.id)
            raise
        self.active[record.run_id] = run
        self._idle.acquire("run")
        ctx.announce(f"run {record.run_id} queued")
        self._group.start_soon(self._execute, run)
        log.info("run %s of %s queued (%s, timeout %s ms)", record.run_id, template.template_id, mode, timeout_ms)
        return run

    def _session_for(
        self, session_id: str | None, caller: Session, template: Template[Any], level: TrustLevel
    ) -> tuple[Session, bool]:
        if session_id is None:
            session = self.services.sessions.create(f"run:{template.template_id}", level, transport="run")
            return session, template.keep_session
        found = self.services.sessions.sessions.get(session_id)
        if found is None:
            raise SessionNotFound(
                f"no session {session_id}",
                hint=f"Leave sessionId out for a session of the run's own, or pass this connection's ({caller.id}).",
                sessionId=session_id,
            )
        caller.trust.check_session(caller.id, found.id)
        if stricter(found.trust_level, level) != found.trust_level:
            # Its windows have no URL guard: a run held to a lower level than the session's works in its own.
            raise InvalidParameter(
                f"a {level} run cannot work in session {session_id}, a {found.trust_level} one",
                hint="Leave sessionId out: the run gets a session of its own.",
                sessionId=session_id,
            )
        return found, True

    # -- running it --------------------------------------------------------------------------------

    async def _execute(self, run: ActiveRun) -> None:
        record = run.record
        try:
            with run.waiting:
                await self._slots.acquire()
            if run.waiting.cancelled_caught:
                await self._finish(run, "canceled", RunCanceled("canceled while queued").info())
                return
            try:
                await self._work(run)
            finally:
                self._slots.release()
        finally:
            with anyio.CancelScope(shield=True):
                if not record.terminal:
                    # The daemon is shutting down under this run.
                    error = ExecutionError(
                        "the daemon stopped while this run was running",
                        hint="Run the task again with run_task_template.",
                        reason="daemon_stopped",
                    ).info()
                    await self._finish(run, "failed", error)
                await self._release(run)

    async def _work(self, run: ActiveRun) -> None:
        record = run.record
        record.status, record.started_at = "running", now_ms()
        record.updated_at = record.started_at
        run.started.set()
        await self.store.save_run(record)
        await run.ctx.progress(f"run {record.run_id} running")
        error: ErrorInfo | None = None
        with anyio.move_on_after(record.timeout_ms / 1000) as deadline, run.working:
            try:
                await run.template.run(run.ctx, run.inputs)
            except Exception as raised:
                # A template's own task group wraps what its workers raise; the first one decides.
                exc = _first_leaf(raised)
                if isinstance(exc, BrowserdError):
                    # A limit of the whole run (an agent's budget) is the run's own error, not a step's.
                    error = exc.info() if exc.ends_run else self._step_failure(run, exc)
                elif not isinstance(exc, RunCancelRequested):  # a template bug fails its run, never the daemon
                    log.error("run %s: template %s failed", record.run_id, record.template_id, exc_info=raised)
                    error = ExecutionError(f"internal error in {record.template_id}: {exc!r}").info()
        if deadline.cancelled_caught:
            timeout = RunTimeout(
                f"the run ran past its timeout of {record.timeout_ms} ms ({run.timeout_limit}); finished items are "
                "kept in result",
                hint=_TIMEOUT_HINTS[run.timeout_limit],
                runId=record.run_id,
                timeoutMs=record.timeout_ms,
                limit=run.timeout_limit,
            )
            await self._finish(run, "failed", timeout.info())
            return
        # An accepted cancel ends `canceled` even when it came during the last step (D-37): results so far stay.
        if run.working.cancelled_caught or record.cancel_requested:
            await self._finish(run, "canceled", RunCanceled(f"run {record.run_id} was canceled").info())
            return
        if error is not None:
            await self._finish(run, "failed", error)
            return
        threshold = run.template.partial_success_threshold
        if threshold is None:
            threshold = self.config.partial_success_threshold
        status, failure = outcome(run.ctx, run.template.supports_partial_success, threshold)
        await self._finish(run, status, failure)

    def _step_failure(self, run: ActiveRun, exc: BrowserdError) -> ErrorInfo:
        step = run.ctx.last_failed_step
        details: dict[str, Any] = {"runId": run.record.run_id, "stepErrorCode": exc.code, "stepError": exc.message}
        if step is not None:
            details["failedStep"] = step.name
        where = f"step `{step.name}`" if step is not None else run.record.template_id
        return StepExecutionFailed(f"{where} failed: {exc.message}", **details).info()

    async def _finish(self, run: ActiveRun, status: RunStatus, error: ErrorInfo | None) -> None:
        record = run.record
        if record.terminal:
            return
        for step in run.ctx.steps:
            if step.status == "running":
                step.status, step.ended_at, step.error = "failed", now_ms(), error
            elif step.status == "pending":
                step.status = "skipped"
        # The result before the status: a reader polling get_task_run must never see a finished run without it.
        result = await self._result(record, run.ctx.steps, run.ctx.output)
        if record.terminal:
            return  # finished by another path while the result was being written
        record.status, record.error, record.result = status, error, result
        if run.own_session and status != "succeeded":
            record.session_kept = False  # a keep-session template is atomic: a failed login's session goes
        record.ended_at = record.updated_at = now_ms()
        record.total_steps = len(run.ctx.steps)
        record.done_steps = record.total_steps
        await self.store.finish_run(record, run.ctx.steps, self._expiry())
        log.info("run %s %s", record.run_id, status)
        await run.ctx.progress(f"run {record.run_id} {status}")

    async def _result(self, record: RunRecord, steps: list[StepRecord], output: dict[str, Any]) -> dict[str, Any]:
        """summary + items + the template's output; over the inline limit, the whole as an artifact (D-40)."""
        items = await self.store.items(record.run_id)
        if items:
            succeeded = sum(item.get("success", True) is not False for item in items)
            summary = {"total": len(items), "succeeded": succeeded, "failed": len(items) - succeeded}
        else:
            succeeded = sum(step.status == "succeeded" for step in steps)
            summary = {"total": len(steps), "succeeded": succeeded, "failed": len(steps) - succeeded}
        result: dict[str, Any] = {"summary": summary, "items": items, **output}
        encoded = msgspec.json.encode(result)
        limit = self.config.max_artifact_inline_bytes
        if len(encoded) <= limit:
            return result
        artifact = await self.artifacts.save(record.run_id, encoded, "application/json", "result.json")
        kept: list[dict[str, Any]] = []
        budget = limit // 2
        for item in items:
            budget -= len(msgspec.json.encode(item))
            if budget < 0:
                break
            kept.append(item)
        return {
            "summary": summary,
            "items": kept,
            "truncated": True,
            "resultArtifactId": artifact.artifact_id,
            **output,
        }

    async def _release(self, run: ActiveRun) -> None:
        record = run.record
        sessions = self.services.sessions
        try:
            if run.template.keep_session and record.status == "succeeded":
                sessions.keep(record.session_id)  # a logged-in session, own or named, falls under D-10
            # The session closes here unless it is kept or its client (a named session's) is still there.
            await sessions.release(record.session_id)
        except Exception:
            log.exception("closing the session of run %s failed", record.run_id)
        self.active.pop(record.run_id, None)
        self._idle.release("run")
        run.started.set()
        run.done.set()

    # -- reading and canceling ---------------------------------------------------------------------

    # A remote caller reaches only the runs its own session started; to it, any other run does not exist,
    # so nothing tells it another run (or artifact) is there. Local callers (and the daemon, caller None)
    # reach every run.

    @staticmethod
    def _owner_filter(caller: Session | None) -> str | None:
        return caller.trust.run_owner(caller.id) if caller is not None else None

    async def _record(self, run_id: str, caller: Session | None) -> RunRecord:
        active = self.active.get(run_id)
        record = active.record if active is not None else await self.store.get_run(run_id)
        owner = self._owner_filter(caller)
        if record is None or (owner is not None and record.owner_session_id != owner):
            raise RunNotFound(f"no run {run_id}", runId=run_id)
        return record

    async def get(self, run_id: str, caller: Session | None = None) -> RunView:
        record = await self._record(run_id, caller)
        active = self.active.get(run_id)
        artifacts = await self.store.artifacts(run_id)
        steps = list(active.ctx.steps) if active is not None else await self.store.steps(run_id)
        return RunView(record, artifacts, steps)

    async def items(self, run_id: str, caller: Session | None = None) -> list[dict[str, Any]]:
        """The run's items (one per page, row...), if `caller` may see the run (else RUN_NOT_FOUND)."""
        await self._record(run_id, caller)
        return await self.store.items(run_id)

    async def list(
        self, status: str | None, template_id: str | None, limit: int, offset: int, caller: Session | None = None
    ) -> list[RunRecord]:
        records = await self.store.list_runs(status, template_id, limit, offset, self._owner_filter(caller))
        # Active runs are fresher in memory than on disk.
        return [self.active[r.run_id].record if r.run_id in self.active else r for r in records]

    async def read_artifact(
        self, artifact_id: str, offset: int = 0, limit: int | None = None, caller: Session | None = None
    ) -> Chunk:
        """A chunk of an artifact of a run the caller may see; else ARTIFACT_NOT_FOUND, as for an unknown id."""
        owner = self._owner_filter(caller)
        if owner is not None:
            artifact = await self.store.get_artifact(artifact_id)
            # An expired run is deleted with its owner: its tombstone answers NOT_FOUND to a remote caller.
            run = await self.store.get_run(artifact.run_id) if artifact is not None else None
            if run is None or run.owner_session_id != owner:
                raise ArtifactNotFound(f"no artifact {artifact_id}", artifactId=artifact_id)
        return await self.artifacts.read(artifact_id, offset, limit)

    async def cancel(self, run_id: str, force: bool = False, caller: Session | None = None) -> tuple[bool, RunStatus]:
        """Cooperative: the running step finishes and the pending ones are skipped (S1-30, D-36, D-39)."""
        record = await self._record(run_id, caller)
        active = self.active.get(run_id)
        if active is None:
            return False, record.status
        if record.status in TERMINAL:
            return False, record.status
        record.cancel_requested = True
        record.updated_at = now_ms()
        if record.status == "queued":
            active.waiting.cancel()
        elif force:
            active.working.cancel()
        return True, record.status

    @property
    def active_count(self) -> dict[str, int]:
        running = sum(run.record.status == "running" for run in self.active.values())
        return {"active": len(self.active), "running": running, "queued": len(self.active) - running}
