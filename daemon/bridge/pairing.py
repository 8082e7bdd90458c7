"""Pairing an extension once, and the proofs every later connection makes with the key it produced.

`browserd bridge pair` asks the daemon for a one-time code (short-lived, good for one attempt, right or
wrong). The side panel takes the code; both sides then derive the extension's key from the code and
the two nonces of that connection, so neither the code nor the key ever crosses the wire. Every later
connection proves the key by an HMAC over a fresh server nonce, the client's nonce, the extension id
and the protocol version (replaying an old proof fails: the server nonce is new each time). The keys
live in `<data>/bridge/keys.json`, 0600 in a 0700 folder, and in the extension's chrome.storage.local.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from browserd.protocol import paths

PROTOCOL = 1
# Chrome extension ids are 32 letters a-p (the hex of a key hash, shifted).
EXTENSION_ID = re.compile(r"^[a-p]{32}$")
NONCE = re.compile(r"^[0-9a-f]{32,128}$")
# No 0/O/1/I/L: the code is read off a terminal and typed into the side panel.
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_CODE_LENGTH = 8


def transcript(purpose: str, extension_id: str, server_nonce: str, client_nonce: str) -> bytes:
    """What a proof signs; `purpose` keeps a proof of one kind from standing for another."""
    return f"browserd-bridge|{purpose}|{PROTOCOL}|{extension_id}|{server_nonce}|{client_nonce}".encode()


def mac(key: bytes, message: bytes) -> str:
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def normalise_code(code: str) -> str:
    return code.replace("-", "").replace(" ", "").upper()


def key_from_code(code: str, extension_id: str, server_nonce: str, client_nonce: str) -> bytes:
    """The extension's key: derived on both sides from the code and this connection's nonces."""
    return bytes.fromhex(
        mac(normalise_code(code).encode(), transcript("key", extension_id, server_nonce, client_nonce))
    )


@dataclass
class PendingCode:
    code: str
    expires_at: float  # time.monotonic()


class Pairing:
    """The paired extensions' keys on disk and the one pending code, if any."""

    def __init__(self, folder: Path | None = None, code_ttl_s: float = 120.0) -> None:
        self.folder = folder or paths.data_dir() / "bridge"
        self.code_ttl_s = code_ttl_s
        self._pending: PendingCode | None = None

    @property
    def keys_file(self) -> Path:
        return self.folder / "keys.json"

    # -- the one-time code -------------------------------------------------------------------------

    def new_code(self) -> PendingCode:
        """A fresh code, replacing any pending one."""
        raw = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))
        self._pending = PendingCode(f"{raw[:4]}-{raw[4:]}", time.monotonic() + self.code_ttl_s)
        return self._pending

    def code_pending(self) -> bool:
        return self._pending is not None and time.monotonic() < self._pending.expires_at

    def take_code(self) -> str | None:
        """The pending code, used up by this one attempt whatever its outcome (no guessing twice)."""
        pending, self._pending = self._pending, None
        if pending is None or time.monotonic() >= pending.expires_at:
            return None
        return pending.code

    # -- keys --------------------------------------------------------------------------------------

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.keys_file.read_text())
        except FileNotFoundError:
            return {}
        extensions = data.get("extensions", {}) if isinstance(data, dict) else {}
        return {k: v for k, v in extensions.items() if EXTENSION_ID.match(k) and isinstance(v, dict)}

    def _write(self, extensions: dict[str, dict[str, str]]) -> None:
        paths.ensure_private_dir(self.folder)
        tmp = self.folder / f".keys.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump({"extensions": extensions}, out, indent=2)
        os.replace(tmp, self.keys_file)

    def key(self, extension_id: str) -> bytes | None:
        entry = self._read().get(extension_id)
        return bytes.fromhex(entry["key"]) if entry is not None and "key" in entry else None

    def paired(self) -> dict[str, str]:
        """Paired extension id -> when it was paired (never the key)."""
        return {ext: entry.get("pairedAt", "") for ext, entry in self._read().items()}

    def store(self, extension_id: str, key: bytes) -> None:
        extensions = self._read()
        extensions[extension_id] = {"key": key.hex(), "pairedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self._write(extensions)

    def unpair(self, extension_id: str | None = None) -> list[str]:
        """Forget one extension's key (or every one); the ids forgotten."""
        extensions = self._read()
        gone = [ext for ext in extensions if extension_id is None or ext == extension_id]
        for ext in gone:
            del extensions[ext]
        if gone:
            self._write(extensions)
        return gone
