"""Login profiles: storageState snapshots shared between processes and hosts through files (DESIGN.md §3).

A profile is a folder `<snapshot_root>/<profileId>/` holding `state.json` (what Playwright's
`storage_state()` exported), `meta.json` (its version and checksum), `login.lock`, `publish.lock` and
`tmp/`. The files are the only truth about login state (D-01): the daemon reads them whenever it creates
a context and publishes back by compare-and-swap on the version, so a stale task never rolls back a
newer login (S0-53, TC-14). Nothing here imports Playwright: `browserd login` uses it without a daemon.

- ids: profileId validation and the folder it maps to (TC-15)
- meta: the meta.json record, checksums and writer ids (D-17)
- store: one profile folder: first-use initialisation, atomic writes, verified reads (TC-06, TC-16)
- locks: login.lock (fails fast, TC-08) and publish.lock (with a timeout)
- publish: the CAS publish and the login's authoritative publish (S0-53..S0-56, D-15)
- publisher: per-profile debounced single-flight publishing from live contexts (S0-51, TC-11, D-16)
- registry: the stores and publishers of one process, built from ProfilesConfig
"""

from __future__ import annotations

from browserd.daemon.profiles.ids import validate_profile_id
from browserd.daemon.profiles.locks import PublishLockTimeout, login_lock, publish_lock
from browserd.daemon.profiles.meta import SnapshotMeta, checksum_of, writer_id
from browserd.daemon.profiles.profile_folder import INITIAL_STATE, ProfileStore, Snapshot
from browserd.daemon.profiles.profile_registry import Profiles
from browserd.daemon.profiles.publish import PublishResult, PublishStatus, publish_authoritative, publish_cas
from browserd.daemon.profiles.publisher import ProfilePublisher, StateSource

__all__ = [
    "INITIAL_STATE",
    "ProfilePublisher",
    "ProfileStore",
    "Profiles",
    "PublishLockTimeout",
    "PublishResult",
    "PublishStatus",
    "Snapshot",
    "SnapshotMeta",
    "StateSource",
    "checksum_of",
    "login_lock",
    "publish_authoritative",
    "publish_cas",
    "publish_lock",
    "validate_profile_id",
    "writer_id",
]
