"""One profile folder: initialised on first use, written atomically, read with its checksum verified.

Layout (S0-44, byte-compatible with seed 000): `<root>/<profileId>/{state.json, meta.json, login.lock,
publish.lock, tmp/}`; folders 0700, files 0600 (TC-16). Writers put state.json first, then meta.json,
each through a temp file in tmp/ + fsync + `os.replace`, so a reader sees whole files only and a
half-finished publish shows up as a checksum mismatch, which the reader retries (D-17).
state.json holds cookies and tokens: its content is never logged, and Snapshot hides it from repr.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from browserd.daemon.errors import ExecutionError
from browserd.daemon.profiles.ids import profile_dir
from browserd.daemon.profiles.locks import PublishLockTimeout, ensure_lock_file, publish_lock
from browserd.daemon.profiles.meta import SnapshotMeta, checksum_of, decode_meta, encode_meta, new_meta

if TYPE_CHECKING:
    from playwright.async_api import StorageState

log = logging.getLogger(__name__)

INITIAL_STATE = b'{"cookies":[],"origins":[]}'
DIR_MODE = 0o700
FILE_MODE = 0o600
# Reads after the first that may find a publish half done (state.json replaced, meta.json not yet).
READ_RETRIES = 3
_RETRY_BASE_S = 0.01
# The last read, under publish.lock shared, waits at most this long for a writer to finish.
_LOCKED_READ_TIMEOUT_MS = 500
# Repairing a profile whose state.json vanished waits this long for publish.lock.
_REPAIR_LOCK_TIMEOUT_MS = 5_000


@dataclass(frozen=True)
class StagedState:
    """A state written to tmp/ and synced, waiting to be committed as a version (or discarded)."""

    path: Path
    checksum: str

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)


@dataclass(frozen=True)
class Snapshot:
    """One consistent (meta.json, state.json) pair."""

    meta: SnapshotMeta
    state: bytes = field(repr=False)

    @property
    def version(self) -> int:
        return self.meta.version

    def storage_state(self) -> StorageState:
        """The state as `Browser.new_context(storage_state=...)` takes it."""
        return cast("StorageState", msgspec.json.decode(self.state))


class ProfileStore:
    """The files of one profile. Construction validates the id and touches nothing on a rejected one."""

    def __init__(self, root: Path, profile_id: str, *, component: str = "daemon") -> None:
        self.dir = profile_dir(root, profile_id)
        self.root = self.dir.parent
        self.profile_id = profile_id
        # The `<component>` of the writerId this store puts in meta.json: daemon, login, ...
        self.component = component
        self.state_path = self.dir / "state.json"
        self.meta_path = self.dir / "meta.json"
        self.tmp_dir = self.dir / "tmp"
        self.login_lock_path = self.dir / "login.lock"
        self.publish_lock_path = self.dir / "publish.lock"
        self._last_good: Snapshot | None = None
        self._dirs_ready = False

    def __repr__(self) -> str:
        return f"ProfileStore({self.profile_id!r} at {self.dir})"

    # -- first use ---------------------------------------------------------------------------

    def ensure_initialized(self) -> None:
        """Create the folders and version 0 if absent (S0-46, S0-47); never overwrites a version (S0-49).

        Safe when several processes run it at once: absent files are created by a hard link, which fails
        rather than replaces when another process was first.
        """
        state_exists, meta_exists = self.state_path.exists(), self.meta_path.exists()
        if state_exists and meta_exists and self._dirs_ready:
            return
        # Once per store, and whenever a file is missing (the folder may have been removed meanwhile).
        self._make_dirs()
        self._dirs_ready = True
        if state_exists and meta_exists:
            return
        if not meta_exists:
            if not state_exists:
                self._create_if_absent(self.state_path, INITIAL_STATE)
            # Whoever created state.json, version 0 describes what is there now.
            state = self.state_path.read_bytes()
            created = self._create_if_absent(
                self.meta_path, encode_meta(new_meta(self.profile_id, 0, checksum_of(state), self.component))
            )
            if created:
                log.info("profile %s: initialised version 0 in %s", self.profile_id, self.dir)
            return
        self._repair_missing_state()

    def _repair_missing_state(self) -> None:
        """meta.json without state.json (deleted by hand): an empty state as the next version, never a rollback."""
        with publish_lock(self.publish_lock_path, _REPAIR_LOCK_TIMEOUT_MS):
            if self.state_path.exists():
                return
            current = self.read_meta().version
            self.write_version(INITIAL_STATE, current + 1)
            log.warning("profile %s: state.json was missing; wrote an empty version %d", self.profile_id, current + 1)

    def _make_dirs(self) -> None:
        if not self.root.exists():
            self.root.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        for folder in (self.dir, self.tmp_dir):
            folder.mkdir(mode=DIR_MODE, exist_ok=True)
            info = folder.stat()
            # mkdir's mode passes through the umask; set it exactly, on folders this user owns.
            if info.st_mode & 0o777 != DIR_MODE and info.st_uid == os.getuid():
                folder.chmod(DIR_MODE)
        for lock in (self.login_lock_path, self.publish_lock_path):
            ensure_lock_file(lock)

    # -- writing -----------------------------------------------------------------------------

    def write_version(self, state: bytes, version: int) -> SnapshotMeta:
        """Write `state` as `version`: state.json, then meta.json (D-17). The caller holds publish.lock."""
        staged = self.stage(state)
        try:
            return self.commit(staged, version)
        finally:
            staged.discard()

    def stage(self, state: bytes) -> StagedState:
        """The next state.json written and synced in tmp/: the slow part, done before taking publish.lock."""
        return StagedState(self._temp_file(self.state_path, state), checksum_of(state))

    def commit(self, staged: StagedState, version: int) -> SnapshotMeta:
        """Make `staged` the profile's `version`: state.json first, then meta.json. The caller holds publish.lock."""
        meta = new_meta(self.profile_id, version, staged.checksum, self.component)
        meta_temp = self._temp_file(self.meta_path, encode_meta(meta))
        try:
            os.replace(staged.path, self.state_path)
            os.replace(meta_temp, self.meta_path)
        finally:
            meta_temp.unlink(missing_ok=True)
        self._sync_dir()
        return meta

    def _temp_file(self, target: Path, data: bytes) -> Path:
        temp = self.tmp_dir / f"{target.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            temp.unlink(missing_ok=True)
            raise
        os.close(fd)
        return temp

    def _replace(self, target: Path, data: bytes) -> None:
        temp = self._temp_file(target, data)
        try:
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        self._sync_dir()

    def _create_if_absent(self, target: Path, data: bytes) -> bool:
        """Put `data` at `target` unless something is there already; True when this call created it."""
        temp = self._temp_file(target, data)
        try:
            try:
                os.link(temp, target)
            except FileExistsError:
                return False
            except OSError:
                # A filesystem without hard links: a narrower check-then-rename is the best left.
                if target.exists():
                    return False
                os.replace(temp, target)
            self._sync_dir()
            return True
        finally:
            temp.unlink(missing_ok=True)

    def _sync_dir(self) -> None:
        fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            with contextlib.suppress(OSError):
                os.fsync(fd)
        finally:
            os.close(fd)

    # -- reading -----------------------------------------------------------------------------

    def read_meta(self) -> SnapshotMeta:
        """meta.json as it is now; raises OSError or msgspec.DecodeError."""
        return decode_meta(self.meta_path.read_bytes())

    def read_latest(self) -> Snapshot:
        """The newest consistent snapshot: meta.json, then state.json, checksum verified (D-17).

        A mismatch is retried READ_RETRIES times (a publish may be half done), then read once more
        holding publish.lock shared, so that no writer of this host is midway. After that the last good
        snapshot this store read is returned, or ExecutionError says what is wrong.
        """
        outcome = self._read_once()
        for attempt in range(READ_RETRIES):
            if isinstance(outcome, Snapshot):
                break
            time.sleep(_RETRY_BASE_S * 2**attempt)
            outcome = self._read_once()
        if not isinstance(outcome, Snapshot):
            try:
                with publish_lock(self.publish_lock_path, _LOCKED_READ_TIMEOUT_MS, shared=True):
                    outcome = self._read_once()
            except (PublishLockTimeout, OSError):
                pass
        if isinstance(outcome, Snapshot):
            self._last_good = outcome
            return outcome
        reads = READ_RETRIES + 2
        if self._last_good is not None:
            log.warning(
                "profile %s: %s after %d reads; using the last good version %d",
                self.profile_id,
                outcome,
                reads,
                self._last_good.version,
            )
            return self._last_good
        raise ExecutionError(
            f"profile {self.profile_id!r}: no consistent snapshot after {reads} reads: {outcome}",
            hint=f"Retry; if it persists, run: browserd login --profile {self.profile_id}",
            profileId=self.profile_id,
            reason=outcome,
        )

    def _read_once(self) -> Snapshot | str:
        """A consistent snapshot, or what is wrong with the files (never their content)."""
        try:
            meta = self.read_meta()
            state = self.state_path.read_bytes()
        except FileNotFoundError as exc:
            return f"{Path(exc.filename or '').name or 'a snapshot file'} is missing"
        except (OSError, msgspec.DecodeError) as exc:
            return f"meta.json is unreadable ({type(exc).__name__})"
        if meta.checksum is not None and meta.checksum != checksum_of(state):
            return f"state.json does not match the checksum in meta.json (version {meta.version})"
        try:
            msgspec.json.decode(state, type=dict[str, Any])
        except msgspec.DecodeError:
            return f"state.json is not a JSON object (version {meta.version})"
        return Snapshot(meta, state)

    def load(self) -> Snapshot:
        """What a new context starts from: initialise on first use, then read the latest (S0-50)."""
        self.ensure_initialized()
        return self.read_latest()
