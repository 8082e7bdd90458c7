"""What a tool handler receives besides its parameters."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from browserd.daemon.services import Services
from browserd.daemon.sessions.session import Session

Progress = Callable[[float, float | None, str | None], Awaitable[None]]


@dataclass
class ToolContext:
    services: Services
    session: Session
    # Reports progress of a long call; the shim forwards it as notifications/progress.
    progress: Progress
