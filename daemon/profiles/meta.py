"""The meta.json record beside each state.json: version, writer and checksum (S0-45, D-17)."""

from __future__ import annotations

import hashlib
import os
import socket
from datetime import UTC, datetime
from typing import Annotated

import msgspec

CHECKSUM_PREFIX = "sha256:"


class SnapshotMeta(msgspec.Struct, rename="camel", frozen=True):
    """`{profileId, version, updatedAt, writerId, checksum}`; unknown fields from other writers are kept out."""

    profile_id: str
    version: Annotated[int, msgspec.Meta(ge=0)]
    updated_at: str
    writer_id: str
    # Mandatory when browserd writes; tolerated as missing in files other tools wrote (D-17).
    checksum: str | None = None


def checksum_of(state: bytes) -> str:
    return CHECKSUM_PREFIX + hashlib.sha256(state).hexdigest()


def utc_now() -> str:
    """ISO-8601 UTC with milliseconds, e.g. `2025-01-31T12:00:00.123Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def writer_id(component: str) -> str:
    """`<component>@<hostname>:<pid>`, read at call time so a forked process names itself."""
    return f"{component}@{socket.gethostname()}:{os.getpid()}"


def new_meta(profile_id: str, version: int, checksum: str, component: str) -> SnapshotMeta:
    return SnapshotMeta(
        profile_id=profile_id,
        version=version,
        updated_at=utc_now(),
        writer_id=writer_id(component),
        checksum=checksum,
    )


def encode_meta(meta: SnapshotMeta) -> bytes:
    return msgspec.json.format(msgspec.json.encode(meta), indent=2) + b"\n"


def decode_meta(data: bytes) -> SnapshotMeta:
    """Raises msgspec.DecodeError (a ValueError) for anything that is not a meta record."""
    return msgspec.json.decode(data, type=SnapshotMeta)
