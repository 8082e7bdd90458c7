"""What services hold the daemon's idle exit with (the server's Idle implements it, daemon/server/idle.py)."""

from __future__ import annotations

from typing import Protocol


class IdleHold(Protocol):
    def acquire(self, reason: str) -> None: ...
    def release(self, reason: str) -> None: ...


class NoIdleHold:
    """A service used outside the daemon (tests, the CLI in-process) holds nothing."""

    def acquire(self, reason: str) -> None:
        pass

    def release(self, reason: str) -> None:
        pass
