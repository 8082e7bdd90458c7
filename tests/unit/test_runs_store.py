"""The run manager's state machine, the sqlite store and artifacts, without a browser (reference/001 §5-§6).

A scripted template plays the steps (succeed, fail, or take a while), so every mapping from step
states to run state is pinned down quickly: S1-41..S1-49, D-36..D-40.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import anyio
import msgspec
import pytest

from browserd.daemon.config import Config, ProfilesConfig, RunsConfig
from browserd.daemon.errors import (
    ArtifactExpired,
    ArtifactNotFound,
    BrowserdError,
    ExecutionError,
    InvalidParameter,
    RunNotFound,
    TemplateNotFound,
    TemplateVersionUnsupported,
)
from browserd.daemon.runs.run_context import RunContext
from browserd.daemon.runs.run_manager import ActiveRun, RunManager, StartRequest
from browserd.daemon.runs.run_records import RunRecord, StepRecord, now_ms
from browserd.daemon.runs.run_store import SCHEMA_VERSION, RunStore, StoreError
from browserd.daemon.runs.templates.template_interface import Inputs, Template
from browserd.daemon.runs.templates.template_registry import TemplateRegistry
from browserd.daemon.services import Services
from browserd.daemon.sessions.session import Session

pytestmark = pytest.mark.anyio

Outcome = Literal["ok", "fail", "slow"]


class ScriptInputs(Inputs, kw_only=True):
    outcomes: list[Outcome]
    slow_s: float = 0.3
    items: bool = False
    payload_bytes: int = 0
    artifact: bool = False


class ScriptResult(msgspec.Struct):
    summary: dict[str, int]


class Scripted(Template[ScriptInputs]):
    template_id = "scripted"
    version = "1.0.0"
    name = "Scripted steps"
    inputs = ScriptInputs
    outputs = ScriptResult
    supports_partial_success = True

    def plan(self, inputs: ScriptInputs) -> list[str]:
        return [f"step {n}" for n in range(len(inputs.outcomes))]

    async def run(self, ctx: RunContext, inputs: ScriptInputs) -> None:
        if inputs.artifact:
            ctx.set_output(artifactId=(await ctx.add_artifact(b"hello", "text/plain", "greeting")).artifact_id)
        for index, outcome in enumerate(inputs.outcomes):
            try:
                async with ctx.step(index):
                    if outcome == "slow":
                        await anyio.sleep(inputs.slow_s)
                    if outcome == "fail":
                        raise ExecutionError("planned failure")
            except BrowserdError:
                pass
            if inputs.items:
                await ctx.add_item({"n": index, "success": outcome != "fail", "pad": "x" * inputs.payload_bytes})


class Strict(Scripted):
    template_id = "strict"
    supports_partial_success = False


class Demanding(Scripted):
    template_id = "demanding"
    partial_success_threshold = 0.9


class Atomic(Scripted):
    """Lets a step's error escape run(): the whole run fails (S1-61)."""

    template_id = "atomic"
    supports_partial_success = False

    async def run(self, ctx: RunContext, inputs: ScriptInputs) -> None:
        for index, outcome in enumerate(inputs.outcomes):
            async with ctx.step(index):
                if outcome == "fail":
                    raise ExecutionError("planned failure")


class Grouped(Atomic):
    """The same in a task group of its own, which wraps what escapes in an exception group."""

    template_id = "grouped"

    async def run(self, ctx: RunContext, inputs: ScriptInputs) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(Atomic.run, self, ctx, inputs)


def config_for(root: Path, **runs: Any) -> Config:
    return Config(
        runs=RunsConfig(root=str(root / "runs"), **runs),
        profiles=ProfilesConfig(snapshot_root=str(root / "profiles"), user_data_root=str(root / "data")),
    )


class Harness:
    def __init__(self, manager: RunManager, caller: Session) -> None:
        self.manager = manager
        self.caller = caller

    async def start(self, template: str, outcomes: list[str], **options: Any) -> ActiveRun:
        inputs = {"outcomes": outcomes, **options.pop("inputs", {})}
        return await self.manager.start(StartRequest(template, None, inputs, mode="async", **options), self.caller)

    async def run(self, template: str, outcomes: list[str], **options: Any) -> RunRecord:
        run = await self.start(template, outcomes, **options)
        with anyio.fail_after(10):
            await run.done.wait()
        return (await self.manager.get(run.record.run_id)).record

    async def steps(self, run_id: str) -> list[str]:
        return [step.status for step in (await self.manager.get(run_id)).steps]


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    async with running(tmp_path) as harness:
        yield harness


def running(root: Path, **runs: Any) -> Any:
    class _Running:
        async def __aenter__(self) -> Harness:
            services = Services.build(config_for(root, **runs))
            services.runs.templates = TemplateRegistry([Scripted(), Strict(), Demanding(), Atomic(), Grouped()])
            self._cm = services.runs.serving()
            manager = await self._cm.__aenter__()
            return Harness(manager, services.sessions.create("test", "local"))

        async def __aexit__(self, *exc: Any) -> None:
            await self._cm.__aexit__(*exc)

    return _Running()


async def test_all_steps_succeeded_means_succeeded(harness: Harness) -> None:
    """S1-47."""
    record = await harness.run("scripted", ["ok", "ok"])
    assert record.status == "succeeded" and record.error is None
    assert record.result == {"summary": {"total": 2, "succeeded": 2, "failed": 0}, "items": []}
    assert await harness.steps(record.run_id) == ["succeeded", "succeeded"]


async def test_failures_above_the_threshold_are_partial_success_and_below_it_failed(harness: Harness) -> None:
    """S1-43, S1-48, D-37: the ratio counts items when there are items, else executed steps."""
    partial = await harness.run("scripted", ["ok", "ok", "fail"], inputs={"items": True})
    assert partial.status == "partial_success"
    assert partial.result is not None and partial.result["summary"] == {"total": 3, "succeeded": 2, "failed": 1}
    assert partial.error is not None and partial.error.error_code == "STEP_EXECUTION_FAILED"
    assert partial.error.details["failedStep"] == "step 2"
    assert partial.error.details["stepErrorCode"] == "EXECUTION_ERROR"
    below = await harness.run("scripted", ["ok", "fail", "fail"])
    assert below.status == "failed"
    nothing = await harness.run("scripted", ["fail"])
    assert nothing.status == "failed", "zero successes is never partial"


async def test_the_templates_threshold_beats_the_global_one(harness: Harness) -> None:
    """S1-44."""
    assert (await harness.run("demanding", ["ok", "ok", "fail"])).status == "failed"


async def test_a_template_without_partial_success_fails_on_any_failed_step(harness: Harness) -> None:
    """S1-48, S1-49."""
    assert (await harness.run("strict", ["ok", "ok", "fail"])).status == "failed"


@pytest.mark.parametrize("template", ["atomic", "grouped"])
async def test_an_error_escaping_the_template_fails_the_run_and_skips_the_rest(harness: Harness, template: str) -> None:
    """S1-57, S1-61: STEP_EXECUTION_FAILED with failedStep and stepErrorCode, from a task group too."""
    record = await harness.run(template, ["ok", "fail", "ok"])
    assert record.status == "failed" and record.error is not None
    assert record.error.error_code == "STEP_EXECUTION_FAILED"
    assert record.error.details["failedStep"] == "step 1"
    assert record.error.details["stepErrorCode"] == "EXECUTION_ERROR"
    assert await harness.steps(record.run_id) == ["succeeded", "failed", "skipped"]


async def test_cancel_lets_the_running_step_finish_and_skips_the_pending_ones(harness: Harness) -> None:
    """S1-30, S1-31, S1-46."""
    run = await harness.start("scripted", ["slow"] * 4)
    while run.ctx.steps[1].status != "running":
        await anyio.sleep(0.01)
    assert await harness.manager.cancel(run.record.run_id) == (True, "running")
    await run.done.wait()
    assert run.record.status == "canceled"
    assert await harness.steps(run.record.run_id) == ["succeeded", "succeeded", "skipped", "skipped"]
    assert await harness.manager.cancel(run.record.run_id) == (False, "canceled"), "terminal states never change"


async def test_a_cancel_accepted_during_the_last_step_ends_canceled_with_its_results(harness: Harness) -> None:
    """S1-31, D-37: cancellation beats success once accepted, though nothing was left to skip."""
    run = await harness.start("scripted", ["ok", "slow"], inputs={"items": True})
    while run.ctx.steps[1].status != "running":
        await anyio.sleep(0.01)
    assert await harness.manager.cancel(run.record.run_id) == (True, "running")
    with anyio.fail_after(5):
        await run.done.wait()
    assert run.record.status == "canceled" and run.record.error is not None
    assert run.record.error.error_code == "RUN_CANCELED"
    assert await harness.steps(run.record.run_id) == ["succeeded", "succeeded"]
    assert run.record.result is not None and run.record.result["summary"]["succeeded"] == 2


async def test_a_forced_cancel_interrupts_the_step_in_flight(harness: Harness) -> None:
    """D-36: force fails the running step, skips the rest, and the run is canceled."""
    run = await harness.start("scripted", ["slow", "slow"], inputs={"slowS": 30})
    while run.record.status != "running":
        await anyio.sleep(0.01)
    await harness.manager.cancel(run.record.run_id, force=True)
    with anyio.fail_after(5):
        await run.done.wait()
    assert run.record.status == "canceled"
    assert await harness.steps(run.record.run_id) == ["failed", "skipped"]


async def test_runs_beyond_the_limit_wait_queued_and_a_queued_cancel_ends_at_once(tmp_path: Path) -> None:
    """S1-75, D-36: queued -> canceled without ever running."""
    async with running(tmp_path, max_concurrent_runs=1) as harness:
        first = await harness.start("scripted", ["slow"], inputs={"slowS": 30})
        second = await harness.start("scripted", ["ok"])
        while first.record.status != "running":
            await anyio.sleep(0.01)
        await anyio.sleep(0.1)
        assert second.record.status == "queued"
        assert harness.manager.active_count == {"active": 2, "running": 1, "queued": 1}
        assert await harness.manager.cancel(second.record.run_id) == (True, "queued")
        with anyio.fail_after(5):
            await second.done.wait()
        assert second.record.status == "canceled" and second.record.started_at is None
        assert await harness.steps(second.record.run_id) == ["skipped"]
        await harness.manager.cancel(first.record.run_id, force=True)
        await first.done.wait()


async def test_the_timeout_fails_the_run_with_run_timeout_and_keeps_finished_items(harness: Harness) -> None:
    """S1-82..S1-84, D-36: min(options.timeoutMs, template, runtime)."""
    record = await harness.run("scripted", ["ok", "slow", "ok"], inputs={"slowS": 30, "items": True}, timeout_ms=300)
    assert record.timeout_ms == 300
    assert record.status == "failed" and record.error is not None and record.error.error_code == "RUN_TIMEOUT"
    assert await harness.steps(record.run_id) == ["succeeded", "failed", "skipped"]
    assert record.result is not None and record.result["items"][0]["n"] == 0


async def test_the_effective_timeout_is_the_smallest_of_the_three(tmp_path: Path) -> None:
    """S1-82, S1-83."""
    async with running(tmp_path, max_run_timeout_ms=5_000) as harness:
        run = await harness.start("scripted", ["ok"], timeout_ms=60_000)
        assert run.record.timeout_ms == 5_000
        run = await harness.start("scripted", ["ok"])
        assert run.record.timeout_ms == 5_000, "no timeoutMs: the template's maximum, capped by the runtime"
        await run.done.wait()


async def test_a_result_over_the_inline_limit_becomes_an_artifact(tmp_path: Path) -> None:
    """D-40: summary plus truncated items inline, the whole result as application/json."""
    async with running(tmp_path, max_artifact_inline_bytes=4_000) as harness:
        record = await harness.run("scripted", ["ok"] * 10, inputs={"items": True, "payloadBytes": 1_000})
        assert record.result is not None and record.result["truncated"] is True
        assert len(record.result["items"]) < 10 and record.result["summary"]["total"] == 10
        chunk = await harness.manager.artifacts.read(record.result["resultArtifactId"], 0, 10**9)
        assert len(chunk.data) == 4_000 and not chunk.complete, "a limit above the maximum is clamped"
        whole = b""
        while True:
            chunk = await harness.manager.artifacts.read(record.result["resultArtifactId"], len(whole))
            whole += chunk.data
            if chunk.complete:
                break
        assert len(msgspec.json.decode(whole)["items"]) == 10
        with pytest.raises(InvalidParameter):
            await harness.manager.artifacts.read(record.result["resultArtifactId"], len(whole) + 1)


async def test_expired_runs_are_deleted_and_their_artifacts_leave_a_tombstone(tmp_path: Path) -> None:
    """S1-38, S1-39, D-40: ARTIFACT_EXPIRED while the tombstone lasts, then ARTIFACT_NOT_FOUND."""
    async with running(tmp_path, ttl_s=0, tombstone_s=3_600) as harness:
        record = await harness.run("scripted", ["ok"], inputs={"artifact": True})
        assert record.result is not None
        artifact_id = record.result["artifactId"]
        await harness.manager.cleanup()
        with pytest.raises(ArtifactExpired):
            await harness.manager.artifacts.read(artifact_id)
        assert not harness.manager.store.artifact_path(artifact_id).exists()
        with pytest.raises(RunNotFound):
            await harness.manager.get(record.run_id)
        harness.manager.config.tombstone_s = 0
        await harness.manager.cleanup()
        with pytest.raises(ArtifactNotFound):
            await harness.manager.artifacts.read(artifact_id)


async def test_runs_left_running_by_a_dead_daemon_are_marked_failed_at_start(tmp_path: Path) -> None:
    """D-08: running -> failed (daemon_restarted), its running step failed, pending steps skipped."""
    store = RunStore(tmp_path / "runs")
    await store.open()
    record = RunRecord(
        run_id="run_dead",
        template_id="scripted",
        template_version="1.0.0",
        status="running",
        session_id="sess_gone",
        session_kept=False,
        trust_level="local",
        mode="async",
        timeout_ms=1_000,
        inputs={},
        created_at=now_ms(),
        updated_at=now_ms(),
        started_at=now_ms(),
    )
    steps = [
        StepRecord(run_id="run_dead", index=0, name="a", status="succeeded"),
        StepRecord(run_id="run_dead", index=1, name="b", status="running"),
        StepRecord(run_id="run_dead", index=2, name="c"),
    ]
    await store.create_run(record, steps)
    await store.add_item("run_dead", 0, {"n": 0, "success": True})
    store.close()
    async with running(tmp_path) as harness:
        view = await harness.manager.get("run_dead")
    assert view.record.status == "failed" and view.record.error is not None
    assert view.record.error.details["reason"] == "daemon_restarted"
    assert [step.status for step in view.steps] == ["succeeded", "failed", "skipped"]
    assert view.record.result is not None and view.record.result["items"] == [{"n": 0, "success": True}]


async def test_the_registry_finds_templates_by_id_and_version() -> None:
    """S1-15: an absent version means the latest."""

    class Newer(Scripted):
        version = "1.10.0"

    registry = TemplateRegistry([Scripted(), Newer()])
    assert registry.get("scripted").version == "1.10.0"
    assert registry.get("scripted", "1.0.0").version == "1.0.0"
    with pytest.raises(TemplateNotFound):
        registry.get("missing")
    with pytest.raises(TemplateVersionUnsupported) as refused:
        registry.get("scripted", "2.0.0")
    assert refused.value.details["supportedVersions"] == ["1.0.0", "1.10.0"]


def test_the_store_is_versioned_wal_and_refuses_a_newer_schema(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.open_sync()
    store.close()
    db = sqlite3.connect(tmp_path / "runs.db")
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    finally:
        db.close()
    with pytest.raises(StoreError, match="newer"):
        RunStore(tmp_path).open_sync()
    assert (tmp_path / "runs.db").stat().st_mode & 0o777 == 0o600


async def test_a_remote_caller_reaches_only_the_runs_its_session_started(harness: Harness) -> None:
    """Issue 4 item 8, D-11: another session's run and its artifacts do not exist for a remote caller."""
    sessions = harness.manager.services.sessions
    local = await harness.run("scripted", ["ok"], inputs={"artifact": True})
    remote = sessions.create("remote", "remote")
    other = sessions.create("other remote", "remote")
    request = StartRequest("scripted", None, {"outcomes": ["ok"], "artifact": True}, mode="async")
    mine = await harness.manager.start(request, remote)
    await mine.done.wait()
    assert mine.record.owner_session_id == remote.id and mine.record.trust_level == "remote"
    assert local.result is not None and mine.record.result is not None
    local_artifact, my_artifact = local.result["artifactId"], mine.record.result["artifactId"]

    for run_id, caller in ((local.run_id, remote), (mine.record.run_id, other)):
        with pytest.raises(RunNotFound):
            await harness.manager.get(run_id, caller)
        with pytest.raises(RunNotFound):
            await harness.manager.cancel(run_id, caller=caller)
    for artifact_id, caller in ((local_artifact, remote), (my_artifact, other)):
        with pytest.raises(ArtifactNotFound):
            await harness.manager.read_artifact(artifact_id, caller=caller)
    assert [r.run_id for r in await harness.manager.list(None, None, 10, 0, remote)] == [mine.record.run_id]
    assert await harness.manager.list(None, None, 10, 0, other) == []
    assert (await harness.manager.get(mine.record.run_id, remote)).record.status == "succeeded"
    assert (await harness.manager.read_artifact(my_artifact, caller=remote)).data == b"hello"
    # Local callers see every run.
    assert len(await harness.manager.list(None, None, 10, 0, harness.caller)) == 2
    assert (await harness.manager.read_artifact(my_artifact, caller=harness.caller)).data == b"hello"


def test_a_schema_1_store_gains_the_owner_column_and_keeps_its_runs(tmp_path: Path) -> None:
    """A database from before run ownership opens in place: its runs stay, ownerless (local callers only)."""
    db = sqlite3.connect(tmp_path / "runs.db")
    db.executescript(
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, template_id TEXT NOT NULL, status TEXT NOT NULL,"
        " created_at INTEGER NOT NULL, expires_at INTEGER, record BLOB NOT NULL);"
        "PRAGMA user_version=1;"
    )
    old = msgspec.json.encode(
        {
            "run_id": "run_old",
            "template_id": "scripted",
            "template_version": "1.0.0",
            "status": "succeeded",
            "session_id": "sess_1",
            "session_kept": False,
            "trust_level": "local",
            "mode": "sync",
            "timeout_ms": 1_000,
            "inputs": {},
            "created_at": 1,
            "updated_at": 1,
        }
    )
    db.execute("INSERT INTO runs VALUES ('run_old', 'scripted', 'succeeded', 1, NULL, ?)", (old,))
    db.commit()
    db.close()
    store = RunStore(tmp_path)
    store.open_sync()
    try:
        row = store._sync(lambda db: db.execute("SELECT run_id, owner_session_id FROM runs").fetchall())
        assert row == [("run_old", None)]
        assert store._sync(lambda db: db.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION == 2
    finally:
        store.close()
