"""The two short file locks of a profile (S0-57): login.lock fails fast, publish.lock waits a bounded time.

Both are `flock` locks on files that are never deleted. flock belongs to the open file description, so
two threads of one process exclude each other as two processes do. It is reliable on a local filesystem
and NFSv4; a folder synced between hosts (Syncthing, Dropbox) gets per-host locks only (D-18).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from browserd.daemon.errors import ProfileLocked
from browserd.daemon.profiles.meta import utc_now, writer_id

_POLL_S = 0.005
FILE_MODE = 0o600


class PublishLockTimeout(Exception):
    """publish.lock stayed held past the timeout; the publish is skipped (S0-54)."""


def _open_lock_file(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    with contextlib.suppress(OSError):
        os.fchmod(fd, FILE_MODE)
    return fd


def ensure_lock_file(path: Path) -> None:
    """Create the lock file (0600) if absent, so the profile's layout is whole from first use (S0-44)."""
    os.close(_open_lock_file(path))


@contextlib.contextmanager
def login_lock(path: Path, profile_id: str, component: str = "login") -> Iterator[None]:
    """Hold `login.lock` for the whole login; a second holder gets ProfileLocked at once (S0-38, TC-08).

    The holder writes its writer id into the file, so the refusal can say who holds the lock.
    """
    fd = _open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
            raise ProfileLocked(
                f"profile {profile_id!r} is already being logged in" + (f" ({holder})" if holder else ""),
                hint=f"Finish or close the other 'browserd login --profile {profile_id}' first, then retry.",
                profileId=profile_id,
                holder=holder,
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{writer_id(component)} since {utc_now()}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def publish_lock(path: Path, timeout_ms: float, *, shared: bool = False) -> Iterator[None]:
    """Hold `publish.lock` for one read-compare-write; PublishLockTimeout after `timeout_ms` (S0-54).

    `shared` is for a reader that wants no writer in the middle of its read; readers share it.
    """
    fd = _open_lock_file(path)
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    try:
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise PublishLockTimeout(f"{path} still held after {timeout_ms:g} ms") from None
                time.sleep(_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
