"""What a run is on disk and in memory: its record, its steps and its artifacts (reference/001 §4-§6)."""

from __future__ import annotations

import time
from typing import Any, Literal

import msgspec

from browserd.protocol.messages import ErrorInfo, TrustLevel

RunStatus = Literal["queued", "running", "succeeded", "failed", "partial_success", "canceled"]
StepStatus = Literal["pending", "running", "succeeded", "failed", "skipped"]
RunMode = Literal["sync", "async", "auto"]

TERMINAL: frozenset[str] = frozenset({"succeeded", "failed", "partial_success", "canceled"})
ACTIVE: frozenset[str] = frozenset({"queued", "running"})


def now_ms() -> int:
    return int(time.time() * 1000)


class RunRecord(msgspec.Struct, kw_only=True):
    run_id: str
    template_id: str
    template_version: str
    status: RunStatus
    session_id: str
    # The run's session stays open afterwards: the caller's own, or one a keep-session template made.
    session_kept: bool
    trust_level: TrustLevel
    mode: Literal["sync", "async"]
    timeout_ms: int
    inputs: dict[str, Any]
    created_at: int
    updated_at: int
    started_at: int | None = None
    ended_at: int | None = None
    total_steps: int = 0
    done_steps: int = 0
    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    cancel_requested: bool = False
    # The session that asked for the run (not the run's own session): a remote caller sees only its own runs.
    # None on runs recorded before schema 2, which only local callers see.
    owner_session_id: str | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def elapsed_ms(self) -> int:
        if self.started_at is None:
            return 0
        return (self.ended_at or now_ms()) - self.started_at


class StepRecord(msgspec.Struct, kw_only=True):
    run_id: str
    index: int
    name: str
    status: StepStatus = "pending"
    error: ErrorInfo | None = None
    started_at: int | None = None
    ended_at: int | None = None


class ArtifactRecord(msgspec.Struct, kw_only=True):
    artifact_id: str
    run_id: str
    name: str
    type: str
    mime_type: str
    size: int
    created_at: int
    # Set when the run becomes terminal (the TTL counts from there, S1-38); None while it runs.
    expires_at: int | None = None
    # The file is gone and only this tombstone row remains (D-40).
    deleted_at: int | None = None
