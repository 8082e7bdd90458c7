"""Local files a tool reads (uploads) or writes (PDFs): checked before the browser sees them."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

from browserd.daemon.errors import InvalidParameter, TrustLevelNotAllowed

_FILE_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_UPLOAD_HINT = "Pass absolute paths of existing, readable files on the daemon's machine."


def upload_files(paths: list[str], roots: list[str] | None = None) -> list[Path]:
    """The files to upload, each an existing readable regular file given by an absolute path; with
    `roots` (a remote session's allowed file roots, D-33), only files that really lie inside one."""
    files: list[Path] = []
    for given in paths:
        path = Path(given).expanduser()
        details = {"field": "paths", "path": given}
        if not path.is_absolute():
            raise InvalidParameter(f"{given!r} is not an absolute path", hint=_UPLOAD_HINT, **details)
        if roots is not None:
            # Before any existence check: a remote caller learns nothing about files outside the roots.
            _check_inside(path, roots, details)
        if not path.exists():
            raise InvalidParameter(f"no file at {given}", hint=_UPLOAD_HINT, **details)
        if not path.is_file():
            raise InvalidParameter(f"{given} is not a regular file", hint=_UPLOAD_HINT, **details)
        if not os.access(path, os.R_OK):
            raise InvalidParameter(f"{given} cannot be read by the daemon", hint=_UPLOAD_HINT, **details)
        files.append(path.resolve())
    return files


def _check_inside(path: Path, roots: list[str], details: dict[str, str]) -> None:
    folders = ", ".join(roots) or "none configured"
    hint = f"Copy the file into an allowed folder ({folders}; [security] allowed_file_roots) and pass that path."
    if ".." in path.parts:
        raise TrustLevelNotAllowed(
            f"a remote session may not upload {path}: '..' is not allowed in its paths",
            hint=hint,
            rule="dot-dot",
            **details,
        )
    # resolve() follows symlinks, so a link inside a root that points outside it is refused too.
    real = path.resolve()
    if not any(real.is_relative_to(Path(root).resolve()) for root in roots):
        raise TrustLevelNotAllowed(
            f"a remote session uploads only files inside {folders}, and {path} is not one",
            hint=hint,
            rule="outside-allowed-roots",
            **details,
        )


def output_file(folder: Path, name: str | None, stem: str, suffix: str) -> Path:
    """A path in the session's output folder: the plain file name given, else `<stem>-N<suffix>` unused so far."""
    if name is not None and not _FILE_NAME.match(name):
        raise InvalidParameter(
            "saveTo must be a plain file name (letters, digits, . _ -)",
            hint=f"Pass a name such as page{suffix}; the file goes to the session's output folder.",
            field="saveTo",
        )
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if name is not None:
        return folder / name
    return next(
        folder / f"{stem}-{n}{suffix}" for n in itertools.count(1) if not (folder / f"{stem}-{n}{suffix}").exists()
    )
