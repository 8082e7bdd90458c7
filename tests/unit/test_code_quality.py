"""The code stays ruff- and mypy-clean: a style or type regression fails the suite, not a later review."""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator
from pathlib import Path

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


# Layers (DESIGN.md §3): server -> tools -> services -> runtime. Below the tools layer nothing imports it,
# not even for a type: runs reach the browser tools through services.tools (a ToolCaller), by name.
BELOW_TOOLS = ("runs", "scrape", "sessions", "profiles", "policy", "runtime", "flows", "bridge", "services.py")


def _imported_modules(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_nothing_below_the_tools_layer_imports_tools() -> None:
    daemon = REPO / "daemon"
    files = [
        p for name in BELOW_TOOLS for p in ([daemon / name] if name.endswith(".py") else (daemon / name).rglob("*.py"))
    ]
    assert len(files) > 40, "the layer's files were not found"
    upward = {
        # browserd.daemon.tools.<module>, whether imported whole or by name
        f"{path.relative_to(REPO)} imports {'.'.join(module.split('.')[:4])}"
        for path in files
        for module in _imported_modules(path)
        if module == "browserd.daemon.tools" or module.startswith("browserd.daemon.tools.")
    }
    assert not upward, "\n".join(sorted(upward))
