"""Where browserd keeps its socket, config, data and logs (DESIGN.md §2-§3, XDG base directories)."""

from __future__ import annotations

import os
from pathlib import Path


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value and os.path.isabs(value) else Path.home() / fallback


def socket_path() -> Path:
    explicit = os.environ.get("BROWSERD_SOCKET")
    if explicit:
        return Path(explicit)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "browserd" / "daemon.sock"
    return Path(f"/tmp/browserd-{os.getuid()}") / "daemon.sock"


def socket_dir() -> Path:
    return socket_path().parent


def daemon_lock_path() -> Path:
    return socket_dir() / "daemon.lock"


def spawn_lock_path() -> Path:
    return socket_dir() / "spawn.lock"


def upload_root() -> Path:
    """Where remote sessions may upload files from unless `[security] allowed_file_roots` says otherwise (D-33)."""
    return Path(f"/tmp/browserd-{os.getuid()}") / "files"


def config_file() -> Path:
    explicit = os.environ.get("BROWSERD_CONFIG")
    if explicit:
        return Path(explicit)
    return _xdg("XDG_CONFIG_HOME", ".config") / "browserd" / "config.toml"


def data_dir() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share") / "browserd"


def snapshot_root() -> Path:
    """Login profiles' state snapshots, one folder per profileId (S0-44, D-19)."""
    return data_dir() / "browser-snapshots"


def user_data_root() -> Path:
    """Persistent Chromium profiles of the headed `browserd login`, one folder per profileId (S0-89, D-19)."""
    return data_dir() / "browser-data"


def state_dir() -> Path:
    return _xdg("XDG_STATE_HOME", ".local/state") / "browserd"


def log_file() -> Path:
    return state_dir() / "daemon.log"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` as 0700; refuse one that another user owns, since it could hold a squatted socket."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to uid {info.st_uid}, not to this user ({os.getuid()})")
    if info.st_mode & 0o077:
        path.chmod(0o700)
    return path
