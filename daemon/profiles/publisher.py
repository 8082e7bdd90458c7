"""Per-profile publishing from live contexts: debounced, single flight, coalescing bursts (S0-51, TC-11, D-16).

A StateSource is one context that publishes into a profile: how to export its state, the version it
started from, and whether a CAS miss has made it stale. `ProfilePublisher.request(source)` returns at
once; the publisher's loop waits `debounce_ms` from the first request of a round, then exports and
publishes once for all of them, so a burst of requests costs one export. Within a round the newest
request wins (an authoritative one before any other); the others are reported as superseded.
A successful publish advances the source's base version (S0-56); a CAS miss marks it stale and it
publishes no more (D-16). The export and the write of one profile never overlap (single flight).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Self

import anyio
import anyio.abc
import msgspec

from browserd.daemon.profiles.profile_folder import ProfileStore
from browserd.daemon.profiles.publish import PublishResult, publish_authoritative, publish_cas
from browserd.daemon.runtime.browser import is_crash

log = logging.getLogger(__name__)

# In the daemon: `lambda: context.storage_state(indexed_db=config.profiles.include_indexed_db)`.
Exporter = Callable[[], Awaitable[Mapping[str, Any]]]


class StateSource:
    """One context publishing into a profile. `authoritative` is the login's mode: no CAS check (D-15)."""

    def __init__(self, export: Exporter, base_version: int, *, authoritative: bool = False, name: str = "") -> None:
        self.export = export
        self.base_version = base_version
        self.authoritative = authoritative
        self.name = name
        self.stale = False
        # Its context is gone (closed, or its browser died): nothing left to export, so no more publishes.
        self.gone = False
        self.last_result: PublishResult | None = None

    def __repr__(self) -> str:
        mode = "authoritative" if self.authoritative else f"base {self.base_version}"
        return f"StateSource({self.name or id(self)}, {mode}{', stale' if self.stale else ''})"


class _Round:
    """The requests gathered in one debounce window, and their outcome."""

    def __init__(self) -> None:
        self.sources: dict[StateSource, None] = {}  # insertion-ordered set, newest last
        self.results: dict[StateSource, PublishResult] = {}
        self.done = anyio.Event()

    def add(self, source: StateSource) -> None:
        self.sources.pop(source, None)
        self.sources[source] = None

    def pick(self) -> StateSource:
        """The newest authoritative source, else the newest that is not stale, else the newest."""
        ordered = list(reversed(self.sources))
        return next((s for s in ordered if s.authoritative), next((s for s in ordered if not s.stale), ordered[0]))

    def finish(self, chosen: StateSource | None, result: PublishResult) -> None:
        for source in self.sources:
            if source is chosen:
                self.results[source] = result
            else:
                self.results[source] = PublishResult(
                    result.profile_id,
                    "superseded" if chosen is not None else result.status,
                    base_version=None if source.authoritative else source.base_version,
                    current_version=result.version or result.current_version,
                    error=result.error if chosen is None else None,
                )
            source.last_result = self.results[source]
        self.done.set()


class ProfilePublisher:
    """Publishes one profile's sources. Run it by `async with publisher:` or `publisher.start(task_group)`."""

    def __init__(
        self,
        store: ProfileStore,
        *,
        debounce_ms: float = 500,
        lock_timeout_ms: float = 500,
        export_timeout_s: float = 30.0,
    ) -> None:
        self.store = store
        self.debounce_s = debounce_ms / 1000
        self.lock_timeout_ms = lock_timeout_ms
        self.export_timeout_s = export_timeout_s
        # How many times a source's state was exported: what debouncing keeps low (TC-11).
        self.exports = 0
        self._round: _Round | None = None
        self._flight: _Round | None = None
        self._wake = anyio.Event()
        self._urgent = anyio.Event()
        self._started = False
        self._closed = False
        self._task_group: anyio.abc.TaskGroup | None = None

    @property
    def profile_id(self) -> str:
        return self.store.profile_id

    # -- asking for publishes ----------------------------------------------------------------

    def request(self, source: StateSource, *, debounce: bool = True) -> None:
        """Ask for `source` to be published soon and return at once; `source.last_result` tells the outcome.

        `debounce=False` ends the current window now (a publish on close, a periodic publish).
        A stale source is ignored: after a CAS miss it never publishes again.
        """
        self._enqueue(source, debounce)

    def _enqueue(self, source: StateSource, debounce: bool) -> _Round | None:
        if not self._started or self._closed:
            raise RuntimeError(f"the publisher of profile {self.profile_id!r} is not running")
        if source.stale and not source.authoritative:
            return None
        if self._round is None:
            self._round = _Round()
            self._wake.set()
        self._round.add(source)
        if not debounce:
            self._urgent.set()
        return self._round

    async def publish(self, source: StateSource, *, debounce: bool = True) -> PublishResult:
        """Request a publish of `source` and wait for the outcome of the round that served it."""
        round_ = self._enqueue(source, debounce)
        if round_ is None:
            return PublishResult(
                self.profile_id,
                "stale",
                base_version=source.base_version,
                current_version=source.last_result.current_version if source.last_result else None,
            )
        await round_.done.wait()
        return round_.results[source]

    async def publish_every(self, source: StateSource, interval_ms: float) -> None:
        """Publish `source` every `interval_ms` until it goes stale or its context is gone; run it in the source
        owner's task group."""
        while (not source.stale or source.authoritative) and not source.gone:
            await anyio.sleep(interval_ms / 1000)
            await self.publish(source, debounce=False)

    # -- running -----------------------------------------------------------------------------

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Run the loop in `task_group`, whose owner calls `drain()` before cancelling it."""
        self._started = True
        task_group.start_soon(self._run, name=f"profile publisher {self.profile_id}")

    async def __aenter__(self) -> Self:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self.start(self._task_group)
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        assert self._task_group is not None
        await self.drain()
        self._task_group.cancel_scope.cancel()
        return await self._task_group.__aexit__(*exc_info)

    async def drain(self, timeout_s: float | None = None) -> None:
        """Publish what is still requested at once, then accept no more requests (publish on close, D-16)."""
        if timeout_s is None:
            timeout_s = self.debounce_s + self.export_timeout_s + self.lock_timeout_ms / 1000 + 5
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout_s):
            while (pending := self._round or self._flight) is not None:
                self._urgent.set()
                await pending.done.wait()
        self._closed = True

    async def _run(self) -> None:
        stopped = PublishResult(self.profile_id, "failed", error="the publisher stopped")
        try:
            while True:
                await self._wake.wait()
                with anyio.move_on_after(self.debounce_s):
                    await self._urgent.wait()
                round_, self._round = self._round, None
                self._wake, self._urgent = anyio.Event(), anyio.Event()
                if round_ is None:
                    continue
                self._flight = round_
                chosen: StateSource | None = None
                result = stopped
                try:
                    chosen = round_.pick()
                    result = await self._publish_one(chosen)
                finally:
                    self._flight = None
                    round_.finish(chosen, result)
        finally:
            # Nobody waits forever on a round the loop will never serve.
            self._closed = True
            if self._round is not None:
                self._round.finish(None, stopped)
                self._round = None

    async def _publish_one(self, source: StateSource) -> PublishResult:
        base = None if source.authoritative else source.base_version
        if source.stale and not source.authoritative:
            # It went stale in an earlier round after asking for this one: exporting would be wasted.
            return PublishResult(self.profile_id, "stale", base_version=base)
        try:
            with anyio.fail_after(self.export_timeout_s):
                exported = await source.export()
            self.exports += 1
            state = msgspec.json.encode(dict(exported))
        except Exception as exc:
            # A closed context never exports again; a timeout may pass, so only a closed one ends the source.
            source.gone = source.gone or is_crash(exc)
            # The message names the failure (a closed context, a timeout), never the state.
            log.warning("profile %s: export for publishing failed: %s", self.profile_id, type(exc).__name__)
            return PublishResult(self.profile_id, "failed", base_version=base, error=f"{type(exc).__name__}: {exc}")
        if source.authoritative:
            result = await anyio.to_thread.run_sync(
                lambda: publish_authoritative(self.store, state, lock_timeout_ms=self.lock_timeout_ms)
            )
        else:
            result = await anyio.to_thread.run_sync(
                lambda: publish_cas(self.store, state, source.base_version, lock_timeout_ms=self.lock_timeout_ms)
            )
        if result.status == "published" and result.version is not None:
            source.base_version = result.version
        elif result.status == "stale":
            source.stale = True
        return result
