"""Artifacts: a run's large outputs as files beside runs.db, read back in chunks (S1-34..S1-40, D-40).

`offset`, `limit` and `size` count raw bytes; the data travels base64-encoded; no chunk is larger
than maxArtifactInlineBytes. An expired artifact keeps a tombstone row, so reading it says
ARTIFACT_EXPIRED rather than ARTIFACT_NOT_FOUND.
"""

from __future__ import annotations

import base64
import contextlib
import os
import secrets
from dataclasses import dataclass

import anyio

from browserd.daemon.errors import ArtifactExpired, ArtifactNotFound, InvalidParameter
from browserd.daemon.runs.run_records import ArtifactRecord, now_ms
from browserd.daemon.runs.run_store import RunStore

MIME_TYPES = {
    "application/json": "json",
    "text/markdown": "markdown",
    "text/plain": "text",
    "text/html": "html",
    "text/csv": "csv",
    "image/png": "png",
    "application/pdf": "pdf",
}


@dataclass(frozen=True)
class Chunk:
    artifact: ArtifactRecord
    offset: int
    data: bytes

    @property
    def complete(self) -> bool:
        return self.offset + len(self.data) >= self.artifact.size

    def data_base64(self) -> str:
        return base64.b64encode(self.data).decode()


def new_artifact_id() -> str:
    return f"art_{secrets.token_hex(8)}"


class ArtifactStore:
    def __init__(self, store: RunStore, max_chunk_bytes: int) -> None:
        self._store = store
        self.max_chunk_bytes = max_chunk_bytes

    async def save(self, run_id: str, data: bytes, mime_type: str, name: str = "") -> ArtifactRecord:
        artifact_id = new_artifact_id()
        path = self._store.artifact_path(artifact_id)

        def write() -> None:
            # Written under a temporary name and renamed, so a reader never sees half a file.
            partial = path.with_suffix(".part")
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            partial.replace(path)

        await anyio.to_thread.run_sync(write)
        record = ArtifactRecord(
            artifact_id=artifact_id,
            run_id=run_id,
            name=name or artifact_id,
            type=MIME_TYPES.get(mime_type, "binary"),
            mime_type=mime_type,
            size=len(data),
            created_at=now_ms(),
        )
        await self._store.add_artifact(record)
        return record

    async def read(self, artifact_id: str, offset: int = 0, limit: int | None = None) -> Chunk:
        record = await self._store.get_artifact(artifact_id)
        if record is None:
            raise ArtifactNotFound(f"no artifact {artifact_id}", artifactId=artifact_id)
        expired = record.deleted_at is not None or (record.expires_at is not None and record.expires_at <= now_ms())
        if expired:
            raise ArtifactExpired(
                f"artifact {artifact_id} of run {record.run_id} has expired",
                artifactId=artifact_id,
                runId=record.run_id,
            )
        if offset > record.size:
            raise InvalidParameter(
                f"offset {offset} is past the end of artifact {artifact_id} ({record.size} bytes)",
                hint="Read from offset 0, adding bytesReturned each time until complete is true.",
                field="offset",
            )
        size = min(limit or self.max_chunk_bytes, self.max_chunk_bytes)
        path = self._store.artifact_path(artifact_id)

        def read_chunk() -> bytes:
            with open(path, "rb") as source:
                source.seek(offset)
                return source.read(size)

        try:
            data = await anyio.to_thread.run_sync(read_chunk)
        except FileNotFoundError as exc:
            raise ArtifactNotFound(f"the file of artifact {artifact_id} is missing", artifactId=artifact_id) from exc
        return Chunk(record, offset, data)

    async def delete_files(self, artifact_ids: list[str]) -> None:
        def work() -> None:
            for artifact_id in artifact_ids:
                with contextlib.suppress(FileNotFoundError):
                    self._store.artifact_path(artifact_id).unlink()

        await anyio.to_thread.run_sync(work)
