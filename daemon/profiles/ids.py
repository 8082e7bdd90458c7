"""profileId validation: a strict name, checked before anything touches the filesystem (S0-66..S0-68, TC-15)."""

from __future__ import annotations

import re
from pathlib import Path

from browserd.daemon.errors import InvalidParameter

# fullmatch, so a trailing newline cannot slip through the way it does with `$`.
PROFILE_ID_PATTERN = re.compile(r"[a-zA-Z0-9._-]{1,64}")
_HINT = "Use 1-64 characters from a-z, A-Z, 0-9, '.', '_' and '-', without '..'; the default profile is 'master'."


def validate_profile_id(profile_id: object) -> str:
    """`profile_id` itself when it is a safe folder name, else InvalidParameter; never touches the filesystem."""
    if not isinstance(profile_id, str) or not PROFILE_ID_PATTERN.fullmatch(profile_id):
        raise InvalidParameter(f"invalid profileId {profile_id!r:.80}", hint=_HINT, parameter="profileId")
    # The pattern allows dots, so name the dot-only and traversal forms explicitly (S0-67).
    if profile_id in {".", ".."} or ".." in profile_id or "/" in profile_id or "\\" in profile_id:
        raise InvalidParameter(f"invalid profileId {profile_id!r}: no '..' allowed", hint=_HINT, parameter="profileId")
    return profile_id


def profile_dir(root: Path, profile_id: str) -> Path:
    """The folder of a validated profile: `(root / profile_id).resolve()`, refused unless inside root (S0-68).

    Validation runs first, so a rejected id never reaches `resolve()` or any other filesystem call.
    """
    validate_profile_id(profile_id)
    base = root.expanduser().resolve()
    path = (base / profile_id).resolve()
    if path.parent != base:
        # Only a symlink planted at root/<id> can get here; follow none of it.
        raise InvalidParameter(
            f"invalid profileId {profile_id!r}: its folder resolves outside the snapshot root",
            hint=_HINT,
            parameter="profileId",
        )
    return path
