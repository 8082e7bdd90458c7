"""extension-bridge/ and the daemon's page scripts (daemon/**/js/*.js) pass eslint, when eslint is installed.

Their configs: extension-bridge/eslint.config.mjs and daemon/eslint.config.mjs. eslint is not a Python
dependency and neither has a build step, so it lives outside the repo:
`make eslint` installs it under ~/.cache/browserd/eslint; BROWSERD_ESLINT or an eslint on PATH also do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "extension-bridge"
INSTALLED = Path.home() / ".cache" / "browserd" / "eslint" / "node_modules" / ".bin" / "eslint"


def _eslint() -> str | None:
    for candidate in (os.environ.get("BROWSERD_ESLINT"), str(INSTALLED), shutil.which("eslint")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _lint(folder: Path) -> None:
    eslint = _eslint()
    if eslint is None:
        pytest.skip("eslint is not installed (make eslint)")
    result = subprocess.run(
        [eslint, "--config", str(folder / "eslint.config.mjs"), "--max-warnings", "0", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_extension_passes_eslint() -> None:
    _lint(EXTENSION)


def test_the_page_scripts_pass_eslint() -> None:
    _lint(REPO / "daemon")
