"""Bearer tokens of the HTTP endpoint: made once by `browserd tokens create`, kept only as hashes.

A token reads `bd_<id>_<secret>`. The file (`[http] tokens_file`, 0600 in a 0700 folder) holds per token
its id, name, trust level, tool groups, expiry and the SHA-256 of the secret, never the secret: the
secret has 256 bits of entropy, so a fast hash is enough, and a stolen file opens nothing. The daemon
reads the file again whenever it changes, so a revoke or a new token takes effect on the next request.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import msgspec

from browserd.daemon.config import HttpConfig
from browserd.daemon.errors import InvalidParameter
from browserd.protocol import paths
from browserd.protocol.messages import TrustLevel

PREFIX = "bd_"
_ID_HEX = 12
_TOKEN = re.compile(rf"^{PREFIX}([0-9a-f]{{{_ID_HEX}}})_([A-Za-z0-9_-]{{20,}})$")
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_NAME = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")
FILE_MODE = 0o600


class TokenRecord(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    token_id: str
    name: str
    trust_level: TrustLevel
    digest: str
    created_at: float
    # Tool groups the token's sessions see; None: the daemon's [mcp] tools.
    tools: list[str] | None = None
    expires_at: float | None = None
    revoked_at: float | None = None

    def state(self, now: float) -> Literal["active", "expired", "revoked"]:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and now >= self.expires_at:
            return "expired"
        return "active"


class _File(msgspec.Struct):
    tokens: list[TokenRecord] = msgspec.field(default_factory=list)


class TokenRefused(Exception):
    """Why a presented token opens nothing; the message is safe to show the caller."""


def default_path() -> Path:
    return paths.data_dir() / "http-tokens.json"


def parse_duration(text: str) -> float:
    """Seconds in `30d`, `12h`, `45m`, `90s` or `2w`."""
    match = _DURATION.match(text)
    if not match or int(match.group(1)) == 0:
        raise InvalidParameter(
            f"bad duration {text!r}", hint="Write a number and a unit: 90s, 45m, 12h, 30d or 2w.", field="expires"
        )
    return int(match.group(1)) * _UNIT_S[match.group(2)]


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class TokenStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        self._seen: tuple[int, int, int] | None = None
        self._records: dict[str, TokenRecord] = {}

    @classmethod
    def of(cls, config: HttpConfig) -> TokenStore:
        return cls(Path(config.tokens_file) if config.tokens_file else None)

    # -- reading (the daemon, per request) ------------------------------------------------------

    def records(self) -> list[TokenRecord]:
        self._refresh()
        return list(self._records.values())

    def _refresh(self) -> None:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._records = None, {}
            return
        seen = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if seen != self._seen:
            self._records = {r.token_id: r for r in self._read().tokens}
            self._seen = seen

    def _read(self) -> _File:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return _File()
        return msgspec.json.decode(data, type=_File) if data.strip() else _File()

    def active(self, now: float | None = None) -> list[TokenRecord]:
        moment = time.time() if now is None else now
        return [r for r in self.records() if r.state(moment) == "active"]

    def verify(self, token: str) -> TokenRecord:
        """The record of a valid token, or TokenRefused saying why not."""
        match = _TOKEN.match(token)
        if match is None:
            raise TokenRefused("malformed token")
        self._refresh()
        record = self._records.get(match.group(1))
        # Compared even when the id is unknown, so a wrong id costs the same time as a wrong secret.
        expected = record.digest if record is not None else "0" * 64
        if not hmac.compare_digest(_digest(match.group(2)), expected) or record is None:
            raise TokenRefused("unknown token")
        state = record.state(time.time())
        if state != "active":
            raise TokenRefused(f"token {record.name!r} is {state}")
        return record

    # -- writing (`browserd tokens`) ---------------------------------------------------------------

    def create(
        self, name: str, trust: TrustLevel, tools: list[str] | None, expires_in_s: float | None
    ) -> tuple[str, TokenRecord]:
        """A new token: the bearer string (shown once, never stored) and its record."""
        if not _NAME.match(name):
            raise InvalidParameter(
                f"bad token name {name!r}", hint="Use 1-64 letters, digits, '.', '_', '@' or '-'.", field="name"
            )
        secret = secrets.token_urlsafe(32)
        now = time.time()
        with self._locked() as stored:
            if any(r.name == name and r.state(now) == "active" for r in stored.tokens):
                raise InvalidParameter(
                    f"an active token is already named {name!r}",
                    hint="Choose another name, or `browserd tokens revoke` the old one first.",
                    field="name",
                )
            token_id = secrets.token_hex(_ID_HEX // 2)
            record = TokenRecord(
                token_id=token_id,
                name=name,
                trust_level=trust,
                digest=_digest(secret),
                created_at=now,
                tools=tools,
                expires_at=now + expires_in_s if expires_in_s else None,
            )
            stored.tokens.append(record)
        return f"{PREFIX}{token_id}_{secret}", record

    def revoke(self, name_or_id: str) -> TokenRecord:
        now = time.time()
        with self._locked() as stored:
            for record in stored.tokens:
                if name_or_id in (record.name, record.token_id) and record.state(now) == "active":
                    record.revoked_at = now
                    return record
        raise InvalidParameter(
            f"no active token named {name_or_id!r}", hint="`browserd tokens list` shows the tokens.", field="name"
        )

    @contextlib.contextmanager
    def _locked(self) -> Iterator[_File]:
        """The file's records for a change, written back atomically (temp file + rename) under a lock."""
        paths.ensure_private_dir(self.path.parent)
        lock_fd = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            stored = self._read()
            yield stored
            temp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
            try:
                os.write(fd, msgspec.json.format(msgspec.json.encode(stored)))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, self.path)
        finally:
            os.close(lock_fd)
