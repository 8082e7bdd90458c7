"""flows.db on the daemon's one sqlite store: a newer schema is refused, a failed call leaves nothing behind."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from browserd.daemon.errors import LimitExceeded
from browserd.daemon.flows.catalogue.flow_store import SCHEMA_VERSION, FlowStore
from browserd.daemon.runtime.sqlite_store import StoreError

pytestmark = pytest.mark.anyio


async def test_a_flows_db_of_a_newer_browserd_is_refused_not_rewritten(tmp_path: Path) -> None:
    store = FlowStore(tmp_path)
    assert await store.index() == []
    store.close()
    with sqlite3.connect(tmp_path / "flows.db") as db:
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer"):
        await FlowStore(tmp_path).index()
    with sqlite3.connect(tmp_path / "flows.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


async def test_a_call_that_fails_half_way_writes_nothing(tmp_path: Path) -> None:
    store = FlowStore(tmp_path)
    assert await store.add_row("flow_a", "run_1", {"n": 1}, limit=2) == 0

    def half(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO dataset (flow_id, n, run_id, row) VALUES ('flow_a', 1, 'run_2', '{}')")
        raise LimitExceeded("stop here")

    with pytest.raises(LimitExceeded):
        await store._do(half)
    assert await store.rows("flow_a") == [{"runId": "run_1", "n": 1}], "the half-written row was rolled back"
    store.close()
