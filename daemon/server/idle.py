"""Idle exit: the daemon lingers `idle_exit_s` after the last session, run, recording or publish."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import anyio


class IdleMonitor:
    def __init__(self, idle_exit_s: float) -> None:
        self.idle_exit_s = idle_exit_s
        self.holders: Counter[str] = Counter()
        self._changed = anyio.Event()

    @contextmanager
    def hold(self, reason: str) -> Iterator[None]:
        """Keep the daemon alive while the block runs; `reason` shows in `browserd status`."""
        self.acquire(reason)
        try:
            yield
        finally:
            self.release(reason)

    def acquire(self, reason: str) -> None:
        self.holders[reason] += 1
        self._notify()

    def release(self, reason: str) -> None:
        self.holders[reason] -= 1
        if self.holders[reason] <= 0:
            del self.holders[reason]
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    @property
    def busy(self) -> bool:
        return bool(self.holders)

    async def wait_until_idle_expired(self) -> None:
        """Return once nothing has held the daemon for `idle_exit_s`; never when it is 0."""
        if self.idle_exit_s <= 0:
            await anyio.sleep_forever()
        while True:
            changed = self._changed
            if self.busy:
                await changed.wait()
                continue
            with anyio.move_on_after(self.idle_exit_s):
                await changed.wait()
                continue
            if not self.busy:
                return
