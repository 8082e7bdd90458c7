"""The endpoint's API key: from an environment variable or a file only its owner can read, never from the
config text, and never written to a log, an error or a record."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from browserd.daemon.config import LlmConfig
from browserd.daemon.errors import LlmNotConfigured


def api_key(config: LlmConfig) -> str | None:
    """The key, or None when neither source is configured (local endpoints need none)."""
    if config.api_key_env:
        value = os.environ.get(config.api_key_env, "").strip()
        if not value:
            raise LlmNotConfigured(
                f"[llm] api_key_env names {config.api_key_env}, which is empty or unset in the daemon's environment",
                hint=f"Export {config.api_key_env} where the daemon starts (browserd stop, then start it again), or "
                "set [llm] api_key_file to a 0600 file holding the key.",
                variable=config.api_key_env,
            )
        return value
    if config.api_key_file:
        return _read_key_file(Path(config.api_key_file).expanduser())
    return None


def _read_key_file(path: Path) -> str:
    try:
        info = path.stat()
    except OSError as exc:
        raise LlmNotConfigured(
            f"[llm] api_key_file {path} cannot be read: {exc.strerror}",
            hint=f"Write the key to {path} and `chmod 600 {path}`.",
            path=str(path),
        ) from exc
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise LlmNotConfigured(
            f"[llm] api_key_file {path} is readable by others (mode {stat.S_IMODE(info.st_mode):o})",
            hint=f"`chmod 600 {path}`: the key file must be readable by its owner only.",
            path=str(path),
        )
    value = path.read_text().strip()
    if not value:
        raise LlmNotConfigured(f"[llm] api_key_file {path} is empty", path=str(path))
    return value
