"""Durable run records: runs, steps, result items and artifacts in sqlite (WAL) under the data folder.

Every method is async and is one transaction of the daemon's sqlite store (daemon/runtime/sqlite_store.py:
a worker thread, one writer, schema version and migrations). Records are msgspec Structs stored as JSON
next to the few columns that queries filter on.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import msgspec

from browserd.daemon.runs.run_records import ArtifactRecord, RunRecord, StepRecord
from browserd.daemon.runtime.sqlite_store import SqliteStore, StoreError

__all__ = ["SCHEMA_VERSION", "RunStore", "StoreError"]

# 2: runs.owner_session_id, the session that started the run (schema 1 rows keep NULL).
SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    template_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    record BLOB NOT NULL,
    owner_session_id TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at DESC);
CREATE TABLE IF NOT EXISTS steps (
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    record BLOB NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS items (
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS artifacts (
    artifact_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    expires_at INTEGER,
    deleted_at INTEGER,
    record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS artifacts_by_run ON artifacts (run_id);
"""


class RunStore(SqliteStore):
    SCHEMA = _SCHEMA
    SCHEMA_VERSION = SCHEMA_VERSION

    def __init__(self, root: Path) -> None:
        self.root = root
        self.artifact_dir = root / "artifacts"
        super().__init__(root / "runs.db", (self.artifact_dir,))

    def migrate(self, db: sqlite3.Connection, found: int) -> None:
        columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
        if "owner_session_id" not in columns:  # schema 1
            db.execute("ALTER TABLE runs ADD COLUMN owner_session_id TEXT")

    # -- runs ----------------------------------------------------------------------------------

    @staticmethod
    def _put_run(db: sqlite3.Connection, run: RunRecord, expires_at: int | None = None) -> None:
        db.execute(
            "INSERT OR REPLACE INTO runs"
            " (run_id, template_id, status, created_at, expires_at, record, owner_session_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                run.run_id,
                run.template_id,
                run.status,
                run.created_at,
                expires_at,
                msgspec.json.encode(run),
                run.owner_session_id,
            ),
        )

    async def save_run(self, run: RunRecord, expires_at: int | None = None) -> None:
        await self._do(lambda db: self._put_run(db, run, expires_at))

    async def create_run(self, run: RunRecord, steps: list[StepRecord]) -> None:
        def work(db: sqlite3.Connection) -> None:
            self._put_run(db, run)
            self._put_steps(db, steps)

        await self._do(work)

    async def get_run(self, run_id: str) -> RunRecord | None:
        def work(db: sqlite3.Connection) -> RunRecord | None:
            row = db.execute("SELECT record FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            return msgspec.json.decode(row[0], type=RunRecord) if row else None

        return await self._do(work)

    async def list_runs(
        self, status: str | None, template_id: str | None, limit: int, offset: int, owner: str | None = None
    ) -> list[RunRecord]:
        """Newest first; with `owner`, only the runs that session started."""

        def work(db: sqlite3.Connection) -> list[RunRecord]:
            query = "SELECT record FROM runs WHERE (? IS NULL OR status = ?) AND (? IS NULL OR template_id = ?)"
            query += " AND (? IS NULL OR owner_session_id = ?) ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?"
            arguments = (status, status, template_id, template_id, owner, owner, limit, offset)
            rows = db.execute(query, arguments).fetchall()
            return [msgspec.json.decode(row[0], type=RunRecord) for row in rows]

        return await self._do(work)

    # -- steps and items -----------------------------------------------------------------------

    @staticmethod
    def _put_steps(db: sqlite3.Connection, steps: list[StepRecord]) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO steps (run_id, idx, record) VALUES (?, ?, ?)",
            [(step.run_id, step.index, msgspec.json.encode(step)) for step in steps],
        )

    async def save_steps(self, steps: list[StepRecord]) -> None:
        await self._do(lambda db: self._put_steps(db, steps))

    async def steps(self, run_id: str) -> list[StepRecord]:
        def work(db: sqlite3.Connection) -> list[StepRecord]:
            rows = db.execute("SELECT record FROM steps WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()
            return [msgspec.json.decode(row[0], type=StepRecord) for row in rows]

        return await self._do(work)

    async def add_item(self, run_id: str, index: int, item: dict[str, Any]) -> None:
        encoded = msgspec.json.encode(item)
        await self._do(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO items (run_id, idx, data) VALUES (?, ?, ?)", (run_id, index, encoded)
            )
        )

    @staticmethod
    def _items(db: sqlite3.Connection, run_id: str) -> list[dict[str, Any]]:
        rows = db.execute("SELECT data FROM items WHERE run_id = ? ORDER BY idx", (run_id,)).fetchall()
        return [msgspec.json.decode(row[0]) for row in rows]

    async def items(self, run_id: str) -> list[dict[str, Any]]:
        return await self._do(lambda db: self._items(db, run_id))

    # -- artifacts -----------------------------------------------------------------------------

    async def add_artifact(self, artifact: ArtifactRecord) -> None:
        await self._do(
            lambda db: db.execute(
                "INSERT INTO artifacts (artifact_id, run_id, expires_at, deleted_at, record) VALUES (?, ?, ?, ?, ?)",
                (artifact.artifact_id, artifact.run_id, None, None, msgspec.json.encode(artifact)),
            )
        )

    async def get_artifact(self, artifact_id: str) -> ArtifactRecord | None:
        def work(db: sqlite3.Connection) -> ArtifactRecord | None:
            row = db.execute(
                "SELECT record, expires_at, deleted_at FROM artifacts WHERE artifact_id = ?", (artifact_id,)
            ).fetchone()
            if row is None:
                return None
            record = msgspec.json.decode(row[0], type=ArtifactRecord)
            record.expires_at, record.deleted_at = row[1], row[2]
            return record

        return await self._do(work)

    @staticmethod
    def _artifacts(db: sqlite3.Connection, run_id: str) -> list[ArtifactRecord]:
        rows = db.execute(
            "SELECT record, expires_at, deleted_at FROM artifacts WHERE run_id = ? ORDER BY rowid", (run_id,)
        ).fetchall()
        found = []
        for row in rows:
            record = msgspec.json.decode(row[0], type=ArtifactRecord)
            record.expires_at, record.deleted_at = row[1], row[2]
            found.append(record)
        return found

    async def artifacts(self, run_id: str) -> list[ArtifactRecord]:
        return await self._do(lambda db: self._artifacts(db, run_id))

    def artifact_path(self, artifact_id: str) -> Path:
        return self.artifact_dir / artifact_id

    # -- end of a run, restart, cleanup --------------------------------------------------------

    async def finish_run(self, run: RunRecord, steps: list[StepRecord], expires_at: int) -> None:
        """The terminal record, its steps, and the TTL of its artifacts, in one transaction."""

        def work(db: sqlite3.Connection) -> None:
            self._put_run(db, run, expires_at)
            self._put_steps(db, steps)
            db.execute("UPDATE artifacts SET expires_at = ? WHERE run_id = ?", (expires_at, run.run_id))

        await self._do(work)

    async def interrupted_runs(self) -> list[RunRecord]:
        """Runs a previous daemon left queued or running: it died before they could end."""

        def work(db: sqlite3.Connection) -> list[RunRecord]:
            rows = db.execute("SELECT record FROM runs WHERE status IN ('queued', 'running')").fetchall()
            return [msgspec.json.decode(row[0], type=RunRecord) for row in rows]

        return await self._do(work)

    async def cleanup(self, now: int, tombstone_ms: int) -> list[str]:
        """Delete expired runs, turn expired artifacts into tombstones; the artifact files to remove."""

        def work(db: sqlite3.Connection) -> list[str]:
            expired = [
                row[0]
                for row in db.execute(
                    "SELECT artifact_id FROM artifacts WHERE deleted_at IS NULL AND expires_at IS NOT NULL"
                    " AND expires_at <= ?",
                    (now,),
                )
            ]
            db.execute(
                "UPDATE artifacts SET deleted_at = ? WHERE deleted_at IS NULL AND expires_at IS NOT NULL"
                " AND expires_at <= ?",
                (now, now),
            )
            db.execute("DELETE FROM artifacts WHERE deleted_at IS NOT NULL AND deleted_at <= ?", (now - tombstone_ms,))
            runs = [
                row[0]
                for row in db.execute(
                    "SELECT run_id FROM runs WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,)
                )
            ]
            for run_id in runs:
                for table in ("runs", "steps", "items"):
                    db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            return expired

        return await self._do(work)
