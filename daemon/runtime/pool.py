"""The browser pool: which member serves a new window, a scrape page or a crawl page, and whether it is up.

Placement: the member with the most free capacity among those the caller may use (a pin names a member
or a label; a page behind the daemon's URL guard proxy needs the local member, the only one that reaches
it); ties go to the member that served fewer leases, so equal members share the work. Capacity is never
exceeded: a full pool queues the caller for `[browser] pool_wait_s`, then answers BUSY.

Health: a member whose browser disconnects, or that does not answer the check every `health_interval_s`,
is marked down at once; the leases it held are marked lost (their owners answer PAGE_CRASHED naming it,
a crawl loads the page again elsewhere) and the owners of its browsers are told. It is tried again after
1, 2, 4... s (at most `pool_retry_max_s`) and takes work again once it answers.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from playwright.async_api import Browser

from browserd.daemon.config import BrowserConfig
from browserd.daemon.errors import BrowserdError, Busy, InvalidParameter, PageCrashed
from browserd.daemon.runtime.browser import BrowserRuntime, is_crash
from browserd.daemon.runtime.members import LOCAL, LocalMember, Member, remote_member
from browserd.daemon.runtime.tasks import TaskOwner

log = logging.getLogger(__name__)


class MemberLost(PageCrashed):
    """The member a page or window was on went down under it."""

    hint = "The pool member is marked down; retry: the next call is placed on a member that answers."


@dataclass(eq=False)
class Slot:
    """One lease: a browser of `member` for a window or a page, until released."""

    member: Member
    browser: Browser
    pool: BrowserPool
    lost: bool = False

    async def release(self) -> None:
        await self.pool.release(self)

    def release_soon(self) -> None:
        self.pool.release_soon(self)

    def lost_error(self, what: str = "the page") -> MemberLost:
        return MemberLost(
            f"the browser server {self.member.name} ({self.member.kind}, {self.member.url}) went away under {what}",
            endpoint=self.member.name,
        )


class BrowserPool:
    def __init__(self, runtime: BrowserRuntime, config: BrowserConfig) -> None:
        self.config = config
        self.members: list[Member] = [LocalMember(runtime, config.local_capacity)] if config.local else []
        self.members += [remote_member(endpoint, runtime) for endpoint in config.endpoints]
        names = [m.name for m in self.members]
        if len(set(names)) != len(names):
            raise InvalidParameter(f"[browser] endpoints: names must differ from each other and from 'local': {names}")
        for member in self.members:
            member.on_lost = self._browser_lost
        self._slots: set[Slot] = set()
        self._changed = anyio.Event()
        # Told (browser, why) when a browser of a remote member went away: sessions drop the windows on it.
        self._on_gone: list[Callable[[Browser, str], None]] = []
        self._tasks = TaskOwner("browser pool")

    @property
    def remote_capacity(self) -> int:
        return sum(m.capacity for m in self.members if not m.local)

    def on_browser_gone(self, callback: Callable[[Browser, str], None]) -> None:
        self._on_gone.append(callback)

    # -- placement ---------------------------------------------------------------------------------

    def _candidates(self, pin: str | None, local_only: bool) -> list[Member]:
        if local_only:
            found = [m for m in self.members if m.local and (pin is None or m.matches(pin))]
            if not found:
                raise BrowserdError(
                    "this page needs the daemon's own browser (its URL guard runs here), and the pool has none"
                    + (f" matching {pin!r}" if pin else ""),
                    hint="Set [browser] local = true, or use a local session without [security] lists.",
                )
            return found
        found = [m for m in self.members if pin is None or m.matches(pin)]
        if not found:
            raise InvalidParameter(
                f"no browser pool member is named or labelled {pin!r}",
                hint="get_runtime_profile lists the pool's members, their names and labels.",
                field="endpoint",
                members=[m.name for m in self.members],
            )
        return found

    async def acquire(self, pin: str | None = None, *, local_only: bool = False) -> Slot:
        """A browser on the member with the most free capacity; waits while all are full, then BUSY."""
        candidates = self._candidates(pin, local_only)
        deadline = anyio.current_time() + self.config.pool_wait_s
        while True:
            changed = self._changed
            free = [m for m in candidates if m.up and m.used < m.capacity]
            if free:
                member = max(free, key=lambda m: (m.capacity - m.used, -m.served))
                member.used += 1
                member.peak = max(member.peak, member.used)
                try:
                    browser = await member.open()
                except Exception as exc:
                    member.used -= 1
                    self._notify()
                    if member.local:
                        raise  # the runtime's own answer (no executable, a launch that failed) says it best
                    # It does not answer: down, and the next member is tried.
                    self._mark_down(member, f"cannot connect: {str(exc).splitlines()[0] if str(exc) else exc!r}")
                    continue
                except BaseException:
                    member.used -= 1
                    self._notify()
                    raise
                member.served += 1
                slot = Slot(member, browser, self)
                self._slots.add(slot)
                return slot
            if anyio.current_time() >= deadline:
                break
            # Only the wait for room counts against pool_wait_s, never a connection being made.
            with anyio.move_on_after(deadline - anyio.current_time()):
                await changed.wait()
        raise Busy(
            f"every browser pool member that may serve this is full or down: {self._describe(candidates)}",
            hint="Retry in a few seconds, close windows no longer needed, or add capacity ([browser] endpoints).",
        )

    @staticmethod
    def _describe(members: list[Member]) -> str:
        return ", ".join(
            f"{m.name} {m.used}/{m.capacity}" if m.up else f"{m.name} down ({m.down_reason})" for m in members
        )

    async def release(self, slot: Slot) -> None:
        if slot not in self._slots:
            return
        self._slots.discard(slot)
        slot.member.used -= 1
        self._notify()
        if not slot.lost:
            with anyio.CancelScope(shield=True):
                try:
                    await slot.member.close(slot.browser)
                except Exception:  # its server went away meanwhile
                    log.debug("closing a lease of %s failed", slot.member.name, exc_info=True)

    def release_soon(self, slot: Slot) -> None:
        """`release` from a synchronous caller (a window abandoned when its browser went away)."""
        self._tasks.start_soon(self.release, slot, name=f"release a lease of {slot.member.name}")

    @asynccontextmanager
    async def lease(self, pin: str | None = None, *, local_only: bool = False) -> AsyncIterator[Slot]:
        """A slot for one task; a failure after its member went down is MemberLost, which a crawl retries."""
        slot = await self.acquire(pin, local_only=local_only)
        try:
            yield slot
        except MemberLost:
            raise
        except Exception as exc:
            # The disconnect may reach us after the failure it caused: a crash on a remote member counts as lost.
            crashed = isinstance(exc, PageCrashed) or is_crash(exc)
            if slot.lost or (not slot.member.local and (crashed or not slot.browser.is_connected())):
                raise slot.lost_error() from exc
            raise
        finally:
            await self.release(slot)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    # -- health ------------------------------------------------------------------------------------

    def _browser_lost(self, member: Member, browser: Browser) -> None:
        if member.shares_browser:
            self._mark_down(member, "its browser disconnected")
        for slot in self._slots:
            if slot.browser is browser:
                slot.lost = True
        why = f"the browser server {member.name} ({member.kind}, {member.url}) went away"
        for callback in self._on_gone:
            try:
                callback(browser, why)
            except Exception:  # one owner's cleanup failing must not keep the others from theirs
                log.exception("cleanup after %s went away failed", member.name)
        if not member.shares_browser:
            # One WebDriver session ended: the endpoint itself is checked before more go there.
            self._tasks.start_soon(self._check, member, name=f"check {member.name}")

    def _mark_down(self, member: Member, reason: str) -> None:
        if member.local:
            return  # the runtime relaunches its own Chromium on the next call
        if member.up:
            log.warning("browser pool member %s is down: %s", member.name, reason)
        member.up = False
        member.down_reason = reason
        member.failures += 1
        member.retry_at = anyio.current_time() + min(self.config.pool_retry_max_s, 2 ** (member.failures - 1))
        for slot in self._slots:
            if slot.member is member and member.shares_browser:
                slot.lost = True
        self._notify()

    async def _check(self, member: Member) -> None:
        try:
            await member.probe()
        except Exception as exc:
            self._mark_down(member, f"does not answer: {exc!r}")
            return
        if not member.up:
            log.info("browser pool member %s answers again; it takes work again", member.name)
            member.up, member.down_reason, member.failures = True, "", 0
            self._notify()

    async def watch(self) -> None:
        """Check the members until the daemon stops; runs in the daemon's task group."""
        while True:
            now = anyio.current_time()
            async with anyio.create_task_group() as checks:
                for member in self.members:
                    if not member.local and (member.up or now >= member.retry_at):
                        checks.start_soon(self._check, member)
            await anyio.sleep(self.config.health_interval_s)

    async def aclose(self) -> None:
        """After the sessions closed (their windows published their profiles over these connections)."""
        with anyio.CancelScope(shield=True):
            await self._tasks.aclose()
            for member in self.members:
                await member.aclose()

    def status(self) -> list[dict[str, Any]]:
        """Each member for `browserd status` and get_runtime_profile: never a token."""
        now = anyio.current_time() if not all(m.up for m in self.members) else 0.0
        return [
            {
                "name": m.name,
                "kind": m.kind,
                "url": m.url,
                "labels": sorted(m.labels - {LOCAL}),
                "up": m.up,
                "downReason": m.down_reason or None,
                "retryInS": round(max(0.0, m.retry_at - now), 1) if not m.up else None,
                "contextsUsed": m.used,
                "capacity": m.capacity,
                "peakContexts": m.peak,
                "pagesServed": m.served,
            }
            for m in self.members
        ]
