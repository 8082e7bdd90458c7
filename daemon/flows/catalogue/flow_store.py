"""Flows on disk: one JSON file per flow (easy to read, diff and keep in Git, S4-03) plus a sqlite index.

`<root>/<flowId>.json` is the latest version and `<root>/versions/<flowId>/<n>.json` every earlier
one; `<root>/flows.db` (WAL) indexes id, name, slug, version and publication so listing and the
published tools need no file scan, and holds each flow's dataset (the rows its datasetWrite nodes
wrote). Files are written to a temporary name and renamed, 0600 in 0700 folders. Like runs.db, flows.db is
one of the daemon's sqlite stores (daemon/runtime/sqlite_store.py): every call is one transaction in a
worker thread, one writer at a time, and a flows.db of a newer schema is refused, not rewritten.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from browserd.daemon.errors import LimitExceeded
from browserd.daemon.flows.catalogue.schedules import Schedule
from browserd.daemon.flows.flow_model import Flow, Owner, decode, encode
from browserd.daemon.runtime.sqlite_store import SqliteStore

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS flows (
    flow_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    slug TEXT,
    published INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL,
    -- The owner's trust level (issue 20); NULL: made before owners were recorded, by the user (local).
    owner TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS flows_by_slug ON flows (slug) WHERE slug IS NOT NULL;
-- Rows datasetWrite nodes wrote, per flow (reference/004 datasets): kept across runs, in order.
CREATE TABLE IF NOT EXISTS dataset (
    flow_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    row TEXT NOT NULL,
    PRIMARY KEY (flow_id, n)
);
-- Cron triggers (catalogue/schedules.py): each a Schedule as JSON; never a sensitive value.
CREATE TABLE IF NOT EXISTS schedules (
    schedule_id TEXT PRIMARY KEY,
    flow_id TEXT NOT NULL,
    data TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class IndexRow:
    flow_id: str
    name: str
    version: int
    slug: str | None
    published: bool
    updated_at: int
    owner: Owner | None


class FlowStore(SqliteStore):
    SCHEMA = _SCHEMA
    SCHEMA_VERSION = SCHEMA_VERSION
    # Dataset rows are what the user's runs collected: each commit reaches the disk before it returns.
    SYNCHRONOUS = "FULL"

    def __init__(self, root: Path) -> None:
        self.root = root
        super().__init__(root / "flows.db", (root / "versions",))

    def migrate(self, db: sqlite3.Connection, found: int) -> None:
        columns = {row[1] for row in db.execute("PRAGMA table_info(flows)")}
        if "owner" not in columns:  # a flows.db of schema 1: its flows keep a NULL owner, which reads as local
            db.execute("ALTER TABLE flows ADD COLUMN owner TEXT")

    def _connection(self) -> sqlite3.Connection:
        """Opened by the first call, as the flows service needs it (it reads the published flows at start)."""
        if self._db is None:
            self.open_sync()
        return super()._connection()

    def _path(self, flow_id: str) -> Path:
        return self.root / f"{flow_id}.json"

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temp = path.with_suffix(".tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        temp.replace(path)

    async def save(self, flow: Flow) -> None:
        """Write `flow` as the latest version; the version it replaces stays under versions/."""

        def work(db: sqlite3.Connection) -> None:
            path = self._path(flow.id)
            if path.exists():
                previous = decode(path.read_bytes())
                if previous.version != flow.version:
                    self._write(self.root / "versions" / flow.id / f"{previous.version}.json", path.read_bytes())
            self._write(path, encode(flow))
            tool = flow.meta.tool
            owner = flow.meta.owner.trust_level if flow.meta.owner is not None else None
            db.execute(
                "INSERT OR REPLACE INTO flows (flow_id, name, version, slug, published, updated_at, owner)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (flow.id, flow.name, flow.version, tool.slug, int(tool.published), flow.meta.updated_at, owner),
            )

        await self._do(work)

    async def get(self, flow_id: str) -> Flow | None:
        def work(db: sqlite3.Connection) -> Flow | None:
            path = self._path(flow_id)
            return decode(path.read_bytes()) if path.exists() else None

        return await self._do(work)

    async def version(self, flow_id: str, version: int) -> Flow | None:
        def work(db: sqlite3.Connection) -> Flow | None:
            path = self.root / "versions" / flow_id / f"{version}.json"
            return decode(path.read_bytes()) if path.exists() else None

        return await self._do(work)

    async def by_slug(self, slug: str) -> str | None:
        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT flow_id FROM flows WHERE slug = ?", (slug,)).fetchone()
            return row[0] if row else None

        return await self._do(work)

    async def index(self, published_only: bool = False) -> list[IndexRow]:
        def work(db: sqlite3.Connection) -> list[IndexRow]:
            where = " WHERE published = 1" if published_only else ""
            rows = db.execute(
                "SELECT flow_id, name, version, slug, published, updated_at, owner"
                f" FROM flows{where} ORDER BY updated_at DESC"
            ).fetchall()
            return [
                IndexRow(r[0], r[1], r[2], r[3], bool(r[4]), r[5], Owner(trust_level=r[6]) if r[6] else None)
                for r in rows
            ]

        return await self._do(work)

    async def delete(self, flow_id: str) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            path = self._path(flow_id)
            existed = path.exists()
            path.unlink(missing_ok=True)
            shutil.rmtree(self.root / "versions" / flow_id, ignore_errors=True)
            db.execute("DELETE FROM dataset WHERE flow_id = ?", (flow_id,))
            db.execute("DELETE FROM schedules WHERE flow_id = ?", (flow_id,))
            db.execute("DELETE FROM flows WHERE flow_id = ?", (flow_id,))
            return existed

        return await self._do(work)

    async def add_row(self, flow_id: str, run_id: str, row: dict[str, Any], limit: int) -> int:
        """Append a row to the flow's dataset; its number. LIMIT_EXCEEDED once it holds `limit` rows."""

        def work(db: sqlite3.Connection) -> int:
            count = db.execute("SELECT COUNT(*) FROM dataset WHERE flow_id = ?", (flow_id,)).fetchone()[0]
            if count >= limit:
                raise LimitExceeded(
                    f"the dataset of flow {flow_id} holds {limit} rows, its limit",
                    hint="Export it with dataset_export {flowId}, then clear it with dataset_export {clear: true}.",
                    flowId=flow_id,
                )
            n = db.execute("SELECT COALESCE(MAX(n), -1) + 1 FROM dataset WHERE flow_id = ?", (flow_id,)).fetchone()[0]
            db.execute(
                "INSERT INTO dataset (flow_id, n, run_id, row) VALUES (?, ?, ?, ?)",
                (flow_id, n, run_id, msgspec.json.encode(row).decode()),
            )
            return int(n)

        return await self._do(work)

    async def rows(self, flow_id: str, clear: bool = False) -> list[dict[str, Any]]:
        """The flow's dataset in order, each row with its runId; `clear` empties it in the same step."""

        def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
            found = db.execute("SELECT run_id, row FROM dataset WHERE flow_id = ? ORDER BY n", (flow_id,)).fetchall()
            if clear:
                db.execute("DELETE FROM dataset WHERE flow_id = ?", (flow_id,))
            return [{"runId": run_id, **msgspec.json.decode(row)} for run_id, row in found]

        return await self._do(work)

    async def put_schedule(self, schedule: Schedule) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO schedules (schedule_id, flow_id, data) VALUES (?, ?, ?)",
                (schedule.schedule_id, schedule.flow_id, msgspec.json.encode(schedule).decode()),
            )

        await self._do(work)

    async def schedules(self) -> list[Schedule]:
        def work(db: sqlite3.Connection) -> list[Schedule]:
            rows = db.execute("SELECT data FROM schedules ORDER BY rowid").fetchall()
            return [msgspec.json.decode(data, type=Schedule) for (data,) in rows]

        return await self._do(work)

    async def remove_schedule(self, schedule_id: str) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            return db.execute("DELETE FROM schedules WHERE schedule_id = ?", (schedule_id,)).rowcount > 0

        return await self._do(work)
