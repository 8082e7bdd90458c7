"""One sqlite database of the daemon (runs.db, flows.db): WAL, one writer, a transaction per call, and a
schema version that refuses a newer database and migrates an older one in place.

A subclass names its schema (CREATE ... IF NOT EXISTS statements), its SCHEMA_VERSION and how an older
database becomes the current one (`migrate`). Every call's work runs in a worker thread behind one lock,
so the event loop never waits on the disk and no two writes of this process interleave; each is one
transaction, rolled back whole when it raises. `user_version` carries the schema version.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, TypeVar

import anyio

T = TypeVar("T")


class StoreError(Exception):
    pass


class SqliteStore:
    SCHEMA: ClassVar[str]
    SCHEMA_VERSION: ClassVar[int]
    # NORMAL in WAL mode never corrupts the database; a power cut may lose the last transactions.
    SYNCHRONOUS: ClassVar[str] = "NORMAL"

    def __init__(self, db_path: Path, folders: tuple[Path, ...] = ()) -> None:
        self.db_path = db_path
        self._folders = (db_path.parent, *folders)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def migrate(self, db: sqlite3.Connection, found: int) -> None:
        """Bring a database of schema `found` (0: new) up to SCHEMA_VERSION in place, keeping its rows. The
        schema's CREATE statements have run already: only what they cannot do (new columns) is left."""

    def open_sync(self) -> None:
        for folder in self._folders:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        db = sqlite3.connect(self.db_path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={self.SYNCHRONOUS}")
        found = db.execute("PRAGMA user_version").fetchone()[0]
        if found > self.SCHEMA_VERSION:
            db.close()
            raise StoreError(f"{self.db_path} has schema {found}, newer than this browserd ({self.SCHEMA_VERSION})")
        db.executescript(self.SCHEMA)
        self.migrate(db, found)
        db.execute(f"PRAGMA user_version={self.SCHEMA_VERSION}")
        self.db_path.chmod(0o600)
        self._db = db

    async def open(self) -> None:
        await anyio.to_thread.run_sync(self.open_sync)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _connection(self) -> sqlite3.Connection:
        """The open database; a subclass that opens on first use overrides this."""
        if self._db is None:
            raise StoreError(f"{self.db_path.name} is closed")
        return self._db

    def _sync(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            db = self._connection()
            db.execute("BEGIN")
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result

    async def _do(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._sync, work)
