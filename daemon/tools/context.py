"""What a tool handler receives besides its parameters."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from browserd.daemon.events import Progress
from browserd.daemon.services import Services
from browserd.daemon.sessions.session import Session


@dataclass
class ToolContext:
    services: Services
    session: Session
    # Reports progress of a long call; the shim forwards it as notifications/progress.
    progress: Progress
    # The request's deadline ([daemon] request_timeout_s): the connection's scope around the call.
    deadline: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def allow(self, seconds: float) -> None:
        """Let the call run at least `seconds` more: for a wait with a deadline of its own (a sync run's timeout)."""
        self.deadline.deadline = max(self.deadline.deadline, anyio.current_time() + seconds)

    def past_deadline(self) -> bool:
        return anyio.current_time() >= self.deadline.deadline
