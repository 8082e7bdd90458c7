"""Publishing a state: compare-and-swap on the version under publish.lock (S0-53..S0-55), or the login's
authoritative write that CAS then protects (D-15). Blocking file work: call it in a worker thread."""

from __future__ import annotations

import logging
from typing import Literal

import msgspec

from browserd.daemon.profiles.locks import PublishLockTimeout, publish_lock
from browserd.daemon.profiles.profile_folder import ProfileStore

log = logging.getLogger(__name__)

PublishStatus = Literal["published", "stale", "lock_timeout", "superseded", "failed"]


class PublishResult(msgspec.Struct, frozen=True, rename="camel"):
    """What became of one publish, for logs, session info and the caller who asked for it.

    - published: `version` is the version written.
    - stale: the profile is at `current_version`, newer than `base_version`; nothing written (TC-14).
    - lock_timeout: publish.lock stayed held; skipped, worth a later retry (S0-54).
    - superseded: a newer request on the same profile was published instead (debounce, TC-11).
    - failed: exporting or writing raised; `error` says what (never the state itself).
    """

    profile_id: str
    status: PublishStatus
    base_version: int | None = None
    current_version: int | None = None
    version: int | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "published"


def publish_cas(store: ProfileStore, state: bytes, base_version: int, *, lock_timeout_ms: float) -> PublishResult:
    """Write `state` as version current+1 only if the profile is still at `base_version`."""
    return _publish(store, state, base_version, lock_timeout_ms)


def publish_authoritative(store: ProfileStore, state: bytes, *, lock_timeout_ms: float) -> PublishResult:
    """Write `state` as version current+1 whatever the base (the login's publish, D-15)."""
    return _publish(store, state, None, lock_timeout_ms)


def _publish(store: ProfileStore, state: bytes, base: int | None, lock_timeout_ms: float) -> PublishResult:
    pid = store.profile_id
    try:
        store.ensure_initialized()
        # Writing and syncing the state happens before the lock, so the lock is held for milliseconds.
        staged = store.stage(state)
        try:
            with publish_lock(store.publish_lock_path, lock_timeout_ms):
                current = store.read_meta().version
                if base is not None and current != base:
                    log.warning("profile %s: dropped a publish from version %d; it is at %d", pid, base, current)
                    return PublishResult(pid, "stale", base_version=base, current_version=current)
                meta = store.commit(staged, current + 1)
        finally:
            staged.discard()
    except PublishLockTimeout:
        log.warning("profile %s: publish skipped, publish.lock held past %g ms", pid, lock_timeout_ms)
        return PublishResult(pid, "lock_timeout", base_version=base)
    except (OSError, msgspec.DecodeError) as exc:
        log.error("profile %s: publish failed: %s", pid, type(exc).__name__)
        return PublishResult(pid, "failed", base_version=base, error=f"{type(exc).__name__}: {exc}")
    log.info("profile %s: published version %d (%s)", pid, meta.version, "login" if base is None else f"from {base}")
    return PublishResult(pid, "published", base_version=base, current_version=current, version=meta.version)
