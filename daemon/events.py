"""The daemon's push channel: what just changed (a run's progress, a session's tabs or calls), told to whoever
listens (the console's event stream). Publishing never waits: a listener that falls behind loses the
events it could not hold and is told so once (`lost`), so it reads the whole state again instead of
holding up a run or a tool call."""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

# How a long call reports its progress (done, total, message): a tool call's notifications/progress, a run's
# listeners. Services below the tools take one, so their steps are told without knowing who listens.
Progress = Callable[[float, float | None, str | None], Awaitable[None]]

# Events a listener may hold before it loses some: a crawl of a few hundred pages between two reads.
LISTENER_BUFFER = 512


@dataclass(eq=False)  # kept in a set: each listener is itself, whatever it holds
class Listener:
    pending: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=LISTENER_BUFFER))
    # Events fell off the front of `pending` since the last read: the listener's picture is incomplete.
    lost: bool = False
    _arrived: anyio.Event = field(default_factory=anyio.Event)

    def put(self, event: dict[str, Any]) -> None:
        if len(self.pending) == self.pending.maxlen:
            self.lost = True
        self.pending.append(event)
        self._arrived.set()

    async def next_batch(self) -> tuple[list[dict[str, Any]], bool]:
        """The events that arrived since the last call (waiting for one), and whether any were lost."""
        while not self.pending:
            await self._arrived.wait()
            self._arrived = anyio.Event()
        batch, lost = list(self.pending), self.lost
        self.pending.clear()
        self.lost = False
        return batch, lost


class Events:
    def __init__(self) -> None:
        self._listeners: set[Listener] = set()

    def publish(self, kind: str, **data: Any) -> None:
        """Tell every listener `{kind, ...data}`; never blocks, never raises."""
        if not self._listeners:
            return
        event = {"kind": kind, **data}
        for listener in self._listeners:
            listener.put(event)

    @contextmanager
    def listen(self) -> Iterator[Listener]:
        listener = Listener()
        self._listeners.add(listener)
        try:
            yield listener
        finally:
            self._listeners.discard(listener)
