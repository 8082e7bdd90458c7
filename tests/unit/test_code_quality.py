"""The code stays ruff- and mypy-clean: a style or type regression fails the suite, not a later review."""

from __future__ import annotations

import subprocess

from tests.conftest import REPO, VENV_BIN


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing_to_fix() -> None:
    result = run(str(VENV_BIN / "ruff"), "check", "protocol", "daemon", "shim", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_leaves_the_code_as_it_is() -> None:
    result = run(str(VENV_BIN / "ruff"), "format", "--check", "protocol", "daemon", "shim")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = run(str(REPO / "scripts" / "typecheck.sh"))
    assert result.returncode == 0, result.stdout + result.stderr
