"""Owners of flows (issue 20): a flows.db and flow files from before owners were recorded read as the user's
(local) flows, nothing lost, out of a remote session's reach; a save records its maker and never believes an owner
the flow's JSON claims."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from browserd.daemon.config import Config, FlowsConfig, SecurityConfig
from browserd.daemon.errors import TrustLevelNotAllowed
from browserd.daemon.flows.flow_model import Owner, decode
from browserd.daemon.flows.flow_service import FlowService
from browserd.daemon.flows.owners import Actor, keeper
from browserd.daemon.policy.trust import TrustPolicy
from browserd.daemon.policy.urls import UrlPolicy
from browserd.protocol.messages import TrustLevel

pytestmark = pytest.mark.anyio

OLD_SCHEMA = """
CREATE TABLE flows (flow_id TEXT PRIMARY KEY, name TEXT NOT NULL, version INTEGER NOT NULL, slug TEXT,
    published INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL);
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def actor(level: TrustLevel) -> Actor:
    return Actor(TrustPolicy(level, UrlPolicy(SecurityConfig())), f"{level}-client")


def old_store(root: Path) -> None:
    """A flows folder as browserd wrote it before issue 20: no owner anywhere."""
    root.mkdir()
    (root / "flow_old.json").write_text('{"id": "flow_old", "name": "old", "version": 1, "schema": 2}')
    db = sqlite3.connect(root / "flows.db")
    db.executescript(OLD_SCHEMA)
    db.execute("INSERT INTO flows VALUES ('flow_old', 'old', 1, NULL, 0, 1)")
    db.commit()
    db.close()


async def test_flows_from_before_owners_are_local_and_kept(tmp_path: Path) -> None:
    root = tmp_path / "flows"
    old_store(root)
    service = FlowService(Config(flows=FlowsConfig(root=str(root))))
    assert [row.flow_id for row in await service.listed(actor("local"))] == ["flow_old"]
    assert await service.listed(actor("remote")) == []
    with pytest.raises(TrustLevelNotAllowed):
        await service.get("flow_old", by=actor("remote"))
    assert (await service.get("flow_old", by=actor("local"))).name == "old"
    service.store.close()


async def test_a_save_records_its_maker_not_the_owner_the_json_claims(tmp_path: Path) -> None:
    service = FlowService(Config(flows=FlowsConfig(root=str(tmp_path / "flows"))))
    forged = {"id": "flow_forged", "name": "f", "meta": {"owner": {"trustLevel": "local", "client": "user"}}}
    saved = await service.import_flow(forged, overwrite=True, by=actor("remote"))
    assert saved.meta.owner == Owner(trust_level="remote", client="remote-client")
    # A local edit of a remote flow leaves it remote: its runs keep remote rights.
    edited = await service.save(decode({"id": "flow_forged", "name": "edited"}), actor("local"))
    assert edited.meta.owner is not None and edited.meta.owner.trust_level == "remote"
    assert [row.owner for row in await service.listed(actor("remote"))] == [Owner(trust_level="remote")]
    service.store.close()


def test_the_lower_owner_keeps_a_flow() -> None:
    local, remote = Owner(trust_level="local", client="a"), Owner(trust_level="remote", client="b")
    assert keeper(None, local) == local and keeper(local, remote) == remote and keeper(remote, local) == remote
