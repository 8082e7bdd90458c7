"""The profiles one process works with, built from ProfilesConfig: a store and a publisher per profile."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

import anyio
import anyio.abc
import msgspec
from playwright.async_api import StorageState

from browserd.daemon.config import ProfilesConfig
from browserd.daemon.profiles.ids import validate_profile_id
from browserd.daemon.profiles.profile_folder import ProfileStore, Snapshot
from browserd.daemon.profiles.publish import PublishResult, publish_cas
from browserd.daemon.profiles.publisher import ProfilePublisher, StateSource


class Profiles:
    """Stores are plain objects; publishers run in this registry's task group, so use it as `async with`."""

    def __init__(self, config: ProfilesConfig, *, component: str = "daemon") -> None:
        self.config = config
        self.component = component
        self.root = Path(config.snapshot_root).expanduser()
        self.user_data_root = Path(config.user_data_root).expanduser()
        self._stores: dict[str, ProfileStore] = {}
        self._publishers: dict[str, ProfilePublisher] = {}
        self._task_group: anyio.abc.TaskGroup | None = None

    def profile_id(self, profile_id: str | None) -> str:
        """The validated id, the configured default (`master`) for None (S0-35, S0-87)."""
        return validate_profile_id(self.config.default_profile_id if profile_id is None else profile_id)

    def store(self, profile_id: str | None = None) -> ProfileStore:
        pid = self.profile_id(profile_id)
        if pid not in self._stores:
            self._stores[pid] = ProfileStore(self.root, pid, component=self.component)
        return self._stores[pid]

    async def load(self, profile_id: str | None = None) -> Snapshot:
        """The latest snapshot, initialising the profile on first use; file work runs in a thread (S0-50)."""
        return await anyio.to_thread.run_sync(self.store(profile_id).load)

    async def state_to_import(self, profile_id: str) -> tuple[StorageState, int]:
        """The profile's cookies and localStorage as a window imports them (browser_storage import), with the
        version they are."""
        snapshot = await self.load(profile_id)
        return snapshot.storage_state(), snapshot.version

    def user_data_dir(self, profile_id: str | None = None) -> Path:
        """`<user_data_root>/<profileId>`: only `browserd login` opens it, under login.lock (S0-20, S0-39)."""
        return self.user_data_root / self.profile_id(profile_id)

    def publisher(self, profile_id: str | None = None) -> ProfilePublisher:
        """The profile's one publisher in this process (single flight per profile, S0-51)."""
        if self._task_group is None:
            raise RuntimeError("Profiles publishes only inside `async with profiles:`")
        store = self.store(profile_id)
        publisher = self._publishers.get(store.profile_id)
        if publisher is None:
            publisher = ProfilePublisher(
                store,
                debounce_ms=self.config.refresh_debounce_ms,
                lock_timeout_ms=self.config.publish_lock_timeout_ms,
            )
            publisher.start(self._task_group)
            self._publishers[store.profile_id] = publisher
        return publisher

    def publish_later(self, profile_id: str, state: Mapping[str, Any], base_version: int, name: str) -> None:
        """`state`, which a context that is gone left (a scrape's cookies), as the profile's next version after
        the call: debounced with the profile's other publishes, CAS-checked from `base_version` (S0-50..S0-53)."""

        async def export() -> Mapping[str, Any]:
            return state

        self.publisher(profile_id).request(StateSource(export, base_version, name=name))

    async def publish_now(self, profile_id: str, state: Mapping[str, Any], base_version: int) -> PublishResult:
        """`state` as the profile's next version at once, unless the profile moved past `base_version` (CAS)."""
        store = self.store(profile_id)
        encoded = msgspec.json.encode(state)
        lock_timeout_ms = self.config.publish_lock_timeout_ms
        return await anyio.to_thread.run_sync(
            lambda: publish_cas(store, encoded, base_version, lock_timeout_ms=lock_timeout_ms)
        )

    def publish_periodically(self, profile_id: str, source: StateSource) -> anyio.CancelScope:
        """Publish `source` every refresh_interval_ms (D-16) until the returned scope is cancelled."""
        if self._task_group is None:
            raise RuntimeError("Profiles publishes only inside `async with profiles:`")
        publisher = self.publisher(profile_id)
        scope = anyio.CancelScope()

        async def run() -> None:
            with scope:
                await publisher.publish_every(source, self.config.refresh_interval_ms)

        self._task_group.start_soon(run, name=f"periodic publish {source.name}")
        return scope

    async def __aenter__(self) -> Self:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        """Publish what is still requested (publish on close, D-16), then stop the publishers."""
        task_group, self._task_group = self._task_group, None
        assert task_group is not None
        for publisher in list(self._publishers.values()):
            await publisher.drain()
        task_group.cancel_scope.cancel()
        return await task_group.__aexit__(*exc_info)
